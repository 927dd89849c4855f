// A small stateful stand-in for GitHub's REST API (nock): check runs, pull requests,
// comments, labels, reactions, merges. Enough for the App's comment and merge flows; the
// git side is a real bare repository. Responses carry the fields the App reads, shaped
// like GitHub's.
import { execFileSync } from 'node:child_process';
import nock from 'nock';
import { underContract } from './github-contract.js';
import { webhookExample } from './github.js';
import { MergeQueueModel, mergeQueueRule, pullNodeId, QUEUE_REFUSAL } from './merge-queue.js';

export const API = 'https://api.github.com';
/** What GitHub's error answers point to (its 422 answers always carry one). */
const DOCS = 'https://docs.github.com/rest';

export interface FakePull {
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
  /** Called on PUT .../merge; returns the merge commit sha, or throws { status, message }. */
  onMerge?: (body: { sha?: string; merge_method?: string }) => string;
  /** The head branch lives in a fork owned by this login (default: this repository). */
  fork?: string;
  /** Set on a merge: the merge commit. */
  mergeCommit?: string;
  /** The author is a bot (the App's own pull requests). */
  bot?: boolean;
}

export interface FakeCheckRun {
  id: number;
  name: string;
  head_sha: string;
  status: string;
  conclusion: string | null;
  app: { slug: string };
  external_id?: string;
  started_at?: string;
  output?: { title?: string; summary?: string; text?: string };
  /** The run's "Details" link. */
  details_url?: string;
}

export interface FakeComment {
  id: number;
  issue: number;
  body: string;
  user: { login: string; type: 'User' | 'Bot' };
}

type Handler = (uri: string, body: nock.Body) => unknown;
type ReplyFn = (this: nock.ReplyFnContext, uri: string, body: nock.Body) => nock.ReplyFnResult;

/**
 * A nock reply that speaks GitHub's contract (github-contract.ts): a request GitHub's REST
 * description does not allow is answered 422 and fails the test; so does an answer of this
 * fake that GitHub's description does not allow. Takes nock's forms: (status, body or
 * handler) or a handler returning [status, body].
 */
function checked(status: number, answer: Handler | object | string): ReplyFn;
function checked(answer: (uri: string, body: nock.Body) => [number, unknown]): ReplyFn;
function checked(
  first: number | ((uri: string, body: nock.Body) => [number, unknown]),
  second?: unknown,
): ReplyFn {
  return function (this: nock.ReplyFnContext, uri: string, body: nock.Body): nock.ReplyFnResult {
    return underContract(this.req.method, uri, body, () =>
      typeof first === 'number'
        ? [first, typeof second === 'function' ? (second as Handler)(uri, body) : second]
        : first(uri, body),
    ) as unknown as nock.ReplyFnResult;
  };
}

export class FakeGitHub {
  readonly checkRuns: FakeCheckRun[] = [];
  readonly comments: FakeComment[] = [];
  readonly reactions: { comment: number; content: string }[] = [];
  readonly merges: { number: number; sha?: string; method?: string }[] = [];
  readonly dispatches: object[] = [];
  readonly refUpdates: { ref: string; sha: string }[] = [];
  readonly created: {
    number: number;
    title: string;
    head: string;
    base: string;
    body: string;
    /** Labels added to it (POST .../issues/:number/labels). */
    labels?: string[];
  }[] = [];
  readonly pulls = new Map<number, FakePull>();
  /** login -> admin | write | read | none */
  readonly permissions = new Map<string, string>();
  /** Timeline events of pull requests (force pushes and the like), oldest first. */
  readonly timeline: {
    issue: number;
    id: number;
    event: string;
    created_at: string;
    actor?: { login: string; type: 'User' | 'Bot' };
    label?: { name: string };
  }[] = [];
  /** Branches with classic branch protection. */
  readonly protectedBranches = new Set<string>();
  /** branch -> repository rules (rulesets) that apply to it. */
  readonly branchRules = new Map<string, { type: string }[]>();
  /** GitHub's merge queue of the branch requireMergeQueue() named (merge-queue.ts). */
  mergeQueue?: MergeQueueModel;
  /** Called when a branch is looked up (GET .../branches/:name), e.g. to change things mid-job. */
  onBranch?: (name: string) => void;
  /**
   * Pull requests the App opens become pull requests of this fake (by the App's bot user,
   * `refs/pull/<n>/head` set), merged for real into their base when GitHub is asked to.
   */
  registerCreatedPulls = false;
  /** The repository is private (GET .../repos/:owner/:repo and its pull requests say so). */
  isPrivate = false;
  #id = 1000;
  /** GitHub's clock runs this far ahead of the test's (tick() moves it): `Date` headers and event times. */
  #clockOffset = 0;

  constructor(
    readonly owner: string,
    readonly repo: string,
    /** The bare repository: branch heads come from it. */
    readonly bare: string,
    readonly slug = 'catalog-bot',
  ) {
    this.#mockMore();
    this.#mock();
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

  /** The author force-pushes `sha` as the pull request's head: GitHub's timeline records it. */
  forcePush(number: number, sha: string): void {
    this.pulls.get(number)!.head = sha;
    this.#git('update-ref', `refs/pull/${number}/head`, sha);
    this.timeline.push({
      issue: number,
      id: ++this.#id,
      event: 'head_ref_force_pushed',
      created_at: this.now().toISOString(),
    });
  }

  /** What GitHub does on a merge: `head` merged into `base` (a merge commit); returns it. */
  mergeForReal(base: string, head: string): string {
    const tree = this.#git('merge-tree', '--write-tree', base, head).split('\n')[0]!;
    const commit = this.#git(
      '-c',
      'user.name=GitHub',
      '-c',
      'user.email=noreply@github.com',
      'commit-tree',
      tree,
      '-p',
      base,
      '-p',
      head,
      '-m',
      'merge',
    );
    this.#git('update-ref', `refs/heads/${base}`, commit);
    return commit;
  }

  /** Someone adds a label in GitHub's web page (not through the App): the timeline records who. */
  labelByHand(number: number, label: string, login: string): void {
    const p = this.pulls.get(number)!;
    if (!p.labels!.includes(label)) p.labels!.push(label);
    this.#labeled(number, label, { login, type: 'User' });
  }

  #labeled(issue: number, name: string, actor: { login: string; type: 'User' | 'Bot' }): void {
    this.timeline.push({
      issue,
      id: ++this.#id,
      event: 'labeled',
      created_at: this.now().toISOString(),
      actor,
      label: { name },
    });
  }

  /**
   * `branch` requires GitHub's merge queue (a ruleset's `merge_queue` rule): the REST merge
   * into it is refused, and the queue (merge-queue.ts) merges once `required` checks are green.
   */
  requireMergeQueue(branch: string, required: readonly string[]): MergeQueueModel {
    this.branchRules.set(branch, [
      ...(this.branchRules.get(branch) ?? []),
      mergeQueueRule(this.owner, this.repo),
    ]);
    this.mergeQueue = new MergeQueueModel(
      {
        git: (...args) => this.#git(...args),
        pull: (number) => {
          const p = this.pulls.get(number);
          return (
            p && {
              head: p.head,
              headRef: p.headRef ?? `pr-${p.number}`,
              title: `p${p.number}`,
              state: p.state ?? 'open',
            }
          );
        },
        merged: (number, commit) => {
          const p = this.pulls.get(number);
          if (!p) return;
          Object.assign(p, { state: 'closed', merged: true, mergeCommit: commit });
        },
        latestRuns: (sha) => {
          const latest = new Map<string, { status: string; conclusion: string | null }>();
          for (const r of this.runsFor(sha)) latest.set(r.name, r);
          return latest;
        },
        repository: () => {
          const repository = webhookExample('pull_request', 'opened').repository;
          repository.clone_url = this.bare;
          return repository;
        },
      },
      branch,
      required,
    );
    return this.mergeQueue;
  }

  /** Whether `branch` requires the merge queue (its rules say so). */
  #queued(branch: string): boolean {
    return (this.branchRules.get(branch) ?? []).some((r) => r.type === 'merge_queue');
  }

  addPull(pull: FakePull): void {
    this.pulls.set(pull.number, { state: 'open', labels: [], mergeable_state: 'clean', ...pull });
  }

  runsFor(sha: string, name?: string): FakeCheckRun[] {
    return this.checkRuns.filter((r) => r.head_sha === sha && (name === undefined || r.name === name));
  }

  labelsOf(number: number): string[] {
    return this.pulls.get(number)?.labels ?? [];
  }

  /** Comments by the bot on a pull request (its replies and its status comment). */
  botComments(number: number): FakeComment[] {
    return this.comments.filter((c) => c.issue === number && c.user.type === 'Bot');
  }

  #pullJson(p: FakePull) {
    const repo = {
      id: 186853002,
      name: this.repo,
      full_name: `${this.owner}/${this.repo}`,
      clone_url: this.bare,
      private: this.isPrivate,
    };
    return {
      number: p.number,
      node_id: pullNodeId(p.number),
      state: p.state,
      merged: p.merged ?? false,
      draft: p.draft ?? false,
      user: { login: p.author, type: p.bot ? 'Bot' : 'User' },
      labels: (p.labels ?? []).map((name) => ({ name })),
      mergeable_state: p.mergeable_state,
      merge_commit_sha: p.mergeCommit ?? null,
      head: {
        sha: p.head,
        ref: p.headRef ?? `pr-${p.number}`,
        repo: p.fork ? { ...repo, id: 999, full_name: `${p.fork}/${this.repo}` } : repo,
      },
      base: { sha: this.#branch(p.base ?? 'main'), ref: p.base ?? 'main', repo },
    };
  }

  #branch(name: string): string {
    return this.#git('rev-parse', `refs/heads/${name}`);
  }

  #git(...args: string[]): string {
    return execFileSync('git', ['-C', this.bare, ...args], { encoding: 'utf8' }).trim();
  }

  /** A tree: `base` with files replaced, built with a private index in the bare repository. */
  #tree(
    base: string,
    files: { path: string; mode: string; content?: string; sha?: string | null }[],
  ): string {
    const index = `${this.bare}/fake-index-${process.pid}`;
    const env = { ...process.env, GIT_INDEX_FILE: index };
    const git = (args: string[], input?: string) =>
      execFileSync('git', ['-C', this.bare, ...args], { encoding: 'utf8', env, input }).trim();
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

  /** Endpoints added later, matched before #mock's (`/rules/branches/x` would match its `/branches/x`). */
  #mockMore(): void {
    const repoPath = `/repos/${this.owner}/${this.repo}`;
    nock(API)
      .defaultReplyHeaders({ date: () => this.now().toUTCString() })
      .persist()
      // GraphQL is not in GitHub's REST description: the merge queue model checks what it takes.
      .post('/graphql')
      .reply((_uri, body) =>
        this.mergeQueue
          ? (this.mergeQueue.graphql(body as { query?: string; variables?: Record<string, unknown> }) as [
              number,
              nock.Body,
            ])
          : [200, { data: null, errors: [{ type: 'NOT_FOUND', message: 'no merge queue in this fake' }] }],
      )
      .get(new RegExp(`^${repoPath}/rules/branches/.+`))
      .query(true)
      .reply(
        checked(200, (uri) => {
          const name = decodeURIComponent(uri.split('/rules/branches/')[1]!.split('?')[0]!);
          return this.branchRules.get(name) ?? [];
        }),
      )
      .get(/\/issues\/\d+\/timeline/)
      .query(true)
      .reply(
        checked(200, (uri) => {
          const issue = Number(/issues\/(\d+)\/timeline/.exec(uri)![1]);
          return this.timeline.filter((e) => e.issue === issue).map(({ issue: _, ...e }) => e);
        }),
      );
  }

  #mock(): void {
    const repoPath = `/repos/${this.owner}/${this.repo}`;
    const num = (uri: string, re: RegExp) => Number(re.exec(uri)?.[1]);
    nock(API)
      .defaultReplyHeaders({ date: () => this.now().toUTCString() })
      .persist()
      .post(/\/app\/installations\/\d+\/access_tokens/)
      .reply(
        checked(201, () => ({
          token: 'ghs_fake',
          expires_at: new Date(Date.now() + 3600_000).toISOString(),
        })),
      )
      .get('/app')
      .reply(checked(200, () => ({ id: 123, slug: this.slug })))
      .get('/app/installations')
      .query(true)
      .reply(checked(200, [{ id: 4242, account: { login: this.owner } }]))
      .get('/installation/repositories')
      .query(true)
      .reply(
        checked(200, () => ({
          total_count: 1,
          repositories: [
            {
              id: 186853002,
              name: this.repo,
              full_name: `${this.owner}/${this.repo}`,
              owner: { login: this.owner },
              clone_url: this.bare,
              html_url: `https://github.com/${this.owner}/${this.repo}`,
              default_branch: 'main',
            },
          ],
        })),
      )
      .get(/\/contents\/.+/)
      .query(true)
      .reply(
        checked((uri) => {
          const path = decodeURIComponent(uri.split('/contents/')[1]!.split('?')[0]!);
          const ref = new URL(uri, API).searchParams.get('ref') ?? 'main';
          try {
            const text = this.#git('show', `refs/heads/${ref}:${path}`);
            return [
              200,
              {
                type: 'file',
                path,
                encoding: 'base64',
                content: Buffer.from(text + '\n').toString('base64'),
              },
            ];
          } catch {
            return [404, { message: 'Not Found' }];
          }
        }),
      )
      // check runs
      .post(`${repoPath}/check-runs`)
      .reply(
        checked(201, (_u, body) => {
          const b = body as Pick<
            FakeCheckRun,
            'name' | 'head_sha' | 'status' | 'external_id' | 'output' | 'details_url'
          > & {
            conclusion?: string;
            started_at?: string;
          };
          const run: FakeCheckRun = {
            id: ++this.#id,
            name: b.name,
            head_sha: b.head_sha,
            // A conclusion completes the run at once (GitHub does so).
            status: b.conclusion !== undefined ? 'completed' : b.status,
            conclusion: b.conclusion ?? null,
            ...(b.started_at !== undefined ? { started_at: b.started_at } : {}),
            app: { slug: this.slug },
            ...(b.external_id !== undefined ? { external_id: b.external_id } : {}),
            ...(b.output ? { output: b.output } : {}),
            ...(b.details_url !== undefined ? { details_url: b.details_url } : {}),
          };
          this.checkRuns.push(run);
          this.mergeQueue?.evaluate();
          return run;
        }),
      )
      .patch(/\/check-runs\/\d+$/)
      .reply(
        checked(200, (uri, body) => {
          const run = this.checkRuns.find((r) => r.id === num(uri, /check-runs\/(\d+)$/));
          if (run) Object.assign(run, body as object);
          this.mergeQueue?.evaluate();
          return run ?? {};
        }),
      )
      .get(/\/commits\/[0-9a-f]+\/check-runs/)
      .query(true)
      .reply(
        checked(200, (uri) => {
          const sha = /commits\/([0-9a-f]+)\/check-runs/.exec(uri)![1]!;
          if (new URL(uri, API).searchParams.get('filter') === 'all') {
            const all = this.runsFor(sha);
            return { total_count: all.length, check_runs: all };
          }
          // filter=latest (the default): the newest run of each name
          const latest = new Map<string, FakeCheckRun>();
          for (const r of this.runsFor(sha)) latest.set(r.name, r);
          return { total_count: latest.size, check_runs: [...latest.values()] };
        }),
      )
      // pull requests
      .get(/\/pulls\/\d+$/)
      .reply(
        checked((uri) => {
          const p = this.pulls.get(num(uri, /pulls\/(\d+)$/));
          return p ? [200, this.#pullJson(p)] : [404, { message: 'Not Found' }];
        }),
      )
      // The files of a pull request: its head against where it forked off its base (for a
      // merged one, the base as the merge found it), as GitHub lists them.
      .get(/\/pulls\/\d+\/files/)
      .query(true)
      .reply(
        checked((uri) => {
          const p = this.pulls.get(num(uri, /pulls\/(\d+)\/files/));
          if (!p) return [404, { message: 'Not Found' }];
          const base = p.mergeCommit ? `${p.mergeCommit}^1` : this.#branch(p.base ?? 'main');
          const fork = this.#git('merge-base', base, p.head).trim();
          const names = this.#git('diff', '--name-only', fork, p.head).split('\n').filter(Boolean);
          return [200, names.map((filename) => ({ filename, status: 'modified' }))];
        }),
      )
      .get(`${repoPath}/pulls`)
      .query(true)
      .reply(
        checked(200, (uri) => {
          // `head=owner:branch`: the pull requests the App opened from that branch (in the
          // state a registered one is in now), and others' pull requests from it.
          const query = new URL(uri, API).searchParams;
          const head = query.get('head');
          const state = query.get('state') ?? 'open';
          if (head !== null)
            return [
              ...this.created
                .filter((c) => `${this.owner}:${c.head}` === head)
                .map((c) => ({
                  number: c.number,
                  state: this.pulls.get(c.number)?.state ?? 'open',
                  user: { login: `${this.slug}[bot]`, type: 'Bot' },
                  head: { ref: c.head },
                  base: { ref: c.base },
                  labels: (c.labels ?? []).map((name) => ({ name })),
                })),
              ...[...this.pulls.values()]
                .filter((p) => !p.bot && !p.fork && `${this.owner}:${p.headRef ?? `pr-${p.number}`}` === head)
                .map((p) => this.#pullJson(p)),
            ].filter((p) => state === 'all' || p.state === state);
          return [...this.pulls.values()].filter((p) => p.state === 'open').map((p) => this.#pullJson(p));
        }),
      )
      .put(/\/pulls\/\d+\/merge$/)
      .reply(
        checked((uri, body) => {
          const p = this.pulls.get(num(uri, /pulls\/(\d+)\/merge$/));
          const b = body as { sha?: string; merge_method?: string };
          if (!p) return [404, { message: 'Not Found' }];
          if (b.sha !== undefined && b.sha !== p.head)
            return [409, { message: 'Head branch was modified. Review and try the merge again.' }];
          if (this.#queued(p.base ?? 'main')) return [405, { message: QUEUE_REFUSAL }];
          try {
            const sha = p.onMerge ? p.onMerge(b) : '0'.repeat(40);
            p.mergeCommit = sha;
            this.merges.push({ number: p.number, sha: b.sha, method: b.merge_method });
            p.state = 'closed';
            p.merged = true;
            return [200, { sha, merged: true, message: 'Pull Request successfully merged' }];
          } catch (e) {
            const err = e as { status?: number; message?: string };
            return [err.status ?? 405, { message: err.message ?? 'Method Not Allowed' }];
          }
        }),
      )
      .get(/\/branches\/.+$/)
      .reply(
        checked((uri) => {
          const name = decodeURIComponent(uri.split('/branches/')[1]!);
          this.onBranch?.(name);
          let sha: string;
          try {
            sha = this.#branch(name);
          } catch {
            return [404, { message: 'Branch not found' }];
          }
          return [
            200,
            {
              name,
              protected: this.protectedBranches.has(name),
              commit: { sha, commit: { tree: { sha: this.#git('rev-parse', `${sha}^{tree}`) } } },
            },
          ];
        }),
      )
      .get(repoPath)
      .reply(
        checked(200, () => ({
          id: 186853002,
          name: this.repo,
          full_name: `${this.owner}/${this.repo}`,
          default_branch: 'main',
          clone_url: this.bare,
          private: this.isPrivate,
          visibility: this.isPrivate ? 'private' : 'public',
        })),
      )
      // The App's installation on a repository (app-level authentication): this one only.
      .get(/^\/repos\/[^/]+\/[^/]+\/installation$/)
      .reply(
        checked((uri) =>
          uri.toLowerCase() === `${repoPath}/installation`.toLowerCase()
            ? [200, { id: 4242, account: { login: this.owner } }]
            : [404, { message: 'Not Found', documentation_url: DOCS }],
        ),
      )
      // the git data API, carried out on the bare repository
      .post(`${repoPath}/git/trees`)
      .reply(
        checked(201, (_u, body) => {
          const b = body as {
            base_tree: string;
            tree: { path: string; mode: string; content?: string; sha?: string | null }[];
          };
          return { sha: this.#tree(b.base_tree, b.tree) };
        }),
      )
      .post(`${repoPath}/git/commits`)
      .reply(
        checked(201, (_u, body) => {
          const b = body as {
            message: string;
            tree: string;
            parents: string[];
            author?: { name: string; email: string };
          };
          const who = b.author ?? { name: 'GitHub', email: 'noreply@github.com' };
          const args = [
            '-c',
            `user.name=${who.name}`,
            '-c',
            `user.email=${who.email}`,
            'commit-tree',
            b.tree,
          ];
          for (const p of b.parents) args.push('-p', p);
          return { sha: this.#git(...args, '-m', b.message) };
        }),
      )
      .patch(/\/git\/refs\/heads(\/|%2F).+$/)
      .reply(
        checked((uri, body) => {
          const name = decodeURIComponent(uri.split('/git/refs/')[1]!).replace(/^heads\//, '');
          const b = body as { sha: string; force?: boolean };
          const current = this.#branch(name);
          try {
            if (!b.force) this.#git('merge-base', '--is-ancestor', current, b.sha);
          } catch {
            return [422, { message: 'Update is not a fast forward', documentation_url: DOCS }];
          }
          this.#git('update-ref', `refs/heads/${name}`, b.sha);
          this.refUpdates.push({ ref: name, sha: b.sha });
          // An open pull request from that branch of this repository has a new head.
          for (const p of this.pulls.values())
            if (p.state === 'open' && !p.fork && (p.headRef ?? `pr-${p.number}`) === name) {
              p.head = b.sha;
              this.#git('update-ref', `refs/pull/${p.number}/head`, b.sha);
            }
          return [200, { ref: `refs/heads/${name}`, object: { sha: b.sha } }];
        }),
      )
      .post(`${repoPath}/git/refs`)
      .reply(
        checked((_u, body) => {
          const b = body as { ref: string; sha: string };
          // As GitHub: a ref that exists is not created again.
          try {
            this.#git('rev-parse', '--verify', '--quiet', b.ref);
            return [422, { message: 'Reference already exists', documentation_url: DOCS }];
          } catch {
            // absent: created below
          }
          this.#git('update-ref', b.ref, b.sha);
          this.refUpdates.push({ ref: b.ref.replace('refs/heads/', ''), sha: b.sha });
          return [201, { ref: b.ref, object: { sha: b.sha } }];
        }),
      )
      .post(`${repoPath}/pulls`)
      .reply(
        checked(201, (_u, body) => {
          const b = body as { title: string; head: string; base: string; body: string };
          const number = 100 + this.created.length;
          this.created.push({ number, ...b });
          if (this.registerCreatedPulls) {
            const head = this.#branch(b.head);
            this.#git('update-ref', `refs/pull/${number}/head`, head);
            this.addPull({
              number,
              head,
              headRef: b.head,
              base: b.base,
              author: `${this.slug}[bot]`,
              bot: true,
              onMerge: () => this.mergeForReal(b.base, head),
            });
          }
          return { number, html_url: `https://github.com/${this.owner}/${this.repo}/pull/${number}` };
        }),
      )
      // comments, labels, reactions
      .get(/\/issues\/\d+\/comments/)
      .query(true)
      .reply(
        checked(200, (uri) => this.comments.filter((c) => c.issue === num(uri, /issues\/(\d+)\/comments/))),
      )
      .post(/\/issues\/\d+\/comments$/)
      .reply(
        checked(201, (uri, body) => {
          const c: FakeComment = {
            id: ++this.#id,
            issue: num(uri, /issues\/(\d+)\/comments$/),
            body: (body as { body: string }).body,
            user: { login: `${this.slug}[bot]`, type: 'Bot' },
          };
          this.comments.push(c);
          return c;
        }),
      )
      .patch(/\/issues\/comments\/\d+$/)
      .reply(
        checked(200, (uri, body) => {
          const c = this.comments.find((x) => x.id === num(uri, /comments\/(\d+)$/));
          if (c) c.body = (body as { body: string }).body;
          return c ?? {};
        }),
      )
      .post(/\/issues\/\d+\/labels$/)
      .reply(
        checked(200, (uri, body) => {
          const issue = num(uri, /issues\/(\d+)\/labels$/);
          const p = this.pulls.get(issue);
          const opened = this.created.find((c) => c.number === issue);
          for (const l of (body as { labels: string[] }).labels) {
            if (p && !p.labels!.includes(l)) {
              p.labels!.push(l);
              this.#labeled(issue, l, { login: `${this.slug}[bot]`, type: 'Bot' });
            }
            if (opened && !(opened.labels ??= []).includes(l)) opened.labels.push(l);
          }
          return (p?.labels ?? []).map((name) => ({ name }));
        }),
      )
      .delete(/\/issues\/\d+\/labels\/.+$/)
      .reply(
        checked((uri) => {
          const p = this.pulls.get(num(uri, /issues\/(\d+)\/labels/));
          const name = decodeURIComponent(uri.split('/labels/')[1]!);
          if (!p || !p.labels!.includes(name)) return [404, { message: 'Label does not exist' }];
          p.labels = p.labels!.filter((l) => l !== name);
          return [200, []];
        }),
      )
      .post(/\/issues\/comments\/\d+\/reactions$/)
      .reply(
        checked(201, (uri, body) => {
          this.reactions.push({
            comment: num(uri, /comments\/(\d+)\/reactions/),
            content: (body as { content: string }).content,
          });
          return {};
        }),
      )
      .post(`${repoPath}/dispatches`)
      .reply(
        checked(204, (_u, body) => {
          this.dispatches.push(body as object);
          return '';
        }),
      )
      .post(/\/actions\/workflows\/[^/]+\/dispatches$/)
      .reply(
        checked(204, (uri, body) => {
          this.dispatches.push({
            workflow: /workflows\/([^/]+)\/dispatches/.exec(uri)![1],
            ...(body as object),
          });
          return '';
        }),
      )
      .get(/\/collaborators\/[^/]+\/permission$/)
      .reply(checked(200, (uri) => ({ permission: this.permissions.get(uri.split('/').at(-2)!) ?? 'none' })))
      .get(/\/orgs\/[^/]+\/teams\/[^/]+\/members/)
      .query(true)
      .reply(checked(200, []));
  }
}
