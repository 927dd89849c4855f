import { execFile } from 'node:child_process';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseImageReference, validatePullSpec } from '../src/catalog/image-ref.js';
import { haveOpm, OPM } from './helpers/oracle.js';
import { mapLimit } from '../src/catalog/map-limit.js';

const hex = (n: number, ch = 'a'): string => ch.repeat(n);
const SHA256 = `sha256:${hex(64, 'b')}`;

/** References validatePullSpec accepts, each also checked against opm below. */
const ACCEPTED = [
  'busybox',
  'busybox:latest',
  'docker.io/library/busybox:1.36',
  'index.docker.io/foo',
  'quay.io/operator-framework/opm:v1.73.0',
  `quay.io/foo/bar@${SHA256}`,
  `quay.io/foo/bar:v1@${SHA256}`,
  `quay.io/foo/bar@sha384:${hex(96)}`,
  `quay.io/foo/bar@sha512:${hex(128)}`,
  'localhost:5000/x',
  'localhost/x',
  '127.0.0.1:5000/a/b/c',
  'registry.example.com:443/team/app:V1.0_rc-2',
  'My-Registry.Example.COM/app',
  'foo__bar/a-b--c.d_e',
  'a_b.c/x',
  `foo:${'t'.repeat(128)}`,
  `${hex(64)}:tag`,
  'a'.repeat(237),
  `localhost/${'a'.repeat(245)}`,
];

describe('validatePullSpec accepts', () => {
  it.each([...ACCEPTED, 'library/busybox', 'localhost:5000/foo:Bar', ''])('%j', (ref) => {
    expect(validatePullSpec(ref)).toBeNull();
  });
});

describe('validatePullSpec rejects with the upstream message', () => {
  const invalid = 'invalid reference format';
  it.each([
    ['Busybox', 'invalid reference format: repository name must be lowercase'],
    ['quay.io/Foo/bar', 'invalid reference format: repository name must be lowercase'],
    [`foo@SHA256:${hex(64)}`, 'invalid reference format: repository name must be lowercase'],
    ['A_B.c/x', 'repository name must be lowercase'],
    ['\u212Aelvin.io/x', 'repository name must be lowercase'],
    [hex(64), `invalid repository name (${hex(64)}), cannot specify 64-byte hexadecimal strings`],
    ['a'.repeat(238), 'repository name must not be more than 255 characters'],
    [`localhost/${'a'.repeat(246)}`, 'repository name must not be more than 255 characters'],
    ['localhost:5000/Foo', 'invalid reference format: repository name must be lowercase'],
    [`quay.io/${'b'.repeat(248)}`, 'repository name must not be more than 255 characters'],
    [`foo@sha256:${hex(63)}`, 'invalid checksum digest length'],
    [`foo@sha256:${hex(64, 'A')}`, 'invalid checksum digest format'],
    [`foo:v1@SHA256:${hex(64)}`, 'invalid checksum digest format'],
    [`foo@md5:${hex(32)}`, 'unsupported digest algorithm'],
    [`foo:v1@sha256+b64:${hex(64)}`, 'unsupported digest algorithm'],
    ['foo@sha256:abc', invalid],
    ['foo:v1+build', invalid],
    ['foo:-bad', invalid],
    [`foo:${'t'.repeat(129)}`, invalid],
    ['quay.io//foo', invalid],
    ['quay.io/foo/', invalid],
    ['/foo', invalid],
    ['[::1]:5000/foo', invalid],
    ['foo:bar:baz', invalid],
    ['http://quay.io/foo', invalid],
    ['foo..bar', invalid],
    ['foo bar', invalid],
  ])('%j', (ref, message) => {
    expect(validatePullSpec(ref)).toBe(message);
  });
});

describe('parseImageReference', () => {
  it('normalizes familiar docker names', () => {
    expect(['busybox', 'index.docker.io/user/app:1'].map(parseImageReference)).toEqual([
      { domain: 'docker.io', path: 'library/busybox' },
      { domain: 'docker.io', path: 'user/app', tag: '1' },
    ]);
  });

  it('splits registry, path, tag and digest', () => {
    expect(parseImageReference(`localhost:5000/team/app:v2@${SHA256}`)).toEqual({
      domain: 'localhost:5000',
      path: 'team/app',
      tag: 'v2',
      digest: SHA256,
    });
  });

  it('treats localhost as a registry even without a dot or port', () => {
    expect(parseImageReference('localhost/x')).toEqual({ domain: 'localhost', path: 'x' });
  });

  it('keeps a first component that is not a valid host in the path, like Go', () => {
    expect(parseImageReference('a_b.c/x')).toEqual({ domain: '', path: 'a_b.c/x' });
  });

  it('returns null for rejected or empty specs', () => {
    expect(parseImageReference('Busybox')).toBeNull();
    expect(parseImageReference('')).toBeNull();
  });
});

describe('performance', () => {
  it('does not backtrack catastrophically on long near-misses', () => {
    const inputs = [
      `${'a'.repeat(5000)}!`,
      `${'a-'.repeat(2500)}!`,
      `${'a.'.repeat(2500)}/!`,
      `quay.io/${'a__'.repeat(2000)}A`,
      `${'a-'.repeat(2500)}a/x!`,
    ];
    const start = performance.now();
    for (const s of inputs) expect(validatePullSpec(s)).not.toBeNull();
    expect(performance.now() - start).toBeLessThan(200);
  });
});

// --- differential test against the real opm binary -------------------------

const DIFF_IMAGES: string[] = [
  ...ACCEPTED,
  `localhost/${'a'.repeat(246)}`,
  'localhost:5000/foo:Bar',
  'localhost:5000/Foo',
  'Busybox',
  'quay.io/Foo/bar',
  `foo@SHA256:${hex(64)}`,
  'A_B.c/x',
  '\u212Aelvin.io/x',
  hex(64),
  'a'.repeat(238),
  `quay.io/${'b'.repeat(248)}`,
  `foo@sha256:${hex(63)}`,
  `foo@sha256:${hex(64, 'A')}`,
  `foo:v1@SHA256:${hex(64)}`,
  `foo@md5:${hex(32)}`,
  `foo:v1@sha256+b64:${hex(64)}`,
  'foo@sha256:abc',
  'foo:v1+build',
  'foo:-bad',
  `foo:${'t'.repeat(129)}`,
  'quay.io//foo',
  'quay.io/foo/',
  '/foo',
  '[::1]:5000/foo',
  '[fe80::1]/foo',
  'foo:bar:baz',
  'http://quay.io/foo',
  'quay.io:port/foo',
  'foo..bar',
  'foo_-bar',
  'foo bar',
  'quay.io/foo"bar',
];

type Field = 'image' | 'relatedImages';
interface OpmResult {
  code: number;
  stderr: string;
}

function catalogFor(field: Field, image: string): string {
  const bundle = {
    schema: 'olm.bundle',
    package: 'foo',
    name: 'foo.v1.0.0',
    image: field === 'image' ? image : 'quay.io/foo/bundle:v1.0.0',
    properties: [{ type: 'olm.package', value: { packageName: 'foo', version: '1.0.0' } }],
    ...(field === 'relatedImages' ? { relatedImages: [{ name: 'operand', image }] } : {}),
  };
  return [
    { schema: 'olm.package', name: 'foo', defaultChannel: 'stable' },
    { schema: 'olm.channel', package: 'foo', name: 'stable', entries: [{ name: 'foo.v1.0.0' }] },
    bundle,
  ]
    .map((o) => JSON.stringify(o))
    .join('\n');
}

function runOpm(dir: string): Promise<OpmResult> {
  return new Promise((resolve) => {
    execFile(OPM, ['validate', dir], (err, _stdout, stderr) => {
      const code = err === null ? 0 : typeof err.code === 'number' ? err.code : -1;
      resolve({ code, stderr });
    });
  });
}

/** Extracts logrus's Go-quoted msg="..." field; test inputs are printable, so JSON unquoting suffices. */
function opmMessage(stderr: string): string | undefined {
  const m = /msg="((?:[^"\\]|\\.)*)"/.exec(stderr);
  return m?.[1] === undefined ? undefined : (JSON.parse(`"${m[1]}"`) as string);
}

describe.skipIf(!haveOpm)('differential against opm validate', () => {
  const cases: { field: Field; image: string }[] = [
    ...DIFF_IMAGES.map((image) => ({ field: 'image' as const, image })),
    ...[...DIFF_IMAGES, ''].map((image) => ({ field: 'relatedImages' as const, image })),
  ];
  const results: OpmResult[] = [];
  let root = '';

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'image-ref-'));
    const out = await mapLimit(cases, 8, async ({ field, image }, i) => {
      const dir = join(root, String(i));
      await mkdir(dir);
      await writeFile(join(dir, 'catalog.json'), catalogFor(field, image));
      return runOpm(dir);
    });
    results.push(...out);
  }, 60_000);

  afterAll(async () => {
    if (root !== '') await rm(root, { recursive: true, force: true });
  });

  it('uses only printable test inputs, so JSON and Go quoting agree', () => {
    for (const { image } of cases) expect(image).toMatch(/^[^\p{Cc}]*$/u);
  });

  it.each(cases.map((c, i) => ({ ...c, i })))('$field $image', ({ field, image, i }) => {
    const result = results[i];
    expect(result).toBeDefined();
    const expected = validatePullSpec(image);
    if (expected === null) {
      expect(result?.stderr).toBe('');
      expect(result?.code).toBe(0);
      return;
    }
    expect(result?.code).not.toBe(0);
    const where = field === 'image' ? 'image' : 'relatedImages[0].image';
    expect(opmMessage(result?.stderr ?? '')).toBe(
      `package "foo" bundle "foo.v1.0.0" ${where}: invalid image pull spec ${JSON.stringify(image)}: ${expected}`,
    );
  });
});
