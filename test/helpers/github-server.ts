// A fake GitHub REST API as a real HTTP server on 127.0.0.1 (node:http), for app replicas
// running as separate processes (GHE_HOST=127.0.0.1:<port>, GHE_PROTOCOL=http: Probot's
// base URL is then `http://127.0.0.1:<port>/api/v3`). Stateful like fake-github.ts (check
// runs, pull requests, comments, labels, reactions, merges) and serving many repositories;
// the git side is a real bare repository per repository. Every request is recorded, and
// faults can be injected: 5xx for the next N requests or for a while, and GitHub's primary
// (403, `x-ratelimit-remaining: 0`) and secondary (403 or 429 with `retry-after`) rate limits.
// Like github.com it can pace content-creating requests (POST, PATCH, PUT, DELETE): a write
// sooner than a second after the installation's previous one is refused with a secondary
// rate limit (paceWrites). Requests and answers are held to GitHub's REST description
// (github-contract.ts).
import { execFileSync } from 'node:child_process';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { underContract } from './github-contract.js';

export interface ServerPull {
  number: number;
  head: string;
  author: string;
  state: 'open' | 'closed';
  merged: boolean;
  draft: boolean;
  labels: string[];
  mergeable_state: string;
  base: string;
}

export interface ServerRepo {
  owner: string;
  name: string;
  id: number;
  /** The bare repository: branches come from it; merges are made in it. */
  bare: string;
  pulls: Map<number, ServerPull>;
  /** login -> admin | write | read | none */
  permissions: Map<string, string>;
}

export interface ServerCheckRun {
  id: number;
  /** `owner/name` */
  repo: string;
  name: string;
  head_sha: string;
  status: string;
  conclusion: string | null;
  app: { slug: string };
  external_id?: string;
  started_at?: string;
  completed_at?: string;
  output?: { title?: string; summary?: string; text?: string };
  /** When it was created and completed (Date.now() of this process). */
  createdAt: number;
  completedAt?: number;
}

export interface ServerComment {
  id: number;
  repo: string;
  issue: number;
  body: string;
  user: { login: string; type: 'User' | 'Bot' };
}

export interface ServerMerge {
  repo: string;
  number: number;
  /** The sha the App asked to merge (GitHub refuses if the head moved). */
  sha?: string;
  method?: string;
  /** The merge commit. */
  commit: string;
  at: number;
}

export interface RecordedRequest {
  method: string;
  /** The path without the `/api/v3` prefix, query included. */
  path: string;
  status: number;
  /** A fault answered it, not the API. */
  fault?: string;
  at: number;
}

type Fault = { kind: '5xx'; status: number } | { kind: 'primary' | 'secondary' | '429'; until: number };

/** One injected answer: a 5xx status, or a rate limit that asks for `seconds` (default 1). */
export type PlannedFault = number | { kind: 'primary' | 'secondary'; seconds?: number };

type Reply = [number, unknown, Record<string, string>?];

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

export class GitHubServer {
  readonly repos = new Map<string, ServerRepo>();
  readonly checkRuns: ServerCheckRun[] = [];
  readonly comments: ServerComment[] = [];
  readonly reactions: { repo: string; comment: number; content: string }[] = [];
  readonly merges: ServerMerge[] = [];
  readonly requests: RecordedRequest[] = [];
  /** Called after a check run is completed (benchmarks time the end of the work with it). */
  onCompleted?: (run: ServerCheckRun) => void;
  #id = 1000;
  #server: Server;
  #port = 0;
  #failCount = 0;
  #failStatus = 502;
  #window: { fault: Fault; until: number } | undefined;
  #planned: { match: (r: { method: string; path: string }) => boolean; faults: PlannedFault[] }[] = [];
  #pace: { minGapMs: number; toleranceMs: number } | undefined;
  /** installation token -> when its last write was accepted. */
  #lastWrite = new Map<string, number>();
  #holds: {
    match: (r: HeldRequest) => boolean;
    skip: number;
    hold: Hold;
    waiting: { request: HeldRequest; go: (answer: boolean) => void }[];
    open: boolean;
    listeners: (() => void)[];
  }[] = [];

  private constructor(readonly slug: string) {
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

  addRepo(repo: { owner: string; name: string; id: number; bare: string }): ServerRepo {
    const r: ServerRepo = { ...repo, pulls: new Map(), permissions: new Map() };
    this.repos.set(`${repo.owner}/${repo.name}`, r);
    return r;
  }

  addPull(
    repo: ServerRepo,
    pull: Pick<ServerPull, 'number' | 'head' | 'author'> & Partial<ServerPull>,
  ): ServerPull {
    const p: ServerPull = {
      state: 'open',
      merged: false,
      draft: false,
      labels: [],
      mergeable_state: 'clean',
      base: 'main',
      ...pull,
    };
    repo.pulls.set(p.number, p);
    return p;
  }

  /** Check runs on a commit of a repository (`owner/name`), in creation order. */
  runsFor(repo: string, sha: string, name?: string): ServerCheckRun[] {
    return this.checkRuns.filter(
      (r) => r.repo === repo && r.head_sha === sha && (name === undefined || r.name === name),
    );
  }

  // --- faults ---

  /** Answer the next `count` API requests with `status` (default 502). */
  failNext(count: number, status = 502): void {
    this.#failCount = count;
    this.#failStatus = status;
  }

  /** Answer every API request with `status` (default 502) for `ms`. */
  failFor(ms: number, status = 502): void {
    this.#window = { fault: { kind: '5xx', status }, until: Date.now() + ms };
  }

  /**
   * Answer every API request as rate limited for `ms`: `primary` is 403 with
   * `x-ratelimit-remaining: 0` and `x-ratelimit-reset` at the window's end; `secondary` is
   * 403 "secondary rate limit" with `retry-after`; `429` is 429 with `retry-after`.
   */
  rateLimitFor(ms: number, kind: 'primary' | 'secondary' | '429' = 'primary'): void {
    const until = Date.now() + ms;
    this.#window = { fault: { kind, until }, until };
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

  clearFaults(): void {
    this.#failCount = 0;
    this.#window = undefined;
    this.#planned = [];
  }

  /**
   * Answer the next requests that match (default: every API request) with these faults, in
   * order, one each: e.g. `[{ kind: 'secondary' }, 502]`.
   */
  injectFaults(
    faults: PlannedFault[],
    match: (r: { method: string; path: string }) => boolean = () => true,
  ): void {
    this.#planned.push({ match, faults: [...faults] });
  }

  /**
   * Pace content-creating requests like github.com: per installation, a write less than
   * `minGapMs` (less `toleranceMs` of network jitter) after the last accepted one gets a
   * secondary rate limit (403, `retry-after: 1`). Undefined: no pacing.
   */
  paceWrites(pace: { minGapMs?: number; toleranceMs?: number } | undefined = {}): void {
    this.#pace = pace && { minGapMs: pace.minGapMs ?? 1000, toleranceMs: pace.toleranceMs ?? 100 };
  }

  /** Writes (content-creating requests) GitHub accepted, in order. */
  get writes(): RecordedRequest[] {
    return this.requests.filter((r) => isWrite(r.method, r.path) && r.status > 0 && r.status < 400);
  }

  #plannedFault(method: string, path: string): Reply | undefined {
    for (const plan of this.#planned) {
      if (plan.faults.length === 0 || !plan.match({ method, path })) continue;
      const fault = plan.faults.shift()!;
      if (typeof fault === 'number') return [fault, { message: 'Server Error' }];
      const seconds = fault.seconds ?? 1;
      if (fault.kind === 'secondary') return secondaryLimit(seconds);
      return [
        403,
        { message: 'API rate limit exceeded for installation ID 4242.' },
        {
          'x-ratelimit-limit': '5000',
          'x-ratelimit-remaining': '0',
          'x-ratelimit-used': '5000',
          'x-ratelimit-reset': String(Math.ceil(Date.now() / 1000) + seconds),
        },
      ];
    }
    return undefined;
  }

  /** A write that comes too soon after the installation's last one. */
  #tooSoon(method: string, path: string, token: string): Reply | undefined {
    if (!this.#pace || !isWrite(method, path)) return undefined;
    const last = this.#lastWrite.get(token);
    const now = Date.now();
    if (last !== undefined && now - last < this.#pace.minGapMs - this.#pace.toleranceMs)
      return secondaryLimit(1);
    this.#lastWrite.set(token, now);
    return undefined;
  }

  #fault(): Reply | undefined {
    if (this.#failCount > 0) {
      this.#failCount--;
      return [this.#failStatus, { message: 'Server Error' }];
    }
    const w = this.#window;
    if (!w) return undefined;
    if (Date.now() >= w.until) {
      this.#window = undefined;
      return undefined;
    }
    const fault = w.fault;
    if (fault.kind === '5xx') return [fault.status, { message: 'Server Error' }];
    const seconds = Math.max(1, Math.ceil((fault.until - Date.now()) / 1000));
    if (fault.kind === 'primary')
      return [
        403,
        {
          message: 'API rate limit exceeded for installation ID 4242.',
          documentation_url: 'https://docs.github.com/rest/overview/rate-limits-for-the-rest-api',
        },
        {
          'x-ratelimit-limit': '5000',
          'x-ratelimit-remaining': '0',
          'x-ratelimit-used': '5000',
          'x-ratelimit-reset': String(Math.ceil(fault.until / 1000)),
        },
      ];
    const [status, body, headers] = secondaryLimit(seconds);
    return [fault.kind === '429' ? 429 : status, body, headers];
  }

  // --- HTTP ---

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const method = req.method ?? 'GET';
    const url = new URL(req.url ?? '/', 'http://github.test');
    const path = url.pathname.replace(/^\/api\/v3(?=\/|$)/, '') || '/';
    let reply: Reply;
    let fault: string | undefined;
    let parsed: Record<string, unknown> = {};
    try {
      parsed = raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
    } catch {
      // answered 500 below
    }
    const waiting = this.#held({ method, path, body: parsed });
    if (waiting && !(await waiting)) {
      this.requests.push({ method, path: path + url.search, status: 0, fault: 'dropped', at: Date.now() });
      req.socket.destroy();
      return;
    }
    const token = String(req.headers.authorization ?? '');
    const injected = this.#plannedFault(method, path) ?? this.#fault() ?? this.#tooSoon(method, path, token);
    if (injected) {
      reply = injected;
      fault = String(injected[0]);
    } else {
      reply = underContract(method, path + url.search, raw ? parsed : undefined, () => {
        try {
          const body = raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
          return this.#route(method, path, url.searchParams, body);
        } catch (error) {
          return [500, { message: error instanceof Error ? error.message : String(error) }];
        }
      });
    }
    const [status, data, headers = {}] = reply;
    this.requests.push({
      method,
      path: path + url.search,
      status,
      at: Date.now(),
      ...(fault ? { fault } : {}),
    });
    const text = status === 204 ? '' : JSON.stringify(data);
    res.writeHead(status, {
      'content-type': 'application/json; charset=utf-8',
      'x-github-media-type': 'github.v3; format=json',
      ...headers,
    });
    res.end(text);
  }

  readonly #branches = new Map<string, string>();

  /** A branch's sha, read from the bare repository once (merges here keep it current). */
  #branch(repo: ServerRepo, name: string): string {
    const key = `${repo.owner}/${repo.name}:${name}`;
    let sha = this.#branches.get(key);
    if (sha === undefined) {
      sha = this.#git(repo, 'rev-parse', '--verify', `refs/heads/${name}`);
      this.#branches.set(key, sha);
    }
    return sha;
  }

  #git(repo: ServerRepo, ...args: string[]): string {
    return execFileSync('git', ['-C', repo.bare, ...args], { encoding: 'utf8' }).trim();
  }

  #pullJson(repo: ServerRepo, p: ServerPull) {
    const r = {
      id: repo.id,
      name: repo.name,
      full_name: `${repo.owner}/${repo.name}`,
      owner: { login: repo.owner },
      clone_url: repo.bare,
    };
    return {
      number: p.number,
      state: p.state,
      merged: p.merged,
      draft: p.draft,
      user: { login: p.author, type: 'User' },
      labels: p.labels.map((name) => ({ name })),
      mergeable_state: p.mergeable_state,
      head: { sha: p.head, ref: `pr-${p.number}`, repo: r },
      base: { sha: this.#branch(repo, p.base), ref: p.base, repo: r },
      ...this.#mergeOf(repo, p),
    };
  }

  /** GitHub's record of a merged pull request: when, and its merge commit. */
  #mergeOf(repo: ServerRepo, p: ServerPull): { merged_at: string | null; merge_commit_sha: string | null } {
    const merge = this.merges.find((m) => m.repo === `${repo.owner}/${repo.name}` && m.number === p.number);
    return merge
      ? { merged_at: new Date(merge.at).toISOString(), merge_commit_sha: merge.commit }
      : { merged_at: null, merge_commit_sha: null };
  }

  /** A commit as the commits API lists it (first parent first, committer date). */
  #commitJson(repo: ServerRepo, sha: string) {
    const [parents = '', date = '', message = ''] = this.#git(
      repo,
      'log',
      '-1',
      '--format=%P%x00%cI%x00%B',
      sha,
    ).split('\0');
    return {
      sha,
      parents: parents
        .split(' ')
        .filter(Boolean)
        .map((p) => ({ sha: p })),
      commit: { message: message.trim(), committer: { date }, author: { date } },
    };
  }

  #route(method: string, path: string, query: URLSearchParams, body: Record<string, unknown>): Reply {
    let m: RegExpExecArray | null;
    if (method === 'POST' && /^\/app\/installations\/\d+\/access_tokens$/.test(path))
      return [
        201,
        {
          token: `ghs_fake_${/\d+/.exec(path)![0]}`,
          expires_at: new Date(Date.now() + 3600_000).toISOString(),
          permissions: {},
        },
      ];
    if (method === 'GET' && path === '/app') return [200, { id: 1, slug: this.slug, name: this.slug }];
    if (method === 'GET' && path === '/app/installations')
      return [200, [{ id: 4242, account: { login: 'fleet', type: 'Organization' }, app_slug: this.slug }]];
    if (method === 'GET' && path === '/installation/repositories') {
      const repositories = [...this.repos.values()].map((r) => ({
        id: r.id,
        name: r.name,
        full_name: `${r.owner}/${r.name}`,
        owner: { login: r.owner },
        clone_url: r.bare,
        html_url: `http://${this.host}/${r.owner}/${r.name}`,
        default_branch: 'main',
      }));
      return [200, { total_count: repositories.length, repositories }];
    }
    if ((m = /^\/orgs\/[^/]+\/teams\/[^/]+\/members$/.exec(path))) return [200, []];
    if (!(m = /^\/repos\/([^/]+)\/([^/]+)(\/.*)?$/.exec(path))) return [404, { message: 'Not Found' }];
    const full = `${decodeURIComponent(m[1]!)}/${decodeURIComponent(m[2]!)}`;
    const repo = this.repos.get(full);
    if (!repo) return [404, { message: 'Not Found' }];
    const rest = m[3] ?? '';
    const pull = (n: string | undefined) => repo.pulls.get(Number(n));

    // check runs
    if (method === 'POST' && rest === '/check-runs') {
      const run: ServerCheckRun = {
        id: ++this.#id,
        repo: full,
        name: String(body.name),
        head_sha: String(body.head_sha),
        // A conclusion completes the run at once, whatever the status says (GitHub does so).
        status: body.conclusion !== undefined ? 'completed' : String(body.status ?? 'queued'),
        conclusion: body.conclusion !== undefined ? String(body.conclusion) : null,
        app: { slug: this.slug },
        createdAt: Date.now(),
        ...(body.started_at !== undefined ? { started_at: String(body.started_at) } : {}),
        ...(body.completed_at !== undefined ? { completed_at: String(body.completed_at) } : {}),
        ...(body.external_id !== undefined ? { external_id: String(body.external_id) } : {}),
        ...(body.output ? { output: body.output as ServerCheckRun['output'] } : {}),
      };
      this.checkRuns.push(run);
      if (run.status === 'completed') {
        run.completedAt = run.createdAt;
        this.onCompleted?.(run);
      }
      return [201, run];
    }
    if (method === 'PATCH' && (m = /^\/check-runs\/(\d+)$/.exec(rest))) {
      const run = this.checkRuns.find((r) => r.id === Number(m![1]) && r.repo === full);
      if (!run) return [404, { message: 'Not Found' }];
      const wasCompleted = run.status === 'completed';
      for (const key of ['status', 'conclusion', 'completed_at', 'output'] as const)
        if (body[key] !== undefined) (run as unknown as Record<string, unknown>)[key] = body[key];
      if (run.status === 'completed' && !wasCompleted) {
        run.completedAt = Date.now();
        this.onCompleted?.(run);
      }
      return [200, run];
    }
    if (method === 'GET' && (m = /^\/commits\/([^/]+)\/check-runs$/.exec(rest))) {
      let runs = this.runsFor(full, decodeURIComponent(m[1]!));
      if (query.get('filter') !== 'all') {
        // filter=latest (GitHub's default): the newest run of each name
        const latest = new Map<string, ServerCheckRun>();
        for (const r of runs) latest.set(r.name, r);
        runs = [...latest.values()];
      }
      if (query.get('check_name')) runs = runs.filter((r) => r.name === query.get('check_name'));
      return [200, { total_count: runs.length, check_runs: runs }];
    }

    // commits: lists (by date, newest first, like GitHub), comparisons, associated pull requests
    if (method === 'GET' && rest === '/commits') {
      const args = ['rev-list', `--max-count=${Number(query.get('per_page') ?? 30)}`];
      if (query.get('since')) args.push(`--since=${query.get('since')}`);
      const shas = this.#git(repo, ...args, query.get('sha') ?? 'main')
        .split('\n')
        .filter(Boolean);
      return [200, shas.map((sha) => this.#commitJson(repo, sha))];
    }
    if (method === 'GET' && (m = /^\/compare\/([0-9a-f]+)\.\.\.([0-9a-f]+)$/.exec(rest))) {
      const files = this.#git(repo, 'diff', '--name-only', '--no-renames', m[1]!, m[2]!)
        .split('\n')
        .filter(Boolean);
      return [200, { status: 'ahead', files: files.map((filename) => ({ filename, status: 'modified' })) }];
    }
    if (method === 'GET' && (m = /^\/commits\/([0-9a-f]+)\/pulls$/.exec(rest))) {
      const sha = m[1]!;
      const list = [...repo.pulls.values()].filter(
        (p) => p.head === sha || this.#mergeOf(repo, p).merge_commit_sha === sha,
      );
      return [200, list.map((p) => this.#pullJson(repo, p))];
    }
    if (method === 'GET' && (m = /^\/contents\/(.+)$/.exec(rest))) {
      try {
        const text = this.#git(repo, 'show', `${query.get('ref') ?? 'main'}:${decodeURIComponent(m[1]!)}`);
        return [
          200,
          { type: 'file', encoding: 'base64', content: Buffer.from(`${text}\n`).toString('base64') },
        ];
      } catch {
        return [404, { message: 'Not Found' }];
      }
    }

    // pull requests
    if (method === 'GET' && (m = /^\/pulls\/(\d+)$/.exec(rest))) {
      const p = pull(m[1]);
      return p ? [200, this.#pullJson(repo, p)] : [404, { message: 'Not Found' }];
    }
    if (method === 'GET' && rest === '/pulls') {
      const state = query.get('state') ?? 'open';
      const list = [...repo.pulls.values()].filter((p) => state === 'all' || p.state === state);
      return [200, list.map((p) => this.#pullJson(repo, p))];
    }
    if (method === 'PUT' && (m = /^\/pulls\/(\d+)\/merge$/.exec(rest))) {
      const p = pull(m[1]);
      if (!p) return [404, { message: 'Not Found' }];
      if (p.state !== 'open') return [405, { message: 'Pull Request is not mergeable' }];
      const sha = body.sha as string | undefined;
      if (sha !== undefined && sha !== p.head)
        return [409, { message: 'Head branch was modified. Review and try the merge again.' }];
      // What GitHub does: the head merged into the base branch.
      const base = this.#branch(repo, p.base);
      let tree: string;
      try {
        tree = this.#git(repo, 'merge-tree', '--write-tree', base, p.head).split('\n')[0]!;
      } catch {
        return [405, { message: 'Merge conflict' }];
      }
      const commit = this.#git(
        repo,
        '-c',
        'user.name=GitHub',
        '-c',
        'user.email=noreply@github.com',
        'commit-tree',
        tree,
        '-p',
        base,
        '-p',
        p.head,
        '-m',
        `Merge pull request #${p.number}`,
      );
      this.#git(repo, 'update-ref', `refs/heads/${p.base}`, commit, base);
      this.#branches.set(`${full}:${p.base}`, commit);
      this.merges.push({
        repo: full,
        number: p.number,
        commit,
        at: Date.now(),
        ...(sha !== undefined ? { sha } : {}),
        ...(body.merge_method ? { method: String(body.merge_method) } : {}),
      });
      p.state = 'closed';
      p.merged = true;
      return [200, { sha: commit, merged: true, message: 'Pull Request successfully merged' }];
    }

    // repository, branches
    if (method === 'GET' && rest === '')
      return [
        200,
        {
          id: repo.id,
          name: repo.name,
          full_name: full,
          owner: { login: repo.owner },
          default_branch: 'main',
        },
      ];
    if (method === 'GET' && (m = /^\/branches\/(.+)$/.exec(rest))) {
      const name = decodeURIComponent(m[1]!);
      let sha: string;
      try {
        sha = this.#branch(repo, name);
      } catch {
        return [404, { message: 'Branch not found' }];
      }
      return [
        200,
        {
          name,
          commit: {
            sha,
            parents: this.#commitJson(repo, sha).parents,
            commit: {
              tree: { sha: this.#git(repo, 'rev-parse', `${sha}^{tree}`) },
              committer: { date: this.#commitJson(repo, sha).commit.committer.date },
            },
          },
        },
      ];
    }
    // No rulesets here: no branch requires the merge queue (its model is merge-queue.ts, in fake-github.ts).
    if (method === 'GET' && /^\/rules\/branches\/.+$/.test(rest)) return [200, []];
    if (method === 'GET' && (m = /^\/collaborators\/([^/]+)\/permission$/.exec(rest)))
      return [200, { permission: repo.permissions.get(decodeURIComponent(m[1]!)) ?? 'none' }];

    // comments, labels, reactions
    if ((m = /^\/issues\/(\d+)\/comments$/.exec(rest))) {
      const issue = Number(m[1]);
      if (method === 'GET') return [200, this.comments.filter((c) => c.repo === full && c.issue === issue)];
      if (method === 'POST') {
        const c: ServerComment = {
          id: ++this.#id,
          repo: full,
          issue,
          body: String(body.body),
          user: { login: `${this.slug}[bot]`, type: 'Bot' },
        };
        this.comments.push(c);
        return [201, c];
      }
    }
    if (method === 'PATCH' && (m = /^\/issues\/comments\/(\d+)$/.exec(rest))) {
      const c = this.comments.find((x) => x.repo === full && x.id === Number(m![1]));
      if (!c) return [404, { message: 'Not Found' }];
      c.body = String(body.body);
      return [200, c];
    }
    if (method === 'POST' && (m = /^\/issues\/comments\/(\d+)\/reactions$/.exec(rest))) {
      this.reactions.push({ repo: full, comment: Number(m[1]), content: String(body.content) });
      return [201, { id: ++this.#id, content: body.content }];
    }
    if (method === 'POST' && (m = /^\/issues\/(\d+)\/labels$/.exec(rest))) {
      const p = pull(m[1]);
      if (!p) return [404, { message: 'Not Found' }];
      for (const l of (body.labels as string[] | undefined) ?? [])
        if (!p.labels.includes(l)) p.labels.push(l);
      return [200, p.labels.map((name) => ({ name }))];
    }
    // The timeline: no force-pushes happen in the fleet (the bot reads it to note heads).
    if (method === 'GET' && /^\/issues\/\d+\/timeline$/.test(rest)) return [200, []];
    if (method === 'DELETE' && (m = /^\/issues\/(\d+)\/labels\/(.+)$/.exec(rest))) {
      const p = pull(m[1]);
      const name = decodeURIComponent(m[2]!);
      if (!p || !p.labels.includes(name)) return [404, { message: 'Label does not exist' }];
      p.labels = p.labels.filter((l) => l !== name);
      return [200, p.labels.map((n) => ({ name: n }))];
    }
    return [404, { message: 'Not Found' }];
  }
}

/** A content-creating request (what github.com paces); fetching an installation token is not. */
export function isWrite(method: string, path: string): boolean {
  if (!['POST', 'PATCH', 'PUT', 'DELETE'].includes(method)) return false;
  return !/^\/app\/installations\/\d+\/access_tokens/.test(path);
}

function secondaryLimit(seconds: number): Reply {
  return [
    403,
    {
      message: 'You have exceeded a secondary rate limit. Please wait a few minutes before you try again.',
      documentation_url:
        'https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits',
    },
    { 'retry-after': String(seconds) },
  ];
}
