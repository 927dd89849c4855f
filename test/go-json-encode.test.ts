// The one Go JSON encoder (src/catalog/go/gojsonencode.ts): its corners against the real
// opm where opm writes them (render, render-template, validate's message), and against
// encoding/json's documented behaviour for json.Marshal, which opm shows only through
// bundle images (test/bundle-render.test.ts covers those).
import { spawnSync } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { DirectorySource, loadCatalog, renderJson } from '../src/catalog/index.js';
import { goJsonEncode, RawJson } from '../src/catalog/go/gojsonencode.js';
import { renderTemplateText } from '../src/catalog/templates/index.js';
import { haveOpm, OPM, opmValidate, removeTree, writeTree } from './helpers/oracle.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach(removeTree));

// Written as JSON text so the escapes reach opm as they are: HTML characters, the
// JavaScript line terminators, lone surrogates (Go's decoder makes them U+FFFD), control
// characters with and without short escapes, keys Go sorts bytewise (integer-like keys,
// which JavaScript objects put first; U+E000 before an astral character, which UTF-16
// order puts after), negative zero and floats at the exponent thresholds.
const corner = String.raw`{"z":"<>&","9":1,"10":2,"a":"\u2028 \u2029 \ud800 x\udc00 \ud83d\ude00","\ue000":1e3,"\ud83d\ude00":1.0,"n":[1e21,1e20,1e-7,1e-6,-0,12345678901234567890,1.5e300,0.1,-1.25e-9],"h":"\u007f\u0085\u00e9 \b\f\u0001\u001f\t\"\\/","e":{},"l":[],"deep":{"b":[{"y":1,"x":{}}],"a":null}}`;
const pkg = `{"schema":"olm.package","name":"bar","defaultChannel":"a","description":"<b>&\u2028\ud800","properties":[{"type":"x.y","value":${corner}}]}`;
const channel = `{"schema":"olm.channel","package":"bar","name":"a","entries":[{"name":"bar.v1.0.0"}]}`;
const bundle = `{"schema":"olm.bundle","package":"bar","name":"bar.v1.0.0","image":"q.io/x:1","properties":[{"type":"olm.package","value":{"packageName":"bar","version":"1.0.0"}},{"type":"x.z","value":${corner}}]}`;
const other = `{"schema":"my.x","package":"bar","name":"o","data":${corner}}`;
const rootBlob = `{"schema":"root.x","data":${corner}}`;

/** The corners are in opm's output, so a test below cannot pass by missing them. */
function expectCorners(opmOut: string): void {
  expect(opmOut).toContain('"\\u2028 \\u2029 \ufffd x\ufffd \ud83d\ude00"');
  expect(opmOut).toContain('"z": "<>&"');
  expect(opmOut).toMatch(/"10": 2,\s+"9": 1,/);
  expect(opmOut).toMatch(/"\ue000": 1000,\s+"\ud83d\ude00": 1\s/);
  expect(opmOut).toMatch(/1e\+21,\s+100000000000000000000,\s+1e-7,\s+0\.000001,\s+-0,/);
  expect(opmOut).toContain('"h": "\u007f\u0085é \\b\\f\\u0001\\u001f\\t\\"\\\\/"');
}

describe.skipIf(!haveOpm)('the Go JSON encoder = opm', () => {
  it('opm render: structs in field order, blobs and property values as sorted maps, HTML left alone', async () => {
    const dir = writeTree({ 'c.json': [pkg, channel, bundle, other, rootBlob].join('\n') });
    dirs.push(dir);
    const loaded = await loadCatalog(new DirectorySource(dir), { keepBundleObjects: true });
    const opm = spawnSync(OPM, ['render', dir, '-o', 'json'], { encoding: 'utf8' });
    expect(opm.status).toBe(0);
    expectCorners(opm.stdout);
    expect([...renderJson(loaded.config)].join('')).toBe(opm.stdout);
  });

  it('opm alpha render-template basic -o json writes the same bytes', async () => {
    const template = `{"schema":"olm.template.basic","entries":[${[pkg, channel, other].join(',')}]}`;
    const dir = writeTree({ 'template.json': template });
    dirs.push(dir);
    const opm = spawnSync(OPM, ['alpha', 'render-template', 'basic', `${dir}/template.json`, '-o', 'json'], {
      encoding: 'utf8',
    });
    expect(opm.status).toBe(0);
    expectCorners(opm.stdout);
    const ours = await renderTemplateText(template, 'json', {
      resolveBundle: () => Promise.reject(new Error('no bundles in this template')),
    });
    expect(ours).toBe(opm.stdout);
  });

  it('opm validate quotes a schema-less blob as declcfg.Meta re-encodes it', async () => {
    const dir = writeTree({
      'c.json': String.raw`{"a":1,"10":"<&>","9":2,"\ue000":2,"\ud83d\ude00":-0,"s":"\ud800\u2028"}`,
    });
    dirs.push(dir);
    const opm = opmValidate(dir);
    expect(opm.valid).toBe(false);
    expect(opm.message).toContain('-0');
    const loaded = await loadCatalog(new DirectorySource(dir), {});
    expect(loaded.diagnostics.map((d) => d.message)).toEqual([opm.message]);
  });
});

describe('goJsonEncode options', () => {
  const value = { b: '<&>', a: [1, -0, {}], '10': 'x', '9': '\u2028', skipped: undefined };

  it('json.Marshal of a map: keys sorted bytewise, <, > and & escaped, compact', () => {
    // encoding/json: "map keys are sorted"; HTMLEscape replaces <, >, & (and U+2028/9).
    expect(goJsonEncode(value, { sortKeys: true, escapeHtml: true })).toBe(
      '{"10":"x","9":"\\u2028","a":[1,-0,{}],"b":"\\u003c\\u0026\\u003e"}',
    );
  });

  it('a struct: own key order, and SetEscapeHTML(false) leaves <, > and & but not U+2028', () => {
    expect(goJsonEncode({ z: '<&>', a: '\u2029' }, { sortKeys: false, escapeHtml: false })).toBe(
      '{"z":"<&>","a":"\\u2029"}',
    );
  });

  it('SetIndent: "key": value, empty containers kept closed, a newline after the value, RawJson re-indented', () => {
    const raw = new RawJson('{"k":[1,{}],"s":"a,b:{c}\\"]"}');
    expect(
      goJsonEncode({ a: [], b: {}, c: [raw] }, { sortKeys: false, escapeHtml: false, indent: '  ' }),
    ).toBe(
      [
        '{',
        '  "a": [],',
        '  "b": {},',
        '  "c": [',
        '    {',
        '      "k": [',
        '        1,',
        '        {}',
        '      ],',
        '      "s": "a,b:{c}\\"]"',
        '    }',
        '  ]',
        '}',
        '',
      ].join('\n'),
    );
  });

  it('writes a lone surrogate as U+FFFD and keeps a pair', () => {
    expect(goJsonEncode(['\udc00a\ud800', '\ud83d\ude00'], { sortKeys: true, escapeHtml: true })).toBe(
      '["\ufffda\ufffd","\ud83d\ude00"]',
    );
  });
});
