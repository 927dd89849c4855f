// The nock skin of the one GitHub fake (github-model.ts): every request this process sends
// to https://api.github.com is answered by the model, in process. One repository, its
// state under the names the App tests read (pull requests, check runs, comments, labels,
// merges); the git side is a real bare repository. The only test file that imports nock.
import nock from 'nock';
import { webhookExample } from './github.js';
import {
  GitHubModel,
  mergeQueueRule,
  ModelRecords,
  type ModelCheckRun,
  type ModelComment,
  type ModelRepo,
  type PullInput,
} from './github-model.js';
import { MergeQueueModel } from './merge-queue.js';

export const API = 'https://api.github.com';

export type FakePull = PullInput;
export type FakeCheckRun = ModelCheckRun;
export type FakeComment = ModelComment;

/** Close the network but for 127.0.0.1 (a test's own servers), until openNetwork(). */
export function closeNetwork(): void {
  nock.disableNetConnect();
  nock.enableNetConnect('127.0.0.1');
}

/** Take every fake's interceptors away and open the network again. */
export function openNetwork(): void {
  nock.cleanAll();
  nock.enableNetConnect();
}

/**
 * Answer every request this process sends to api.github.com from `model` (with GitHub's
 * `Date` header, on the model's clock), until openNetwork().
 */
export function answerFromModel(model: GitHubModel): void {
  const scope = nock(API)
    .defaultReplyHeaders({ date: () => model.now().toUTCString() })
    .persist();
  for (const method of ['GET', 'POST', 'PATCH', 'PUT', 'DELETE'])
    scope
      .intercept(/^\//, method)
      .query(true)
      .reply(function (uri, body) {
        const url = new URL(uri, API);
        return model.answer({
          method,
          path: url.pathname,
          search: url.search,
          body: body === '' ? undefined : body,
          headers: this.req.headers,
        }) as unknown as nock.ReplyFnResult;
      });
}

export class FakeGitHub extends ModelRecords {
  readonly model: GitHubModel;
  readonly #repo: ModelRepo;
  // The repository's records: the model's own collections, which it never replaces.
  readonly pulls: ModelRepo['pulls'];
  /** login -> admin | write | read | none */
  readonly permissions: ModelRepo['permissions'];
  readonly timeline: ModelRepo['timeline'];
  readonly protectedBranches: ModelRepo['protectedBranches'];
  readonly branchRules: ModelRepo['branchRules'];
  readonly created: ModelRepo['created'];
  readonly refUpdates: ModelRepo['refUpdates'];
  readonly dispatches: ModelRepo['dispatches'];

  constructor(
    readonly owner: string,
    readonly repo: string,
    /** The bare repository: branch heads come from it. */
    readonly bare: string,
    readonly slug = 'catalog-bot',
  ) {
    super();
    this.model = new GitHubModel({ slug, account: owner });
    // A merge here moves nothing unless the pull request says how (onMerge).
    this.#repo = this.model.addRepo({ owner, name: repo, id: 186853002, bare, realMerges: false });
    this.pulls = this.#repo.pulls;
    this.permissions = this.#repo.permissions;
    this.timeline = this.#repo.timeline;
    this.protectedBranches = this.#repo.protectedBranches;
    this.branchRules = this.#repo.branchRules;
    this.created = this.#repo.created;
    this.refUpdates = this.#repo.refUpdates;
    this.dispatches = this.#repo.dispatches;
    answerFromModel(this.model);
  }

  /** The merges GitHub made: which pull request, the head asked for, the method. */
  get merges(): { number: number; sha?: string; method?: string }[] {
    return this.model.merges.map((m) => ({ number: m.number, sha: m.sha, method: m.method }));
  }
  get mergeQueue(): MergeQueueModel | undefined {
    return this.#repo.mergeQueue;
  }
  get onBranch() {
    return this.#repo.onBranch;
  }
  set onBranch(f: ((name: string) => void) | undefined) {
    this.#repo.onBranch = f;
  }
  get registerCreatedPulls(): boolean {
    return this.#repo.registerCreatedPulls;
  }
  set registerCreatedPulls(on: boolean) {
    this.#repo.registerCreatedPulls = on;
  }
  get isPrivate(): boolean {
    return this.#repo.isPrivate;
  }
  set isPrivate(on: boolean) {
    this.#repo.isPrivate = on;
  }

  /** GitHub's time now. */
  now(): Date {
    return this.model.now();
  }

  /** Let time pass on GitHub's clock. */
  tick(ms = 1000): Date {
    return this.model.tick(ms);
  }

  /** The author force-pushes `sha` as the pull request's head: GitHub's timeline records it. */
  forcePush(number: number, sha: string): void {
    this.model.moveHead(this.#repo, this.pulls.get(number)!, sha);
    this.#repo.timeline.push({
      issue: number,
      id: this.model.nextId(),
      event: 'head_ref_force_pushed',
      created_at: this.now().toISOString(),
    });
  }

  /** What GitHub does on a merge: `head` merged into `base` (a merge commit); returns it. */
  mergeForReal(base: string, head: string): string {
    return this.model.mergeForReal(this.#repo, base, head);
  }

  /** Someone adds a label in GitHub's web page (not through the App): the timeline records who. */
  labelByHand(number: number, label: string, login: string): void {
    const p = this.pulls.get(number)!;
    if (!p.labels.includes(label)) p.labels.push(label);
    this.model.labeled(this.#repo, number, label, { login, type: 'User' });
  }

  /**
   * `branch` requires GitHub's merge queue (a ruleset's `merge_queue` rule): the REST merge
   * into it is refused, and the queue (merge-queue.ts) merges once `required` checks are green.
   */
  requireMergeQueue(branch: string, required: readonly string[]): MergeQueueModel {
    const repo = this.#repo;
    repo.branchRules.set(branch, [
      ...(repo.branchRules.get(branch) ?? []),
      mergeQueueRule(this.owner, this.repo),
    ]);
    repo.mergeQueue = new MergeQueueModel(
      {
        git: (...args) => this.model.git(repo, ...args),
        pull: (number) => {
          const p = this.pulls.get(number);
          return (
            p && {
              head: p.head,
              headRef: p.headRef ?? `pr-${p.number}`,
              title: `p${p.number}`,
              state: p.state,
            }
          );
        },
        merged: (number, commit) => {
          const p = this.pulls.get(number);
          if (p) Object.assign(p, { state: 'closed', merged: true, mergeCommit: commit });
        },
        latestRuns: (sha) => this.model.latestRuns(`${this.owner}/${this.repo}`, sha),
        repository: () => {
          const repository = webhookExample('pull_request', 'opened').repository;
          repository.clone_url = this.bare;
          return repository;
        },
      },
      branch,
      required,
    );
    return repo.mergeQueue;
  }

  addPull(pull: FakePull): void {
    this.model.addPull(this.#repo, pull);
  }

  runsFor(sha: string, name?: string): FakeCheckRun[] {
    return this.model.runsFor(`${this.owner}/${this.repo}`, sha, name);
  }

  labelsOf(number: number): string[] {
    return this.pulls.get(number)?.labels ?? [];
  }

  /** Comments by the bot on a pull request (its replies and its status comment). */
  botComments(number: number): FakeComment[] {
    return this.comments.filter((c) => c.issue === number && c.user.type === 'Bot');
  }
}
