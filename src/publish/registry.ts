// A client for registries speaking the distribution API (OCI distribution spec): token and
// basic auth, blob existence, cross-repository mounts, monolithic and chunked uploads,
// manifests, bounded retries. Pure Node (node:http/https), blobs held in memory.
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { readFileSync } from 'node:fs';
import { Agent as HttpAgent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { BlockList, isIP } from 'node:net';
import { parseRef, type ImageRef, type RepoRef } from '../catalog/image-ref.js';
import { isRegistryDown, type RegistryErrorKind } from '../checks/registry-policy.js';
import { MANIFEST_ACCEPT, sha256 } from './oci.js';

// Reference parsing is the core's (src/catalog/image-ref.ts); the client's callers find it here too.
export { parseRef, type ImageRef, type RepoRef };
// The error kinds and the credential hosts of a config are part of the checks' registry
// policy (src/checks/registry-policy.ts), which this client implements.
export { credentialHostsOf, type RegistryErrorKind } from '../checks/registry-policy.js';

export function formatRef(ref: ImageRef): string {
  return `${ref.registry}/${ref.repository}${ref.tag ? `:${ref.tag}` : ''}${ref.digest ? `@${ref.digest}` : ''}`;
}

/** The tag or digest a reference names (a digest wins; neither means `latest`). */
export const referenceOf = (ref: ImageRef): string => ref.digest ?? ref.tag ?? 'latest';

/** Where the API of a registry lives: Docker Hub's references say docker.io, its API is elsewhere. */
export function apiHost(registry: string): string {
  return registry === 'docker.io' || registry === 'index.docker.io' ? 'registry-1.docker.io' : registry;
}

export class RegistryError extends Error {
  constructor(
    message: string,
    readonly kind: RegistryErrorKind,
    readonly registry: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'RegistryError';
  }
  /** The registry cannot be asked now, whatever the image: not reached, over a limit, internal. */
  get registryDown(): boolean {
    return isRegistryDown(this.kind);
  }
  /** Worth another try: a server error or a dropped connection. */
  get transient(): boolean {
    return (
      (this.kind === 'http' && (this.status ?? 0) >= 500) ||
      this.status === 429 ||
      (this.kind === 'unreachable' && this.status === -1)
    );
  }
}

// ---- credentials -----------------------------------------------------------------------

export interface Credentials {
  username: string;
  password: string;
  /** Where they came from, for messages (never the secret itself). */
  from: string;
  /**
   * Not tied to a host (REGISTRY_USERNAME/REGISTRY_PASSWORD): a client sends them only to
   * its credential hosts (RegistryClientOptions.credentialHosts), never to a registry a
   * pull request names (docs/security.md, "Credentials stay home").
   */
  unbound?: boolean;
}

export type CredentialLookup = (registry: string, repository: string) => Credentials | undefined;

/** A docker/podman config.json key as a bare host or host/path. */
export function normaliseAuthKey(key: string): string {
  let k = key.replace(/^[a-z]+:\/\//, '').replace(/\/+$/, '');
  k = k.replace(/\/v[12]$/, '');
  if (k === 'index.docker.io' || k === 'registry-1.docker.io') k = 'docker.io';
  return k;
}

/** Credentials from a docker/podman `config.json` (`auths`, `auth` base64 or username/password). */
export function credentialsFromAuthFile(text: string, file: string): CredentialLookup {
  let json: { auths?: Record<string, { auth?: string; username?: string; password?: string }> };
  try {
    json = JSON.parse(text) as typeof json;
  } catch (err) {
    throw new Error(`REGISTRY_AUTH_FILE ${file} is not valid JSON: ${(err as Error).message}`, {
      cause: err,
    });
  }
  const table = new Map<string, Credentials>();
  for (const [key, entry] of Object.entries(json.auths ?? {})) {
    let username = entry.username;
    let password = entry.password;
    if (entry.auth) {
      const decoded = Buffer.from(entry.auth, 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      if (colon > 0) {
        username = decoded.slice(0, colon);
        password = decoded.slice(colon + 1);
      }
    }
    if (username && password !== undefined)
      table.set(normaliseAuthKey(key), { username, password, from: `REGISTRY_AUTH_FILE entry "${key}"` });
  }
  return (registry, repository) => {
    const host = normaliseAuthKey(registry);
    // podman allows entries per repository: the longest matching path wins.
    const parts = repository.split('/');
    for (let i = parts.length; i > 0; i--) {
      const hit = table.get(`${host}/${parts.slice(0, i).join('/')}`);
      if (hit) return hit;
    }
    return table.get(host);
  };
}

/** The runtime contract: REGISTRY_AUTH_FILE, else REGISTRY_USERNAME and REGISTRY_PASSWORD. */
export function credentialsFromEnv(env: NodeJS.ProcessEnv = process.env): CredentialLookup {
  const file = env.REGISTRY_AUTH_FILE;
  const fromFile = file
    ? credentialsFromAuthFile(
        (() => {
          try {
            return readFileSync(file, 'utf8');
          } catch (err) {
            throw new Error(`cannot read REGISTRY_AUTH_FILE ${file}: ${(err as Error).message}`, {
              cause: err,
            });
          }
        })(),
        file,
      )
    : undefined;
  const username = env.REGISTRY_USERNAME;
  const password = env.REGISTRY_PASSWORD;
  const fromVars: Credentials | undefined =
    username && password !== undefined
      ? { username, password, from: 'REGISTRY_USERNAME/REGISTRY_PASSWORD', unbound: true }
      : undefined;
  return (registry, repository) => fromFile?.(registry, repository) ?? fromVars;
}

/** A comma-separated list of hosts from an environment variable; unset or empty: none. */
function hostList(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((h) => h.trim())
    .filter((h) => h !== '');
}

export function insecureHostsFromEnv(env: NodeJS.ProcessEnv = process.env): string[] {
  return hostList(env.REGISTRY_INSECURE_HOSTS);
}

/**
 * REGISTRY_PRIVATE_HOSTS (comma-separated `host:port` or bare hosts): registries on the
 * machine's own or a private network that the bot may contact (RegistryClientOptions.privateHosts).
 */
export function privateHostsFromEnv(env: NodeJS.ProcessEnv = process.env): string[] {
  return hostList(env.REGISTRY_PRIVATE_HOSTS);
}

// Loopback, private, link-local (cloud metadata), shared, benchmark, multicast and reserved
// ranges: a registry named in a pull request must not be a way into the bot's own network.
// (IPv4-mapped IPv6 addresses are checked against the IPv4 ranges by BlockList itself.)
const INTERNAL_ADDRESSES = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 3],
] as const)
  INTERNAL_ADDRESSES.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [
  ['::', 96], // unspecified, loopback and IPv4-compatible (::127.0.0.1)
  ['::ffff:0:0:0', 96], // IPv4-translated (::ffff:0:127.0.0.1): carries an IPv4 address
  ['64:ff9b::', 96], // NAT64: carries an IPv4 address
  ['64:ff9b:1::', 48], // local-use NAT64
  ['100::', 64], // discard-only
  ['2001::', 32], // Teredo: carries an IPv4 address
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4: carries an IPv4 address
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10], // site-local (deprecated, still routed inside some networks)
  ['ff00::', 8],
] as const)
  INTERNAL_ADDRESSES.addSubnet(net, bits, 'ipv6');

/**
 * Is this IP address on the machine itself or a private or reserved network? Any spelling a
 * connection would read as an address counts: `[::1]`, `fe80::1%eth0`, and the IPv4 forms a
 * URL or the resolver accepts (`127.1`, `0x7f.1`, `2130706433`) as the address they name.
 * Anything else is a host name, judged by what it resolves to (publicLookup).
 */
export function isInternalAddress(address: string): boolean {
  const ip = ipOf(address);
  if (ip === undefined) return false;
  return INTERNAL_ADDRESSES.check(ip, isIP(ip) === 4 ? 'ipv4' : 'ipv6');
}

/** The IP address a host spelling stands for, or undefined for a host name. */
function ipOf(host: string): string | undefined {
  const bare = host.replace(/^\[|\]$/g, '');
  if (isIP(bare) !== 0) return bare;
  try {
    // The URL parser reads the shorthand and numeric IPv4 forms as getaddrinfo does.
    const hostname = new URL(`http://${bare}/`).hostname.replace(/^\[|\]$/g, '');
    return isIP(hostname) !== 0 ? hostname : undefined;
  } catch {
    return undefined;
  }
}

/** Thrown by the lookup when a host name resolves only to internal addresses. */
const INTERNAL_CODE = 'ERR_CATALOG_BOT_INTERNAL_ADDRESS';

/**
 * A DNS lookup for connections (answers from `resolve`) that drops internal addresses: the
 * check is on the very answer the connection uses, so a name cannot resolve to a public
 * address when checked and to an internal one when connected (DNS rebinding).
 */
export function publicLookupVia(resolve: Resolver): Lookup {
  return (hostname, options, callback) => {
    resolve(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      const usable = addresses.filter((a) => !isInternalAddress(a.address));
      if (usable.length === 0)
        return callback(
          Object.assign(
            new Error(
              `${hostname} resolves only to internal addresses (${addresses.map((a) => a.address).join(', ')})`,
            ),
            { code: INTERNAL_CODE },
          ),
          [],
        );
      if (options.all) return callback(null, usable);
      const first = usable[0] as LookupAddress;
      callback(null, first.address, first.family);
    });
  };
}

/** The DNS answers for a name, all of them. */
export type Resolver = (
  hostname: string,
  options: LookupOptions & { all: true },
  callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

type Lookup = (
  hostname: string,
  options: LookupOptions,
  callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
) => void;

const publicLookup = publicLookupVia(dnsLookup);

/**
 * REGISTRY_CREDENTIAL_HOSTS (comma-separated registry hosts): for the CLI, where
 * REGISTRY_USERNAME/REGISTRY_PASSWORD may go besides the hosts a command names itself.
 */
export function credentialHostsFromEnv(env: NodeJS.ProcessEnv = process.env): string[] {
  return hostList(env.REGISTRY_CREDENTIAL_HOSTS);
}

/**
 * CATALOG_BOT_CREDENTIAL_HOSTS (comma-separated registry hosts): for the App, the only
 * registries REGISTRY_USERNAME/REGISTRY_PASSWORD may ever go to, whatever a repository's
 * config names (RegistryClientOptions.credentialHostCeiling).
 */
export function appCredentialCeilingFromEnv(env: NodeJS.ProcessEnv = process.env): string[] {
  return hostList(env.CATALOG_BOT_CREDENTIAL_HOSTS);
}

/**
 * Token services on another host than their registry that may still get credentials:
 * fixed here, never taken from a challenge (Docker Hub's realm is auth.docker.io).
 */
const KNOWN_REALMS: Record<string, string[]> = { 'registry-1.docker.io': ['auth.docker.io'] };

// ---- the client -----------------------------------------------------------------------

/** Manifests, tokens, error answers: small (docs/security.md, "Bounded work"). */
export const MAX_SMALL_RESPONSE_BYTES = 4 * 2 ** 20;
/** A blob held in memory: room for the layers of a base image (opm's are tens of MiB). */
export const MAX_BLOB_BYTES = 512 * 2 ** 20;

export interface RegistryClientOptions {
  credentials?: CredentialLookup;
  /**
   * Registry hosts (as in references, `docker.io` for Docker Hub) that may get credentials
   * not tied to a host (REGISTRY_USERNAME/REGISTRY_PASSWORD): the App passes the hosts of
   * the base branch's `publish.images` and `publish.baseImage`. Default: none.
   */
  credentialHosts?: Iterable<string>;
  /**
   * The operator's ceiling on `credentialHosts` (CATALOG_BOT_CREDENTIAL_HOSTS): a repository's
   * config is trusted for that repository only, so where the App is installed on many, a
   * config naming another registry must not get the shared credentials. Undefined: no ceiling.
   */
  credentialHostCeiling?: Iterable<string>;
  /** `host:port` (or bare host, any port) allowed over plain HTTP (and so on internal addresses). */
  insecureHosts?: string[];
  /**
   * `host:port` (or bare host) that may be on the machine's own or a private network
   * (REGISTRY_PRIVATE_HOSTS). Any other host that is, or resolves only to, such an address
   * is not contacted: references come from pull requests, and registries name token
   * services and redirects (docs/security.md).
   */
  privateHosts?: string[];
  /** Further attempts after a 5xx, 429 or dropped connection (default 4). */
  retries?: number;
  /** First back-off delay; it doubles each time (default 200 ms). */
  backoffMs?: number;
  /** Blobs larger than this are uploaded in chunks of this size (default 16 MiB). */
  chunkSize?: number;
  /** Idle timeout of a request: no byte for this long (default 60 s). */
  timeoutMs?: number;
  /** Whole-request deadline for manifests, tokens and other small answers (default 60 s). */
  deadlineMs?: number;
  /** Whole-request deadline for blob transfers (default 10 min). */
  blobDeadlineMs?: number;
  /** Largest manifest, token or error answer read (default 4 MiB). */
  maxResponseBytes?: number;
  /** Largest blob read (default 512 MiB). */
  maxBlobBytes?: number;
}

interface Response {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

type Challenge = { scheme: 'bearer'; realm: string; service?: string } | { scheme: 'basic' };

interface HostState {
  challenge?: Challenge;
  /** Tokens by who asked (credentials or anonymous) and scope set. */
  tokens: Map<string, { token: string; expires: number }>;
  /** Token requests under way, so parallel uploads share one. */
  pending: Map<string, Promise<{ token: string; expires: number }>>;
}

interface CallOptions {
  method: string;
  /** Path under the registry (`/v2/...`) or an absolute URL (upload locations). */
  url: string;
  /** `repository:<name>:<actions>` scopes the request needs. */
  scopes: string[];
  headers?: Record<string, string>;
  body?: Buffer;
  /** Retry 5xx and dropped connections here (idempotent requests). */
  retry?: boolean;
  /** Caps of a request or answer carrying a blob (default: the small ones). */
  limits?: Limits;
}

/** Caps of one request (docs/security.md, "Bounded work"). */
interface Limits {
  maxBytes: number;
  deadlineMs: number;
}

const RETRYABLE_CODES = new Set(['ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ECONNABORTED', 'EAI_AGAIN']);

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const mib = (bytes: number): string => `${+(bytes / 2 ** 20).toFixed(2)} MiB`;
const seconds = (ms: number): string => `${+(ms / 1000).toFixed(1)} s`;

/** Parse `Bearer realm="...",service="...",scope="..."` (quoted values may hold commas). */
export function parseChallenge(header: string | undefined): Challenge | undefined {
  if (!header) return undefined;
  const m = /^\s*(\w+)\s*(.*)$/s.exec(header);
  if (!m) return undefined;
  const scheme = (m[1] ?? '').toLowerCase();
  if (scheme === 'basic') return { scheme: 'basic' };
  if (scheme !== 'bearer') return undefined;
  const params: Record<string, string> = {};
  for (const p of (m[2] ?? '').matchAll(/(\w+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^,\s]*))/g))
    params[(p[1] ?? '').toLowerCase()] = p[2] !== undefined ? p[2].replace(/\\(.)/g, '$1') : (p[3] ?? '');
  if (!params.realm) return undefined;
  return { scheme: 'bearer', realm: params.realm, ...(params.service ? { service: params.service } : {}) };
}

/** Error codes of the distribution spec: the only words of an answer that reach a message. */
const SPEC_ERROR_CODES = new Set([
  'BLOB_UNKNOWN',
  'BLOB_UPLOAD_INVALID',
  'BLOB_UPLOAD_UNKNOWN',
  'DIGEST_INVALID',
  'MANIFEST_BLOB_UNKNOWN',
  'MANIFEST_INVALID',
  'MANIFEST_UNKNOWN',
  'NAME_INVALID',
  'NAME_UNKNOWN',
  'SIZE_INVALID',
  'UNAUTHORIZED',
  'DENIED',
  'UNSUPPORTED',
  'TOOMANYREQUESTS',
]);

/**
 * An answer in words: the status and, when the body names one, a distribution error code
 * from the spec's fixed list. Never the body's text: a registry or token service a pull
 * request names could put anything there (an internal page, a secret), and messages end
 * in check runs (docs/security.md, "Credentials stay home").
 */
export function statusDetail(res: { status: number; body: Buffer }): string {
  let code: string | undefined;
  try {
    const json = JSON.parse(res.body.toString('utf8')) as { errors?: { code?: unknown }[] };
    const c = json.errors?.[0]?.code;
    if (typeof c === 'string' && SPEC_ERROR_CODES.has(c)) code = c;
  } catch {
    // not JSON: the status alone
  }
  return `HTTP ${res.status}${code ? ` ${code} (${code.toLowerCase().replaceAll('_', ' ')})` : ''}`;
}

export interface ManifestResult {
  mediaType: string;
  digest: string;
  data: Buffer;
}

export type BlobOutcome = 'present' | 'mounted' | 'uploaded';

export interface ClientStats {
  requests: number;
  uploads: number;
  mounts: number;
  bytesUploaded: number;
}

/** What views of one client (RegistryClient.scoped) share: connections, tokens, counts. */
interface Shared {
  stats: ClientStats;
  hosts: Map<string, HostState>;
  httpAgent: HttpAgent;
  httpsAgent: HttpsAgent;
}

export class RegistryClient {
  private readonly shared: Shared;
  private readonly options: RegistryClientOptions;
  private readonly credentialLookup: CredentialLookup;
  private readonly credentialHosts: Set<string>;
  private readonly insecure: Set<string>;
  private readonly privateHosts: Set<string>;
  private readonly retries: number;
  private readonly backoffMs: number;
  private readonly chunkSize: number;
  private readonly timeoutMs: number;
  private readonly small: Limits;
  private readonly large: Limits;

  constructor(options: RegistryClientOptions = {}, shared?: Shared) {
    this.options = options;
    this.shared = shared ?? {
      stats: { requests: 0, uploads: 0, mounts: 0, bytesUploaded: 0 },
      hosts: new Map(),
      httpAgent: new HttpAgent({ keepAlive: true, maxSockets: 16 }),
      httpsAgent: new HttpsAgent({ keepAlive: true, maxSockets: 16 }),
    };
    this.credentialLookup = options.credentials ?? (() => undefined);
    const ceiling = options.credentialHostCeiling
      ? new Set([...options.credentialHostCeiling].map(normaliseAuthKey))
      : undefined;
    this.credentialHosts = new Set(
      [...(options.credentialHosts ?? [])].map(normaliseAuthKey).filter((h) => !ceiling || ceiling.has(h)),
    );
    this.insecure = new Set(options.insecureHosts ?? []);
    this.privateHosts = new Set(options.privateHosts ?? []);
    this.retries = options.retries ?? 4;
    this.backoffMs = options.backoffMs ?? 200;
    this.chunkSize = options.chunkSize ?? 16 * 1024 * 1024;
    this.timeoutMs = options.timeoutMs ?? 60_000;
    this.small = {
      maxBytes: options.maxResponseBytes ?? MAX_SMALL_RESPONSE_BYTES,
      deadlineMs: options.deadlineMs ?? 60_000,
    };
    this.large = {
      maxBytes: options.maxBlobBytes ?? MAX_BLOB_BYTES,
      deadlineMs: options.blobDeadlineMs ?? 600_000,
    };
  }

  get stats(): ClientStats {
    return this.shared.stats;
  }

  /** Which credentials this view may use, as a key for caches of what they let it see. */
  get credentialScope(): string {
    return [...this.credentialHosts].sort().join(',');
  }

  /**
   * The same client (connections, tokens) with REGISTRY_USERNAME/REGISTRY_PASSWORD going
   * only to these registry hosts: per repository, the hosts its base branch's config
   * publishes to (docs/security.md, "Credentials stay home").
   */
  scoped(credentialHosts: Iterable<string>): RegistryClient {
    return new RegistryClient({ ...this.options, credentialHosts }, this.shared);
  }

  /** Credentials and insecure hosts from the runtime contract's variables. */
  static fromEnv(
    env: NodeJS.ProcessEnv = process.env,
    options: Omit<RegistryClientOptions, 'credentials' | 'insecureHosts' | 'privateHosts'> = {},
  ): RegistryClient {
    return new RegistryClient({
      ...options,
      credentials: credentialsFromEnv(env),
      insecureHosts: insecureHostsFromEnv(env),
      privateHosts: privateHostsFromEnv(env),
    });
  }

  /** fromEnv for commands: a bad REGISTRY_AUTH_FILE is written to `err` and gives undefined. */
  static fromEnvSafe(
    env: NodeJS.ProcessEnv,
    err: NodeJS.WritableStream,
    options: Omit<RegistryClientOptions, 'credentials' | 'insecureHosts' | 'privateHosts'> = {},
  ): RegistryClient | undefined {
    try {
      return RegistryClient.fromEnv(env, options);
    } catch (problem) {
      err.write(`catalog-bot: ${(problem as Error).message}\n`);
      return undefined;
    }
  }

  /** Close kept-alive connections (of every view). */
  close(): void {
    this.shared.httpAgent.destroy();
    this.shared.httpsAgent.destroy();
  }

  /** The credentials this client may use for a registry: host-bound ones, or unbound ones for its credential hosts. */
  private credentials(registry: string, repository: string): Credentials | undefined {
    const creds = this.credentialLookup(registry, repository);
    if (creds?.unbound && !this.credentialHosts.has(normaliseAuthKey(registry))) return undefined;
    return creds;
  }

  private plainHttpAllowed(host: string): boolean {
    return this.insecure.has(host) || this.insecure.has(host.replace(/:\d+$/, ''));
  }

  /**
   * May this `host[:port]` be on an internal network? Only where the operator says (not a
   * repository's config: the connections of every repository's view are shared).
   */
  private internalAllowed(host: string): boolean {
    return (
      this.plainHttpAllowed(host) ||
      this.privateHosts.has(host) ||
      this.privateHosts.has(host.replace(/:\d+$/, ''))
    );
  }

  private baseUrl(registry: string): string {
    const host = apiHost(registry);
    return `${this.plainHttpAllowed(host) ? 'http' : 'https'}://${host}`;
  }

  private host(registry: string): HostState {
    let state = this.shared.hosts.get(registry);
    if (!state) {
      state = { tokens: new Map(), pending: new Map() };
      this.shared.hosts.set(registry, state);
    }
    return state;
  }

  // ---- HTTP ----

  /**
   * One request, no auth logic; network failures become RegistryError 'unreachable'. The
   * answer is read up to `limits.maxBytes` and must be complete within `limits.deadlineMs`
   * (an idle timeout alone lets a server trickle a byte at a time forever), else
   * RegistryError 'limit' naming the limit.
   */
  private send(
    registry: string,
    url: URL,
    method: string,
    headers: Record<string, string>,
    body?: Buffer,
    limits: Limits = this.small,
  ): Promise<Response> {
    const internalAllowed = this.internalAllowed(url.host);
    if (!internalAllowed && isInternalAddress(url.hostname.replace(/^\[|\]$/g, '')))
      return Promise.reject(this.internalError(registry, url, url.hostname));
    this.shared.stats.requests++;
    const isHttps = url.protocol === 'https:';
    const request = isHttps ? httpsRequest : httpRequest;
    return new Promise((resolve, reject) => {
      let settled = false;
      const fail = (err: RegistryError): void => {
        if (settled) return;
        settled = true;
        clearTimeout(deadline);
        reject(err);
        req.destroy();
      };
      const req = request(
        url,
        {
          method,
          headers: { 'User-Agent': 'catalog-bot', ...headers, 'Content-Length': String(body?.length ?? 0) },
          agent: isHttps ? this.shared.httpsAgent : this.shared.httpAgent,
          timeout: this.timeoutMs,
          ...(internalAllowed ? {} : { lookup: publicLookup }),
        },
        (res) => {
          const declared = Number(res.headers['content-length'] ?? 0);
          // A HEAD answer declares the size of what a GET would give: nothing is read.
          if (method !== 'HEAD' && declared > limits.maxBytes)
            return fail(this.tooLarge(registry, url, limits));
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (c: Buffer) => {
            size += c.length;
            if (size > limits.maxBytes) return fail(this.tooLarge(registry, url, limits));
            chunks.push(c);
          });
          res.on('end', () => {
            if (settled) return;
            settled = true;
            clearTimeout(deadline);
            resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) });
          });
          res.on('error', (err) => fail(this.networkError(registry, url, err)));
        },
      );
      const deadline = setTimeout(
        () =>
          fail(
            new RegistryError(
              `registry ${registry} (${url.origin}): no complete answer to ${method} ${url.pathname} within the deadline of ${seconds(limits.deadlineMs)}`,
              'limit',
              registry,
            ),
          ),
        limits.deadlineMs,
      );
      req.on('timeout', () => req.destroy(Object.assign(new Error('timed out'), { code: 'ETIMEDOUT' })));
      req.on('error', (err) => fail(this.networkError(registry, url, err)));
      req.end(body);
    });
  }

  private tooLarge(registry: string, url: URL, limits: Limits): RegistryError {
    return new RegistryError(
      `registry ${registry} (${url.origin}): the answer to ${url.pathname} is larger than the limit of ${mib(limits.maxBytes)}`,
      'limit',
      registry,
    );
  }

  private internalError(registry: string, url: URL, what: string): RegistryError {
    return new RegistryError(
      `registry ${registry} (${url.origin}): ${what} is on an internal network; not contacted (list the host in REGISTRY_PRIVATE_HOSTS if it is meant to be used)`,
      'internal',
      registry,
    );
  }

  private networkError(registry: string, url: URL, err: Error): RegistryError {
    const code = (err as NodeJS.ErrnoException).code ?? '';
    if (code === INTERNAL_CODE) return this.internalError(registry, url, err.message);
    const reset = RETRYABLE_CODES.has(code) || /socket hang up/.test(err.message);
    let message = `cannot reach registry ${registry} (${url.origin}): ${code || err.message}`;
    if (code === 'EPROTO' || /wrong version number|packet length too long/i.test(err.message))
      message += `; if it serves plain HTTP, list ${apiHost(registry)} in REGISTRY_INSECURE_HOSTS`;
    // status -1 marks a dropped connection (worth a retry); refused or unknown hosts are not.
    return new RegistryError(message, 'unreachable', registry, reset ? -1 : undefined);
  }

  private async backoff(attempt: number): Promise<void> {
    await sleep(this.backoffMs * 2 ** attempt);
  }

  /** A request with auth (answering 401 challenges once) and, when asked, bounded retries. */
  private async call(registry: string, options: CallOptions): Promise<Response> {
    const state = this.host(registry);
    const url = new URL(options.url, this.baseUrl(registry));
    const limits = options.limits ?? this.small;
    const send = (authorization: string | undefined) =>
      this.send(registry, url, options.method, this.headers(options, authorization), options.body, limits);
    for (let attempt = 0; ; attempt++) {
      try {
        let authorization = await this.authorization(registry, state, options.scopes);
        let res = await send(authorization);
        if (res.status === 401) {
          const challenge = parseChallenge(res.headers['www-authenticate'] as string | undefined);
          if (challenge) {
            const before = authorization;
            state.challenge = challenge;
            // the token for these scopes (if any) was refused or has expired
            state.tokens.delete(this.tokenKey(registry, options.scopes));
            authorization = await this.authorization(registry, state, options.scopes);
            if (authorization !== undefined && authorization !== before) res = await send(authorization);
          }
          if (res.status === 401) throw this.authError(registry, options.scopes, res, state.challenge);
        }
        if (res.status === 403) {
          throw new RegistryError(
            `registry ${registry} denied ${options.method} ${url.pathname} (${statusDetail(res)}): the credentials lack the permission (${options.scopes.join(' ')})`,
            'denied',
            registry,
            403,
          );
        }
        if (options.retry && (res.status >= 500 || res.status === 429) && attempt < this.retries) {
          await this.backoff(attempt);
          continue;
        }
        return res;
      } catch (err) {
        if (options.retry && err instanceof RegistryError && err.transient && attempt < this.retries) {
          await this.backoff(attempt);
          continue;
        }
        throw err;
      }
    }
  }

  private headers(options: CallOptions, authorization: string | undefined): Record<string, string> {
    return { ...(options.headers ?? {}), ...(authorization ? { Authorization: authorization } : {}) };
  }

  private authError(
    registry: string,
    scopes: string[],
    res: Response,
    challenge: Challenge | undefined,
  ): RegistryError {
    const creds = this.credentials(registry, repositoryOfScopes(scopes));
    const detail = statusDetail(res);
    // With a token in hand the credentials were accepted: the token lacks the scope.
    const tokenRefused = challenge?.scheme === 'bearer' && creds !== undefined;
    return new RegistryError(
      tokenRefused
        ? `registry ${registry} refused the token issued to user "${creds.username}" (from ${creds.from}) for ${scopes.join(' ')}: no permission (${detail})`
        : creds
          ? `wrong credentials: registry ${registry} rejected user "${creds.username}" (from ${creds.from}) for ${scopes.join(' ')} (${detail})`
          : `registry ${registry} requires credentials for ${scopes.join(' ')}: ${this.noCredentialsHint(registry)} (${detail})`,
      'auth',
      registry,
      res.status,
    );
  }

  /** Why there are no credentials for a registry, and what would give some. */
  private noCredentialsHint(registry: string): string {
    const unbound = this.credentialLookup(registry, '');
    return unbound?.unbound
      ? `${unbound.from} are only sent to the registries the repository publishes to (publish.images, publish.baseImage; for the CLI, the hosts it names and REGISTRY_CREDENTIAL_HOSTS); give ${registry} an entry in REGISTRY_AUTH_FILE`
      : 'set REGISTRY_AUTH_FILE, or REGISTRY_USERNAME and REGISTRY_PASSWORD';
  }

  /** Tokens are kept per identity: one issued to credentials never serves an anonymous asker. */
  private tokenKey(registry: string, scopes: string[]): string {
    const creds = this.credentials(registry, repositoryOfScopes(scopes));
    return `${creds ? `${creds.from}\0${creds.username}` : ''}\0${scopeKey(scopes)}`;
  }

  /** The Authorization header for these scopes, fetching (and caching) a token when needed. */
  private async authorization(
    registry: string,
    state: HostState,
    scopes: string[],
  ): Promise<string | undefined> {
    const challenge = state.challenge;
    if (!challenge) return undefined;
    const creds = this.credentials(registry, repositoryOfScopes(scopes));
    if (challenge.scheme === 'basic') {
      return creds
        ? `Basic ${Buffer.from(`${creds.username}:${creds.password}`).toString('base64')}`
        : undefined;
    }
    const key = this.tokenKey(registry, scopes);
    const cached = state.tokens.get(key);
    if (cached && cached.expires > Date.now()) return `Bearer ${cached.token}`;
    let pending = state.pending.get(key);
    if (!pending) {
      pending = this.fetchToken(registry, challenge, scopes, creds).finally(() => state.pending.delete(key));
      state.pending.set(key, pending);
    }
    const token = await pending;
    state.tokens.set(key, token);
    return `Bearer ${token.token}`;
  }

  /**
   * May a token service get the registry's credentials? Only over HTTPS (or a host in
   * REGISTRY_INSECURE_HOSTS), and only on the registry's own host (or a known pairing such
   * as Docker Hub's): the realm comes from the registry's answer, so a hostile registry
   * would otherwise name any URL, an internal plain-HTTP one too (docs/security.md).
   */
  private realmMayGetCredentials(registry: string, realm: URL): boolean {
    const secure = realm.protocol === 'https:' || this.plainHttpAllowed(realm.host);
    const own = apiHost(registry);
    const sameHost = realm.host === own || (KNOWN_REALMS[own] ?? []).includes(realm.host);
    return secure && sameHost;
  }

  private async fetchToken(
    registry: string,
    challenge: { realm: string; service?: string },
    scopes: string[],
    creds: Credentials | undefined,
  ): Promise<{ token: string; expires: number }> {
    let url: URL;
    try {
      url = new URL(challenge.realm);
    } catch {
      throw new RegistryError(`registry ${registry}: its token service is not a URL`, 'auth', registry);
    }
    // A plain-HTTP realm is asked nothing, even anonymously: it may be any internal address.
    if (url.protocol !== 'https:' && !(url.protocol === 'http:' && this.plainHttpAllowed(url.host)))
      throw new RegistryError(
        `registry ${registry}: its token service ${url.protocol}//${url.host} is not HTTPS (list the host in REGISTRY_INSECURE_HOSTS if it is meant to be plain HTTP); nothing was sent to it`,
        'auth',
        registry,
      );
    const sendCreds = creds !== undefined && this.realmMayGetCredentials(registry, url);
    if (challenge.service) url.searchParams.set('service', challenge.service);
    for (const s of scopes) url.searchParams.append('scope', s);
    const ask = async (withCreds: boolean): Promise<Response> => {
      const headers: Record<string, string> = {};
      if (withCreds && creds)
        headers.Authorization = `Basic ${Buffer.from(`${creds.username}:${creds.password}`).toString('base64')}`;
      for (let attempt = 0; ; attempt++) {
        try {
          const res = await this.send(registry, url, 'GET', headers);
          if (res.status >= 500 && attempt < this.retries) {
            await this.backoff(attempt);
            continue;
          }
          return res;
        } catch (err) {
          if (err instanceof RegistryError && err.transient && attempt < this.retries) {
            await this.backoff(attempt);
            continue;
          }
          throw err;
        }
      }
    };
    let res = await ask(sendCreds);
    // Credentials meant for the push registry must not stop pulling a public base image.
    const pullOnly = scopes.every((s) => s.endsWith(':pull'));
    if ((res.status === 401 || res.status === 403) && sendCreds && pullOnly) {
      const anonymous = await ask(false);
      if (anonymous.status === 200) res = anonymous;
    }
    if (res.status === 401 || res.status === 403) {
      throw new RegistryError(
        sendCreds
          ? `wrong credentials: registry ${registry} (token service ${url.origin}) rejected user "${creds.username}" (from ${creds.from})`
          : creds
            ? `registry ${registry}: its token service ${url.origin} is not on the registry's host ${apiHost(registry)} over HTTPS, so it gets no credentials, and it refused an anonymous token for ${scopes.join(' ')} (HTTP ${res.status})`
            : `registry ${registry} requires credentials (token service ${url.origin} refused an anonymous token for ${scopes.join(' ')}): ${this.noCredentialsHint(registry)}`,
        'auth',
        registry,
        res.status,
      );
    }
    if (res.status !== 200)
      throw new RegistryError(
        `registry ${registry}: token service ${url.origin} answered ${statusDetail(res)}`,
        'http',
        registry,
        res.status,
      );
    let json: { token?: string; access_token?: string; expires_in?: number };
    try {
      json = JSON.parse(res.body.toString('utf8')) as typeof json;
    } catch {
      throw new RegistryError(`registry ${registry}: token service answered no JSON`, 'http', registry, 200);
    }
    const token = json.token ?? json.access_token;
    if (typeof token !== 'string' || token === '')
      throw new RegistryError(`registry ${registry}: token service gave no token`, 'http', registry, 200);
    // Renew a little before expiry; the spec's default lifetime is 60 s.
    const expiresIn = typeof json.expires_in === 'number' ? json.expires_in : 60;
    const lifetime = Math.max(expiresIn - 10, 5) * 1000;
    return { token, expires: Date.now() + lifetime };
  }

  private unexpected(registry: string, what: string, res: Response): RegistryError {
    return new RegistryError(
      `registry ${registry}: ${what} failed: ${statusDetail(res)}`,
      res.status === 404 ? 'not-found' : 'http',
      registry,
      res.status,
    );
  }

  // ---- the API ----

  /** GET /v2/: is the registry there and do we get in? */
  async ping(registry: string): Promise<void> {
    const res = await this.call(registry, { method: 'GET', url: '/v2/', scopes: [], retry: true });
    if (res.status !== 200) throw this.unexpected(registry, 'GET /v2/', res);
  }

  async getManifest(ref: RepoRef, reference: string): Promise<ManifestResult> {
    const res = await this.call(ref.registry, {
      method: 'GET',
      url: `/v2/${ref.repository}/manifests/${reference}`,
      scopes: [pullScope(ref.repository)],
      headers: { Accept: MANIFEST_ACCEPT.join(', ') },
      retry: true,
    });
    if (res.status !== 200)
      throw this.unexpected(ref.registry, `manifest ${ref.repository}:${reference}`, res);
    const digest = sha256(res.body);
    if (reference.startsWith('sha256:') && digest !== reference)
      throw new RegistryError(
        `registry ${ref.registry}: manifest ${reference} has digest ${digest}`,
        'http',
        ref.registry,
      );
    let mediaType = String(res.headers['content-type'] ?? '').split(';')[0] ?? '';
    try {
      const declared = (JSON.parse(res.body.toString('utf8')) as { mediaType?: string }).mediaType;
      if (declared) mediaType = declared;
    } catch {
      throw new RegistryError(`registry ${ref.registry}: manifest is not JSON`, 'http', ref.registry);
    }
    return { mediaType, digest, data: res.body };
  }

  /**
   * The manifest's digest and media type, or null when the registry does not have it.
   * `forPush` asks with the push scope: some registries grant no pull on a repository
   * that does not exist yet, and one token then serves the whole push.
   */
  async headManifest(
    ref: RepoRef,
    reference: string,
    forPush = false,
  ): Promise<{ digest: string; mediaType: string; size: number } | null> {
    const res = await this.call(ref.registry, {
      method: 'HEAD',
      url: `/v2/${ref.repository}/manifests/${reference}`,
      scopes: [forPush ? pushScope(ref.repository) : pullScope(ref.repository)],
      headers: { Accept: MANIFEST_ACCEPT.join(', ') },
      retry: true,
    });
    if (res.status === 404) return null;
    if (res.status !== 200)
      throw this.unexpected(ref.registry, `manifest ${ref.repository}:${reference}`, res);
    const header = res.headers['docker-content-digest'];
    const digest =
      typeof header === 'string' && header !== ''
        ? header
        : reference.startsWith('sha256:')
          ? reference
          : (await this.getManifest(ref, reference)).digest;
    return {
      digest,
      mediaType: String(res.headers['content-type'] ?? '').split(';')[0] ?? '',
      size: Number(res.headers['content-length'] ?? 0),
    };
  }

  async putManifest(ref: RepoRef, reference: string, mediaType: string, data: Buffer): Promise<string> {
    const res = await this.call(ref.registry, {
      method: 'PUT',
      url: `/v2/${ref.repository}/manifests/${reference}`,
      scopes: [pushScope(ref.repository)],
      headers: { 'Content-Type': mediaType },
      body: data,
      retry: true,
    });
    if (res.status !== 201 && res.status !== 200)
      throw this.unexpected(ref.registry, `PUT manifest ${ref.repository}:${reference}`, res);
    const digest = sha256(data);
    const said = res.headers['docker-content-digest'];
    if (typeof said === 'string' && said !== '' && said !== digest)
      throw new RegistryError(
        `registry ${ref.registry} stored manifest ${ref.repository}:${reference} as ${said}, expected ${digest}`,
        'http',
        ref.registry,
      );
    return digest;
  }

  async blobExists(ref: RepoRef, digest: string, forPush = false): Promise<boolean> {
    const res = await this.call(ref.registry, {
      method: 'HEAD',
      url: `/v2/${ref.repository}/blobs/${digest}`,
      scopes: [forPush ? pushScope(ref.repository) : pullScope(ref.repository)],
      retry: true,
    });
    if (res.status === 200) return true;
    if (res.status === 404) return false;
    throw this.unexpected(ref.registry, `HEAD blob ${digest}`, res);
  }

  /** A blob, read whole (at most `maxBytes`, default the client's blob cap). */
  async getBlob(ref: RepoRef, digest: string, maxBytes?: number): Promise<Buffer> {
    const limits = { ...this.large, ...(maxBytes !== undefined ? { maxBytes } : {}) };
    let res = await this.call(ref.registry, {
      method: 'GET',
      url: `/v2/${ref.repository}/blobs/${digest}`,
      scopes: [pullScope(ref.repository)],
      retry: true,
      limits,
    });
    // Registries hand blobs to storage (S3, CDN) by redirect; those get no credentials,
    // and plain HTTP only where the registry itself may use it.
    for (let hops = 0; res.status >= 300 && res.status < 400 && res.headers.location && hops < 5; hops++) {
      const next = new URL(res.headers.location, this.baseUrl(ref.registry));
      if (next.protocol !== 'https:' && !(next.protocol === 'http:' && this.plainHttpAllowed(next.host)))
        throw new RegistryError(
          `registry ${ref.registry}: blob ${digest} redirects to ${next.protocol}//${next.host}, which is not HTTPS`,
          'insecure',
          ref.registry,
        );
      res = await this.send(ref.registry, next, 'GET', {}, undefined, limits);
    }
    if (res.status !== 200) throw this.unexpected(ref.registry, `GET blob ${digest}`, res);
    if (sha256(res.body) !== digest)
      throw new RegistryError(
        `registry ${ref.registry}: blob ${digest} arrived corrupted`,
        'http',
        ref.registry,
      );
    return res.body;
  }

  /** Start an upload session, asking to mount from another repository of the same registry. */
  private async startUpload(
    ref: RepoRef,
    mount?: { digest: string; from: string },
  ): Promise<{ mounted: true } | { mounted: false; location: string }> {
    const scopes = [pushScope(ref.repository)];
    let url = `/v2/${ref.repository}/blobs/uploads/`;
    if (mount) {
      url += `?mount=${encodeURIComponent(mount.digest)}&from=${encodeURIComponent(mount.from)}`;
      scopes.push(pullScope(mount.from));
    }
    const res = await this.call(ref.registry, { method: 'POST', url, scopes, retry: true });
    if (res.status === 201 && mount) return { mounted: true };
    if (res.status !== 202 || !res.headers.location)
      throw this.unexpected(ref.registry, `start blob upload to ${ref.repository}`, res);
    return { mounted: false, location: new URL(res.headers.location, this.baseUrl(ref.registry)).href };
  }

  /** Upload through an open session: one PUT, or PATCH chunks then the closing PUT. */
  private async finishUpload(ref: RepoRef, location: string, digest: string, data: Buffer): Promise<void> {
    const scopes = [pushScope(ref.repository)];
    const withDigest = (loc: string): string =>
      `${loc}${loc.includes('?') ? '&' : '?'}digest=${encodeURIComponent(digest)}`;
    let body = data;
    if (data.length > this.chunkSize) {
      for (let start = 0; start < data.length; start += this.chunkSize) {
        const chunk = data.subarray(start, Math.min(start + this.chunkSize, data.length));
        const res = await this.call(ref.registry, {
          method: 'PATCH',
          url: location,
          scopes,
          headers: {
            'Content-Type': 'application/octet-stream',
            'Content-Range': `${start}-${start + chunk.length - 1}`,
          },
          body: chunk,
          limits: this.large,
        });
        if (res.status !== 202) throw this.unexpected(ref.registry, `upload chunk of ${digest}`, res);
        if (res.headers.location) location = new URL(res.headers.location, this.baseUrl(ref.registry)).href;
      }
      body = Buffer.alloc(0);
    }
    const res = await this.call(ref.registry, {
      method: 'PUT',
      url: withDigest(location),
      scopes,
      headers: { 'Content-Type': 'application/octet-stream' },
      body,
      limits: this.large,
    });
    if (res.status !== 201) throw this.unexpected(ref.registry, `upload of ${digest}`, res);
    this.stats.uploads++;
    this.stats.bytesUploaded += data.length;
  }

  /**
   * Make sure the repository has the blob: HEAD first (never upload twice), then a mount
   * from `mountFrom` (a repository of the same registry) when given, else an upload of
   * `data` (a function, so blobs from elsewhere are only fetched when needed). A failed
   * upload restarts with a new session, with back-off.
   */
  async ensureBlob(
    ref: RepoRef,
    digest: string,
    data: Buffer | (() => Promise<Buffer>),
    options: { mountFrom?: string } = {},
  ): Promise<BlobOutcome> {
    if (await this.blobExists(ref, digest, true)) return 'present';
    let bytes: Buffer | undefined = typeof data === 'function' ? undefined : data;
    for (let attempt = 0; ; attempt++) {
      try {
        const mount =
          options.mountFrom && options.mountFrom !== ref.repository ? options.mountFrom : undefined;
        const session = await this.startUpload(ref, mount ? { digest, from: mount } : undefined);
        if (session.mounted) {
          this.stats.mounts++;
          return 'mounted';
        }
        bytes ??= await (data as () => Promise<Buffer>)();
        if (sha256(bytes) !== digest) throw new Error(`blob content does not match ${digest}`);
        await this.finishUpload(ref, session.location, digest, bytes);
        return 'uploaded';
      } catch (err) {
        if (err instanceof RegistryError && err.transient && attempt < this.retries) {
          await this.backoff(attempt);
          continue;
        }
        throw err;
      }
    }
  }
}

export const pullScope = (repository: string): string => `repository:${repository}:pull`;
export const pushScope = (repository: string): string => `repository:${repository}:pull,push`;

const scopeKey = (scopes: string[]): string => [...scopes].sort().join(' ');

function repositoryOfScopes(scopes: string[]): string {
  return /^repository:([^:]+):/.exec(scopes[0] ?? '')?.[1] ?? '';
}
