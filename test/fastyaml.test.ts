// The fast YAML path against the full reader (js-yaml with the go-yaml schema): on every
// file of the real catalogs, the real repository and the real templates, and on mutants of
// them, both must give the same values, the same lines of blobs and collections, and the
// same problems and notes. The fast path must also take most real documents.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import {
  decodeFile,
  lineOf,
  yamlDocumentsRead,
  type DecodedFile,
  type LineTable,
} from '../src/catalog/fbc/decode.js';
import { readFastYamlDocument } from '../src/catalog/fbc/fast/fastyaml.js';
import { SHARED_DATA } from './helpers/oracle.js';

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    return e.isDirectory() ? filesUnder(p) : e.isFile() ? [p] : [];
  });
}

/** Every collection down to the recorded depth, with the line lineOf gives it (pre-order). */
function collectionLines(
  value: unknown,
  root: LineTable | undefined,
  depth = 1,
  out: (number | undefined)[] = [],
): (number | undefined)[] {
  if (typeof value !== 'object' || value === null || depth > 5) return out;
  out.push(lineOf(root, value));
  for (const child of Array.isArray(value) ? value : Object.values(value))
    collectionLines(child, root, depth + 1, out);
  return out;
}

function view(decoded: DecodedFile): unknown {
  return {
    values: decoded.values.map((v) => ({ ...v, lines: collectionLines(v.value, v.lines) })),
    problems: decoded.problems,
    notes: decoded.notes,
  };
}

/** Decode with and without the fast path; the results must be equal. Returns the documents read fast. */
function expectSameAsFullReader(bytes: Buffer, name: string): { fast: number; full: number } {
  const before = { ...yamlDocumentsRead };
  const fast = decodeFile(bytes);
  const counted = { fast: yamlDocumentsRead.fast - before.fast, full: yamlDocumentsRead.full - before.full };
  const full = decodeFile(bytes, { fullReaderOnly: true });
  // Key order matters too (it is what a render writes back); isDeepStrictEqual tells NaN and
  // -0 apart, and is much faster than expect().toEqual on whole catalogs (used for the diff).
  const [a, b] = [view(fast), view(full)];
  if (!isDeepStrictEqual(a, b) || JSON.stringify(a) !== JSON.stringify(b)) {
    expect(JSON.stringify(a), name).toBe(JSON.stringify(b));
    expect(a, name).toEqual(b);
  }
  return counted;
}

/**
 * expectSameAsFullReader once per distinct content: decoding depends on the bytes only, and
 * the real data holds many copies (a package's catalog is often the same in several
 * OpenShift versions; half of the real repository's YAML bytes are copies). A copy counts
 * its documents as the first did, so the shares below are those of every file.
 */
const readByContent = new Map<string, { fast: number; full: number }>();
function expectSameAsFullReaderOnce(bytes: Buffer, name: string): { fast: number; full: number } {
  const key = createHash('sha256').update(bytes).digest('hex');
  let counted = readByContent.get(key);
  if (!counted) readByContent.set(key, (counted = expectSameAsFullReader(bytes, name)));
  return counted;
}

const realFiles = ['real-catalogs', 'real-repo', 'real-templates'].flatMap((d) =>
  filesUnder(join(SHARED_DATA, d)).filter((f) => !/\.(md|patch)$|LICENSE$/.test(f)),
);

describe('fast YAML path', () => {
  it('reads every real catalog, repository and template file exactly as the full reader, and most documents itself', () => {
    expect(realFiles.length).toBeGreaterThan(100);
    let fast = 0;
    let full = 0;
    let fastBytes = 0;
    let totalBytes = 0;
    const catalogs = { fast: 0, full: 0 };
    for (const file of realFiles) {
      const bytes = readFileSync(file);
      const n = expectSameAsFullReaderOnce(bytes, file);
      fast += n.fast;
      full += n.full;
      totalBytes += bytes.length;
      if (n.full === 0 && n.fast > 0) fastBytes += bytes.length;
      if (file.includes('/real-catalogs/')) {
        catalogs.fast += n.fast;
        catalogs.full += n.full;
      }
    }
    // Share of YAML documents, and of bytes in files read entirely by the fast path.
    const share = fast / (fast + full);
    console.log(
      `fast path: ${fast} of ${fast + full} YAML documents (${(share * 100).toFixed(1)}%), ` +
        `${((fastBytes / totalBytes) * 100).toFixed(1)}% of ${(totalBytes / 1e6).toFixed(1)} MB in files read only by it`,
    );
    expect(share).toBeGreaterThan(0.9);
    // What opm renders (the real catalogs) is read by the fast path almost entirely.
    expect(catalogs.fast / (catalogs.fast + catalogs.full)).toBeGreaterThan(0.98);
  }, 120_000); // 60 MB read twice: minutes on a busy 2-core machine

  it('reads real files with CRLF line ends itself, exactly as the full reader reads them', () => {
    // Every real YAML file of the six-package repository (catalogs, templates, bundle manifests).
    const files = realFiles.filter((f) => f.includes('/real-repo/') && /\.ya?ml$/.test(f));
    expect(files.length).toBeGreaterThan(50);
    let fast = 0;
    let full = 0;
    for (const file of files) {
      const crlf = readFileSync(file, 'utf8').replace(/\n/g, '\r\n');
      const n = expectSameAsFullReaderOnce(Buffer.from(crlf), `${file} (CRLF)`);
      fast += n.fast;
      full += n.full;
    }
    expect(fast / (fast + full)).toBeGreaterThan(0.9);
  }, 120_000);

  it('gives up on what it does not read exactly as the full reader', () => {
    const givesUp = [
      'a: &x 1\nb: *x\n', // anchors and aliases
      'a: !!str 1\n', // tags
      'a: [1, 2]\n', // flow collections
      'a: {b: 1}\n',
      '? a\n: b\n', // complex keys
      'a:\n\tb: 1\n', // tabs
      'a: 1\n b: 2\n', // odd indentation
      'a: >\n  folded\n', // folded scalar
      'a: |+\n  kept\n\n', // keep chomping
      'a: |2 # comment\n   x\n',
      'a: |0\n  x\n',
      'a: 1 # comment\n',
      'a: one\n  # not a comment\n', // a comment line that the scalar would take
      'a: "tab\there"\n', // tabs in quoted scalars
      'a: "one\n  \n  two"\n', // a line of spaces in a folded scalar
      'a: "one\ntwo"\n', // a continuation not indented more than its key
      'a: 1\r\nb: 2\r\n',
      '\ufeffa: 1\n',
      'a: 1\na: 2\n', // duplicate keys
      'yes: 1\n', // keys that resolve to something else
      '1: a\n',
      '__proto__: a\n',
      'a: "\\/"\n', // escapes opm reads differently (yaml-screen.ts)
      'a: "\\ud800"\n',
      'a: "\\U0000DFFF"\n',
      `${'k'.repeat(1001)}: 1\n`, // a key longer than the screen allows
      '<<: {a: 1}\n',
      'a: <<\n',
      '- a\n- b\n', // a sequence at the root
      'a:\n-\n  b: 1\n', // an item on the next line
      'a:\n- - b\n',
      'a: b: c\n',
      'a: x:\n',
      'a:  two spaces\n',
      'a: trailing \n',
      '  \na: 1\n', // a line of spaces
      'a: |\n\n  x\n  \n', // fine
      'a: |\nb: 1\n', // an empty block
      '--- # comment\na: 1\n',
      '%YAML 1.1\n---\na: 1\n',
      'a: @x\n',
    ];
    const outcomes = givesUp.map((t) => [t, readFastYamlDocument(t, 4) === undefined]);
    // Only the one well-formed literal block in the list is read.
    expect(outcomes.filter(([, gaveUp]) => !gaveUp).map(([t]) => t)).toEqual(['a: |\n\n  x\n  \n']);
  });

  it('reads the subset it claims, with the same values as the full reader', () => {
    const docs = [
      '---\nschema: olm.package\nname: x\ndefaultChannel: stable\nicon:\n  base64data: AAAA\n  mediatype: image/png\n',
      'a: yes\nb: on\nc: 0777\nd: 0x1F\ne: 1e3\nf: .5\ng: ~\nh: 2001-12-14\ni: -.inf\nj: "yes"\nk: \'on\'\nl: 1_000\nm: +12\n',
      'entries:\n- name: a\n  skips:\n  - b\n  - c\n- name: d\n  replaces: a\nother:\n  - x\n  - y\n',
      "entries:\n- name: a\n  skipRange: '>=1.0.0 <1.2.0'\nempty: []\nobj: {}\nnull1:\nz: last\n",
      'a: |-\n  line one\n\n    indented\n  last\nb: |\n  kept newline\n\n\nc: "esc \\" \\\\ \\n \\u00e9"\n',
      'a: |2-\n\n    indented\n  x\nb:\n- |-2\n     y\n   z\n- |1\n  w\n',
      'x:\n  why:\n    z:\n      w:\n        v:\n          u: deep\n',
      '"quoted key": 1\n\'single key\': 2\n"y": 3\n',
      'image: quay.io/x/y@sha256:abc\nurl: https://x.io/a#b\nlist: a,b,[c]\n',
      'a: one\n  two\nb: "one\n  two"\nc: "\\x41\\u00e9\\U0001F600 \\e\\N"\nd: \'it\'\'s\n  long\'\n',
      '# comment\na: 1\nargs:\n  # indented comment\n- --flag\n- -x\n# last\n',
      'description: a long plain\n  text folded\n\n  over lines\nq: \'single\n  folded\'\nd: "double \\\n  joined\n  folded"\n',
    ];
    for (const doc of docs) {
      const read = expectSameAsFullReader(Buffer.from(doc), doc);
      expect(read, doc).toEqual({ fast: 1, full: 0 });
    }
  });

  it('agrees with the full reader on mutants of real files', () => {
    // Small real documents, mutated line by line and character by character (fixed seed).
    const sources = realFiles
      .filter((f) => statSync(f).size < 200_000)
      .slice(0, 40)
      .map((f) => readFileSync(f, 'utf8'));
    const rnd = random(20261125);
    const CHARS = [
      ' ',
      ':',
      '-',
      '#',
      '"',
      "'",
      '|',
      '\n',
      '\t',
      '  ',
      '- ',
      ': ',
      '[]',
      '{}',
      '\\',
      'é',
      '\r',
      '\x01',
      '\x85',
      '\u2028',
    ];
    let mutants = 0;
    let fastMutants = 0;
    for (let i = 0; i < 600; i++) {
      const text = sources[rnd(sources.length)] ?? '';
      // A window of the file, so that each mutant is small and the mutation matters.
      const lines = text.split('\n');
      const from = rnd(Math.max(lines.length - 30, 1));
      let window = lines.slice(from, from + 30);
      const indent = Math.min(...window.filter((l) => l.trim()).map((l) => /^ */.exec(l)?.[0].length ?? 0));
      window = window.map((l) => l.slice(indent));
      let t = window.join('\n') + '\n';
      for (let k = 1 + rnd(3); k > 0; k--) {
        const at = rnd(t.length);
        const c = CHARS[rnd(CHARS.length)] ?? '';
        switch (rnd(4)) {
          case 0:
            t = t.slice(0, at) + c + t.slice(at);
            break;
          case 1:
            t = t.slice(0, at) + t.slice(at + 1 + rnd(3));
            break;
          case 2:
            t = t.slice(0, at) + c + t.slice(at + 1);
            break;
          default: {
            const ls = t.split('\n');
            const j = rnd(ls.length);
            ls.splice(j, 0, ls[rnd(ls.length)] ?? '');
            t = ls.join('\n');
          }
        }
      }
      const read = expectSameAsFullReader(Buffer.from(t), t);
      mutants++;
      if (read.fast > 0) fastMutants++;
    }
    expect(mutants).toBe(600);
    // Enough mutants stay in the subset for the comparison to mean something.
    expect(fastMutants).toBeGreaterThan(100);
  });
});

function random(seed: number): (n: number) => number {
  let s = seed;
  return (n) => {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    return s % n;
  };
}
