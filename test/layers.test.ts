// The suite's layers (test/layers.ts, README "Testing"), as vitest.config.ts makes them
// into projects: every test file of the checkout is in exactly one (a file in none would
// never run, one in two would run twice), every listed file exists, and a file in `unit` or
// `app` does not reach for what only a later layer may use (so `npm run test:fast` stays
// free of servers and other programs).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import config from '../vitest.config.js';
import type { Layer } from './layers.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

/** Every `*.test.ts` under `dir` (a path from the root), in subfolders too. */
function testFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const path = `${dir}/${e.name}`;
    if (e.isDirectory()) return e.name === 'node_modules' ? [] : testFiles(path);
    return e.name.endsWith('.test.ts') ? [path] : [];
  });
}

interface Project {
  name: string;
  include: string[];
}

/** What is wrong with `projects` for the test files `files`: one line per problem. */
export function assignmentProblems(files: string[], projects: Project[]): string[] {
  const problems: string[] = [];
  for (const p of projects)
    for (const pattern of p.include)
      if (!files.includes(pattern)) problems.push(`${p.name} lists ${pattern}, which is not a test file`);
  for (const file of files) {
    const in_ = projects.filter((p) => p.include.includes(file)).map((p) => p.name);
    if (in_.length === 0) problems.push(`${file} is in no layer (add it to test/layers.ts)`);
    if (in_.length > 1) problems.push(`${file} is in ${in_.length} layers: ${in_.join(', ')}`);
  }
  return problems;
}

// What a file uses that puts it in a layer at least this high.
const NEEDS: { layer: Layer; what: string; re: RegExp }[] = [
  {
    layer: 'app',
    what: 'a GitHub fake',
    re: /helpers\/(fake-github|github-model|app-server|github)\.js|from 'nock'/,
  },
  { layer: 'app', what: 'Probot', re: /from 'probot'/ },
  { layer: 'system', what: 'the opm oracle', re: /\b(OPM|opmValidate)\b/ },
  { layer: 'system', what: 'the built CLI or server', re: /\.\.\/dist\/|'\.\.', 'dist'|catalogBotShell/ },
  { layer: 'system', what: 'a registry', re: /helpers\/registry\.js/ },
  { layer: 'system', what: 'the HTTP GitHub server', re: /helpers\/github-server\.js/ },
  { layer: 'system', what: 'redis-server or replicas', re: /\b(RedisServer|haveRedis|Fleet)\b/ },
  { layer: 'system', what: 'the benchmarks', re: /\.\.\/bench\// },
];
const ORDER: Layer[] = ['unit', 'app', 'system'];

/** Why `text` (a test file) cannot be in `layer`: what it uses that a higher layer holds. */
export function layerViolations(text: string, layer: Layer): string[] {
  const code = text.replace(/^\s*\/\/.*$/gm, '');
  return NEEDS.filter((n) => ORDER.indexOf(n.layer) > ORDER.indexOf(layer) && n.re.test(code)).map(
    (n) => `${n.what} (${n.layer})`,
  );
}

const projects: Project[] = (config.test?.projects ?? []).map((p) => {
  const test = (p as { test?: { name?: string; include?: string[] } }).test;
  return { name: test?.name ?? '', include: test?.include ?? [] };
});
// A layer may be several projects: `unit` and `unit-isolated` (test/layers.ts, ISOLATED_UNIT).
const layerOf = (project: string): Layer => project.replace(/-isolated$/, '') as Layer;
// A `unit` file that replaces a module (sharing a module registry, it would replace it for
// others) or measures the process's memory (what earlier files left behind would count).
const NEEDS_OWN_REGISTRY = /\bvi\.(mock|doMock|unmock)\(|process\.memoryUsage\(/;

describe('the layers of the suite', () => {
  const files = [...testFiles('test'), ...testFiles('src')].sort();

  it('are the projects unit, app and system', () => {
    expect([...new Set(projects.map((p) => layerOf(p.name)))]).toEqual(ORDER);
  });

  it('give a unit or app file that mocks a module or measures memory a module registry of its own', () => {
    // The unit and app files share one per worker (vitest.config.ts).
    const shared = ['unit', 'app'].flatMap((name) => projects.find((p) => p.name === name)!.include);
    const isolated = projects.find((p) => p.name === 'unit-isolated')!.include;
    const mocking = [...shared, ...isolated].filter((file) =>
      NEEDS_OWN_REGISTRY.test(readFileSync(join(ROOT, file), 'utf8')),
    );
    expect(mocking.length).toBeGreaterThan(0);
    expect(shared.filter((file) => mocking.includes(file))).toEqual([]);
    // And only those: every other one shares.
    expect(isolated.filter((file) => !mocking.includes(file))).toEqual([]);
  });

  it('hold every test file exactly once, and only test files', () => {
    expect(files.length).toBeGreaterThan(100);
    expect(assignmentProblems(files, projects)).toEqual([]);
  });

  it('say when a file is in no layer, in two, or is not there', () => {
    const two = [
      { name: 'unit', include: ['test/a.test.ts', 'test/b.test.ts'] },
      { name: 'app', include: ['test/b.test.ts', 'test/gone.test.ts'] },
    ];
    expect(assignmentProblems(['test/a.test.ts', 'test/b.test.ts', 'test/c.test.ts'], two)).toEqual([
      'app lists test/gone.test.ts, which is not a test file',
      'test/b.test.ts is in 2 layers: unit, app',
      'test/c.test.ts is in no layer (add it to test/layers.ts)',
    ]);
  });

  it('keep servers and other programs out of unit and app', () => {
    // This file names the markers it looks for: only data here.
    const wrong = projects.flatMap((p) =>
      p.include
        .filter((file) => file !== 'test/layers.test.ts')
        .flatMap((file) =>
          layerViolations(readFileSync(join(ROOT, file), 'utf8'), layerOf(p.name)).map(
            (why) => `${file} (${p.name}) uses ${why}`,
          ),
        ),
    );
    expect(wrong).toEqual([]);
  });

  it('see what a file uses, not what its comments say', () => {
    const oracle = "import { OPM } from './helpers/oracle.js';\n";
    expect(layerViolations(oracle, 'unit')).toEqual(['the opm oracle (system)']);
    expect(layerViolations(oracle, 'app')).toEqual(['the opm oracle (system)']);
    expect(layerViolations(oracle, 'system')).toEqual([]);
    expect(layerViolations("import nock from 'nock';\n", 'unit')).toEqual(['a GitHub fake (app)']);
    expect(layerViolations("import nock from 'nock';\n", 'app')).toEqual([]);
    // The one GitHub fake's model (its skins are named above) is the app layer's too.
    const model = "import { GitHubModel } from './helpers/github-model.js';\n";
    expect(layerViolations(model, 'unit')).toEqual(['a GitHub fake (app)']);
    expect(layerViolations('// compared with OPM in test/semver.test.ts\n', 'unit')).toEqual([]);
    // The built CLI, however its path is written.
    const built = "spawnSync(process.execPath, [join(import.meta.dirname, '..', 'dist', 'cli.js')]);\n";
    expect(layerViolations(built, 'unit')).toEqual(['the built CLI or server (system)']);
  });
});
