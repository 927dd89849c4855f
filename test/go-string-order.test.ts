// Go orders strings by their UTF-8 bytes, JavaScript's `<` and sort() by UTF-16 code units:
// the two differ when a character past U+FFFF meets one from U+E000 to U+FFFF. Wherever the
// bot repeats opm's order (messages, render) it uses goStringCompare; checked here against
// UTF-8 bytes directly and against the real opm.
import { spawnSync } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { DirectorySource, loadCatalog, renderJson, validateCatalog } from '../src/catalog/index.js';
import { goStringCompare } from '../src/catalog/go/gostrings.js';
import { haveOpm, OPM, opmValidate, removeTree, writeTree } from './helpers/oracle.js';

const FULLWIDTH = '\uff01'; // ！ (U+FF01): after every surrogate in UTF-16, before U+1F600 in UTF-8
const EMOJI = '\u{1f600}'; // 😀

function random(seed: number): (n: number) => number {
  let s = seed;
  return (n) => {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    return s % n;
  };
}

const dirs: string[] = [];
afterAll(() => dirs.forEach(removeTree));

/** A package whose channel has two heads, and a second channel, named with both characters. */
function catalog(oddImages: boolean): string {
  const a = `p.v1.0.0-${FULLWIDTH}`;
  const b = `p.v1.0.0-${EMOJI}`;
  const bundle = (name: string, version: string) => ({
    schema: 'olm.bundle',
    package: 'p',
    name,
    image: `quay.io/example/p:${version}`,
    properties: [{ type: 'olm.package', value: { packageName: 'p', version } }],
    // Image names opm's validation refuses (render takes them as they are).
    relatedImages: oddImages
      ? [
          { name: 'x', image: `quay.io/example/a:${version}` },
          { name: 'y', image: `quay.io/example/p:${version}-${FULLWIDTH}` },
          { name: 'z', image: `quay.io/example/p:${version}-${EMOJI}` },
        ]
      : [],
  });
  const docs = [
    { schema: 'olm.package', name: 'p', defaultChannel: `c-${FULLWIDTH}` },
    { schema: 'olm.channel', package: 'p', name: `c-${EMOJI}`, entries: [{ name: a }] },
    { schema: 'olm.channel', package: 'p', name: `c-${FULLWIDTH}`, entries: [{ name: a }, { name: b }] },
    bundle(b, '1.0.1'),
    bundle(a, '1.0.0'),
  ];
  const dir = writeTree({ 'p/catalog.json': docs.map((d) => JSON.stringify(d)).join('\n') + '\n' });
  dirs.push(dir);
  return dir;
}

describe('Go string order', () => {
  it('goStringCompare orders as UTF-8 bytes, surrogates and lone surrogates included', () => {
    const rnd = random(20261126);
    const pieces = [
      'a',
      'z',
      '\u00e9',
      '\ud7ff',
      '\ue000',
      FULLWIDTH,
      '\uffff',
      EMOJI,
      '\u{10ffff}',
      '\ud83d',
      '\ude00',
    ];
    const strings = Array.from({ length: 400 }, () =>
      Array.from({ length: 1 + rnd(4) }, () => pieces[rnd(pieces.length)]).join(''),
    );
    for (let i = 0; i + 1 < strings.length; i++) {
      const [x, y] = [strings[i]!, strings[i + 1]!];
      expect(Math.sign(goStringCompare(x, y)), `${JSON.stringify(x)} ${JSON.stringify(y)}`).toBe(
        Math.sign(Buffer.compare(Buffer.from(x), Buffer.from(y))),
      );
    }
    expect(goStringCompare(FULLWIDTH, EMOJI)).toBeLessThan(0);
    expect(FULLWIDTH < EMOJI).toBe(false); // what the bot got wrong before
  });

  it.skipIf(!haveOpm)('lists channel heads in the order opm does', async () => {
    const dir = catalog(false);
    const ours = await validateCatalog(new DirectorySource(dir));
    const heads = ours.diagnostics.find((d) => d.rule === 'C-MULTIPLE-HEADS');
    expect(heads?.message).toContain(`p.v1.0.0-${FULLWIDTH}, p.v1.0.0-${EMOJI}`);
    const opm = opmValidate(dir);
    expect(opm.valid).toBe(false);
    expect(opm.message).toContain(heads!.message.replace(/^invalid package "p", channel "[^"]*": /, ''));
  });

  it.skipIf(!haveOpm)('renders channels and related images in the order opm does', async () => {
    const dir = catalog(true);
    const loaded = await loadCatalog(new DirectorySource(dir), { keepBundleObjects: true });
    const ours = [...renderJson(loaded.config)].join('');
    const opm = spawnSync(OPM, ['render', dir, '-o', 'json'], { encoding: 'utf8' });
    expect(opm.status, opm.stderr).toBe(0);
    expect(ours).toBe(opm.stdout);
    expect(ours.indexOf(`c-${FULLWIDTH}"`)).toBeLessThan(ours.indexOf(`c-${EMOJI}"`));
  });
});
