import { afterAll, describe, expect, it } from 'vitest';
import { DirectorySource, validateCatalog } from '../src/catalog/index.js';
import { goFilepathMatch, IndexIgnore, parseIndexIgnore } from '../src/catalog/indexignore.js';
import { haveOpm, opmValidate, removeTree, writeTree } from './helpers/oracle.js';

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
