// The layers of src/ (docs/architecture.md): git <- catalog <- checks <- handlers, commands, flows,
// the CLI and the server; publish implements what checks declare and may read catalog and
// checks, and checks never import publish; a flow's plan.ts (src/flows/<flow>/plan.ts) runs
// catalog edits past the checks and imports only catalog, checks and other plans. This test reads every import of src/ (static,
// type-only, re-exports and dynamic import()) and fails on an import cycle, naming it, and
// on an import against the layers. eslint.config.js holds the same rule per folder, so an
// editor shows it at the line; this test also sees cycles, which eslint cannot.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { removeTree, writeTree } from './helpers/oracle.js';

const SRC = fileURLToPath(new URL('../src/', import.meta.url));

type Layer = 'git' | 'catalog' | 'checks' | 'publish' | 'plan' | 'app';

/** What each layer may import, besides itself and npm packages. */
const MAY_IMPORT: Record<Layer, readonly Layer[]> = {
  git: [],
  catalog: ['git'],
  checks: ['catalog', 'git'],
  publish: ['catalog', 'checks', 'git'],
  plan: ['catalog', 'checks', 'git'],
  app: ['git', 'catalog', 'checks', 'publish', 'plan'],
};

function layerOf(file: string): Layer {
  if (/^flows\/[^/]+\/plan\.ts$/.test(file)) return 'plan';
  const top = file.split('/')[0];
  return top === 'git' || top === 'catalog' || top === 'checks' || top === 'publish' ? top : 'app';
}

function sourceFiles(dir: string, prefix = ''): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const rel = prefix + e.name;
    if (e.isDirectory()) return sourceFiles(path.join(dir, e.name), `${rel}/`);
    return /\.(ts|mts)$/.test(e.name) && !e.name.endsWith('.d.ts') ? [rel] : [];
  });
}

/** Every source file of src/ with its text. */
const sourceTexts = (): Map<string, string> =>
  new Map(sourceFiles(SRC).map((f) => [f, readFileSync(path.join(SRC, f), 'utf8')]));

/** The text without its comments (an import shown in a comment is not one); strings are kept. */
function withoutComments(text: string): string {
  let out = '';
  for (let i = 0; i < text.length;) {
    const c = text[i]!;
    if (c === '/' && text[i + 1] === '/') {
      const end = text.indexOf('\n', i);
      i = end < 0 ? text.length : end;
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      i = end < 0 ? text.length : end + 2;
    } else if (c === "'" || c === '"' || c === '`') {
      let j = i + 1;
      while (j < text.length && text[j] !== c) j += text[j] === '\\' ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j + 1;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}
const SPECIFIERS = [
  /\b(?:import|export)\s[^'"`;]*?\sfrom\s*['"]([^'"]+)['"]/g,
  /\bimport\s*['"]([^'"]+)['"]/g,
  /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g,
];

/** src-relative file -> the src-relative files it imports. */
function importGraph(src = SRC): Map<string, string[]> {
  const files = sourceFiles(src);
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const text = withoutComments(readFileSync(path.join(src, file), 'utf8'));
    const targets = new Set<string>();
    for (const re of SPECIFIERS)
      for (const m of text.matchAll(re)) {
        const spec = m[1]!;
        if (!spec.startsWith('.')) continue;
        const target = path.posix
          .normalize(path.posix.join(path.posix.dirname(file), spec))
          .replace(/\.js$/, '.ts');
        // A JSON module (or any other file) is a leaf of the graph, in the layer of its folder.
        if (!known.has(target) && !existsSync(path.join(src, target)))
          throw new Error(`${file} imports ${spec}, which is not a file of src/`);
        targets.add(target);
      }
    graph.set(file, [...targets].sort());
  }
  return graph;
}

/** Every strongly connected component of more than one file (or a file importing itself),
 * each shown as one cycle through it. */
function importCycles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (graph.get(v) ?? []).includes(v)) components.push(component);
    }
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return components.map((component) => cycleThrough(graph, new Set(component)));
}

// The shortest cycle from the component's first file (by name) back to itself.
function cycleThrough(graph: Map<string, string[]>, component: Set<string>): string[] {
  const start = [...component].sort()[0]!;
  const from = new Map<string, string>();
  const queue = [start];
  for (let i = 0; i < queue.length; i++) {
    const v = queue[i]!;
    for (const w of graph.get(v) ?? []) {
      if (!component.has(w)) continue;
      if (w === start) {
        const cycle = [v];
        while (cycle[0] !== start) cycle.unshift(from.get(cycle[0]!)!);
        return [...cycle, start];
      }
      if (!from.has(w)) {
        from.set(w, v);
        queue.push(w);
      }
    }
  }
  return [start];
}

function layerViolations(graph: Map<string, string[]>): string[] {
  const out: string[] = [];
  for (const [file, targets] of graph) {
    const layer = layerOf(file);
    for (const target of targets) {
      const to = layerOf(target);
      if (to !== layer && !MAY_IMPORT[layer].includes(to))
        out.push(`${file} (${layer}) imports ${target} (${to})`);
    }
  }
  return out;
}

/**
 * Files outside src/github/ that reach GitHub's client: an `@octokit/` import, Probot's
 * `ProbotOctokit`, or a client called `octokit` (`context.octokit`, `Context['octokit']`).
 * The App asks GitHub only through the port (docs/architecture.md, "The GitHub port").
 */
function clientOutsidePort(texts: Map<string, string>): string[] {
  const client = /['"]@octokit\/|\bProbotOctokit\b|\boctokit\b/;
  return [...texts]
    .filter(([file, text]) => !file.startsWith('github/') && client.test(withoutComments(text)))
    .map(([file]) => file);
}

/**
 * Files outside src/git/ that run git: Node's child_process together with the program name
 * `'git'`. Git runs only in src/git/, behind named functions (docs/architecture.md, "src/git/").
 */
function gitOutsideGitFolder(texts: Map<string, string>): string[] {
  const processes = /['"](?:node:)?child_process['"]/;
  const git = /['"]git['"]/;
  return [...texts]
    .filter(([file, text]) => {
      if (file.startsWith('git/')) return false;
      const code = withoutComments(text);
      return processes.test(code) && git.test(code);
    })
    .map(([file]) => file);
}

/**
 * Files outside src/git/ that import git's process runner (src/git/run.ts: runGit, runGitSync
 * and the like take raw git arguments). Outside src/git/, git is asked through named
 * functions (src/git/read.ts, src/git/working-tree.ts, ...), so what git is told stays in one folder.
 */
function runnerOutsideGitFolder(graph: Map<string, string[]>): string[] {
  return [...graph]
    .filter(([file, targets]) => !file.startsWith('git/') && targets.includes('git/run.ts'))
    .map(([file]) => file);
}

/**
 * Files that reach into the loader's speed machinery (src/catalog/fbc/fast/) from outside the
 * loader: the rest of the code sees it only through decodeFile and loadCatalog
 * (docs/architecture.md, "The loader"). The validate command and the command line start its
 * second thread and hold the optimizer before the catalog code loads.
 */
const FAST_FOLDER_ENTRIES = new Set(['cli.ts', 'commands/validate.ts']);
function speedMachineryOutsideLoader(graph: Map<string, string[]>): string[] {
  return [...graph]
    .filter(
      ([file, targets]) =>
        !file.startsWith('catalog/fbc/') &&
        !FAST_FOLDER_ENTRIES.has(file) &&
        targets.some((t) => t.startsWith('catalog/fbc/fast/')),
    )
    .map(([file]) => file);
}

/** Where a function may not be longer than MAX_FUNCTION_LINES: the App, the checks and the loader (docs/architecture.md, "Named steps"). */
const STEPS_RULE =
  /^(checks|handlers|flows|github|publish|commands|git|catalog\/fbc)\/|^(app|server|reconcile|jobs|queue|redis-queue|cli)\.ts$/;
const MAX_FUNCTION_LINES = 100;

/** Every function (declared, method, arrow or expression) longer than `max` lines: "file:line name (lines)". */
function longFunctions(texts: Map<string, string>, max = MAX_FUNCTION_LINES): string[] {
  const found: string[] = [];
  for (const [file, text] of texts) {
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
    const lineOf = (pos: number) => source.getLineAndCharacterOfPosition(pos).line + 1;
    const visit = (node: ts.Node): void => {
      if (ts.isFunctionLike(node) && 'body' in node && node.body) {
        const lines = lineOf(node.getEnd()) - lineOf(node.getStart()) + 1;
        const named = node.name ?? (ts.isVariableDeclaration(node.parent) ? node.parent.name : undefined);
        if (lines > max)
          found.push(`${file}:${lineOf(node.getStart())} ${named?.getText() ?? '(anonymous)'} (${lines})`);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}

describe('architecture of src/', () => {
  const graph = importGraph();

  it('reads the imports of every source file', () => {
    // The walk must see the layers and the rooms of the core, or the rules below check nothing.
    expect(graph.size).toBeGreaterThan(100);
    expect(graph.get('catalog/index.ts')).toContain('catalog/fbc/load.ts');
    expect(graph.get('commands/index.ts')).toContain('commands/graph.ts'); // a dynamic import()
  });

  // The list may only shrink: a cycle not listed fails, and so does a listed one that is
  // gone (then delete it here). The pull-request session took the last one out of
  // src/handlers (the run records moved to check-runs.ts).
  const KNOWN_CYCLES: string[] = [];

  it('has no import cycle (but the known one being removed)', () => {
    expect(importCycles(graph).map((cycle) => cycle.join(' -> '))).toEqual(KNOWN_CYCLES);
  });

  it('has no import against the layers (catalog <- checks <- publish, handlers, commands)', () => {
    expect(layerViolations(graph)).toEqual([]);
  });

  it('reaches GitHub only through the port in src/github/', () => {
    expect(clientOutsidePort(sourceTexts())).toEqual([]);
  });

  it('finds a use of the GitHub client outside the port when there is one', () => {
    const texts = new Map([
      ['handlers/a.ts', "type O = Context['octokit'];"],
      ['handlers/b.ts', "import { ProbotOctokit } from 'probot';"],
      ['handlers/c.ts', "import type { Endpoints } from '@octokit/types';"],
      ['handlers/d.ts', '// octokit is only named in a comment\nconst x = octokitFromEnv();'],
      ['github/octokit.ts', 'await octokit.rest.pulls.get({});'],
    ]);
    expect(clientOutsidePort(texts)).toEqual(['handlers/a.ts', 'handlers/b.ts', 'handlers/c.ts']);
  });

  it('runs git only in src/git/', () => {
    const texts = sourceTexts();
    expect(gitOutsideGitFolder(texts)).toEqual([]);
    // The walk sees where git does run, or the rule checks nothing.
    expect([...texts.keys()].filter((f) => f.startsWith('git/')).length).toBeGreaterThan(3);
  });

  it('finds git run outside src/git/ when it is', () => {
    const texts = new Map([
      ['publish/a.ts', "import { execFile } from 'node:child_process';\nexecFile('git', ['log']);"],
      ['commands/b.ts', "import { spawnSync } from 'child_process';\nspawnSync('git', ['-C', repo]);"],
      ['publish/c.ts', "import { spawn } from 'node:child_process';\nspawn(opm, args); // not 'git'"],
      ['handlers/d.ts', "import { mergeTree } from '../git/read.js'; // 'git' via child_process"],
      ['git/run.ts', "require('node:child_process').spawn('git', args);"],
    ]);
    expect(gitOutsideGitFolder(texts)).toEqual(['publish/a.ts', 'commands/b.ts']);
  });

  it('passes no raw git arguments outside src/git/ (only src/git/ imports its runner)', () => {
    expect(runnerOutsideGitFolder(graph)).toEqual([]);
    // The graph sees the runner's users inside src/git/, or the rule checks nothing.
    const inside = [...graph].filter(
      ([f, targets]) => f.startsWith('git/') && targets.includes('git/run.ts'),
    );
    expect(inside.length).toBeGreaterThan(3);
  });

  it('finds the git runner imported outside src/git/ when it is', () => {
    const withRunner = new Map([
      ['checks/a.ts', ['git/run.ts', 'catalog/x.ts']],
      ['commands/b.ts', ['git/run.ts']],
      ['flows/x/d.ts', ['git/read.ts']],
      ['git/read.ts', ['git/run.ts']],
    ]);
    expect(runnerOutsideGitFolder(withRunner)).toEqual(['checks/a.ts', 'commands/b.ts']);
    // Read from source: a dynamic import() and an aliased name are imports too.
    const dir = writeTree({
      'git/run.ts': 'export const runGit = 1;',
      'flows/x/c.ts': "const { runGit } = await import('../../git/run.js');",
      'flows/x/e.ts': "import { runGitSync as git } from '../../git/run.js';",
      'flows/x/f.ts': "// import { runGit } from '../../git/run.js';",
    });
    try {
      expect(runnerOutsideGitFolder(importGraph(dir + '/')).sort()).toEqual(['flows/x/c.ts', 'flows/x/e.ts']);
    } finally {
      removeTree(dir);
    }
  });

  it("keeps the loader's speed machinery behind decodeFile and loadCatalog", () => {
    expect(speedMachineryOutsideLoader(graph)).toEqual([]);
    // The graph sees the folder's users inside the loader, or the rule checks nothing.
    expect(
      [...graph].filter(([, targets]) => targets.some((t) => t.startsWith('catalog/fbc/fast/'))).length,
    ).toBeGreaterThan(3);
    const reaching = new Map([
      ['checks/a.ts', ['catalog/fbc/fast/fastyaml.ts']],
      ['catalog/edits/b.ts', ['catalog/fbc/fast/files.ts']],
      ['catalog/fbc/load.ts', ['catalog/fbc/fast/files.ts']],
      ['commands/validate.ts', ['catalog/fbc/fast/short-run.ts']],
      ['commands/images.ts', ['catalog/fbc/load.ts']],
    ]);
    expect(speedMachineryOutsideLoader(reaching)).toEqual(['checks/a.ts', 'catalog/edits/b.ts']);
  });

  it('has no function over 100 lines in the App and the checks (named steps)', () => {
    const texts = new Map(
      sourceFiles(SRC)
        .filter((f) => STEPS_RULE.test(f))
        .map((f) => [f, readFileSync(path.join(SRC, f), 'utf8')]),
    );
    // The rule sees the folders it guards, or it checks nothing.
    expect([...texts.keys()].filter((f) => f.startsWith('checks/')).length).toBeGreaterThan(10);
    expect([...texts.keys()].filter((f) => f.startsWith('catalog/fbc/fast/')).length).toBeGreaterThan(3);
    expect(longFunctions(texts)).toEqual([]);
  });

  it('finds a long function, however it is written', () => {
    const body = (n: number) => Array.from({ length: n }, (_, i) => `  step${i}();`).join('\n');
    const texts = new Map([
      ['checks/a.ts', `export function long() {\n${body(99)}\n}`],
      ['flows/x/b.ts', `const arrow = async () => {\n${body(99)}\n};`],
      ['handlers/c.ts', `class C {\n  method() {\n${body(100)}\n  }\n}`],
      ['handlers/d.ts', `export function exactly100() {\n${body(98)}\n}`],
    ]);
    expect(longFunctions(texts)).toEqual([
      'checks/a.ts:1 long (101)',
      'flows/x/b.ts:1 arrow (101)',
      'handlers/c.ts:2 method (102)',
    ]);
  });

  it('finds a cycle and a layer violation when there is one', () => {
    const bad = new Map([
      ['catalog/a.ts', ['catalog/b.ts']],
      ['catalog/b.ts', ['checks/c.ts']],
      ['checks/c.ts', ['catalog/a.ts', 'publish/p.ts']],
      ['publish/p.ts', []],
      ['flows/x/plan.ts', ['flows/y/plan.ts', 'flows/x/flow.ts']],
      ['flows/y/plan.ts', ['checks/c.ts']],
      ['flows/x/flow.ts', []],
    ]);
    expect(importCycles(bad)).toEqual([['catalog/a.ts', 'catalog/b.ts', 'checks/c.ts', 'catalog/a.ts']]);
    expect(layerViolations(bad)).toEqual([
      'catalog/b.ts (catalog) imports checks/c.ts (checks)',
      'checks/c.ts (checks) imports publish/p.ts (publish)',
      'flows/x/plan.ts (plan) imports flows/x/flow.ts (app)',
    ]);
  });
});
