import { spawnSync } from 'node:child_process';
import { symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { DirectorySource, validateCatalog } from '../src/catalog/index.js';
import {
  goFilepathMatch,
  IndexIgnore,
  indexIgnoreProblem,
  MAX_INDEX_IGNORE_LINE,
  parseIndexIgnore,
} from '../src/catalog/fbc/indexignore.js';
import { runPrChecks } from '../src/checks/pr.js';
import { main } from '../src/cli.js';
import { haveOpm, OPM, opmValidate, removeTree, writeTree } from './helpers/oracle.js';
import { commitBaseAndPr } from './helpers/git.js';

const BROKEN = 'this is not FBC\n';

// Each case: .indexignore files (by directory) and the path of a broken file; opm's
// verdict says whether the file was ignored.
const cases: { name: string; ignores: Record<string, string>; broken: string }[] = [
  { name: 'plain name at any depth', ignores: { '': 'README.md\n' }, broken: 'pkg/sub/README.md' },
  { name: 'star matches extension', ignores: { '': '*.md\n' }, broken: 'pkg/README.md' },
  { name: 'star does not match other extension', ignores: { '': '*.md\n' }, broken: 'pkg/notes.txt' },
  { name: 'ignore all, re-include yaml', ignores: { '': '*\n!*.yaml\n' }, broken: 'pkg/broken.yaml' },
  {
    name: 'ignore all, re-include yaml, txt stays ignored',
    ignores: { '': '*\n!*.yaml\n' },
    broken: 'pkg/notes.txt',
  },
  { name: 'directory pattern ignores files below', ignores: { '': 'docs/\n' }, broken: 'pkg/docs/a.txt' },
  {
    name: 'directory pattern does not match a file of that name',
    ignores: { '': 'docs/\n' },
    broken: 'pkg/docs',
  },
  { name: 'leading slash anchors to the ignore file', ignores: { '': '/top.txt\n' }, broken: 'pkg/top.txt' },
  { name: 'leading slash anchored match', ignores: { '': '/top.txt\n' }, broken: 'top.txt' },
  { name: 'double star prefix', ignores: { '': '**/x.txt\n' }, broken: 'a/b/c/x.txt' },
  { name: 'double star in the middle', ignores: { '': 'a/**/x.txt\n' }, broken: 'a/b/c/x.txt' },
  { name: 'path pattern is anchored', ignores: { '': 'b/x.txt\n' }, broken: 'a/b/x.txt' },
  { name: 'character class', ignores: { '': '[rR]EADME.*\n' }, broken: 'pkg/README.md' },
  { name: 'question mark', ignores: { '': 'READM?.md\n' }, broken: 'pkg/README.md' },
  { name: 'comment and blank lines', ignores: { '': '# README.md\n\n   \n' }, broken: 'README.md' },
  { name: 'spaces around a pattern are trimmed', ignores: { '': '   README.md   \n' }, broken: 'README.md' },
  {
    name: 'nested ignore file scoped to its directory',
    ignores: { pkg: 'README.md\n' },
    broken: 'pkg/README.md',
  },
  {
    name: 'nested ignore file does not reach siblings',
    ignores: { pkg: 'README.md\n' },
    broken: 'other/README.md',
  },
  { name: 'later negation wins', ignores: { '': '*.md\n!README.md\n' }, broken: 'README.md' },
  {
    name: 'nested negation overrides root',
    ignores: { '': '*.md\n', pkg: '!README.md\n' },
    broken: 'pkg/README.md',
  },
  { name: 'malformed class matches nothing', ignores: { '': '[README.md\n' }, broken: '[README.md' },
];

const dirs: string[] = [];
afterAll(() => dirs.forEach(removeTree));

const valid = `{"schema":"olm.package","name":"foo","defaultChannel":"stable"}
{"schema":"olm.channel","package":"foo","name":"stable","entries":[{"name":"foo.v1.0.0"}]}
{"schema":"olm.bundle","package":"foo","name":"foo.v1.0.0","image":"quay.io/x/foo:v1","properties":[{"type":"olm.package","value":{"packageName":"foo","version":"1.0.0"}}]}
`;

describe.skipIf(!haveOpm)('.indexignore agrees with opm', () => {
  for (const c of cases) {
    it(c.name, async () => {
      const files: Record<string, string> = { 'pkg/catalog.yaml.json': valid, [c.broken]: BROKEN };
      for (const [dir, text] of Object.entries(c.ignores))
        files[dir === '' ? '.indexignore' : `${dir}/.indexignore`] = text;
      const dir = writeTree(files);
      dirs.push(dir);
      const opm = opmValidate(dir);
      const ours = await validateCatalog(new DirectorySource(dir));
      expect(ours.valid).toBe(opm.valid);
      const matcher = new IndexIgnore(
        Object.entries(c.ignores).flatMap(([d, text]) => parseIndexIgnore(text, d)),
      );
      expect(matcher.ignores(c.broken)).toBe(opm.valid);
    });
  }
});

describe('Go filepath.Match', () => {
  it('matches like Go', () => {
    expect(goFilepathMatch('*.yaml', 'a.yaml')).toBe(true);
    expect(goFilepathMatch('*.yaml', 'a.yml')).toBe(false);
    expect(goFilepathMatch('[^a]*', 'b.yaml')).toBe(true);
    expect(goFilepathMatch('[^a]*', 'a.yaml')).toBe(false);
    expect(goFilepathMatch('[a-c]?', 'bz')).toBe(true);
    expect(goFilepathMatch('\\*', '*')).toBe(true);
    expect(goFilepathMatch('\\*', 'x')).toBe(false);
    expect(goFilepathMatch('[', '[')).toBe(false); // bad pattern
  });
});

describe('.indexignore lines are trimmed with Go strings.TrimSpace', () => {
  const names = (text: string, files: string[]) => {
    const m = new IndexIgnore(parseIndexIgnore(text, 'pkg'));
    return files.filter((f) => m.ignores(f));
  };

  it('keeps a byte-order mark, so the pattern names a different file', () => {
    expect(names('\uFEFFnotes.yaml\n', ['pkg/notes.yaml', 'pkg/\uFEFFnotes.yaml'])).toEqual([
      'pkg/\uFEFFnotes.yaml',
    ]);
  });

  it('strips U+0085, U+00A0, U+3000, U+2028, tabs and CR at both ends', () => {
    for (const space of [
      '\u0085',
      '\u00A0',
      '\u3000',
      '\u2028',
      '\u1680',
      '\u205F',
      '\t',
      '\v',
      '\f',
      '\r',
    ]) {
      expect(names(`${space}notes.yaml${space}\r\n`, ['pkg/notes.yaml', `pkg/notes.yaml${space}`])).toEqual([
        'pkg/notes.yaml',
      ]);
    }
  });

  it('keeps characters that are not White_Space (zero-width space, U+180E)', () => {
    for (const kept of ['\u200B', '\u180E', '\uFEFF']) {
      expect(names(`notes.yaml${kept}`, ['pkg/notes.yaml', `pkg/notes.yaml${kept}`])).toEqual([
        `pkg/notes.yaml${kept}`,
      ]);
    }
  });

  it('treats `\\#` and `\\!` as literal names and `!` as re-inclusion', () => {
    expect(names('#x.json\n\\#x.json\n', ['pkg/#x.json', 'pkg/x.json'])).toEqual(['pkg/#x.json']);
    expect(names('\\!x.json\n', ['pkg/!x.json', 'pkg/x.json'])).toEqual(['pkg/!x.json']);
    expect(names('*.json\n!x.json\n', ['pkg/y.json', 'pkg/x.json'])).toEqual(['pkg/y.json']);
  });
});

describe('.indexignore problems opm would not read as the bot does', () => {
  it('fails a line of 64 KiB or more (opm: bufio.Scanner: token too long)', () => {
    expect(indexIgnoreProblem(Buffer.from('x'.repeat(MAX_INDEX_IGNORE_LINE - 1) + '\n'))).toBeUndefined();
    expect(indexIgnoreProblem(Buffer.from('a\n' + 'x'.repeat(MAX_INDEX_IGNORE_LINE)))).toMatch(
      /token too long/,
    );
  });

  it('fails bytes that are not UTF-8 (Go compares them raw; decoding would merge them)', async () => {
    const bad = Buffer.from([0xfe, 0x6e, 0x2e, 0x79, 0x61, 0x6d, 0x6c, 0x0a]);
    expect(indexIgnoreProblem(bad)).toMatch(/not valid UTF-8/);
    const dir = writeTree({ 'pkg/catalog.json': valid, 'pkg/.indexignore': bad });
    dirs.push(dir);
    const report = await validateCatalog(new DirectorySource(dir));
    expect(report.valid).toBe(false);
    expect(report.diagnostics).toContainEqual(
      expect.objectContaining({ rule: 'L-INDEXIGNORE', file: 'pkg/.indexignore', level: 'error' }),
    );
  });

  it('fails a file name that is not UTF-8 in a directory, as opm does', async () => {
    const dir = writeTree({ 'pkg/catalog.json': valid, '.indexignore': '*.txt\n' });
    dirs.push(dir);
    writeFileSync(
      Buffer.concat([Buffer.from(join(dir, 'pkg') + '/'), Buffer.from([0xff, 0x2e, 0x6a])]),
      '{}',
    );
    const report = await validateCatalog(new DirectorySource(dir));
    expect(report.valid).toBe(false);
    expect(report.diagnostics).toContainEqual(
      expect.objectContaining({
        rule: 'L-FS',
        file: 'pkg/\uFFFD.j',
        message: expect.stringMatching(/not valid UTF-8/),
      }),
    );
    if (haveOpm) expect(opmValidate(dir).valid).toBe(false);
  });

  it('fails a dangling .indexignore symlink, as opm does', async () => {
    const dir = writeTree({ 'pkg/catalog.json': valid });
    dirs.push(dir);
    symlinkSync('missing', join(dir, 'pkg/.indexignore'));
    const report = await validateCatalog(new DirectorySource(dir));
    expect(report.valid).toBe(false);
    expect(report.diagnostics).toContainEqual(
      expect.objectContaining({ rule: 'L-INDEXIGNORE', file: 'pkg/.indexignore' }),
    );
    if (haveOpm) expect(opmValidate(dir).valid).toBe(false);
  });
});

/** A pattern, a name, and whether Go's filepath.Match matches them. */
type GoMatch = [pattern: string, name: string, matches: boolean];
// Where Go differs from other globs.
const GO_MATCH_QUIRKS: GoMatch[] = [
  ['[]a]', ']', false],
  ['[]a]', 'a', false],
  ['[-a]', 'a', false],
  ['[a-]', 'a', false],
  ['[^]a]', 'b', false],
  ['[z-ab]', 'b', true],
  ['[z-a]', 'b', false],
  ['[\\]]', ']', true],
  ['[!a]', '!', true], // Go negates with ^ only
  ['a*b*c', 'aXbYbc', true],
  ['a*b', 'aXbYc', false],
  ['?', 'é', true],
  ['*x[', 'ax', false], // malformed tail
  ['a\\', 'a', false],
];

describe('Go filepath.Match quirks', () => {
  it('calls classes starting with ] or - and ranges ending in ] malformed, and an inverted range empty', () => {
    for (const [pattern, file, matches] of GO_MATCH_QUIRKS)
      expect(goFilepathMatch(pattern, file), `${pattern} on ${file}`).toBe(matches);
  });
});

describe('catalog-bot check reads files as opm does', () => {
  const pkg = (name: string, version: string, image: string) =>
    [
      `{"schema":"olm.package","name":"${name}","defaultChannel":"stable"}`,
      channel(name, 'stable', version),
      bundle(name, version, image),
    ].join('\n') + '\n';
  const channel = (name: string, ch: string, version: string) =>
    `{"schema":"olm.channel","package":"${name}","name":"${ch}","entries":[{"name":"${name}.v${version}"}]}`;
  const bundle = (name: string, version: string, image: string) =>
    `{"schema":"olm.bundle","package":"${name}","name":"${name}.v${version}","image":"${image}","properties":[{"type":"olm.package","value":{"packageName":"${name}","version":"${version}"}}]}`;
  const root = 'catalogs/v4.21';
  const evilFoo =
    [channel('foo', 'fast', '1.1.0'), bundle('foo', '1.1.0', 'quay.io/carol/evil:v1')].join('\n') + '\n';

  /** A repository whose main holds foo (alice's) and bar (carol's); branch pr is main plus `edit`. */
  const ownedRepo = (edit: (repo: string) => void): string => {
    const repo = writeTree({
      '.github/catalog-bot.yml':
        'catalogs: [catalogs/*]\nmaintainers: [mia]\nownership:\n  ownersFiles: true\n',
      [`${root}/.indexignore`]: 'OWNERS\n',
      [`${root}/foo/catalog.json`]: pkg('foo', '1.0.0', 'quay.io/foo/foo:v1'),
      [`${root}/foo/OWNERS`]: 'approvers: [alice]\n',
      [`${root}/bar/catalog.json`]: pkg('bar', '1.0.0', 'quay.io/bar/bar:v1'),
      [`${root}/bar/OWNERS`]: 'approvers: [carol]\n',
    });
    dirs.push(repo);
    return commitBaseAndPr(repo, edit);
  };
  const opmRender = (repo: string) =>
    spawnSync(OPM, ['render', join(repo, root), '-o', 'json'], { encoding: 'utf8' });

  type Checks = {
    name: string;
    conclusion: string;
    findings: { rule: string; package: string; message: string }[];
  }[];
  const checkAsCarol = async (repo: string): Promise<Checks> => {
    const out = new PassThrough();
    const chunks: Buffer[] = [];
    out.on('data', (c: Buffer) => chunks.push(c));
    await main(
      ['check', '--repo', repo, '--base', 'main', '--head', 'pr', '--format', 'json', '--author', 'carol'],
      out,
      new PassThrough(),
    );
    return (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { checks: Checks }).checks;
  };

  it("needs foo's owners when bar's owner hides a foo bundle behind a BOM pattern", async () => {
    const repo = ownedRepo((repo) => {
      // Go's TrimSpace keeps U+FEFF, so opm ignores only a file named "\uFEFFnotes.yaml" and
      // serves notes.yaml with its new foo channel and bundle.
      writeFileSync(join(repo, root, 'bar/.indexignore'), '\uFEFFnotes.yaml\n');
      writeFileSync(join(repo, root, 'bar/notes.yaml'), evilFoo);
    });
    // The attack is real: opm serves carol's foo bundle.
    if (haveOpm) expect(opmRender(repo).stdout).toContain('quay.io/carol/evil:v1');
    const permissions = (await checkAsCarol(repo)).find((c) => c.name === 'catalog-bot/permissions')!;
    expect(permissions.conclusion).toBe('failure');
    expect(permissions.findings).toContainEqual(
      expect.objectContaining({
        rule: 'PERM-NOT-APPROVED',
        package: 'foo',
        message: expect.stringContaining('alice'),
      }),
    );
    // The same pull request approved by foo's owner goes through.
    const approved = await runPrChecks({
      repo,
      base: 'main',
      head: 'pr',
      author: 'carol',
      approvers: ['alice'],
    });
    expect(approved.checks.find((c) => c.name === 'catalog-bot/permissions')!.conclusion).toBe('success');
  });

  it('fails a file whose name is not UTF-8, as opm does, instead of confusing it with another', async () => {
    // Decoded lossily, "x\xfe.yaml" and "x\xff.yaml" are one path: the bot would read one blob
    // twice and never the other. opm cannot open such a name and fails the whole catalog.
    const repo = ownedRepo((repo) => {
      const dir = Buffer.from(join(repo, root, 'bar') + '/');
      const name = (byte: number) => Buffer.concat([dir, Buffer.from([0x78, byte]), Buffer.from('.yaml')]);
      writeFileSync(name(0xff), '{"schema":"bar.note"}\n');
      writeFileSync(name(0xfe), evilFoo);
    });
    if (haveOpm) expect(opmRender(repo).stderr).toMatch(/invalid argument/);
    const checks = await checkAsCarol(repo);
    const validate = checks.find((c) => c.name === 'catalog-bot/validate')!;
    expect(validate.conclusion).toBe('failure');
    expect(validate.findings).toContainEqual(
      expect.objectContaining({ rule: 'L-FS', message: expect.stringMatching(/not valid UTF-8/) }),
    );
  });
});
