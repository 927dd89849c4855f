// The one GitHub fake of the tests: an in-memory model of GitHub's REST API (repositories,
// pull requests, check runs, comments, labels, reactions, merges made with real git in each
// repository's bare clone, the git data API, rate limits, faults and write pacing) that
// answers one request at a time: (method, path, query, body, headers) -> (status, body,
// headers). Every request and answer is held to GitHub's REST description
// (github-contract.ts). Two thin skins carry requests to it: fake-github.ts (nock, in this
// process) and github-server.ts (HTTP on 127.0.0.1, for other processes). Every route is
// written here once (docs/testing.md, "One GitHub fake").
//
// Imports stay to node:, ./github-contract.js and types: the benchmarks transpile this file
// with github-server.ts (bench/github-app.mjs).
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { underContract } from './github-contract.js';
import type { MergeQueueModel } from './merge-queue.js';

/** What GitHub's error answers point to (its 422 answers always carry one). */
const DOCS = 'https://docs.github.com/rest';

/** The answer to a merge into a branch that requires the merge queue (merge-queue.ts). */
export const QUEUE_REFUSAL = 'Changes must be made through the merge queue';

/** The installation token the fake hands out for installation `id` (a git host may ask for it). */
export const installationToken = (id: number | string) => `ghs_fake_${id}`;

/** The node id the fakes give pull request `number` (opaque to the App, as GitHub's are). */
export const pullNodeId = (number: number) => `PR_kwDOfake${number}`;

const QUEUE_RULE_PARAMETERS = {
  check_response_timeout_minutes: 60,
  grouping_strategy: 'ALLGREEN',
  max_entries_to_build: 5,
  max_entries_to_merge: 5,
  merge_method: 'MERGE',
  min_entries_to_merge: 1,
  min_entries_to_merge_wait_minutes: 5,
} as const;

/** The `merge_queue` rule as GET .../rules/branches/{branch} lists it. */
export function mergeQueueRule(owner: string, repo: string) {
  return {
    type: 'merge_queue',
    parameters: QUEUE_RULE_PARAMETERS,
    ruleset_source_type: 'Repository',
    ruleset_source: `${owner}/${repo}`,
    ruleset_id: 42,
  };
}

/** A pull request as a test adds it (addPull): the rest defaults. */
export interface PullInput {
  number: number;
  head: string;
  author: string;
  state?: 'open' | 'closed';
  merged?: boolean;
  draft?: boolean;
  labels?: string[];
  mergeable_state?: string;
  /** The head branch (default `pr-<number>`, in this repository). */
  headRef?: string;
  /** The base branch (default `main`). */
  base?: string;
  /** Called on PUT .../merge instead of the repository's merge; returns the merge commit, or throws { status, message }. */
  onMerge?: (body: { sha?: string; merge_method?: string }) => string;
  /** The head branch lives in a fork owned by this login (default: this repository). */
  fork?: string;
  /** Set on a merge: the merge commit. */
  mergeCommit?: string;
  /** The author is a bot (the App's own pull requests). */
  bot?: boolean;
}

export type ModelPull = PullInput &
  Required<Pick<PullInput, 'state' | 'merged' | 'draft' | 'labels' | 'mergeable_state' | 'base'>> & {
    /** When it was merged (Date.now() of this process). */
    mergedAt?: number;
  };

export interface ModelCheckRun {
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
  /** The run's "Details" link. */
  details_url?: string;
  /** When it was created and completed (Date.now() of this process). */
  createdAt?: number;
  completedAt?: number;
}

export interface ModelComment {
  id: number;
  /** `owner/name` */
  repo: string;
  issue: number;
  body: string;
  user: { login: string; type: 'User' | 'Bot' };
}

export interface ModelMerge {
  repo: string;
  number: number;
  /** The sha the App asked to merge (GitHub refuses if the head moved). */
  sha?: string;
  method?: string;
  /** The merge commit. */
  commit: string;
  at: number;
}

export interface TimelineEvent {
  issue: number;
  id: number;
  event: string;
  created_at: string;
  actor?: { login: string; type: 'User' | 'Bot' };
  label?: { name: string };
}

/** A pull request the App opened (POST .../pulls). */
export interface CreatedPull {
  number: number;
  title: string;
  head: string;
  base: string;
  body: string;
  /** Labels added to it (POST .../issues/:number/labels). */
  labels?: string[];
}

export interface ModelRepo {
  owner: string;
  name: string;
  id: number;
  /** The bare repository: branches come from it; merges are made in it. */
  bare: string;
  pulls: Map<number, ModelPull>;
  /** login -> admin | write | read | none */
  permissions: Map<string, string>;
  /** Timeline events of pull requests (force pushes, labels), oldest first. */
  timeline: TimelineEvent[];
  /** Branches with classic branch protection. */
  protectedBranches: Set<string>;
  /** branch -> repository rules (rulesets) that apply to it. */
  branchRules: Map<string, { type: string }[]>;
  /** GitHub's merge queue of a branch (merge-queue.ts). */
  mergeQueue?: MergeQueueModel;
  /** Pull requests the App opened, and what it wrote: refs, dispatches. */
  created: CreatedPull[];
  refUpdates: { ref: string; sha: string }[];
  dispatches: object[];
  /** Called when a branch is looked up (GET .../branches/:name), e.g. to change things mid-job. */
  onBranch?: (name: string) => void;
  /**
   * Pull requests the App opens become pull requests here (by the App's bot user,
   * `refs/pull/<n>/head` set), merged for real into their base when GitHub is asked to.
   */
  registerCreatedPulls: boolean;
  /** The repository is private (GET .../repos/:owner/:repo and its pull requests say so). */
  isPrivate: boolean;
  /** A merge (PUT .../merge) is made for real in the bare repository; else its commit is 0000… and nothing moves. */
  realMerges: boolean;
}

export interface RecordedRequest {
  method: string;
  /** The path without the `/api/v3` prefix, query included. */
  path: string;
  status: number;
  /** A fault answered it, not the API. */
  fault?: string;
  /** It carried If-None-Match (a conditional request). */
  conditional?: true;
  /** The request's JSON body, when it had one. */
  body?: unknown;
  at: number;
}

/** One request as a skin hands it over. */
export interface ModelRequest {
  method: string;
  /** The path without a GitHub Enterprise prefix, without the query. */
  path: string;
  /** The query as sent (`?a=b`, or empty). */
  search: string;
  /** The parsed JSON body (undefined when there is none). */
  body: unknown;
  headers: Record<string, string | string[] | undefined>;
}

export type Reply = [number, unknown, Record<string, string>?];

/** One request to a repository's routes: `rest` is the path after /repos/{owner}/{repo}. */
interface RouteCall {
  repo: ModelRepo;
  method: string;
  rest: string;
  query: URLSearchParams;
  body: Record<string, unknown>;
}

type Fault = { kind: '5xx'; status: number } | { kind: 'primary' | 'secondary' | '429'; until: number };

/** One injected answer: a 5xx status, or a rate limit that asks for `seconds` (default 1). */
export type PlannedFault = number | { kind: 'primary' | 'secondary'; seconds?: number };

export interface ModelOptions {
  /** The App's slug (its check runs' app, its bot user `<slug>[bot]`). */
  slug?: string;
  /** The login of the account the App is installed on. */
  account?: string;
  /** The web address repositories are listed under (html_url). */
  web?: () => string;
  /**
   * Branch heads are read from git once and then kept by the model (its own ref updates keep
   * them current): fast for the fleet; a test that moves refs itself leaves this off.
   */
  cacheBranches?: boolean;
}

const notFound: Reply = [404, { message: 'Not Found', documentation_url: DOCS }];

/**
 * The merge commit GitHub writes: `head` merged onto `parent`, by GitHub, in the repository
 * `git` runs in. Throws when they conflict (git merge-tree fails).
 */
export function githubMergeCommit(
  git: (...args: string[]) => string,
  parent: string,
  head: string,
  message: string,
): string {
  const tree = git('merge-tree', '--write-tree', parent, head).split('\n')[0]!;
  const identity = ['-c', 'user.name=GitHub', '-c', 'user.email=noreply@github.com'];
  return git(...identity, 'commit-tree', tree, '-p', parent, '-p', head, '-m', message);
}

/**
 * What both skins (fake-github.ts in process, github-server.ts over HTTP) show of their model
 * under the same names: the records every test reads.
 */
export abstract class ModelRecords {
  abstract readonly model: GitHubModel;
  get checkRuns(): ModelCheckRun[] {
    return this.model.checkRuns;
  }
  get comments(): ModelComment[] {
    return this.model.comments;
  }
  get reactions(): GitHubModel['reactions'] {
    return this.model.reactions;
  }
  get requests(): RecordedRequest[] {
    return this.model.requests;
  }
}

export class GitHubModel {
  readonly slug: string;
  readonly repos = new Map<string, ModelRepo>();
  readonly checkRuns: ModelCheckRun[] = [];
  readonly comments: ModelComment[] = [];
  readonly reactions: { repo: string; comment: number; content: string }[] = [];
  readonly merges: ModelMerge[] = [];
  readonly requests: RecordedRequest[] = [];
  /** `org/team` -> the logins of its members. */
  readonly teams = new Map<string, string[]>();
  /** Called after a check run is completed (benchmarks time the end of the work with it). */
  onCompleted?: (run: ModelCheckRun) => void;
  /**
   * Answers to GET carry an ETag, and a request whose If-None-Match names the answer's ETag
   * gets 304 Not Modified, as from GitHub (off unless a test turns it on).
   */
  etags = false;
  #id = 1000;
  /** GitHub's clock runs this far ahead of the test's (tick() moves it). */
  #clockOffset = 0;
  #failCount = 0;
  #failStatus = 502;
  #window: { fault: Fault; until: number } | undefined;
  #planned: { match: (r: { method: string; path: string }) => boolean; faults: PlannedFault[] }[] = [];
  #pace: { minGapMs: number; toleranceMs: number } | undefined;
  /** installation token -> when its last write was accepted. */
  #lastWrite = new Map<string, number>();
  readonly #branches = new Map<string, string>();

  constructor(readonly options: ModelOptions = {}) {
    this.slug = options.slug ?? 'catalog-bot';
  }

  /** GitHub's time now. */
  now(): Date {
    return new Date(Date.now() + this.#clockOffset);
  }

  /** Let time pass on GitHub's clock. */
  tick(ms = 1000): Date {
    this.#clockOffset += ms;
    return this.now();
  }

  nextId(): number {
    return ++this.#id;
  }

  addRepo(repo: { owner: string; name: string; id: number; bare: string; realMerges?: boolean }): ModelRepo {
    const r: ModelRepo = {
      realMerges: true,
      ...repo,
      pulls: new Map(),
      permissions: new Map(),
      timeline: [],
      protectedBranches: new Set(),
      branchRules: new Map(),
      created: [],
      refUpdates: [],
      dispatches: [],
      registerCreatedPulls: false,
      isPrivate: false,
    };
    this.repos.set(`${repo.owner}/${repo.name}`, r);
    return r;
  }

  addPull(repo: ModelRepo, pull: PullInput): ModelPull {
    const p: ModelPull = {
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
  runsFor(repo: string, sha: string, name?: string): ModelCheckRun[] {
    return this.checkRuns.filter(
      (r) => r.repo === repo && r.head_sha === sha && (name === undefined || r.name === name),
    );
  }

  /** The latest run of each name on a commit (GitHub's `filter=latest`). */
  latestRuns(repo: string, sha: string): Map<string, ModelCheckRun> {
    const latest = new Map<string, ModelCheckRun>();
    for (const r of this.runsFor(repo, sha)) latest.set(r.name, r);
    return latest;
  }

  git(repo: ModelRepo, ...args: string[]): string {
    return execFileSync('git', ['-C', repo.bare, ...args], { encoding: 'utf8' }).trim();
  }

  /** A branch's sha (kept by the model with cacheBranches). */
  branch(repo: ModelRepo, name: string): string {
    const key = `${repo.owner}/${repo.name}:${name}`;
    const known = this.options.cacheBranches ? this.#branches.get(key) : undefined;
    if (known !== undefined) return known;
    const sha =
      readRef(repo.bare, `refs/heads/${name}`) ??
      this.git(repo, 'rev-parse', '--verify', `refs/heads/${name}`);
    if (this.options.cacheBranches) this.#branches.set(key, sha);
    return sha;
  }

  /** Move a ref (refs/heads/… keeps the branch cache current); `old`: only from there. */
  updateRef(repo: ModelRepo, ref: string, sha: string, old?: string): void {
    this.git(repo, 'update-ref', ref, sha, ...(old ? [old] : []));
    if (ref.startsWith('refs/heads/')) this.#branches.delete(`${repo.owner}/${repo.name}:${ref.slice(11)}`);
  }

  /** What GitHub does on a merge: `head` merged into branch `base` (a merge commit); returns it. */
  mergeForReal(repo: ModelRepo, base: string, head: string, message = 'merge'): string {
    const from = this.branch(repo, base);
    const commit = githubMergeCommit((...args) => this.git(repo, ...args), from, head, message);
    this.updateRef(repo, `refs/heads/${base}`, commit, from);
    return commit;
  }

  /** A pull request's head moves (a push to its branch, a force push). */
  moveHead(repo: ModelRepo, p: ModelPull, sha: string): void {
    p.head = sha;
    this.updateRef(repo, `refs/pull/${p.number}/head`, sha);
  }

  /** A label event on the timeline (who added it). */
  labeled(
    repo: ModelRepo,
    issue: number,
    name: string,
    actor: { login: string; type: 'User' | 'Bot' },
  ): void {
    repo.timeline.push({
      issue,
      id: this.nextId(),
      event: 'labeled',
      created_at: this.now().toISOString(),
      actor,
      label: { name },
    });
  }

  // --- faults, rate limits, write pacing ---

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
      return primaryLimit(Math.ceil(Date.now() / 1000) + seconds);
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
    if (fault.kind === 'primary') return primaryLimit(Math.ceil(fault.until / 1000));
    const [status, body, headers] = secondaryLimit(Math.max(1, Math.ceil((fault.until - Date.now()) / 1000)));
    return [fault.kind === '429' ? 429 : status, body, headers];
  }

  // --- answering ---

  /**
   * Answer one request: an injected fault or rate limit first, then GitHub's API under its
   * contract. Every request is recorded.
   */
  answer(request: ModelRequest): Reply {
    const { method, path, search } = request;
    const query = new URLSearchParams(search);
    let reply: Reply;
    let fault: string | undefined;
    const auth = request.headers.authorization;
    const injected =
      this.#plannedFault(method, path) ?? this.#fault() ?? this.#tooSoon(method, path, String(auth ?? ''));
    if (injected) {
      reply = injected;
      fault = String(injected[0]);
    } else if (method === 'POST' && path === '/graphql') {
      // GraphQL is not in GitHub's REST description: the merge queue model checks what it takes.
      reply = this.#graphql(request.body as { query?: string; variables?: Record<string, unknown> });
    } else {
      reply = underContract(method, path + search, request.body, () => {
        try {
          return this.#route(method, path, query, (request.body ?? {}) as Record<string, unknown>);
        } catch (error) {
          return [500, { message: error instanceof Error ? error.message : String(error) }];
        }
      });
      if (this.etags && method === 'GET' && reply[0] === 200) reply = this.#conditional(reply, request);
    }
    this.requests.push({
      method,
      path: path + search,
      status: reply[0],
      at: Date.now(),
      ...(fault ? { fault } : {}),
      ...(request.headers['if-none-match'] !== undefined ? { conditional: true as const } : {}),
      ...(request.body !== undefined ? { body: request.body } : {}),
    });
    return reply;
  }

  /** An answer with its ETag; 304 without a body when the client has it already. */
  #conditional([status, body, headers]: Reply, request: ModelRequest): Reply {
    const etag = `"${createHash('sha1').update(JSON.stringify(body)).digest('hex')}"`;
    if (request.headers['if-none-match'] === etag) return [304, '', { etag }];
    return [status, body, { ...headers, etag }];
  }

  /** A request that never got an answer (its connection was cut). */
  recordDropped(method: string, path: string): void {
    this.requests.push({ method, path, status: 0, fault: 'dropped', at: Date.now() });
  }

  #graphql(body: { query?: string; variables?: Record<string, unknown> }): Reply {
    const queue = [...this.repos.values()].find((r) => r.mergeQueue)?.mergeQueue;
    return queue
      ? (queue.graphql(body) as Reply)
      : [200, { data: null, errors: [{ type: 'NOT_FOUND', message: 'no merge queue in this fake' }] }];
  }

  #repoJson(repo: ModelRepo) {
    return {
      id: repo.id,
      name: repo.name,
      full_name: `${repo.owner}/${repo.name}`,
      owner: { login: repo.owner },
      clone_url: repo.bare,
      private: repo.isPrivate,
    };
  }

  pullJson(repo: ModelRepo, p: ModelPull) {
    const r = this.#repoJson(repo);
    return {
      number: p.number,
      node_id: pullNodeId(p.number),
      state: p.state,
      merged: p.merged,
      draft: p.draft,
      user: { login: p.author, type: p.bot ? 'Bot' : 'User' },
      labels: p.labels.map((name) => ({ name })),
      mergeable_state: p.mergeable_state,
      merged_at: p.mergedAt === undefined ? null : new Date(p.mergedAt).toISOString(),
      merge_commit_sha: p.mergeCommit ?? null,
      head: {
        sha: p.head,
        ref: p.headRef ?? `pr-${p.number}`,
        repo: p.fork ? { ...r, id: 999, owner: { login: p.fork }, full_name: `${p.fork}/${repo.name}` } : r,
      },
      base: { sha: this.branch(repo, p.base), ref: p.base, repo: r },
    };
  }

  /** A commit as the commits API lists it (first parent first, committer date). */
  #commitJson(repo: ModelRepo, sha: string) {
    const [parents = '', date = '', message = ''] = this.git(
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

  /** A tree: `base` with files replaced, built with a private index in the bare repository. */
  #tree(
    repo: ModelRepo,
    base: string,
    files: { path: string; mode: string; content?: string; sha?: string | null }[],
  ): string {
    const index = `${repo.bare}/fake-index-${process.pid}`;
    const env = { ...process.env, GIT_INDEX_FILE: index };
    const git = (args: string[], input?: string) =>
      execFileSync('git', ['-C', repo.bare, ...args], { encoding: 'utf8', env, input }).trim();
    try {
      git(['read-tree', base]);
      for (const f of files) {
        // GitHub deletes a file given `sha: null`.
        if (f.sha === null) {
          git(['update-index', '--index-info'], `0 ${'0'.repeat(40)}\t${f.path}\n`);
          continue;
        }
        const blob = f.sha ?? git(['hash-object', '-w', '--stdin'], f.content);
        git(['update-index', '--add', '--cacheinfo', `${f.mode},${blob},${f.path}`]);
      }
      return git(['write-tree']);
    } finally {
      execFileSync('rm', ['-f', index]);
    }
  }

  /** The repository a path names (GitHub's names are case-insensitive). */
  #repoNamed(owner: string, name: string): ModelRepo | undefined {
    const full = `${decodeURIComponent(owner)}/${decodeURIComponent(name)}`.toLowerCase();
    return [...this.repos.values()].find((r) => `${r.owner}/${r.name}`.toLowerCase() === full);
  }

  #route(method: string, path: string, query: URLSearchParams, body: Record<string, unknown>): Reply {
    const app = this.#appRoute(method, path);
    if (app) return app;
    const m = /^\/repos\/([^/]+)\/([^/]+)(\/.*)?$/.exec(path);
    const repo = m && this.#repoNamed(m[1]!, m[2]!);
    if (!repo) return notFound;
    const rest = m[3] ?? '';
    return (
      [
        this.#checkRunRoute,
        this.#commitRoute,
        this.#pullRoute,
        this.#repositoryRoute,
        this.#gitDataRoute,
        this.#issueRoute,
      ].reduce<Reply | undefined>(
        (answer, route) => answer ?? route.call(this, { repo, method, rest, query, body }),
        undefined,
      ) ?? notFound
    );
  }

  /** The App and its installation. */
  #appRoute(method: string, path: string): Reply | undefined {
    const account = { login: this.options.account ?? 'fleet', type: 'Organization' };
    if (method === 'POST' && /^\/app\/installations\/\d+\/access_tokens$/.test(path))
      return [
        201,
        {
          token: installationToken(/\d+/.exec(path)![0]),
          expires_at: new Date(Date.now() + 3600_000).toISOString(),
          permissions: {},
        },
      ];
    if (method === 'GET' && path === '/app') return [200, { id: 123, slug: this.slug, name: this.slug }];
    if (method === 'GET' && path === '/app/installations')
      return [200, [{ id: 4242, account, app_slug: this.slug }]];
    if (method === 'GET' && path === '/installation/repositories') {
      const web = this.options.web?.() ?? 'https://github.com';
      const repositories = [...this.repos.values()].map((r) => ({
        ...this.#repoJson(r),
        html_url: `${web}/${r.owner}/${r.name}`,
        default_branch: 'main',
      }));
      return [200, { total_count: repositories.length, repositories }];
    }
    const team = /^\/orgs\/([^/]+)\/teams\/([^/]+)\/members$/.exec(path);
    if (method === 'GET' && team)
      return [200, (this.teams.get(`${team[1]}/${team[2]}`) ?? []).map((login) => ({ login }))];
    // The App's installation on a repository (app-level authentication): only on its own.
    const installed = /^\/repos\/([^/]+)\/([^/]+)\/installation$/.exec(path);
    if (method === 'GET' && installed)
      return this.#repoNamed(installed[1]!, installed[2]!) ? [200, { id: 4242, account }] : notFound;
    return undefined;
  }

  #checkRunRoute({ repo, method, rest, query, body }: RouteCall): Reply | undefined {
    const full = `${repo.owner}/${repo.name}`;
    let m: RegExpExecArray | null;
    if (method === 'POST' && rest === '/check-runs') {
      const given = body as Partial<ModelCheckRun>;
      const run: ModelCheckRun = {
        id: this.nextId(),
        repo: full,
        name: String(body.name),
        head_sha: String(body.head_sha),
        // A conclusion completes the run at once, whatever the status says (GitHub does so).
        status: body.conclusion !== undefined ? 'completed' : String(body.status ?? 'queued'),
        conclusion: body.conclusion !== undefined ? String(body.conclusion) : null,
        app: { slug: this.slug },
        createdAt: Date.now(),
        ...(given.started_at !== undefined ? { started_at: given.started_at } : {}),
        ...(given.completed_at !== undefined ? { completed_at: given.completed_at } : {}),
        ...(given.external_id !== undefined ? { external_id: given.external_id } : {}),
        ...(given.output ? { output: given.output } : {}),
        ...(given.details_url !== undefined ? { details_url: given.details_url } : {}),
      };
      this.checkRuns.push(run);
      if (run.status === 'completed') this.#completed(run);
      repo.mergeQueue?.evaluate();
      return [201, run];
    }
    if (method === 'PATCH' && (m = /^\/check-runs\/(\d+)$/.exec(rest))) {
      const run = this.checkRuns.find((r) => r.id === Number(m![1]) && r.repo === full);
      if (!run) return notFound;
      const wasCompleted = run.status === 'completed';
      Object.assign(run, body);
      if (body.conclusion !== undefined) run.status = 'completed';
      if (run.status === 'completed' && !wasCompleted) this.#completed(run);
      repo.mergeQueue?.evaluate();
      return [200, run];
    }
    if (method === 'GET' && (m = /^\/commits\/([^/]+)\/check-runs$/.exec(rest))) {
      const sha = decodeURIComponent(m[1]!);
      // filter=latest (GitHub's default): the newest run of each name
      let runs =
        query.get('filter') === 'all' ? this.runsFor(full, sha) : [...this.latestRuns(full, sha).values()];
      if (query.get('check_name')) runs = runs.filter((r) => r.name === query.get('check_name'));
      return [200, { total_count: runs.length, check_runs: runs }];
    }
    return undefined;
  }

  #completed(run: ModelCheckRun): void {
    run.completedAt = Date.now();
    this.onCompleted?.(run);
  }

  /** Commit lists (by date, newest first, like GitHub), comparisons, associated pull requests, contents. */
  #commitRoute({ repo, method, rest, query }: RouteCall): Reply | undefined {
    if (method !== 'GET') return undefined;
    let m: RegExpExecArray | null;
    if (rest === '/commits') {
      const args = ['rev-list', `--max-count=${Number(query.get('per_page') ?? 30)}`];
      if (query.get('since')) args.push(`--since=${query.get('since')}`);
      const shas = this.git(repo, ...args, query.get('sha') ?? 'main')
        .split('\n')
        .filter(Boolean);
      return [200, shas.map((sha) => this.#commitJson(repo, sha))];
    }
    if ((m = /^\/compare\/([0-9a-f]+)\.\.\.([0-9a-f]+)$/.exec(rest))) {
      const files = this.git(repo, 'diff', '--name-only', '--no-renames', m[1]!, m[2]!)
        .split('\n')
        .filter(Boolean);
      return [200, { status: 'ahead', files: files.map((filename) => ({ filename, status: 'modified' })) }];
    }
    if ((m = /^\/commits\/([0-9a-f]+)\/pulls$/.exec(rest))) {
      const sha = m[1]!;
      const list = [...repo.pulls.values()].filter((p) => p.head === sha || p.mergeCommit === sha);
      return [200, list.map((p) => this.pullJson(repo, p))];
    }
    if ((m = /^\/contents\/(.+)$/.exec(rest))) {
      const path = decodeURIComponent(m[1]!);
      const ref = query.get('ref') ?? 'main';
      // A ref that reads as an option never reaches git (GitHub answers 404 for it too).
      if (ref.startsWith('-')) return notFound;
      try {
        const text = this.git(repo, 'show', `${ref}:${path}`);
        return [
          200,
          { type: 'file', path, encoding: 'base64', content: Buffer.from(`${text}\n`).toString('base64') },
        ];
      } catch {
        return notFound;
      }
    }
    return undefined;
  }

  #pullRoute({ repo, method, rest, query, body }: RouteCall): Reply | undefined {
    let m: RegExpExecArray | null;
    const pull = (n: string | undefined) => repo.pulls.get(Number(n));
    if (method === 'GET' && (m = /^\/pulls\/(\d+)$/.exec(rest))) {
      const p = pull(m[1]);
      return p ? [200, this.pullJson(repo, p)] : notFound;
    }
    // The files of a pull request: its head against where it forked off its base (for a
    // merged one, the base as the merge found it), as GitHub lists them.
    if (method === 'GET' && (m = /^\/pulls\/(\d+)\/files$/.exec(rest))) {
      const p = pull(m[1]);
      if (!p) return notFound;
      const base = p.mergeCommit ? `${p.mergeCommit}^1` : this.branch(repo, p.base);
      const fork = this.git(repo, 'merge-base', base, p.head);
      const names = this.git(repo, 'diff', '--name-only', fork, p.head).split('\n').filter(Boolean);
      return [200, names.map((filename) => ({ filename, status: 'modified' }))];
    }
    if (method === 'GET' && rest === '/pulls') return [200, this.#pullList(repo, query)];
    if (method === 'PUT' && (m = /^\/pulls\/(\d+)\/merge$/.exec(rest)))
      return this.#merge(repo, pull(m[1]), body);
    if (method === 'POST' && rest === '/pulls') {
      const b = body as unknown as Omit<CreatedPull, 'number'>;
      const number = 100 + repo.created.length;
      repo.created.push({ number, ...b });
      if (repo.registerCreatedPulls) {
        const head = this.branch(repo, b.head);
        this.updateRef(repo, `refs/pull/${number}/head`, head);
        this.addPull(repo, {
          number,
          head,
          headRef: b.head,
          base: b.base,
          author: `${this.slug}[bot]`,
          bot: true,
          onMerge: () => this.mergeForReal(repo, b.base, head),
        });
      }
      return [201, { number, html_url: `https://github.com/${repo.owner}/${repo.name}/pull/${number}` }];
    }
    return undefined;
  }

  /**
   * `head=owner:branch`: the pull requests the App opened from that branch (in the state a
   * registered one is in now), and others' pull requests from it; else the pull requests in
   * `state` (default open).
   */
  #pullList(repo: ModelRepo, query: URLSearchParams) {
    const head = query.get('head');
    const state = query.get('state') ?? 'open';
    const inState = (p: { state: string }) => state === 'all' || p.state === state;
    if (head === null) return [...repo.pulls.values()].filter(inState).map((p) => this.pullJson(repo, p));
    return [
      ...repo.created
        .filter((c) => `${repo.owner}:${c.head}` === head)
        .map((c) => ({
          number: c.number,
          state: repo.pulls.get(c.number)?.state ?? 'open',
          user: { login: `${this.slug}[bot]`, type: 'Bot' },
          head: { ref: c.head },
          base: { ref: c.base },
          labels: (c.labels ?? []).map((name) => ({ name })),
        })),
      ...[...repo.pulls.values()]
        .filter((p) => !p.bot && !p.fork && `${repo.owner}:${p.headRef ?? `pr-${p.number}`}` === head)
        .map((p) => this.pullJson(repo, p)),
    ].filter(inState);
  }

  #merge(repo: ModelRepo, p: ModelPull | undefined, body: { sha?: string; merge_method?: string }): Reply {
    if (!p) return notFound;
    if (p.state !== 'open') return [405, { message: 'Pull Request is not mergeable' }];
    if (body.sha !== undefined && body.sha !== p.head)
      return [409, { message: 'Head branch was modified. Review and try the merge again.' }];
    if ((repo.branchRules.get(p.base) ?? []).some((r) => r.type === 'merge_queue'))
      return [405, { message: QUEUE_REFUSAL }];
    let commit = '0'.repeat(40);
    try {
      if (p.onMerge) commit = p.onMerge(body);
      else if (repo.realMerges)
        commit = this.mergeForReal(repo, p.base, p.head, `Merge pull request #${p.number}`);
    } catch (e) {
      if (!p.onMerge) return [405, { message: 'Merge conflict' }];
      const err = e as { status?: number; message?: string };
      return [err.status ?? 405, { message: err.message ?? 'Method Not Allowed' }];
    }
    const at = Date.now();
    this.merges.push({
      repo: `${repo.owner}/${repo.name}`,
      number: p.number,
      commit,
      at,
      ...(body.sha !== undefined ? { sha: body.sha } : {}),
      ...(body.merge_method ? { method: body.merge_method } : {}),
    });
    Object.assign(p, { state: 'closed', merged: true, mergeCommit: commit, mergedAt: at });
    return [200, { sha: commit, merged: true, message: 'Pull Request successfully merged' }];
  }

  /** The repository, its branches, their rules, permissions. */
  #repositoryRoute({ repo, method, rest }: RouteCall): Reply | undefined {
    if (method !== 'GET') return undefined;
    let m: RegExpExecArray | null;
    if (rest === '')
      return [
        200,
        {
          ...this.#repoJson(repo),
          default_branch: 'main',
          visibility: repo.isPrivate ? 'private' : 'public',
        },
      ];
    // Before /branches/x: `/rules/branches/x` ends the same way.
    if ((m = /^\/rules\/branches\/(.+)$/.exec(rest)))
      return [200, repo.branchRules.get(decodeURIComponent(m[1]!)) ?? []];
    if ((m = /^\/branches\/(.+)$/.exec(rest))) {
      const name = decodeURIComponent(m[1]!);
      repo.onBranch?.(name);
      let sha: string;
      try {
        sha = this.branch(repo, name);
      } catch {
        return [404, { message: 'Branch not found' }];
      }
      const commit = this.#commitJson(repo, sha);
      return [
        200,
        {
          name,
          protected: repo.protectedBranches.has(name),
          commit: {
            sha,
            parents: commit.parents,
            commit: {
              tree: { sha: this.git(repo, 'rev-parse', `${sha}^{tree}`) },
              committer: commit.commit.committer,
            },
          },
        },
      ];
    }
    if ((m = /^\/collaborators\/([^/]+)\/permission$/.exec(rest)))
      return [200, { permission: repo.permissions.get(decodeURIComponent(m[1]!)) ?? 'none' }];
    return undefined;
  }

  /** The git data API and dispatches, carried out on the bare repository. */
  #gitDataRoute({ repo, method, rest, body }: RouteCall): Reply | undefined {
    let m: RegExpExecArray | null;
    if (method === 'POST' && rest === '/git/trees') {
      const b = body as {
        base_tree: string;
        tree: { path: string; mode: string; content?: string; sha?: string | null }[];
      };
      return [201, { sha: this.#tree(repo, b.base_tree, b.tree) }];
    }
    if (method === 'POST' && rest === '/git/commits') {
      const b = body as {
        message: string;
        tree: string;
        parents: string[];
        author?: { name: string; email: string };
      };
      const who = b.author ?? { name: 'GitHub', email: 'noreply@github.com' };
      const args = ['-c', `user.name=${who.name}`, '-c', `user.email=${who.email}`, 'commit-tree', b.tree];
      for (const p of b.parents) args.push('-p', p);
      return [201, { sha: this.git(repo, ...args, '-m', b.message) }];
    }
    if (method === 'PATCH' && (m = /^\/git\/refs\/(.+)$/.exec(rest))) {
      const name = decodeURIComponent(m[1]!).replace(/^heads\//, '');
      const b = body as { sha: string; force?: boolean };
      let current: string;
      try {
        current = this.branch(repo, name);
        if (!b.force) this.git(repo, 'merge-base', '--is-ancestor', current, b.sha);
      } catch {
        return [422, { message: 'Update is not a fast forward', documentation_url: DOCS }];
      }
      this.updateRef(repo, `refs/heads/${name}`, b.sha);
      repo.refUpdates.push({ ref: name, sha: b.sha });
      // An open pull request from that branch of this repository has a new head.
      for (const p of repo.pulls.values())
        if (p.state === 'open' && !p.fork && (p.headRef ?? `pr-${p.number}`) === name)
          this.moveHead(repo, p, b.sha);
      return [200, { ref: `refs/heads/${name}`, object: { sha: b.sha } }];
    }
    if (method === 'POST' && rest === '/git/refs') {
      const b = body as { ref: string; sha: string };
      // As GitHub: a ref that exists is not created again.
      try {
        this.git(repo, 'rev-parse', '--verify', '--quiet', b.ref);
        return [422, { message: 'Reference already exists', documentation_url: DOCS }];
      } catch {
        // absent: created below
      }
      this.updateRef(repo, b.ref, b.sha);
      repo.refUpdates.push({ ref: b.ref.replace('refs/heads/', ''), sha: b.sha });
      return [201, { ref: b.ref, object: { sha: b.sha } }];
    }
    if (method === 'POST' && rest === '/dispatches') {
      repo.dispatches.push(body);
      return [204, ''];
    }
    if (method === 'POST' && (m = /^\/actions\/workflows\/([^/]+)\/dispatches$/.exec(rest))) {
      repo.dispatches.push({ workflow: m[1], ...body });
      return [204, ''];
    }
    return undefined;
  }

  /** Comments, labels, reactions, the timeline. */
  #issueRoute({ repo, method, rest, body }: RouteCall): Reply | undefined {
    const full = `${repo.owner}/${repo.name}`;
    const bot = { login: `${this.slug}[bot]`, type: 'Bot' as const };
    let m: RegExpExecArray | null;
    if ((m = /^\/issues\/(\d+)\/comments$/.exec(rest))) {
      const issue = Number(m[1]);
      if (method === 'GET') return [200, this.comments.filter((c) => c.repo === full && c.issue === issue)];
      if (method === 'POST') {
        const c: ModelComment = { id: this.nextId(), repo: full, issue, body: String(body.body), user: bot };
        this.comments.push(c);
        return [201, c];
      }
    }
    if (method === 'PATCH' && (m = /^\/issues\/comments\/(\d+)$/.exec(rest))) {
      const c = this.comments.find((x) => x.repo === full && x.id === Number(m![1]));
      if (!c) return notFound;
      c.body = String(body.body);
      return [200, c];
    }
    if (method === 'POST' && (m = /^\/issues\/comments\/(\d+)\/reactions$/.exec(rest))) {
      this.reactions.push({ repo: full, comment: Number(m[1]), content: String(body.content) });
      return [201, { id: this.nextId(), content: body.content }];
    }
    if (method === 'POST' && (m = /^\/issues\/(\d+)\/labels$/.exec(rest))) {
      const issue = Number(m[1]);
      const p = repo.pulls.get(issue);
      const opened = repo.created.find((c) => c.number === issue);
      if (!p && !opened) return notFound;
      for (const l of (body.labels as string[] | undefined) ?? []) {
        if (p && !p.labels.includes(l)) {
          p.labels.push(l);
          this.labeled(repo, issue, l, bot);
        }
        if (opened && !(opened.labels ??= []).includes(l)) opened.labels.push(l);
      }
      return [200, (p?.labels ?? opened?.labels ?? []).map((name) => ({ name }))];
    }
    if (method === 'DELETE' && (m = /^\/issues\/(\d+)\/labels\/(.+)$/.exec(rest))) {
      const p = repo.pulls.get(Number(m[1]));
      const name = decodeURIComponent(m[2]!);
      if (!p || !p.labels.includes(name)) return [404, { message: 'Label does not exist' }];
      p.labels = p.labels.filter((l) => l !== name);
      return [200, p.labels.map((n) => ({ name: n }))];
    }
    if (method === 'GET' && (m = /^\/issues\/(\d+)\/timeline$/.exec(rest))) {
      const issue = Number(m[1]);
      return [200, repo.timeline.filter((e) => e.issue === issue).map(({ issue: _, ...e }) => e)];
    }
    return undefined;
  }
}

/** A content-creating request (what github.com paces); fetching an installation token is not. */
export function isWrite(method: string, path: string): boolean {
  if (!['POST', 'PATCH', 'PUT', 'DELETE'].includes(method)) return false;
  return !/^\/app\/installations\/\d+\/access_tokens/.test(path);
}

function primaryLimit(resetSeconds: number): Reply {
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
      'x-ratelimit-reset': String(resetSeconds),
    },
  ];
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

/**
 * A ref's commit read from its file (loose, else packed-refs), as git reads it: the model
 * answers every pull request with its branch's head, and a git process for each was most
 * of an App test's time. Anything else (a symbolic ref, no such ref) is left to git.
 */
function readRef(bare: string, ref: string): string | undefined {
  const sha = /^[0-9a-f]{40}$/;
  try {
    const loose = readFileSync(join(bare, ref), 'utf8').trim();
    return sha.test(loose) ? loose : undefined;
  } catch {
    // not a loose ref: packed, or none
  }
  try {
    for (const line of readFileSync(join(bare, 'packed-refs'), 'utf8').split('\n'))
      if (line.endsWith(` ${ref}`) && sha.test(line.slice(0, 40))) return line.slice(0, 40);
  } catch {
    // no packed-refs
  }
  return undefined;
}
