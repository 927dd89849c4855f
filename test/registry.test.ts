// The registry client against a real distribution registry, behind a token-auth proxy
// (and a basic-auth one) that counts requests and injects faults.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOCKER_MANIFEST, OCI_INDEX, OCI_MANIFEST, sha256 } from '../src/publish/oci.js';
import {
  apiHost,
  credentialsFromAuthFile,
  credentialsFromEnv,
  parseChallenge,
  parseRef,
  RegistryClient,
  RegistryError,
} from '../src/publish/registry.js';
import {
  blobUploads,
  freePort,
  haveRegistryTools,
  startProxy,
  startRegistry,
  type RunningProxy,
  type RunningRegistry,
} from './helpers/registry.js';

describe('registry client: parsing and credentials', () => {
  it('parses Bearer and Basic challenges, quoted values with commas included', () => {
    expect(
      parseChallenge(
        'Bearer realm="https://auth.example.com/token",service="registry.example.com",scope="repository:a/b:pull,push"',
      ),
    ).toEqual({ scheme: 'bearer', realm: 'https://auth.example.com/token', service: 'registry.example.com' });
    expect(parseChallenge('Basic realm="x"')).toEqual({ scheme: 'basic' });
    expect(parseChallenge('Bearer service="x"')).toBeUndefined();
    expect(parseChallenge(undefined)).toBeUndefined();
  });

  it('normalises docker.io names and finds its API host', () => {
    expect(parseRef('busybox')).toEqual({ registry: 'docker.io', repository: 'library/busybox' });
    expect(parseRef('index.docker.io/org/x:1')).toEqual({
      registry: 'docker.io',
      repository: 'org/x',
      tag: '1',
    });
    expect(parseRef('127.0.0.1:5000/a/b@sha256:' + 'a'.repeat(64)).digest).toBe('sha256:' + 'a'.repeat(64));
    expect(apiHost('docker.io')).toBe('registry-1.docker.io');
    expect(apiHost('quay.io')).toBe('quay.io');
    expect(() => parseRef('Quay.io/UPPER/case')).toThrow(/invalid image reference/);
  });

  it('reads docker/podman auth files: base64 auth, username/password, docker.io keys, per-repository entries', () => {
    const lookup = credentialsFromAuthFile(
      JSON.stringify({
        auths: {
          'https://index.docker.io/v1/': { auth: Buffer.from('hub:hubpw').toString('base64') },
          'quay.io': { username: 'q', password: 'qpw' },
          'quay.io/special/repo': { auth: Buffer.from('s:p:w').toString('base64') },
        },
      }),
      'auth.json',
    );
    expect(lookup('docker.io', 'library/busybox')).toMatchObject({ username: 'hub', password: 'hubpw' });
    expect(lookup('quay.io', 'org/x')).toMatchObject({ username: 'q', password: 'qpw' });
    // the password itself may hold a colon
    expect(lookup('quay.io', 'special/repo')).toMatchObject({ username: 's', password: 'p:w' });
    expect(lookup('ghcr.io', 'x/y')).toBeUndefined();
    expect(() => credentialsFromAuthFile('{', 'auth.json')).toThrow(/auth.json is not valid JSON/);
  });

  it('uses REGISTRY_USERNAME/REGISTRY_PASSWORD when the auth file has no entry', () => {
    const dir = mkdtempSync(join(tmpdir(), 'catalog-bot-auth-'));
    const file = join(dir, 'auth.json');
    writeFileSync(file, JSON.stringify({ auths: { 'a.example': { username: 'fa', password: 'fp' } } }));
    const lookup = credentialsFromEnv({
      REGISTRY_AUTH_FILE: file,
      REGISTRY_USERNAME: 'u',
      REGISTRY_PASSWORD: 'p',
    });
    expect(lookup('a.example', 'r')).toMatchObject({ username: 'fa' });
    expect(lookup('b.example', 'r')).toMatchObject({
      username: 'u',
      from: 'REGISTRY_USERNAME/REGISTRY_PASSWORD',
    });
    expect(() => credentialsFromEnv({ REGISTRY_AUTH_FILE: join(dir, 'nope.json') })).toThrow(
      /cannot read REGISTRY_AUTH_FILE/,
    );
    rmSync(dir, { recursive: true, force: true });
  });
});

describe.skipIf(!haveRegistryTools)('registry client against docker-registry', () => {
  let registry: RunningRegistry;
  let token: RunningProxy;
  let basic: RunningProxy;
  let faulty: RunningProxy;
  /** What the fault proxy does to the next matching request. */
  let inject: { match: RegExp; method: string; answer: number | 'reset'; times: number } | undefined;
  const clients: RegistryClient[] = [];
  const client = (
    over: Partial<ConstructorParameters<typeof RegistryClient>[0]> = {},
    user = 'bot',
    pass = 'secret',
  ): RegistryClient => {
    const c = new RegistryClient({
      credentials: () => ({ username: user, password: pass, from: 'test' }),
      insecureHosts: ['127.0.0.1'],
      backoffMs: 10,
      ...over,
    });
    clients.push(c);
    return c;
  };

  beforeAll(async () => {
    registry = await startRegistry();
    token = await startProxy(registry.port, { auth: 'bearer', username: 'bot', password: 'secret' });
    basic = await startProxy(registry.port, { auth: 'basic', username: 'bot', password: 'secret' });
    faulty = await startProxy(registry.port, {
      fault: (req) => {
        if (inject && inject.times > 0 && req.method === inject.method && inject.match.test(req.url ?? '')) {
          inject.times--;
          return inject.answer;
        }
        return undefined;
      },
    });
  });

  afterAll(async () => {
    for (const c of clients) c.close();
    await Promise.all([token?.stop(), basic?.stop(), faulty?.stop()]);
    await registry?.stop();
  });

  it('follows the Bearer challenge, sends Basic credentials to the realm and caches tokens per scope', async () => {
    const c = client();
    const ref = { registry: token.host, repository: 'tok/one' };
    const data = randomBytes(1000);
    expect(await c.ensureBlob(ref, sha256(data), data)).toBe('uploaded');
    const afterFirst = token.tokenRequests.length;
    expect(afterFirst).toBeGreaterThan(0);
    expect(token.tokenRequests.every((t) => t.authorized)).toBe(true);
    expect(token.tokenRequests.some((t) => t.scopes.includes('repository:tok/one:pull,push'))).toBe(true);
    // same scope again: the cached token serves, no new token request
    const again = randomBytes(1000);
    expect(await c.ensureBlob(ref, sha256(again), again)).toBe('uploaded');
    expect(await c.blobExists(ref, sha256(data))).toBe(true);
    const pullTokens = token.tokenRequests.filter(
      (t) => t.scopes.join() === 'repository:tok/one:pull',
    ).length;
    const pushTokens = token.tokenRequests.filter(
      (t) => t.scopes.join() === 'repository:tok/one:pull,push',
    ).length;
    expect(pullTokens).toBe(1);
    expect(pushTokens).toBe(1);
    expect(await c.getBlob(ref, sha256(data))).toEqual(data);
  });

  it('shares one token request among parallel requests for the same scope', async () => {
    const c = client();
    const ref = { registry: token.host, repository: 'tok/parallel' };
    const found = await Promise.all(Array.from({ length: 6 }, (_, i) => c.blobExists(ref, sha256(`p${i}`))));
    expect(found).toEqual([false, false, false, false, false, false]);
    expect(
      token.tokenRequests.filter((t) => t.scopes.join() === 'repository:tok/parallel:pull'),
    ).toHaveLength(1);
  });

  it('says "wrong credentials" and names the registry when the token service refuses them', async () => {
    const c = client({}, 'bot', 'wrong');
    const err = await c
      .blobExists({ registry: token.host, repository: 'tok/one' }, sha256('x'))
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RegistryError);
    expect((err as RegistryError).kind).toBe('auth');
    expect((err as Error).message).toMatch(/wrong credentials/);
    expect((err as Error).message).toContain(token.host);
    expect((err as Error).message).toContain('"bot"');
    expect((err as Error).message).not.toContain('wrong"'); // never the password
  });

  it('says credentials are needed when none are configured', async () => {
    const c = client({ credentials: () => undefined });
    await expect(c.headManifest({ registry: token.host, repository: 'tok/one' }, 'latest')).rejects.toThrow(
      new RegExp(`registry ${token.host.replace(/\./g, '\\.')} requires credentials.*REGISTRY_AUTH_FILE`),
    );
  });

  it('speaks Basic auth when the registry asks for it, and rejects wrong Basic credentials clearly', async () => {
    const ref = { registry: basic.host, repository: 'basic/one' };
    const data = randomBytes(500);
    expect(await client().ensureBlob(ref, sha256(data), data)).toBe('uploaded');
    expect(await client().blobExists(ref, sha256(data))).toBe(true);
    await expect(client({}, 'bot', 'nope').blobExists(ref, sha256(data))).rejects.toThrow(
      /wrong credentials: registry 127\.0\.0\.1:\d+ rejected user "bot"/,
    );
  });

  it('fails clearly when the registry is down', async () => {
    const port = await freePort();
    const err = await client()
      .ping(`127.0.0.1:${port}`)
      .catch((e: unknown) => e);
    expect((err as RegistryError).kind).toBe('unreachable');
    expect((err as Error).message).toMatch(
      new RegExp(`cannot reach registry 127\\.0\\.0\\.1:${port} .*ECONNREFUSED`),
    );
  });

  it('speaks HTTPS to hosts not in REGISTRY_INSECURE_HOSTS and says how to allow plain HTTP', async () => {
    // 127.0.0.1 is internal: listed as private, so that this is about plain HTTP only.
    const c = RegistryClient.fromEnv(
      { REGISTRY_INSECURE_HOSTS: 'other.example:5000', REGISTRY_PRIVATE_HOSTS: '127.0.0.1' },
      { retries: 0 },
    );
    clients.push(c);
    await expect(c.ping(registry.host)).rejects.toThrow(
      new RegExp(`https://${registry.host.replace(/\./g, '\\.')}.*REGISTRY_INSECURE_HOSTS`),
    );
    const allowed = RegistryClient.fromEnv({ REGISTRY_INSECURE_HOSTS: ` ${registry.host} ,x:1` });
    clients.push(allowed);
    await expect(allowed.ping(registry.host)).resolves.toBeUndefined();
  });

  it('uploads a large blob in chunks (PATCH then PUT) and reads it back intact', async () => {
    const c = client({ chunkSize: 64 * 1024 });
    const ref = { registry: token.host, repository: 'tok/chunked' };
    const data = randomBytes(200 * 1024 + 7);
    const before = token.log.length;
    expect(await c.ensureBlob(ref, sha256(data), data)).toBe('uploaded');
    const mine = blobUploads(token.log.slice(before));
    expect(mine.filter((r) => r.method === 'PATCH' && r.status === 202)).toHaveLength(4);
    expect(mine.filter((r) => r.method === 'PUT' && r.status === 201)).toHaveLength(1);
    expect(await c.getBlob(ref, sha256(data))).toEqual(data);
  });

  it('mounts a blob from another repository instead of uploading it, and never re-uploads a present blob', async () => {
    const c = client();
    const data = randomBytes(4096);
    const digest = sha256(data);
    await c.ensureBlob({ registry: token.host, repository: 'tok/src' }, digest, data);
    const before = token.log.length;
    let fetched = 0;
    const outcome = await c.ensureBlob(
      { registry: token.host, repository: 'tok/dst' },
      digest,
      async () => {
        fetched++;
        return data;
      },
      { mountFrom: 'tok/src' },
    );
    expect(outcome).toBe('mounted');
    expect(fetched).toBe(0);
    const mine = token.log.slice(before).filter((r) => r.status !== 401);
    expect(
      mine.filter((r) => r.method === 'POST' && r.path.includes('mount=') && r.status === 201),
    ).toHaveLength(1);
    expect(mine.filter((r) => r.method === 'PATCH' || r.method === 'PUT')).toHaveLength(0);
    const again = token.log.length;
    expect(await c.ensureBlob({ registry: token.host, repository: 'tok/dst' }, digest, data)).toBe('present');
    expect(blobUploads(token.log.slice(again))).toHaveLength(0);
  });

  it('falls back to an upload when a mount source lacks the blob (registry answers 202)', async () => {
    const c = client();
    const data = randomBytes(100);
    const outcome = await c.ensureBlob({ registry: token.host, repository: 'tok/dst2' }, sha256(data), data, {
      mountFrom: 'tok/empty',
    });
    expect(outcome).toBe('uploaded');
    expect(await c.blobExists({ registry: token.host, repository: 'tok/dst2' }, sha256(data))).toBe(true);
  });

  it('retries an upload after a 500 mid-upload and succeeds', async () => {
    const c = client({ chunkSize: 32 * 1024 });
    const ref = { registry: faulty.host, repository: 'fault/retry' };
    const data = randomBytes(100 * 1024);
    const faultsBefore = faulty.faults;
    inject = { match: /\/blobs\/uploads\//, method: 'PATCH', answer: 500, times: 1 };
    expect(await c.ensureBlob(ref, sha256(data), data)).toBe('uploaded');
    expect(faulty.faults - faultsBefore).toBe(1);
    expect(await c.getBlob(ref, sha256(data))).toEqual(data);
  });

  it('retries a dropped connection and a 503 on reads, within bounds', async () => {
    const c = client();
    const ref = { registry: faulty.host, repository: 'fault/retry' };
    const before = faulty.faults;
    inject = { match: /\/blobs\//, method: 'HEAD', answer: 'reset', times: 1 };
    expect(await c.blobExists(ref, sha256('nothing'))).toBe(false);
    inject = { match: /\/blobs\//, method: 'HEAD', answer: 503, times: 2 };
    expect(await c.blobExists(ref, sha256('nothing'))).toBe(false);
    expect(faulty.faults - before).toBe(3);
    // a registry that keeps failing is given up on after the bounded retries
    inject = { match: /\/blobs\//, method: 'HEAD', answer: 500, times: 100 };
    await expect(client({ retries: 2 }).blobExists(ref, sha256('nothing'))).rejects.toThrow(/HTTP 500/);
    expect(100 - inject.times).toBe(3);
    inject = undefined;
  });

  it('puts and gets manifests with their media types (OCI and Docker v2), HEAD of a missing one is null', async () => {
    const c = client();
    const ref = { registry: token.host, repository: 'tok/manifests' };
    const config = Buffer.from(
      '{"architecture":"amd64","os":"linux","rootfs":{"type":"layers","diff_ids":[]}}',
    );
    await c.ensureBlob(ref, sha256(config), config);
    for (const [mediaType, configType] of [
      [OCI_MANIFEST, 'application/vnd.oci.image.config.v1+json'],
      [DOCKER_MANIFEST, 'application/vnd.docker.container.image.v1+json'],
    ] as const) {
      const body = Buffer.from(
        JSON.stringify({
          schemaVersion: 2,
          mediaType,
          config: { mediaType: configType, digest: sha256(config), size: config.length },
          layers: [],
        }),
      );
      const tag = mediaType === OCI_MANIFEST ? 'oci' : 'docker';
      expect(await c.putManifest(ref, tag, mediaType, body)).toBe(sha256(body));
      const got = await c.getManifest(ref, tag);
      expect(got).toEqual({ mediaType, digest: sha256(body), data: body });
      expect(await c.headManifest(ref, tag)).toMatchObject({ digest: sha256(body), mediaType });
    }
    const oci = (await c.getManifest(ref, 'oci')).data;
    const index = Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: OCI_INDEX,
        manifests: [{ mediaType: OCI_MANIFEST, digest: sha256(oci), size: oci.length }],
      }),
    );
    await c.putManifest(ref, 'index', OCI_INDEX, index);
    expect(await c.getManifest(ref, 'index')).toEqual({
      mediaType: OCI_INDEX,
      digest: sha256(index),
      data: index,
    });
    expect(await c.headManifest(ref, 'nope')).toBeNull();
    await expect(c.getManifest(ref, 'nope')).rejects.toThrow(/MANIFEST_UNKNOWN/);
  });
});
