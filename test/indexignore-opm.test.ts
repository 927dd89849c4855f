// Differential test: for generated `.indexignore` edge cases, `catalog-bot render` and
// `catalog-bot validate` serve exactly the blobs, and give exactly the verdicts, of the real opm.
// Every candidate file holds its own marker blob, so each ignored or served file shows.
import { spawnSync } from 'node:child_process';
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { GitTreeSource, loadCatalog, renderJson } from '../src/catalog/index.js';
import { main } from '../src/cli.js';
import { MAX_INDEX_IGNORE_LINE } from '../src/catalog/fbc/indexignore.js';
import { git } from './helpers/git.js';
import { haveOpm, OPM, opmValidate, removeTree, writeTree } from './helpers/oracle.js';

interface Case {
  name: string;
  /** `.indexignore` text by directory ('' for the catalog root). */
  ignores: Record<string, string | Buffer>;
  /** Files that each hold a distinct marker blob. */
  files: string[];
  /** Files that are not FBC: the catalog is valid only if opm ignores them. */
  broken?: string[];
}

const cases: Case[] = [];
const add = (c: Case) => cases.push(c);
// Most cases need one `.indexignore`: at the catalog root, or in pkg/.
const atRoot = (name: string, indexignore: string, files: string[]) =>
  add({ name, ignores: { '': indexignore }, files });
const inPkg = (name: string, indexignore: string, files: string[]) =>
  add({ name, ignores: { pkg: indexignore }, files });

// Unicode White_Space (Go's unicode.IsSpace, stripped by strings.TrimSpace) and characters
// JavaScript's trim() disagrees about (U+FEFF stripped by JS only, U+0085 by Go only), plus
// format characters neither strips.
const chars: Record<string, string> = {
  BOM: '\uFEFF',
  NEL: '\u0085',
  NBSP: '\u00A0',
  'ideographic space': '\u3000',
  'line separator': '\u2028',
  'paragraph separator': '\u2029',
  'ogham space': '\u1680',
  'en quad': '\u2000',
  'hair space': '\u200A',
  'narrow NBSP': '\u202F',
  'math space': '\u205F',
  tab: '\t',
  'vertical tab': '\v',
  'form feed': '\f',
  CR: '\r',
  'zero-width space': '\u200B',
  'Mongolian vowel separator': '\u180E',
};
for (const [label, c] of Object.entries(chars)) {
  inPkg(`leading ${label}`, `${c}notes.yaml\n`, ['pkg/notes.yaml', `pkg/${c}notes.yaml`]);
  inPkg(`trailing ${label}`, `notes.yaml${c}\n`, ['pkg/notes.yaml', `pkg/notes.yaml${c}`]);
}

// Line endings.
atRoot('CRLF lines', 'a.json\r\nb.json\r\n', ['a.json', 'b.json', 'c.json']);
atRoot('lone CR inside a line', 'a.json\rb.json\n', ['a.json', 'b.json', 'a.json\rb.json']);
atRoot('no final newline', '#c\nb.json', ['a.json', 'b.json']);
atRoot('BOM at the start of a CRLF file', '\uFEFFa.json\r\nb.json\r\n', ['a.json', 'b.json']);
atRoot('blank and space-only lines', '\n \t \n\u3000\nb.json\n\n', ['a.json', 'b.json']);

// Comments and escapes.
atRoot('# comment', '#a.json\n', ['a.json', '#a.json']);
atRoot('indented # is still a comment', '  #a.json\n', ['a.json', '#a.json']);
atRoot('\\# names a file', '\\#a.json\n', ['a.json', '#a.json', '\\#a.json']);
atRoot('\\! names a file', '\\!a.json\n', ['a.json', '!a.json']);
atRoot('!# re-includes #a.json', '*.json\n!#a.json\n', ['a.json', '#a.json']);
atRoot('!! re-includes !a.json', '*.json\n!!a.json\n', ['a.json', '!a.json']);
atRoot('a lone !', '*\n!\n', ['a.json', '!']);
atRoot('escaped trailing space', 'a.json\\ \nb.json  \n', [
  'a.json',
  'a.json ',
  'a.json\\',
  'b.json',
  'b.json ',
]);
atRoot('case matters', 'A.json\n', ['a.json', 'A.json']);

// Negation and order.
atRoot('later negation wins', '*.json\n!keep*.json\n', ['a.json', 'keep-1.json', 'x.yaml']);
atRoot('negation then exclusion', '!a.json\n*.json\n', ['a.json', 'b.yaml']);
add({
  name: 'nested negation overrides the root',
  ignores: { '': '*.json\n', pkg: '!a.json\n' },
  files: ['a.json', 'pkg/a.json', 'pkg/b.json', 'pkg/sub/a.json'],
});
add({
  name: 'files are collected in WalkDir order: -sub before .indexignore, zsub after',
  ignores: { pkg: '!notes.yaml\n', 'pkg/-sub': 'notes.yaml\n', 'pkg/zsub': 'notes.yaml\n' },
  files: ['pkg/-sub/notes.yaml', 'pkg/zsub/notes.yaml', 'pkg/notes.yaml'],
});
inPkg('nested file with a path pattern is anchored to its directory', 'sub/a.json\n', [
  'pkg/sub/a.json',
  'sub/a.json',
  'pkg/x/sub/a.json',
]);
inPkg('a directory named .indexignore is walked', 'b.json\n', [
  '.indexignore/a.json',
  'pkg/.indexignore2/b.json',
]);

// Anchors and trailing slashes.
atRoot('leading slash anchors', '/a.json\n', ['a.json', 'pkg/a.json']);
inPkg('nested leading slash', '/a.json\n', ['a.json', 'pkg/a.json', 'pkg/sub/a.json']);
atRoot('trailing slash: directories only', 'sub/\n', ['pkg/sub/a.json', 'other/sub', 'sub/deep/b.json']);
atRoot('trailing slash after a file name', 'a.json/\n', ['a.json', 'x/a.json/b.json']);
atRoot('path with trailing slash', 'pkg/sub/\n', [
  'pkg/sub/a.json',
  'pkg/sub/deep/a.json',
  'pkg/sub2/a.json',
  'x/pkg/sub/a.json',
]);
atRoot('a lone slash', '/\n', ['a.json', 'pkg/a.json']);

// Double stars.
atRoot('** at the start', '**/a.json\n', ['a.json', 'pkg/a.json', 'pkg/sub/a.json', 'b.json']);
atRoot('** in the middle', 'pkg/**/a.json\n', [
  'pkg/a.json',
  'pkg/sub/deep/a.json',
  'other/pkg/a.json',
  'pkg/b.json',
]);
atRoot('** at the end', 'pkg/**\n', ['pkg/a.json', 'pkg/sub/a.json', 'a.json']);
atRoot('** alone', '**\n!keep.json\n', ['a.json', 'pkg/keep.json', 'pkg/b.json']);
atRoot('**/ directories', '**/sub/\n', ['sub/a.json', 'pkg/sub/a.json', 'x/sub']);
atRoot('** inside a name', 'a**b.json\n', ['ab.json', 'aXXb.json', 'a.json']);
atRoot('** inside a path element', 'pkg/a**/b.json\n', ['pkg/ab/b.json', 'pkg/a/b.json', 'pkg/b.json']);
atRoot('two ** in a path', '**/sub/**/x.json\n', [
  'sub/x.json',
  'a/sub/b/c/x.json',
  'a/sub/x.json',
  'x.json',
]);

// filepath.Match: classes, ?, *.
atRoot('class', '[ab].json\n', ['a.json', 'b.json', 'c.json', '[ab].json']);
atRoot('negated class', '[^a].json\n', ['a.json', 'b.json', 'é.json']);
atRoot('[!a] is not negation', '[!a].json\n', ['!.json', 'a.json', 'b.json']);
atRoot('class starting with ]', '[]a].json\n', [']a].json', '].json', 'a.json']);
atRoot('class ending in a dash', '[a-].json\n', ['a.json', '-.json']);
atRoot('class starting with a dash', '[-a].json\n', ['a.json', '-.json']);
atRoot('inverted range', '[z-ab].json\n', ['a.json', 'b.json', 'z.json']);
atRoot('escaped ] in a class', '[\\]].json\n', ['].json', '\\.json']);
atRoot('unterminated class', 'a[\n*.yaml\n', ['a[', 'b.yaml']);
atRoot('POSIX class is not special', '[[:alpha:]].json\n', ['a.json', 'a].json', '[.json']);
atRoot('class as literal brackets', 'a[1].json\n', ['a[1].json', 'a1.json']);
atRoot('escaped brackets', 'a\\[1\\].json\n', ['a[1].json', 'a1.json']);
atRoot('? is one character', '?.json\n', ['a.json', 'é.json', '\uFEFF.json', 'ab.json', '😀.json']);
atRoot('escaped star', '\\*.json\n', ['*.json', 'a.json']);
atRoot('several stars', 'a*b*c.json\n', ['aXbYbc.json', 'abc.json', 'aXbYc.jsonx']);
atRoot('trailing backslash', 'a.json\\\n', ['a.json', 'a.json\\']);
atRoot('composed and decomposed accents differ', 'é.json\n', ['é.json', 'e\u0301.json']);

// Validity: a non-FBC file breaks the catalog unless opm ignores it.
const VALID_PKG = `{"schema":"olm.package","name":"foo","defaultChannel":"stable"}
{"schema":"olm.channel","package":"foo","name":"stable","entries":[{"name":"foo.v1.0.0"}]}
{"schema":"olm.bundle","package":"foo","name":"foo.v1.0.0","image":"quay.io/x/foo:v1","properties":[{"type":"olm.package","value":{"packageName":"foo","version":"1.0.0"}}]}
`;
/** A case with no marker files and one broken file: valid only if opm ignores `broken`. */
const verdict = (name: string, ignores: Case['ignores'], broken: string): Case => ({
  name,
  ignores,
  files: [],
  broken: [broken],
});
const verdictCases: Case[] = [
  verdict('BOM pattern leaves the file served', { pkg: '\uFEFFbroken.txt\n' }, 'pkg/broken.txt'),
  verdict('NEL-suffixed pattern ignores the file', { pkg: 'broken.txt\u0085\n' }, 'pkg/broken.txt'),
  verdict('CRLF pattern ignores the file', { pkg: 'broken.txt\r\n' }, 'pkg/broken.txt'),
  verdict('malformed class leaves the file served', { '': '[]broken].txt\n' }, '].txt'),
  verdict(
    'longest line opm reads',
    { '': 'x'.repeat(MAX_INDEX_IGNORE_LINE - 1) + '\nbroken.txt\n' },
    'broken.txt',
  ),
  verdict(
    'a line too long for opm',
    { '': 'broken.txt\n' + 'x'.repeat(MAX_INDEX_IGNORE_LINE) + '\n' },
    'broken.txt',
  ),
];

const BROKEN = 'this is not FBC\n';
const dirs: string[] = [];
afterAll(() => dirs.forEach(removeTree));

function writeCase(c: Case, index: number, extra: Record<string, string> = {}): string {
  const files: Record<string, string | Buffer> = { ...extra };
  for (const [d, text] of Object.entries(c.ignores))
    files[d === '' ? '.indexignore' : `${d}/.indexignore`] = text;
  for (const f of c.files) files[f] = JSON.stringify({ schema: 'test.marker', case: index, file: f }) + '\n';
  for (const f of c.broken ?? []) files[f] = BROKEN;
  const dir = writeTree(files);
  dirs.push(dir);
  return dir;
}

async function catalogBot(args: string[]): Promise<{ code: number; out: string }> {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (c: Buffer) => chunks.push(c));
  const code = await main(args, out, new PassThrough());
  return { code, out: Buffer.concat(chunks).toString('utf8') };
}

/** The blobs of a rendered JSON stream, each as printed, sorted (opm loads files concurrently). */
function blobTexts(rendered: string): string[] {
  if (rendered === '') return [];
  return rendered
    .replace(/\n}\n{/g, '\n}\0{')
    .split('\0')
    .map((b) => b.replace(/\n$/, ''))
    .sort();
}

/** The marker blobs of a rendered JSON stream, as sorted "case file" strings. */
function markers(rendered: string): string[] {
  return blobTexts(rendered)
    .map((b) => JSON.parse(b) as { case?: number; file?: string })
    .filter((b) => b.file !== undefined)
    .map((b) => `${b.case} ${JSON.stringify(b.file)}`)
    .sort();
}

describe.skipIf(!haveOpm)('.indexignore: catalog-bot and opm serve the same files', () => {
  it(`has at least 30 generated cases (${cases.length + verdictCases.length})`, () => {
    expect(cases.length + verdictCases.length).toBeGreaterThanOrEqual(30);
  });

  // One opm process renders every case directory (each its own catalog root), in order.
  const roots = cases.map((c, i) => writeCase(c, i));
  let opmRender: { status: number | null; stdout: string; stderr: string } | undefined;
  const opm = () => (opmRender ??= spawnSync(OPM, ['render', ...roots, '-o', 'json'], { encoding: 'utf8' }));

  cases.forEach((c, i) => {
    it(c.name, async () => {
      const theirs = opm();
      expect(theirs.stderr).toBe('');
      const ours = await catalogBot(['render', roots[i] as string]);
      expect(ours.code).toBe(0);
      const served = markers(theirs.stdout).filter((m) => m.startsWith(`${i} `));
      expect(markers(ours.out)).toEqual(served);
      expect((await catalogBot(['validate', roots[i] as string])).code).toBe(0);
    });
  });

  it('renders each blob byte for byte as opm does, for all cases together', async () => {
    let ours = '';
    for (const root of roots) ours += (await catalogBot(['render', root])).out;
    expect(blobTexts(ours)).toEqual(blobTexts(opm().stdout));
  });

  // The App reads catalogs from git objects, not a directory: the same cases, committed.
  it('reads the same files from a git commit as opm from the directory', async () => {
    const repo = writeTree({});
    roots.forEach((root, i) => cpSync(root, join(repo, `case-${i}`), { recursive: true }));
    git(repo, 'init', '-q');
    git(repo, 'add', '-A');
    git(repo, 'commit', '-qm', 'cases');
    // One load of the whole commit: each case's .indexignore files apply only below case-<i>/,
    // exactly as they do in their own root.
    const loaded = await loadCatalog(new GitTreeSource(repo, 'HEAD', ''), { keepBundleObjects: true });
    expect(loaded.diagnostics.filter((d) => d.level === 'error')).toEqual([]);
    const ours = [...renderJson(loaded.config)].join('');
    expect(markers(ours)).toEqual(markers(opm().stdout));
  });

  // Random patterns over the characters filepath.Match treats specially, each against file
  // names made of the same characters: one opm process for all of them (fixed seed).
  it('agrees on 200 random glob patterns', async () => {
    let seed = 15;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const pick = <T>(xs: T[]): T => xs[random(xs.length)] as T;
    const chars = ['a', 'b', 'é', '-', ']', '^', '[', '!', '#', '*', '\\'];
    const classItem = () =>
      pick([() => pick(chars), () => `${pick(chars)}-${pick(chars)}`, () => `\\${pick(chars)}`])();
    const token = () =>
      pick([
        () => pick(chars.slice(0, 8)),
        () => '*',
        () => '?',
        () => `\\${pick(chars)}`,
        () =>
          `[${random(3) === 0 ? '^' : ''}${Array.from({ length: 1 + random(3) }, classItem).join('')}${random(6) === 0 ? '' : ']'}`,
      ])();
    const name = () => Array.from({ length: 1 + random(3) }, () => pick(chars)).join('');
    const randomCases: Case[] = [];
    for (let i = 0; i < 200; i++) {
      const pattern = Array.from({ length: 1 + random(3) }, token).join('');
      const files = [...new Set(Array.from({ length: 10 }, () => `${pick(['a', 'b'])}/${name()}`))];
      randomCases.push({ name: `random ${i}`, ignores: { '': pattern + '\n' }, files });
    }
    const randomRoots = randomCases.map((c, i) => writeCase(c, i));
    const theirs = spawnSync(OPM, ['render', ...randomRoots, '-o', 'json'], { encoding: 'utf8' });
    expect(theirs.stderr).toBe('');
    let ours = '';
    for (const root of randomRoots) ours += (await catalogBot(['render', root])).out;
    expect(markers(ours)).toEqual(markers(theirs.stdout));
    // Some files were served and some ignored, so the comparison says something.
    const served = markers(theirs.stdout).length;
    const total = randomCases.reduce((n, c) => n + c.files.length, 0);
    expect(served).toBeGreaterThan(total / 10);
    expect(served).toBeLessThan(total);
  });

  for (const c of verdictCases) {
    it(`verdict: ${c.name}`, async () => {
      const dir = writeCase(c, -1, { 'pkg/catalog.json': VALID_PKG });
      const theirs = opmValidate(dir);
      const ours = await catalogBot(['validate', dir]);
      expect(ours.code === 0).toBe(theirs.valid);
      const theirRender = spawnSync(OPM, ['render', dir, '-o', 'json'], { encoding: 'utf8' });
      const ourRender = await catalogBot(['render', dir]);
      expect(ourRender.code === 0).toBe(theirRender.status === 0);
      if (ourRender.code === 0) expect(blobTexts(ourRender.out)).toEqual(blobTexts(theirRender.stdout));
    });
  }
});

describe.skipIf(!haveOpm)('YAML document separators are trimmed as Go does', () => {
  // apimachinery's YAMLReader calls a `---` line followed by anything but spaces (TrimSpace) or a
  // comment an invalid separator, and opm fails the catalog.
  for (const [label, c] of Object.entries({ ...chars, 'comment after BOM': '\uFEFF# x', comment: ' # x' })) {
    it(`--- followed by ${label}`, async () => {
      const dir = writeTree({ 'c.yaml': `schema: test.a\nname: one\n---${c}\nschema: test.b\nname: two\n` });
      dirs.push(dir);
      const ours = await catalogBot(['validate', dir]);
      expect(ours.code === 0).toBe(opmValidate(dir).valid);
    });
  }
});
