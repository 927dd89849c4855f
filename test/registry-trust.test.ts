// Credentials stay home, and registry work is bounded (docs/security.md): hostile
// registries and token services are small Node HTTP servers on 127.0.0.1; the home
// registry is the real docker-registry behind the token-auth proxy.
import { rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseRepoConfig } from '../src/checks/config.js';
import { imagesCheck } from '../src/checks/images.js';
import { runPrChecks } from '../src/checks/pr.js';
import { bundleManifests, bundleRenderer } from '../src/publish/bundle-render.js';
import { checkImages, imageExists, registryPolicy } from '../src/publish/exists.js';
import {
  appCredentialCeilingFromEnv,
  credentialsFromAuthFile,
  isInternalAddress,
  publicLookupVia,
  RegistryClient,
  RegistryError,
  type Resolver,
} from '../src/publish/registry.js';
import { startAppHarness } from './helpers/app-harness.js';
import {
  freePort,
  haveRegistryTools,
  pushTestBase,
  startProxy,
  startRegistry,
  type RunningProxy,
  type RunningRegistry,
} from './helpers/registry.js';
import { cliCommand } from './helpers/cli.js';
import { fooBundle, fooChannel, WorkRepo } from './helpers/foo-repo.js';

const buildCommand = cliCommand('build');

const FIXTURE = fileURLToPath(new URL('./fixtures/valid-catalog', import.meta.url));
const SECRET = 'bot:s3cret';
const BASIC = `Basic ${Buffer.from(SECRET).toString('base64')}`;
const ENV = { REGISTRY_USERNAME: 'bot', REGISTRY_PASSWORD: 's3cret', REGISTRY_INSECURE_HOSTS: '127.0.0.1' };
/** What a hostile server puts in its answers: it must never reach a message. */
const LEAK = 'INTERNAL-PAGE-4f1c';

interface Hostile {
  host: string;
  port: number;
  /** Every request: path and Authorization header. */
  seen: { path: string; auth?: string }[];
  stop(): Promise<void>;
}

const servers: Hostile[] = [];
const clients: RegistryClient[] = [];
const dirs: string[] = [];
afterAll(async () => {
  for (const c of clients) c.close();
  await Promise.all(servers.map((s) => s.stop()));
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A server on 127.0.0.1:`port` (made later, hence `server()`) and how to stop it, its open connections too. */
function stoppable(server: () => Server, port: number): Pick<Hostile, 'host' | 'port' | 'stop'> {
  return {
    host: `127.0.0.1:${port}`,
    port,
    stop: () =>
      new Promise<void>((resolve) => {
        server().closeAllConnections();
        server().close(() => resolve());
      }),
  };
}

async function hostile(
  handle: (req: IncomingMessage, res: ServerResponse, port: number) => void,
): Promise<Hostile> {
  const port = await freePort();
  const state: Hostile = { ...stoppable(() => server, port), seen: [] };
  const server: Server = createServer((req, res) => {
    state.seen.push({
      path: req.url ?? '',
      ...(req.headers.authorization ? { auth: req.headers.authorization } : {}),
    });
    req.resume();
    handle(req, res, port);
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', () => resolve()));
  servers.push(state);
  return state;
}

const fromEnv = (
  env: NodeJS.ProcessEnv = ENV,
  options: ConstructorParameters<typeof RegistryClient>[0] = {},
) => {
  const c = RegistryClient.fromEnv(env, { backoffMs: 1, retries: 0, ...options });
  clients.push(c);
  return c;
};

const challenge = (res: ServerResponse, header: string): void => {
  res.writeHead(401, { 'WWW-Authenticate': header, 'Content-Type': 'application/json' });
  res.end(JSON.stringify({ errors: [{ code: 'UNAUTHORIZED', message: LEAK }] }));
};

describe('credentials stay home', () => {
  it('takes the credential hosts from the base config: publish.images and publish.baseImage, none when nothing is published', () => {
    expect(registryPolicy(parseRepoConfig('maintainers: [alice]\n').config).credentialHosts).toEqual([]);
    const config = parseRepoConfig(
      'publish:\n  images: ["registry.example.com:5000/acme/catalog:{root}-{sha}", docker.io/acme/c]\n  baseImage: ghcr.io/acme/opm:v1\n',
    ).config;
    expect(registryPolicy(config).credentialHosts.sort()).toEqual([
      'docker.io',
      'ghcr.io',
      'registry.example.com:5000',
    ]);
  });

  it('sends REGISTRY_USERNAME/REGISTRY_PASSWORD only to the credential hosts, never to a registry a pull request names', async () => {
    const evil = await hostile((_req, res) => challenge(res, 'Basic realm="evil"'));
    const check = await imageExists(`${evil.host}/evil/bundle:v1`, fromEnv());
    expect(check.status).toBe('unreachable');
    expect(evil.seen.length).toBeGreaterThan(0);
    expect(evil.seen.filter((r) => r.auth !== undefined)).toEqual([]);
    // The message says why there were no credentials, and nothing the server wrote.
    expect(check.reason).toMatch(/only sent to the registries the repository publishes to/);
    expect(check.reason).not.toContain(LEAK);
    // The same client scoped to that host (the repository publishes there) sends them.
    await imageExists(`${evil.host}/evil/bundle:v1`, fromEnv().scoped([evil.host]));
    expect(evil.seen.some((r) => r.auth === BASIC)).toBe(true);
  });

  it('sends them to no host outside the operator ceiling (CATALOG_BOT_CREDENTIAL_HOSTS), whatever a repository config names', async () => {
    // Installed on many repositories: one whose own config publishes to evil's host gets no
    // shared credentials sent there.
    const evil = await hostile((_req, res) => challenge(res, 'Basic realm="evil"'));
    const ceiling = appCredentialCeilingFromEnv({
      CATALOG_BOT_CREDENTIAL_HOSTS: 'registry.example.com:5000',
    });
    const client = fromEnv(ENV, { credentialHostCeiling: ceiling }).scoped([evil.host]);
    await imageExists(`${evil.host}/evil/bundle:v1`, client);
    expect(evil.seen.length).toBeGreaterThan(0);
    expect(evil.seen.filter((r) => r.auth !== undefined)).toEqual([]);
    // Listed by the operator too: then the config's host gets them.
    const home = fromEnv(ENV, { credentialHostCeiling: [evil.host] }).scoped([evil.host]);
    await imageExists(`${evil.host}/evil/bundle:v1`, home);
    expect(evil.seen.some((r) => r.auth === BASIC)).toBe(true);
  });

  it('gives a token realm on another host no credentials, and never contacts a plain-HTTP realm outside REGISTRY_INSECURE_HOSTS', async () => {
    const realm = await hostile((_req, res) => {
      res.writeHead(401, { 'Content-Type': 'text/html' });
      res.end(`<html>${LEAK}</html>`);
    });
    // The registry's realm is another host (another port of 127.0.0.1, plain HTTP allowed there).
    const registry = await hostile((_req, res) =>
      challenge(res, `Bearer realm="http://127.0.0.1:${realm.port}/token",service="x"`),
    );
    // Credentials for exactly that registry (an auth file entry for its host).
    const authFile = (host: string) =>
      credentialsFromAuthFile(
        JSON.stringify({ auths: { [host]: { username: 'bot', password: 's3cret' } } }),
        'auth.json',
      );
    /** A client holding the bot's login for `host` only. */
    const loggedInTo = (host: string) => {
      const c = new RegistryClient({ credentials: authFile(host), insecureHosts: ['127.0.0.1'], retries: 0 });
      clients.push(c);
      return c;
    };
    const client = loggedInTo(registry.host);
    const check = await imageExists(`${registry.host}/team/bundle:v1`, client);
    expect(check.status).toBe('unreachable');
    expect(realm.seen.length).toBeGreaterThan(0); // asked anonymously
    expect(realm.seen.filter((r) => r.auth !== undefined)).toEqual([]);
    expect(check.reason).toMatch(/is not on the registry's host 127\.0\.0\.1:\d+ over HTTPS/);
    expect(check.reason).not.toContain(LEAK);

    // A plain-HTTP realm on a host not listed as insecure: nothing is sent at all.
    const before = realm.seen.length;
    const other = await hostile((_req, res) =>
      challenge(res, `Bearer realm="http://localhost:${realm.port}/token",service="x"`),
    );
    const otherClient = loggedInTo(other.host);
    const refused = await imageExists(`${other.host}/team/bundle:v1`, otherClient);
    expect(refused.reason).toMatch(/token service http:\/\/localhost:\d+ is not HTTPS/);
    expect(realm.seen.length).toBe(before);
  });

  it('copies no response body of a registry or token service into an error message', async () => {
    const registry = await hostile((req, res) => {
      if (req.url?.includes('/manifests/')) {
        res.writeHead(404, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ errors: [{ code: 'MANIFEST_UNKNOWN', message: LEAK, detail: LEAK }] }));
      } else {
        res.writeHead(500, { 'Content-Type': 'text/plain' });
        res.end(`${LEAK} ${'x'.repeat(100)}`);
      }
    });
    const client = fromEnv();
    const manifest = await client
      .getManifest({ registry: registry.host, repository: 'a/b' }, 'v1')
      .catch((e) => e);
    expect(manifest).toBeInstanceOf(RegistryError);
    expect(manifest.message).toContain('HTTP 404 MANIFEST_UNKNOWN (manifest unknown)');
    expect(manifest.message).not.toContain(LEAK);
    const ping = await client.ping(registry.host).catch((e) => e);
    expect(ping.message).toMatch(/HTTP 500$/);
    expect(ping.message).not.toContain(LEAK);

    const realm = await hostile((_req, res) => {
      res.writeHead(400);
      res.end(LEAK);
    });
    const withRealm = await hostile((_req, res) =>
      challenge(res, `Bearer realm="http://127.0.0.1:${realm.port}/token"`),
    );
    const token = await imageExists(
      `${withRealm.host}/a/b:v1`,
      fromEnv({ REGISTRY_INSECURE_HOSTS: '127.0.0.1' }),
    );
    expect(token.reason).toMatch(/token service http:\/\/127\.0\.0\.1:\d+ answered HTTP 400$/);
    expect(token.reason).not.toContain(LEAK);
  });
});

describe('internal networks', () => {
  /** A plain TCP listener: counts connections, whatever protocol the client speaks. */
  async function listener(): Promise<{ port: number; connections: () => number }> {
    let count = 0;
    const server: Server = createServer((_req, res) => res.end());
    server.on('connection', () => count++);
    const port = await freePort();
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', () => resolve()));
    servers.push({ ...stoppable(() => server, port), seen: [] });
    return { port, connections: () => count };
  }

  it('knows the internal ranges: loopback, private, link-local (metadata), mapped IPv6', () => {
    for (const internal of [
      '127.0.0.1',
      '10.1.2.3',
      '172.20.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '::1',
      '::',
      'fd00::1',
      'fe80::1',
      '::ffff:7f00:1',
      '::ffff:169.254.169.254',
      // IPv6 forms that carry an IPv4 address, or reach a site's own network
      '::127.0.0.1',
      '::a9fe:a9fe',
      '2002:7f00:1::1',
      '2002:a9fe:a9fe::',
      '2001:0:4136:e378:8000:63bf:80ff:fffe',
      '64:ff9b:1::a00:1',
      'fec0::1',
    ])
      expect(isInternalAddress(internal), internal).toBe(true);
    for (const external of ['8.8.8.8', '23.1.2.3', '172.32.0.1', '2001:4860:4860::8888'])
      expect(isInternalAddress(external), external).toBe(false);
  });

  /** Internal IPv4 addresses as IPv6 carries them, and the other spellings of an address. */
  const INTERNAL_SPELLINGS = [
    // IPv4-translated (::ffff:0:0:0/96), compressed, expanded, mixed notation, upper case
    '::ffff:0:127.0.0.1',
    '::ffff:0:7f00:1',
    '0:0:0:0:ffff:0:a00:1',
    '0000:0000:0000:0000:ffff:0000:a9fe:a9fe',
    '::FFFF:0:A9FE:A9FE',
    // IPv4-mapped (::ffff:0:0/96)
    '::ffff:127.0.0.1',
    '::FFFF:7F00:1',
    '0:0:0:0:0:ffff:a00:1',
    '0:0:0:0:0:FFFF:169.254.169.254',
    // IPv4-compatible (::/96)
    '::127.0.0.1',
    '::a00:1',
    '0:0:0:0:0:0:a9fe:a9fe',
    // 6to4 (2002::/16), Teredo (2001::/32), NAT64 (64:ff9b::/96, 64:ff9b:1::/48)
    '2002:7f00:1::1',
    '2002:0a00:0001::',
    '2002:A9FE:A9FE::1',
    '2001:0:4136:e378:8000:63bf:80ff:fffe',
    '2001:0000:0a00:0001::1',
    '64:ff9b::127.0.0.1',
    '64:ff9b::a9fe:a9fe',
    '64:ff9b:1::a00:1',
    '64:FF9B:1:0:0:0:7f00:1',
    // site-local (fec0::/10), link-local with a zone id, loopback spellings, brackets
    'fec0::1',
    'FEC0:0:0:0:0:0:0:1',
    'fe80::1%eth0',
    'fe80::1%25eth0',
    'FE80::A9FE:A9FE',
    '0:0:0:0:0:0:0:1',
    '[::1]',
    '[::ffff:0:7f00:1]',
    // IPv4 spellings a URL or the resolver reads as an address
    '127.1',
    '0x7f.1',
    '0x7F000001',
    '2130706433',
    '0177.0.0.1',
    '10.1',
    '127.0.0.1.',
  ];
  const PUBLIC_SPELLINGS = [
    '8.8.8.8',
    '2001:4860::8888',
    '2001:4860:4860::8888',
    '::ffff:8.8.8.8',
    '::FFFF:808:808',
    '[2001:4860::8888]',
    'registry.example.com',
  ];

  it('refuses every IPv6 form that carries an internal IPv4 address, and every spelling of one', () => {
    for (const internal of INTERNAL_SPELLINGS) expect(isInternalAddress(internal), internal).toBe(true);
    for (const external of PUBLIC_SPELLINGS) expect(isInternalAddress(external), external).toBe(false);
  });

  it('drops those addresses from the DNS answers the connection uses', async () => {
    const lookup = (answers: string[]) =>
      new Promise<{ error?: string; addresses?: string[] }>((resolve) => {
        const fake: Resolver = (_name, _options, callback) =>
          callback(
            null,
            answers.map((address) => ({ address, family: isIP(address.replace(/%.*$/, '')) })),
          );
        publicLookupVia(fake)('registry.example.com', { all: true }, (err, addresses) =>
          resolve(
            err
              ? { error: err.message }
              : { addresses: (addresses as LookupAddress[]).map((a) => a.address) },
          ),
        );
      });
    // Only the spellings a resolver can answer with: addresses, not shorthands.
    const answers = INTERNAL_SPELLINGS.filter((a) => isIP(a.replace(/%.*$/, '')) !== 0);
    expect(await lookup(answers)).toMatchObject({
      error: expect.stringMatching(/resolves only to internal addresses/),
    });
    expect(await lookup([...answers, '::ffff:8.8.8.8', '2001:4860::8888'])).toEqual({
      addresses: ['::ffff:8.8.8.8', '2001:4860::8888'],
    });
  });

  it('never connects to a registry or token realm named by another spelling of an internal address', async () => {
    const target = await listener();
    const client = fromEnv({}, {});
    // Image references take no IPv6 literal; realm URLs (below) do.
    const hosts = ['127.1', '0x7f.1', '2130706433', '0177.0.0.1'];
    const refs = hosts.map((host) => `${host}:${target.port}/team/bundle:v1`);
    const results = await checkImages(refs, { client });
    for (const ref of refs) expect(results.get(ref)?.reason ?? 'no answer', ref).toMatch(/internal network/);
    // A realm is a URL a hostile registry writes: each spelling is refused as well.
    const ipv6 = [
      '[::ffff:7f00:1]',
      '[::ffff:0:7f00:1]',
      '[::ffff:0:127.0.0.1]',
      '[0:0:0:0:0:FFFF:127.0.0.1]',
    ];
    for (const host of [...hosts, ...ipv6]) {
      const registry = await hostile((_req, res) =>
        challenge(res, `Bearer realm="https://${host}:${target.port}/token",service="x"`),
      );
      // Only the registry's own host:port is listed (plain HTTP, internal allowed).
      const check = await imageExists(
        `${registry.host}/team/bundle:v1`,
        fromEnv({ REGISTRY_INSECURE_HOSTS: registry.host }),
      );
      expect(check.reason, host).toMatch(/internal network; not contacted/);
    }
    expect(target.connections()).toBe(0);
  });

  it('never connects to an image registry a pull request names on an internal address, by IP or by name', async () => {
    const target = await listener();
    const client = fromEnv({}, {});
    const refs = [`127.0.0.1:${target.port}/team/bundle:v1`, `localhost:${target.port}/team/bundle:v1`];
    const results = await checkImages(refs, { client });
    for (const ref of refs) {
      const check = results.get(ref);
      expect(check?.status, ref).toBe('unreachable');
      expect(check?.reason, ref).toMatch(/internal network; not contacted.*REGISTRY_PRIVATE_HOSTS/);
    }
    expect(target.connections()).toBe(0);
  });

  it('never follows a token realm to an internal address, and contacts listed private hosts', async () => {
    const realm = await listener();
    // The registry itself is allowed (plain HTTP, so internal allowed); its realm is not.
    const registry = await hostile((_req, res) =>
      challenge(res, `Bearer realm="https://localhost:${realm.port}/token",service="x"`),
    );
    const client = fromEnv({ REGISTRY_INSECURE_HOSTS: '127.0.0.1' });
    const check = await imageExists(`${registry.host}/team/bundle:v1`, client);
    expect(check.status).toBe('unreachable');
    expect(check.reason).toMatch(/localhost resolves only to internal addresses.*not contacted/);
    expect(registry.seen.length).toBeGreaterThan(0);
    expect(realm.connections()).toBe(0);

    // Listed by the operator: contacted (the TLS handshake with a plain server then fails).
    const allowed = fromEnv({ REGISTRY_INSECURE_HOSTS: '127.0.0.1', REGISTRY_PRIVATE_HOSTS: 'localhost' });
    const asked = await imageExists(`${registry.host}/team/bundle:v1`, allowed);
    expect(asked.reason).not.toMatch(/internal/);
    expect(realm.connections()).toBeGreaterThan(0);
  });
});

describe('bounded registry work', () => {
  it('ends a token realm that trickles a byte at a time at the total deadline, and asks that registry no more', async () => {
    const timers = new Set<NodeJS.Timeout>();
    const realm = await hostile((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write('{');
      // one byte every 100 ms: an idle timeout never fires
      const t = setInterval(() => res.write(' '), 100);
      timers.add(t);
      res.on('close', () => clearInterval(t));
    });
    const registry = await hostile((_req, res) =>
      challenge(res, `Bearer realm="http://127.0.0.1:${realm.port}/token"`),
    );
    const client = fromEnv(ENV, { deadlineMs: 800 });
    const started = Date.now();
    const refs = ['a', 'b', 'c'].map((r) => `${registry.host}/x/${r}:v1`);
    const results = await checkImages(refs, { client, concurrency: 1 });
    const took = Date.now() - started;
    for (const t of timers) clearInterval(t);
    const first = results.get(refs[0]!)!;
    expect(first.status).toBe('unreachable');
    expect(first.reason).toMatch(/no complete answer to GET \/token within the deadline of 0\.8 s/);
    // The registry that hit a limit is not asked again for the other images of this call.
    expect(results.get(refs[2]!)?.reason).toBe(first.reason);
    expect(realm.seen.length).toBe(1);
    expect(took).toBeLessThan(3000);
  }, 15_000);

  it('cuts a huge manifest at the 4 MiB cap and a blob at its cap, naming the limit', async () => {
    let written = 0;
    const registry = await hostile((req, res) => {
      if (req.url?.includes('/blobs/')) {
        // declares 400 MiB: refused before a byte is held
        res.writeHead(200, { 'Content-Length': String(400 * 2 ** 20) });
        res.write(Buffer.alloc(1024));
        return;
      }
      res.writeHead(200, { 'Content-Type': 'application/vnd.oci.image.manifest.v1+json' });
      const chunk = Buffer.alloc(2 ** 20, 0x20);
      let sent = 0;
      const pump = (): void => {
        while (sent < 64 && !res.destroyed) {
          sent++;
          written += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        res.end();
      };
      res.on('close', () => (sent = 64));
      pump();
    });
    const client = fromEnv(ENV, { maxBlobBytes: 2 ** 20 });
    const ref = { registry: registry.host, repository: 'big/one' };
    const manifest = await client.getManifest(ref, 'v1').catch((e) => e);
    expect(manifest).toBeInstanceOf(RegistryError);
    expect(manifest.message).toMatch(/larger than the limit of 4 MiB/);
    expect(manifest.kind).toBe('limit');
    // Reading stopped near the cap: nowhere near the 64 MiB the server had to give.
    expect(written).toBeLessThan(40 * 2 ** 20);
    const blob = await client.getBlob(ref, `sha256:${'a'.repeat(64)}`).catch((e) => e);
    expect(blob.message).toMatch(/larger than the limit of 1 MiB/);
  }, 15_000);
});

describe('images the bot cannot ask about', () => {
  it('fail the images check unless their registry is listed in images.unverifiableRegistries', async () => {
    const closed = await hostile((_req, res) => challenge(res, 'Basic realm="private"'));
    const image = `${closed.host}/private/bundle:v1`;
    const results = await checkImages([image], { client: fromEnv() });
    expect(results.get(image)?.status).toBe('unreachable');
    const uses = [
      { image, kind: 'bundle' as const, bundle: 'op.v1', package: 'op', file: 'c/op.yaml', line: 3 },
    ];
    const failed = imagesCheck(uses, results);
    expect(failed.conclusion).toBe('failure');
    expect(failed.findings[0]).toMatchObject({ rule: 'IMG-UNREACHABLE', level: 'error' });
    expect(failed.summary).toContain('images.unverifiableRegistries');
    // The key is part of the repository config, and listing the registry makes it neutral.
    const { config, problems } = parseRepoConfig(`images:\n  unverifiableRegistries: ["${closed.host}"]\n`);
    expect(problems).toEqual([]);
    const neutral = imagesCheck(uses, results, {
      unverifiableRegistries: config.images.unverifiableRegistries,
    });
    expect(neutral.conclusion).toBe('neutral');
    expect(neutral.findings[0]?.level).toBe('warning');
  });
});

// ---- bundle pulls of the CRD check -----------------------------------------------------

const bundle = fooBundle;
const CHANNEL = fooChannel(['1.0.0']);

/** foo 1.0.0 under `config` on main, and branch pr adding 1.1.0 (`image`: {v} is the version); the work tree. */
function gitRepo(config: string, image: string): string {
  const repo = new WorkRepo('catalog-bot-trust-');
  dirs.push(repo.root);
  repo.pullRequest(
    1,
    {
      '.github/catalog-bot.yml': config,
      'catalogs/v1/foo/catalog.yaml': CHANNEL,
      'catalogs/v1/foo/bundle-1.0.0.yaml': bundle('1.0.0', image.replace('{v}', '1.0.0')),
    },
    {
      'catalogs/v1/foo/catalog.yaml': CHANNEL + '  - name: foo.v1.1.0\n    replaces: foo.v1.0.0\n',
      'catalogs/v1/foo/bundle-1.1.0.yaml': bundle('1.1.0', image.replace('{v}', '1.1.0')),
    },
  );
  return repo.work;
}

describe('bundle pulls for CRDs and templates', () => {
  it('honour images.allowedRegistries: a bundle image elsewhere is never pulled', async () => {
    const evil = await hostile((_req, res) => {
      res.writeHead(404);
      res.end();
    });
    const client = fromEnv();
    const manifests = bundleManifests(bundleRenderer(client));
    const image = `${evil.host}/evil/foo-bundle:v{v}`;
    const allowed = gitRepo('maintainers: [alice]\nimages:\n  allowedRegistries: [quay.io]\n', image);
    const { checks } = await runPrChecks({
      repo: allowed,
      base: 'main',
      head: 'pr',
      bundleManifests: manifests,
    });
    expect(checks.find((c) => c.name === 'catalog-bot/crd-upgrade')).toBeDefined();
    expect(evil.seen).toEqual([]);
    // Without the restriction the same change does pull them (the check is what asks).
    const open = gitRepo('maintainers: [alice]\n', image);
    await runPrChecks({ repo: open, base: 'main', head: 'pr', bundleManifests: manifests });
    expect(evil.seen.length).toBeGreaterThan(0);
  });
});

// ---- through the App ------------------------------------------------------------------

describe.skipIf(!haveRegistryTools)(
  'the App: images check of a pull request naming a hostile registry',
  () => {
    let home: RunningRegistry;
    let token: RunningProxy;
    beforeAll(async () => {
      home = await startRegistry();
      token = await startProxy(home.port, { auth: 'bearer', username: 'bot', password: 's3cret' });
    });
    afterAll(async () => {
      await token?.stop();
      await home?.stop();
    });

    it('`build --push` sends REGISTRY_USERNAME/REGISTRY_PASSWORD to the --tag and --base hosts it names', async () => {
      const pusher = new RegistryClient({
        credentials: () => ({ username: 'bot', password: 's3cret', from: 'test' }),
        insecureHosts: ['127.0.0.1'],
      });
      clients.push(pusher);
      await pushTestBase(pusher, { registry: token.host, repository: 'home/base', tag: 'v1' });
      const out: string[] = [];
      const err: string[] = [];
      const stream = (into: string[]) =>
        new Writable({
          write(chunk: Buffer, _enc, done) {
            into.push(chunk.toString());
            done();
          },
        });
      const code = await buildCommand(
        [FIXTURE, '--tag', `${token.host}/catalogs/cli:v1`, '--base', `${token.host}/home/base:v1`, '--push'],
        stream(out),
        stream(err),
        ENV,
      );
      expect(err.join('')).toBe('');
      expect(code).toBe(0);
      expect(out.join('')).toMatch(/^127\.0\.0\.1:\d+\/catalogs\/cli:v1 sha256:[0-9a-f]{64}\n/);
    });

    it('sends the push credentials only to the base config publish host, copies no realm body, and fails the unaskable image', async () => {
      const client = fromEnv();
      // A private image at home (the proxy wants credentials for pulls too).
      const pusher = new RegistryClient({
        credentials: () => ({ username: 'bot', password: 's3cret', from: 'test' }),
        insecureHosts: ['127.0.0.1'],
      });
      clients.push(pusher);
      const operand = await pushTestBase(pusher, {
        registry: token.host,
        repository: 'home/operand',
        tag: 'v1',
      });
      const realm = await hostile((_req, res) => {
        res.writeHead(401, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ errors: [{ code: 'UNAUTHORIZED', message: LEAK }] }));
      });
      const evil = await hostile((_req, res) =>
        challenge(res, `Bearer realm="http://127.0.0.1:${realm.port}/token",service="evil"`),
      );

      const repo = new WorkRepo('catalog-bot-trust-app-');
      dirs.push(repo.root);
      const head = repo.pullRequest(
        1,
        {
          '.github/catalog-bot.yml': [
            'maintainers: [alice]',
            'publish:',
            `  images: ["${token.host}/catalogs/c:{root}"]`,
            `  baseImage: ${token.host}/home/operand:v1`,
            '',
          ].join('\n'),
          'catalogs/v1/foo/catalog.yaml': CHANNEL,
          'catalogs/v1/foo/bundle-1.0.0.yaml': bundle('1.0.0', `${token.host}/home/operand:v1`),
        },
        {
          'catalogs/v1/foo/catalog.yaml': CHANNEL + '  - name: foo.v1.1.0\n    replaces: foo.v1.0.0\n',
          'catalogs/v1/foo/bundle-1.1.0.yaml':
            bundle('1.1.0', `${evil.host}/evil/foo-bundle:v1.1.0`) +
            `relatedImages:\n  - name: operand\n    image: ${token.host}/home/operand@${operand.digest}\n`,
        },
      );

      const app = await startAppHarness(repo.bare, [{ number: 1, head, author: 'bob' }], {
        registry: () => client,
      });
      try {
        await app.pullRequest(1, 'opened');
        const { gh } = app;

        // Neither the hostile registry nor its token service ever saw credentials.
        expect(evil.seen.length).toBeGreaterThan(0);
        expect([...evil.seen, ...realm.seen].filter((r) => r.auth !== undefined)).toEqual([]);
        const run = gh.runsFor(head, 'catalog-bot/images').at(-1);
        const summary = run?.output?.summary ?? '';
        expect(summary).not.toContain(LEAK);
        expect(run?.conclusion).toBe('failure');
        // The private operand at home was seen with the credentials; the hostile image was not.
        expect(summary).toContain('1 exist');
        expect(summary).toContain(`${evil.host}/evil/foo-bundle:v1.1.0`);
        expect(summary).toContain('images.unverifiableRegistries');
      } finally {
        await app.stop();
      }
    }, 60_000);
  },
);
