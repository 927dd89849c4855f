// Image existence (the catalog-bot/images check) and the build/images commands, against
// a real registry behind token auth.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCatalog } from '../src/catalog/fbc/load.js';
import { DirectorySource } from '../src/catalog/fbc/source.js';
import { addedImageUses, imagesCheck, imageUses, IMAGES_CHECK, type ImageUse } from '../src/checks/images.js';
import { checkImages, ImageExistenceCache, registryAllowed, type ImageCheck } from '../src/publish/exists.js';
import { parseRef, RegistryClient } from '../src/publish/registry.js';
import { publishCheck, PUBLISH_CHECK } from '../src/publish/report.js';
import { removeTree, writeTree } from './helpers/oracle.js';
import {
  freePort,
  haveRegistryTools,
  pushTestBase,
  run,
  skopeoInspect,
  startTokenRegistry,
  type RunningProxy,
  type TestBase,
  type TokenRegistry,
  writeSkopeoAuth,
} from './helpers/registry.js';
import { cliCommand } from './helpers/cli.js';

const buildCommand = cliCommand('build');
const imagesCommand = cliCommand('images');

const FIXTURE = fileURLToPath(new URL('./fixtures/valid-catalog', import.meta.url));

function sink(): { stream: Writable; text: () => string } {
  const chunks: Buffer[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      chunks.push(Buffer.from(chunk));
      done();
    },
  });
  return { stream, text: () => Buffer.concat(chunks).toString('utf8') };
}

const use = (image: string, over: Partial<ImageUse> = {}): ImageUse => ({
  image,
  kind: 'bundle',
  bundle: 'op.v1.0.0',
  package: 'op',
  file: 'catalogs/v1/op/catalog.yaml',
  line: 12,
  ...over,
});
const result = (ref: string, status: ImageCheck['status'], reason = ''): [string, ImageCheck] => [
  ref,
  { ref, status, reason },
];

describe('catalog-bot/images check (pure)', () => {
  it('succeeds when every image exists', () => {
    const check = imagesCheck(
      [use('a'), use('b', { kind: 'related', name: 'operand' })],
      new Map([result('a', 'exists'), result('b', 'exists')]),
    );
    expect(check).toMatchObject({ name: IMAGES_CHECK, conclusion: 'success', findings: [] });
  });

  it('fails on a missing image, naming the bundle and file:line', () => {
    const check = imagesCheck(
      [use('a'), use('b', { kind: 'related', name: 'operand' })],
      new Map([result('a', 'exists'), result('b', 'missing', 'manifest unknown')]),
    );
    expect(check.conclusion).toBe('failure');
    expect(check.findings).toHaveLength(1);
    expect(check.findings[0]).toMatchObject({
      rule: 'IMG-MISSING',
      level: 'error',
      file: 'catalogs/v1/op/catalog.yaml',
      line: 12,
      package: 'op',
    });
    expect(check.findings[0]?.message).toContain('related image "operand" of op.v1.0.0 b does not exist');
    expect(check.annotations[0]).toMatchObject({
      path: 'catalogs/v1/op/catalog.yaml',
      line: 12,
      level: 'failure',
    });
    expect(check.summary).toContain('catalogs/v1/op/catalog.yaml:12');
  });

  it('is neutral with the reason when a listed unverifiable registry cannot be reached, and fails on a disallowed registry', () => {
    const image = 'r.example/op/bundle:v1';
    const neutral = imagesCheck(
      [use(image)],
      new Map([result(image, 'unreachable', 'cannot reach registry r.example')]),
      { unverifiableRegistries: ['r.example'] },
    );
    expect(neutral.conclusion).toBe('neutral');
    expect(neutral.findings[0]?.message).toContain('cannot reach registry r.example');
    expect(neutral.findings[0]?.level).toBe('warning');
    const disallowed = imagesCheck(
      [use(image), use('b')],
      new Map([
        result(image, 'unreachable', 'x'),
        result('b', 'disallowed', 'registry y is not among the allowed registries'),
      ]),
      { unverifiableRegistries: ['r.example'] },
    );
    expect(disallowed.conclusion).toBe('failure');
    expect(disallowed.findings.map((f) => f.rule).sort()).toEqual([
      'IMG-DISALLOWED-REGISTRY',
      'IMG-UNREACHABLE',
    ]);
  });

  it('lists bundle and related images with where they are, and what a change adds', async () => {
    const loaded = await loadCatalog(new DirectorySource(FIXTURE));
    const uses = imageUses(loaded.config, 'catalogs/v1');
    expect(uses.length).toBeGreaterThan(0);
    expect(uses[0]).toMatchObject({
      kind: 'bundle',
      package: 'example-operator',
      file: 'catalogs/v1/example-operator/catalog.yaml',
    });
    expect(uses[0]?.line).toBeGreaterThan(1);
    expect(addedImageUses(loaded.config, loaded.config)).toEqual([]);
    expect(addedImageUses(undefined, loaded.config)).toHaveLength(imageUses(loaded.config).length);
  });

  it('reports publishing as the catalog-bot/publish check: digests per tag, failures named', () => {
    const ok = publishCheck([
      { root: 'catalogs/v4.16', results: [{ tag: 'r.example/c:v4.16', digest: 'sha256:' + 'a'.repeat(64) }] },
    ]);
    expect(ok).toMatchObject({ name: PUBLISH_CHECK, conclusion: 'success', title: '1 tag pushed' });
    expect(ok.summary).toContain(
      '| `catalogs/v4.16` | `r.example/c:v4.16` | `sha256:' + 'a'.repeat(64) + '` |',
    );
    const bad = publishCheck([
      { root: 'catalogs/a', results: [] },
      { root: 'catalogs/b', error: 'wrong credentials: registry r.example rejected user "bot"' },
    ]);
    expect(bad.conclusion).toBe('failure');
    expect(bad.findings[0]?.message).toBe(
      'publishing catalogs/b failed: wrong credentials: registry r.example rejected user "bot"',
    );
    expect(publishCheck([]).conclusion).toBe('neutral');
  });

  it('matches allowed registries by host, repository prefix or wildcard', () => {
    const ref = parseRef('quay.io/org/op@sha256:' + 'a'.repeat(64));
    expect(registryAllowed(ref, ['quay.io'])).toBe(true);
    expect(registryAllowed(ref, ['quay.io/org'])).toBe(true);
    expect(registryAllowed(ref, ['quay.io/other'])).toBe(false);
    expect(registryAllowed(ref, ['*.redhat.io'])).toBe(false);
    expect(registryAllowed(parseRef('registry.redhat.io/x/y:1'), ['*.redhat.io'])).toBe(true);
    expect(registryAllowed(ref, [])).toBe(true);
  });
});

describe.skipIf(!haveRegistryTools)('image existence and commands against docker-registry', () => {
  let registry: TokenRegistry;
  let token: RunningProxy;
  let base: TestBase;
  let dockerBase: TestBase;
  let work: string;
  let env: NodeJS.ProcessEnv;
  const clients: RegistryClient[] = [];
  const client = (): RegistryClient => {
    const c = new RegistryClient({
      credentials: () => ({ username: 'bot', password: 'secret', from: 'test' }),
      insecureHosts: ['127.0.0.1'],
      backoffMs: 10,
    });
    clients.push(c);
    return c;
  };

  beforeAll(async () => {
    registry = await startTokenRegistry();
    token = registry.proxy;
    base = await pushTestBase(client(), { registry: token.host, repository: 'base/opm', tag: 'v1' });
    dockerBase = await pushTestBase(
      client(),
      { registry: token.host, repository: 'base/docker', tag: 'v1' },
      { docker: true },
    );
    work = mkdtempSync(join(tmpdir(), 'catalog-bot-images-'));
    env = { REGISTRY_AUTH_FILE: writeSkopeoAuth(work, token.host), REGISTRY_INSECURE_HOSTS: '127.0.0.1' };
  });

  afterAll(async () => {
    for (const c of clients) c.close();
    await registry?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('tells existing, missing, unreachable and disallowed images apart, and caches digest-pinned answers', async () => {
    const down = await freePort();
    const pinned = `${token.host}/base/opm@${base.digest}`;
    const refs = [
      pinned,
      `${token.host}/base/opm:v1`,
      `${token.host}/base/opm:nope`,
      `${token.host}/no/such-repo:v1`,
      `127.0.0.1:${down}/x/y:1`,
      `127.0.0.1:${down}/x/z:1`,
      `other.example/x/y:1`,
    ];
    const cache = new ImageExistenceCache();
    const results = await checkImages(refs, {
      client: client(),
      concurrency: 3,
      allowedRegistries: [token.host, `127.0.0.1:${down}`],
      cache,
    });
    const status = (r: string): string | undefined => results.get(r)?.status;
    expect(status(pinned)).toBe('exists');
    expect(status(`${token.host}/base/opm:v1`)).toBe('exists');
    expect(status(`${token.host}/base/opm:nope`)).toBe('missing');
    expect(status(`${token.host}/no/such-repo:v1`)).toBe('missing');
    expect(status(`127.0.0.1:${down}/x/y:1`)).toBe('unreachable');
    expect(results.get(`127.0.0.1:${down}/x/z:1`)?.reason).toMatch(/cannot reach registry/);
    expect(status('other.example/x/y:1')).toBe('disallowed');
    // only the digest-pinned answer is kept: tags move
    expect(cache.size).toBe(1);
    const before = token.log.length;
    const again = await checkImages([pinned], { client: client(), cache });
    expect(again.get(pinned)?.status).toBe('exists');
    expect(token.log.length).toBe(before);
  });

  it('`build` without --push prints the digests and writes an OCI layout umoci can unpack', async () => {
    const out = sink();
    const err = sink();
    const layout = join(work, 'layout');
    const code = await buildCommand(
      [
        FIXTURE,
        '--tag',
        `${token.host}/catalogs/cli:{root}`,
        '--base',
        `${token.host}/base/docker:v1`,
        '--oci-dir',
        layout,
        '--format',
        'json',
      ],
      out.stream,
      err.stream,
      env,
    );
    expect(err.text()).toBe('');
    expect(code).toBe(0);
    const json = JSON.parse(out.text());
    expect(json.pushed).toBe(false);
    expect(json.results[0].tag).toBe(`${token.host}/catalogs/cli:valid-catalog`);
    const index = JSON.parse(readFileSync(join(layout, 'index.json'), 'utf8'));
    expect(index.manifests[0].digest).toBe(json.results[0].digest);
    const bundle = join(work, 'bundle');
    await run('umoci', ['unpack', '--rootless', '--image', `${layout}:valid-catalog`, bundle]);
    const rootfs = join(bundle, 'rootfs');
    const files = (dir: string): string[] =>
      readdirSync(dir, { recursive: true, encoding: 'utf8' })
        .filter((p) => statSync(join(dir, p)).isFile())
        .sort();
    expect(files(join(rootfs, 'configs'))).toEqual(files(FIXTURE));
    for (const f of files(FIXTURE))
      expect(readFileSync(join(rootfs, 'configs', f))).toEqual(readFileSync(join(FIXTURE, f)));
    expect(readFileSync(join(rootfs, 'bin/opm'), 'utf8')).toBe(dockerBase.platforms[0]?.files['bin/opm']);
    const config = JSON.parse(readFileSync(join(bundle, 'config.json'), 'utf8'));
    expect(config.process.args).toEqual([
      '/bin/opm',
      'serve',
      '/configs',
      '--cache-dir=/tmp/cache',
      '--cache-enforce-integrity=false',
    ]);
    expect(relative(work, layout)).toBe('layout');
  });

  it('`build --push` pushes every tag and gives the same digest as the dry build', async () => {
    const dry = sink();
    const tags = ['--tag', `${token.host}/catalogs/cli:a`, '--tag', `${token.host}/catalogs/cli:b`];
    expect(
      await buildCommand(
        [FIXTURE, ...tags, '--base', `${token.host}/base/opm:v1`],
        dry.stream,
        sink().stream,
        env,
      ),
    ).toBe(0);
    const out = sink();
    expect(
      await buildCommand(
        [FIXTURE, ...tags, '--base', `${token.host}/base/opm:v1`, '--push'],
        out.stream,
        sink().stream,
        env,
      ),
    ).toBe(0);
    const lines = out.text().trim().split('\n');
    expect(lines.slice(0, 2)).toEqual(dry.text().trim().split('\n').slice(0, 2));
    expect(lines[2]).toMatch(/^pushed 1 files .* on linux\/amd64, linux\/arm64/);
    const digest = lines[0]?.split(' ')[1];
    const authFile = env.REGISTRY_AUTH_FILE as string;
    const inspected = await skopeoInspect(
      `${token.host}/catalogs/cli:b`,
      authFile,
      '--format',
      '{{.Digest}}',
    );
    expect(inspected.trim()).toBe(digest);
  });

  it('`build` says what is wrong: usage (exit 2), wrong credentials (exit 1)', async () => {
    const err = sink();
    expect(await buildCommand([FIXTURE], sink().stream, err.stream, env)).toBe(2);
    expect(err.text()).toContain('build needs at least one --tag');
    const err2 = sink();
    const badAuth = join(work, 'bad.json');
    writeFileSync(badAuth, JSON.stringify({ auths: { [token.host]: { username: 'bot', password: 'bad' } } }));
    expect(
      await buildCommand(
        [FIXTURE, '--tag', `${token.host}/x/y:1`, '--base', `${token.host}/base/opm:v1`, '--push'],
        sink().stream,
        err2.stream,
        { ...env, REGISTRY_AUTH_FILE: badAuth },
      ),
    ).toBe(1);
    expect(err2.text()).toMatch(
      /wrong credentials: registry 127\.0\.0\.1:\d+ .*"bot" \(from REGISTRY_AUTH_FILE entry/,
    );
  });

  it('`images` checks every bundle and related image of a catalog', async () => {
    const catalog = writeTree({
      'op/catalog.yaml': [
        'schema: olm.package',
        'name: op',
        'defaultChannel: stable',
        '---',
        'schema: olm.channel',
        'package: op',
        'name: stable',
        'entries:',
        '  - name: op.v1.0.0',
        '---',
        'schema: olm.bundle',
        'package: op',
        'name: op.v1.0.0',
        `image: ${token.host}/base/opm@${base.digest}`,
        'properties:',
        '  - type: olm.package',
        '    value:',
        '      packageName: op',
        '      version: 1.0.0',
        'relatedImages:',
        `  - name: operand`,
        `    image: ${token.host}/operand/missing:v1`,
        '',
      ].join('\n'),
    });
    try {
      const out = sink();
      const code = await imagesCommand([catalog, '--format', 'json'], out.stream, sink().stream, env);
      const json = JSON.parse(out.text());
      expect(code).toBe(1);
      expect(json.conclusion).toBe('failure');
      expect(json.images.map((i: { status: string }) => i.status).sort()).toEqual(['exists', 'missing']);
      expect(json.findings).toHaveLength(1);
      expect(json.findings[0]).toMatchObject({
        rule: 'IMG-MISSING',
        file: join(catalog, 'op/catalog.yaml'),
        line: 11,
        package: 'op',
      });
      const text = sink();
      expect(
        await imagesCommand([catalog, '--allowed-registry', 'quay.io'], text.stream, sink().stream, env),
      ).toBe(1);
      expect(text.text()).toMatch(/IMG-DISALLOWED-REGISTRY/);
      expect(await imagesCommand([catalog, '--format', 'yaml'], sink().stream, sink().stream, env)).toBe(2);
    } finally {
      removeTree(catalog);
    }
    expect(existsSync(catalog)).toBe(false);
  });
});
