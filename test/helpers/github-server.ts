// The HTTP skin of the one GitHub fake (github-model.ts): a real HTTP server on 127.0.0.1
// (node:http) for App replicas running as separate processes (GHE_HOST=127.0.0.1:<port>,
// GHE_PROTOCOL=http: Probot's base URL is then `http://127.0.0.1:<port>/api/v3`). Many
// repositories, each with a real bare repository; the model answers, records every request,
// injects faults and rate limits and paces writes. What only a connection can do lives
// here: requests held mid-flight, and cut.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import {
  GitHubModel,
  ModelRecords,
  type ModelCheckRun,
  type ModelComment,
  type ModelMerge,
  type ModelPull,
  type ModelRepo,
  type PlannedFault,
  type PullInput,
  type RecordedRequest,
} from './github-model.js';

export { isWrite } from './github-model.js';
export type { PlannedFault, RecordedRequest } from './github-model.js';
export type ServerPull = ModelPull;
export type ServerRepo = ModelRepo;
export type ServerCheckRun = ModelCheckRun;
export type ServerComment = ModelComment;
export type ServerMerge = ModelMerge;

export interface HeldRequest {
  method: string;
  path: string;
  body: Record<string, unknown>;
}

/** Requests kept waiting (a replica mid-job, to be killed there). */
export interface Hold {
  readonly held: HeldRequest[];
  /** Resolves when `n` requests are held. */
  waitFor(n: number): Promise<void>;
  /** Answer the held requests (and let later ones through). */
  release(): void;
  /** Cut the held requests' connections unanswered, as if they never reached GitHub. */
  drop(): void;
}

export class GitHubServer extends ModelRecords {
  readonly model: GitHubModel;
  #server: Server;
  #port = 0;
  #holds: {
    match: (r: HeldRequest) => boolean;
    skip: number;
    hold: Hold;
    waiting: { request: HeldRequest; go: (answer: boolean) => void }[];
    open: boolean;
    listeners: (() => void)[];
  }[] = [];

  private constructor(readonly slug: string) {
    super();
    this.model = new GitHubModel({
      slug,
      account: 'fleet',
      web: () => `http://${this.host}`,
      cacheBranches: true,
    });
    this.#server = createServer((req, res) => void this.#handle(req, res));
    this.#server.keepAliveTimeout = 60_000;
  }

  /** Listen on 127.0.0.1 (a free port unless one is given). */
  static async start(options: { slug?: string; port?: number } = {}): Promise<GitHubServer> {
    const gh = new GitHubServer(options.slug ?? 'catalog-bot');
    await new Promise<void>((resolve, reject) => {
      gh.#server.once('error', reject);
      gh.#server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
    });
    gh.#port = (gh.#server.address() as { port: number }).port;
    return gh;
  }

  get port(): number {
    return this.#port;
  }

  /** GHE_HOST for the replicas (with GHE_PROTOCOL=http). */
  get host(): string {
    return `127.0.0.1:${this.#port}`;
  }

  get baseUrl(): string {
    return `http://${this.host}/api/v3`;
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  get repos(): Map<string, ServerRepo> {
    return this.model.repos;
  }
  get merges(): ServerMerge[] {
    return this.model.merges;
  }
  /** Writes (content-creating requests) GitHub accepted, in order. */
  get writes(): RecordedRequest[] {
    return this.model.writes;
  }
  /** Called after a check run is completed (benchmarks time the end of the work with it). */
  get onCompleted() {
    return this.model.onCompleted;
  }
  set onCompleted(f: ((run: ServerCheckRun) => void) | undefined) {
    this.model.onCompleted = f;
  }

  addRepo(repo: { owner: string; name: string; id: number; bare: string }): ServerRepo {
    return this.model.addRepo(repo);
  }

  addPull(repo: ServerRepo, pull: PullInput): ServerPull {
    return this.model.addPull(repo, pull);
  }

  /** Check runs on a commit of a repository (`owner/name`), in creation order. */
  runsFor(repo: string, sha: string, name?: string): ServerCheckRun[] {
    return this.model.runsFor(repo, sha, name);
  }

  // --- faults (the model's) ---

  failNext(count: number, status = 502): void {
    this.model.failNext(count, status);
  }
  failFor(ms: number, status = 502): void {
    this.model.failFor(ms, status);
  }
  rateLimitFor(ms: number, kind: 'primary' | 'secondary' | '429' = 'primary'): void {
    this.model.rateLimitFor(ms, kind);
  }
  clearFaults(): void {
    this.model.clearFaults();
  }
  injectFaults(faults: PlannedFault[], match?: (r: { method: string; path: string }) => boolean): void {
    this.model.injectFaults(faults, match);
  }
  paceWrites(pace: { minGapMs?: number; toleranceMs?: number } | undefined = {}): void {
    this.model.paceWrites(pace);
  }

  /**
   * Keep matching API requests waiting (after letting `skip` of them through) until the
   * hold is released or dropped.
   */
  hold(match: (r: HeldRequest) => boolean, options: { skip?: number } = {}): Hold {
    const entry = {
      match,
      skip: options.skip ?? 0,
      waiting: [] as { request: HeldRequest; go: (answer: boolean) => void }[],
      open: true,
      listeners: [] as (() => void)[],
      hold: undefined as unknown as Hold,
    };
    const finish = (answer: boolean) => {
      entry.open = false;
      this.#holds = this.#holds.filter((h) => h !== entry);
      for (const w of entry.waiting.splice(0)) w.go(answer);
    };
    entry.hold = {
      held: [],
      waitFor: (n) =>
        new Promise<void>((resolve) => {
          const check = () => {
            if (entry.hold.held.length >= n) resolve();
            else entry.listeners.push(check);
          };
          check();
        }),
      release: () => finish(true),
      drop: () => finish(false),
    };
    this.#holds.push(entry);
    return entry.hold;
  }

  /** Whether the request waits; resolves true to answer it, false to cut it. */
  #held(request: HeldRequest): Promise<boolean> | undefined {
    for (const h of this.#holds) {
      if (!h.open || !h.match(request)) continue;
      if (h.skip > 0) {
        h.skip--;
        continue;
      }
      return new Promise<boolean>((go) => {
        h.waiting.push({ request, go });
        h.hold.held.push(request);
        for (const l of h.listeners.splice(0)) l();
      });
    }
    return undefined;
  }

  // --- HTTP ---

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const method = req.method ?? 'GET';
    const url = new URL(req.url ?? '/', 'http://github.test');
    // GitHub Enterprise's prefixes: /api/v3 for REST, /api/graphql for GraphQL.
    const path =
      url.pathname.replace(/^\/api\/graphql$/, '/graphql').replace(/^\/api\/v3(?=\/|$)/, '') || '/';
    let body: unknown;
    try {
      body = raw ? (JSON.parse(raw) as unknown) : undefined;
    } catch {
      const text = JSON.stringify({ message: 'Problems parsing JSON' });
      res.writeHead(400, { 'content-type': 'application/json; charset=utf-8' }).end(text);
      return;
    }
    const waiting = this.#held({ method, path, body: (body ?? {}) as Record<string, unknown> });
    if (waiting && !(await waiting)) {
      this.model.recordDropped(method, path + url.search);
      req.socket.destroy();
      return;
    }
    const [status, data, headers = {}] = this.model.answer({
      method,
      path,
      search: url.search,
      body,
      headers: req.headers,
    });
    res.writeHead(status, {
      'content-type': 'application/json; charset=utf-8',
      'x-github-media-type': 'github.v3; format=json',
      ...headers,
    });
    res.end(status === 204 || status === 304 ? '' : JSON.stringify(data));
  }
}
