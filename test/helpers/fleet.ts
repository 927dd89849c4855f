// A fleet of catalog-bot replicas for load and fault tests, all real and all on 127.0.0.1:
// a redis-server, the fake GitHub API (github-server.ts) as an HTTP server, small bare git
// repositories with a catalog and several heads per pull request, and `node dist/server.js`
// processes sharing the Redis queue. Deliveries are signed pull_request webhooks made from
// @octokit/webhooks-examples. Used by test/replicas.test.ts and bench/load.mjs (which
// transpiles this file and github-server.ts; keep imports to node: and ./github-server.js).
import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { createWriteStream, mkdirSync, mkdtempSync, readFileSync, rmSync, type WriteStream } from 'node:fs';
import { createServer } from 'node:net';
import { setPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import { privateKey, webhookExample as example } from './github.js';
import { GitHubServer, type ServerCheckRun, type ServerPull, type ServerRepo } from './github-server.js';

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export const haveRedis = (): boolean => spawnSync('sh', ['-c', 'command -v redis-server']).status === 0;

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

/** Poll `done` until it holds or `ms` pass; returns whether it held. */
export async function until(
  done: () => boolean | Promise<boolean>,
  ms: number,
  every = 100,
): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await done()) return true;
    if (Date.now() >= deadline) return false;
    await sleep(every);
  }
}

// --- redis-server ---

export class RedisServer {
  #child: ChildProcess | undefined;
  private constructor(
    readonly port: number,
    readonly dir: string,
    readonly appendonly: boolean,
  ) {}

  static async start(dir: string, options: { appendonly?: boolean } = {}): Promise<RedisServer> {
    const redis = new RedisServer(await freePort(), dir, options.appendonly ?? false);
    await redis.restart();
    return redis;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  ping(): boolean {
    const out = spawnSync('redis-cli', ['-p', String(this.port), 'ping'], {
      encoding: 'utf8',
      timeout: 2000,
    });
    return out.stdout?.trim() === 'PONG';
  }

  /** Start it (again) on the same port and directory. */
  async restart(): Promise<void> {
    mkdirSync(this.dir, { recursive: true });
    // With appendonly every write is in the log first (fsync each second): a restart keeps
    // the queue. Without it the data lives only in memory.
    const args = ['--port', String(this.port), '--bind', '127.0.0.1', '--dir', this.dir, '--save', ''];
    args.push('--appendonly', this.appendonly ? 'yes' : 'no', '--appendfsync', 'always');
    this.#child = spawn('redis-server', args, { stdio: 'ignore' });
    if (!(await until(() => this.ping(), 10_000, 50))) throw new Error('redis-server did not start');
  }

  /** SIGKILL: no shutdown save, what a crash does. */
  async kill(): Promise<void> {
    const child = this.#child;
    this.#child = undefined;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }
}

// --- repositories ---

export interface FleetPr {
  repo: ServerRepo;
  pull: ServerPull;
  /** Every head the pull request will have, in order; deliveries move it along. */
  heads: string[];
  /** Index of the head the last delivery announced (-1: none yet). */
  sent: number;
  /** When the delivery of each head was sent (Date.now()). */
  sentAt: number[];
}

const CONFIG = (automerge: boolean) => `catalogs: [catalogs/*]
maintainers: [alice]
ownership:
  ownersFiles: false
  newPackages: maintainers
automerge:
  enabled: ${automerge}
  method: merge
images:
  unverifiableRegistries: ['127.0.0.1:1']
`;

// Bundle images on a port nothing listens on, a registry listed as unverifiable: the
// images check is quickly neutral.
const bundle = (pkg: string, version: string) => `---
schema: olm.bundle
package: ${pkg}
name: ${pkg}.v${version}
image: 127.0.0.1:1/example/${pkg}-bundle:v${version}
properties:
  - type: olm.package
    value:
      packageName: ${pkg}
      version: ${version}
`;

function catalog(pkg: string, versions: string[]): string {
  const entries = versions.map((v, i) =>
    i === 0 ? `  - name: ${pkg}.v${v}` : `  - name: ${pkg}.v${v}\n    replaces: ${pkg}.v${versions[i - 1]}`,
  );
  return `---
schema: olm.package
name: ${pkg}
defaultChannel: stable
---
schema: olm.channel
package: ${pkg}
name: stable
entries:
${entries.join('\n')}
`;
}

/**
 * A bare repository: `main` holds package `base`; pull request N adds package `pN` in its
 * own directory (pull requests never conflict), each head one more bundle on the channel.
 * Made with one `git fast-import`.
 */
export function makeBareRepo(
  bare: string,
  prs: number,
  heads: number,
  automerge: boolean,
): Map<number, string[]> {
  const parts: string[] = [];
  const file = (path: string, text: string) =>
    parts.push(`M 100644 inline ${path}\ndata ${Buffer.byteLength(text)}\n${text}\n`);
  let mark = 0;
  const commit = (ref: string, message: string, from?: number) => {
    mark++;
    parts.push(
      `commit ${ref}\nmark :${mark}\ncommitter Test <test@example.com> ${1_700_000_000 + mark} +0000\n` +
        `data ${Buffer.byteLength(message)}\n${message}\n${from !== undefined ? `from :${from}\n` : ''}`,
    );
    return mark;
  };
  const root = 'catalogs/v4.21';
  const base = commit('refs/heads/main', 'base');
  file('.github/catalog-bot.yml', CONFIG(automerge));
  file('README.md', 'catalog\n');
  file(`${root}/base/catalog.yaml`, catalog('base', ['1.0.0']));
  file(`${root}/base/bundle-1.0.0.yaml`, bundle('base', '1.0.0'));
  const marks = new Map<number, number[]>();
  for (let n = 1; n <= prs; n++) {
    const pkg = `p${n}`;
    const list: number[] = [];
    const versions: string[] = [];
    for (let k = 0; k < heads; k++) {
      versions.push(`1.0.${k}`);
      list.push(commit(`refs/pull/${n}/head`, `${pkg} ${versions.at(-1)}`, k === 0 ? base : undefined));
      file(`${root}/${pkg}/catalog.yaml`, catalog(pkg, versions));
      file(`${root}/${pkg}/bundle-${versions.at(-1)}.yaml`, bundle(pkg, versions.at(-1)!));
    }
    marks.set(n, list);
  }
  spawnSync('git', ['init', '-q', '--bare', '-b', 'main', bare]);
  const marksFile = `${bare}/fleet-marks`;
  const out = spawnSync('git', ['-C', bare, 'fast-import', '--quiet', `--export-marks=${marksFile}`], {
    input: parts.join(''),
    encoding: 'utf8',
  });
  if (out.status !== 0) throw new Error(`git fast-import: ${out.stderr}`);
  const shas = new Map<number, string>();
  for (const line of readFileSync(marksFile, 'utf8').split('\n')) {
    const [m, sha] = line.split(' ');
    if (m && sha) shas.set(Number(m.slice(1)), sha);
  }
  return new Map([...marks].map(([n, list]) => [n, list.map((m) => shas.get(m)!)]));
}

// --- replicas ---

export interface Replica {
  index: number;
  port: number;
  metricsPort: number;
  child: ChildProcess;
  log: string;
  alive: boolean;
}

export interface FleetOptions {
  repos: number;
  prsPerRepo: number;
  headsPerPr: number;
  replicas?: number;
  automerge?: boolean;
  /** redis-server with an append-only file (a restart keeps the queue). */
  appendonly?: boolean;
  /** One CATALOG_BOT_WORKDIR for every replica, as on a shared host or volume (default: one each). */
  sharedWorkDir?: boolean;
  /** Extra environment for the replicas. */
  env?: Record<string, string>;
  /** CATALOG_BOT_ROLE per replica (`web`, `worker`, `all`); default all. */
  roles?: string[];
  /** The replica's entry point (default: dist/server.js next to this project). */
  server: string;
}

export interface DeliveryResult {
  status: number;
  ms: number;
}

export class Fleet {
  readonly secret = 'fleet-secret';
  readonly replicas: Replica[] = [];
  readonly prs: FleetPr[] = [];
  readonly answers: number[] = [];
  #delivery = 0;
  #privateKey: string;
  #logs: WriteStream[] = [];
  #examples = {
    opened: example('pull_request', 'opened'),
    synchronize: example('pull_request', 'synchronize'),
  };

  private constructor(
    readonly dir: string,
    readonly gh: GitHubServer,
    readonly redis: RedisServer,
    readonly options: FleetOptions,
  ) {
    // The test key, made once per process (an RSA key takes seconds on a busy machine): every
    // fleet's replicas may share it, each fleet has its own fake GitHub.
    this.#privateKey = privateKey();
  }

  static async start(options: FleetOptions): Promise<Fleet> {
    const dir = mkdtempSync(join(tmpdir(), 'catalog-bot-fleet-'));
    let gh: GitHubServer | undefined;
    let redis: RedisServer | undefined;
    try {
      gh = await GitHubServer.start();
      redis = await RedisServer.start(join(dir, 'redis'), { appendonly: options.appendonly ?? false });
      const fleet = new Fleet(dir, gh, redis, options);
      for (let r = 1; r <= options.repos; r++) {
        const bare = join(dir, 'repos', `catalog-${r}.git`);
        mkdirSync(bare, { recursive: true });
        const heads = makeBareRepo(bare, options.prsPerRepo, options.headsPerPr, options.automerge ?? false);
        const repo = gh.addRepo({ owner: 'fleet', name: `catalog-${r}`, id: 900_000 + r, bare });
        for (const [number, list] of heads) {
          spawnSync('git', ['-C', bare, 'update-ref', `refs/pull/${number}/head`, list[0]!]);
          const pull = gh.addPull(repo, { number, head: list[0]!, author: 'alice' });
          fleet.prs.push({ repo, pull, heads: list, sent: -1, sentAt: [] });
        }
      }
      // Side by side, as Kubernetes starts a Deployment's replicas.
      const indices = Array.from({ length: options.replicas ?? 2 }, (_, i) => i);
      await Promise.all(indices.map((i) => fleet.startReplica(i)));
      return fleet;
    } catch (error) {
      await gh?.close();
      await redis?.kill();
      rmSync(dir, { recursive: true, force: true });
      throw error;
    }
  }

  /** Start replica `index` (again, after a kill: same port and work directory). */
  async startReplica(index: number): Promise<Replica> {
    const port = this.replicas[index]?.port ?? (await freePort());
    // Each replica its own metrics port, as on one host (docs/replicas.md).
    const metricsPort = this.replicas[index]?.metricsPort ?? (await freePort());
    const log = join(this.dir, `replica-${index}.log`);
    const out = createWriteStream(log, { flags: 'a' });
    this.#logs.push(out);
    const child = spawn(process.execPath, [this.options.server], {
      env: {
        ...process.env,
        APP_ID: '1',
        PRIVATE_KEY: this.#privateKey,
        WEBHOOK_SECRET: this.secret,
        PORT: String(port),
        HOST: '127.0.0.1',
        GHE_HOST: this.gh.host,
        GHE_PROTOCOL: 'http',
        REDIS_URL: this.redis.url,
        CATALOG_BOT_WORKDIR: join(this.dir, this.options.sharedWorkDir ? 'work' : `work-${index}`),
        CATALOG_BOT_METRICS_PORT: String(metricsPort),
        LOG_LEVEL: 'info',
        LOG_FORMAT: 'json',
        NODE_ENV: 'test',
        // No pause between writes (the fake GitHub has no secondary rate limit), and no
        // reconciliation pass unless a test asks for one.
        CATALOG_BOT_WRITE_PACING: 'off',
        CATALOG_BOT_RECONCILE_MINUTES: '0',
        ...this.options.env,
        ...(this.options.roles?.[index] ? { CATALOG_BOT_ROLE: this.options.roles[index] } : {}),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // Job workers yield the CPU to webhook answering, as they would on nodes of their own.
    if (this.options.roles?.[index] === 'worker' && child.pid !== undefined) setPriority(child.pid, 10);
    child.stdout!.pipe(out, { end: false });
    child.stderr!.pipe(out, { end: false });
    const replica: Replica = { index, port, metricsPort, child, log, alive: true };
    child.once('exit', () => (replica.alive = false));
    this.replicas[index] = replica;
    const up = await until(
      async () => {
        if (!replica.alive) return true;
        const res = await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined);
        return res?.status === 200;
      },
      20_000,
      50,
    );
    if (!up || !replica.alive) throw new Error(`replica ${index} did not start; see ${log}`);
    return replica;
  }

  /** SIGKILL a replica (no graceful shutdown). */
  async killReplica(index: number): Promise<void> {
    const replica = this.replicas[index];
    if (!replica || !replica.alive) return;
    const exited = new Promise((resolve) => replica.child.once('exit', resolve));
    replica.child.kill('SIGKILL');
    await exited;
  }

  /** A replica's GET /metrics, as text. */
  async metricsOf(index: number): Promise<string> {
    const res = await fetch(`http://127.0.0.1:${this.replicas[index]!.metricsPort}/metrics`);
    return res.text();
  }

  logOf(index: number): string {
    try {
      return readFileSync(this.replicas[index]!.log, 'utf8');
    } catch {
      return '';
    }
  }

  /** Send a signed webhook to a replica; the HTTP round trip is recorded in `answers`. */
  async send(
    replica: number,
    event: string,
    payload: unknown,
    id = `fleet-${process.pid}-${++this.#delivery}`,
  ): Promise<DeliveryResult> {
    const body = JSON.stringify(payload);
    const started = performance.now();
    const res = await fetch(`http://127.0.0.1:${this.replicas[replica]!.port}/api/github/webhooks`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-github-event': event,
        'x-github-delivery': id,
        'x-hub-signature-256': `sha256=${createHmac('sha256', this.secret).update(body).digest('hex')}`,
      },
      body,
    });
    await res.arrayBuffer();
    const ms = performance.now() - started;
    this.answers.push(ms);
    return { status: res.status, ms };
  }

  /**
   * Move a pull request to its next head (the bare repository's refs/pull/N/head and the
   * API's head, as a push does) and deliver `opened` (first head) or `synchronize`.
   */
  async advance(pr: FleetPr, replica: number, id?: string): Promise<DeliveryResult> {
    const k = pr.sent + 1;
    if (k >= pr.heads.length) throw new Error(`${pr.repo.name}#${pr.pull.number} has no more heads`);
    const head = pr.heads[k]!;
    // Asynchronous: the answer times of deliveries in flight are measured on this event loop.
    await new Promise<void>((resolve, reject) =>
      execFile(
        'git',
        ['-C', pr.repo.bare, 'update-ref', `refs/pull/${pr.pull.number}/head`, head],
        (error) => (error ? reject(error) : resolve()),
      ),
    );
    pr.pull.head = head;
    pr.sent = k;
    pr.sentAt[k] = Date.now();
    return this.send(replica, 'pull_request', this.payload(pr, k), id);
  }

  /** The webhook payload for head `k` of a pull request. */
  payload(pr: FleetPr, k: number): Record<string, unknown> {
    const payload = structuredClone(k === 0 ? this.#examples.opened : this.#examples.synchronize) as {
      [key: string]: unknown;
      pull_request: Record<string, unknown> & {
        head: Record<string, unknown>;
        user: Record<string, unknown>;
      };
      repository: Record<string, unknown> & { owner: Record<string, unknown> };
    };
    const { repo, pull } = pr;
    payload.action = k === 0 ? 'opened' : 'synchronize';
    payload.number = pull.number;
    nameRepository(payload, repo);
    Object.assign(payload.pull_request, { number: pull.number, draft: false });
    payload.pull_request.user.login = pull.author;
    payload.pull_request.head.sha = pr.heads[k];
    return payload;
  }

  fullName(pr: FleetPr): string {
    return `${pr.repo.owner}/${pr.repo.name}`;
  }

  /**
   * No job waiting, running or delayed in the shared queue, read in one step (a job
   * bouncing between delayed and active, waiting for its repository, is never missed).
   */
  queueIdle(): boolean {
    const script = [
      "local n = redis.call('llen', KEYS[1]) + redis.call('llen', KEYS[2]) + redis.call('llen', KEYS[3])",
      "return n + redis.call('zcard', KEYS[4]) + redis.call('zcard', KEYS[5])",
    ].join('\n');
    const q = 'bull:catalog-bot';
    const keys = ['wait', 'active', 'paused', 'delayed', 'prioritized'].map((k) => `${q}:${k}`);
    const out = spawnSync('redis-cli', ['-p', String(this.redis.port), 'eval', script, '5', ...keys], {
      encoding: 'utf8',
      timeout: 2000,
    });
    return out.status === 0 && out.stdout.trim() === '0';
  }

  /** The App's runs on a pull request's final (current) head. */
  finalRuns(pr: FleetPr): ServerCheckRun[] {
    return this.gh.runsFor(this.fullName(pr), pr.heads[pr.sent]!);
  }

  /** Whether every pull request's current head has `names.length` completed runs. */
  settled(names: readonly string[]): boolean {
    return this.prs.every((pr) => {
      if (pr.sent < 0) return true;
      const runs = this.finalRuns(pr).filter((r) => r.status === 'completed' && r.conclusion !== 'skipped');
      return runs.length >= names.length;
    });
  }

  /**
   * What went wrong, if anything: every pull request's current head has exactly one
   * completed, not skipped, run per name; no run anywhere is left unfinished.
   */
  verify(names: readonly string[]): string[] {
    const problems: string[] = [];
    for (const pr of this.prs) {
      if (pr.sent < 0) continue;
      const where = `${this.fullName(pr)}#${pr.pull.number}@${pr.heads[pr.sent]!.slice(0, 8)}`;
      const runs = this.finalRuns(pr);
      for (const name of names) {
        const mine = runs.filter((r) => r.name === name);
        const done = mine.filter((r) => r.status === 'completed' && r.conclusion !== 'skipped');
        if (done.length !== 1) problems.push(`${where}: ${done.length} completed ${name} runs`);
        if (mine.length !== done.length)
          problems.push(
            `${where}: ${name} also has ${mine.length - done.length} runs not completed or skipped`,
          );
      }
      for (const r of runs) if (!names.includes(r.name)) problems.push(`${where}: unexpected run ${r.name}`);
    }
    for (const r of this.gh.checkRuns)
      if (r.status !== 'completed')
        problems.push(`${r.repo}@${r.head_sha.slice(0, 8)}: ${r.name} left ${r.status}`);
    return problems;
  }

  /** End-to-end latency of each final head: its delivery sent -> its last run completed. */
  endToEnd(): number[] {
    const out: number[] = [];
    for (const pr of this.prs) {
      if (pr.sent < 0) continue;
      const runs = this.finalRuns(pr).filter((r) => r.status === 'completed' && r.conclusion !== 'skipped');
      if (runs.length === 0 || runs.some((r) => r.completedAt === undefined)) continue;
      out.push(Math.max(...runs.map((r) => r.completedAt!)) - pr.sentAt[pr.sent]!);
    }
    return out;
  }

  /** Stop everything (SIGTERM, then SIGKILL after `graceMs`) and remove the temp dir. */
  async stop(graceMs = 3000): Promise<void> {
    await Promise.all(
      this.replicas.map(async (r) => {
        if (!r.alive) return;
        const exited = new Promise((resolve) => r.child.once('exit', resolve));
        r.child.kill('SIGTERM');
        const timer = setTimeout(() => r.child.kill('SIGKILL'), graceMs);
        await exited;
        clearTimeout(timer);
      }),
    );
    await this.redis.kill();
    await this.gh.close();
    for (const s of this.#logs) s.end();
    if (!process.env.FLEET_KEEP) rmSync(this.dir, { recursive: true, force: true });
  }
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/**
 * Point a delivery at `repo` of the fake GitHub API server (its id, names and bare clone),
 * from installation 4242, the one the fake answers.
 */
export function nameRepository(
  payload: {
    installation?: unknown;
    repository: Record<string, unknown> & { owner: Record<string, unknown> };
  },
  repo: ServerRepo,
): void {
  const fullName = `${repo.owner}/${repo.name}`;
  payload.installation = { id: 4242 };
  Object.assign(payload.repository, {
    id: repo.id,
    name: repo.name,
    full_name: fullName,
    html_url: `https://github.com/${fullName}`,
    clone_url: repo.bare,
  });
  payload.repository.owner.login = repo.owner;
}
