// GitHub's merge queue as GitHub documents it, for the GitHub fakes (docs/merge-queue.md):
// - a branch requires it through a ruleset's `merge_queue` rule (GET .../rules/branches/x);
// - the REST merge of a pull request into it is refused: 405 "changes must be made through
//   the merge queue";
// - GraphQL `enqueuePullRequest(input: {pullRequestId, expectedHeadOid})` queues a pull
//   request (refused when the head moved), `dequeuePullRequest(input: {id})` takes it out,
//   `PullRequest.isInMergeQueue` says whether it is in;
// - each queued pull request gets a merge group: a queue branch
//   `gh-readonly-queue/<base>/pr-<n>-<sha>` (sha: the base commit it was built on) at a
//   commit that merges the pull request into the group ahead of it (or the base), one
//   "Merge pull request #n from ..." merge commit per pull request, and a
//   `merge_group.checks_requested` delivery (built from @octokit/webhooks-examples);
// - when every required check on the group at the front of the queue is green, the base
//   branch is fast-forwarded to its head (a `push` delivery) and the group is destroyed
//   (`merged`); when one fails (and every group ahead of it passed), its pull request leaves
//   the queue (`dequeued`) and every group behind it is destroyed (`invalidated`) and built
//   again without it. A `dequeuePullRequest` does the same.
// One model, used by the fakes: they answer the HTTP side, this keeps the queue.
import { webhookExample, type Payload } from './github.js';
import { githubMergeCommit } from './github-model.js';

/** What the model needs of the fake it lives in. */
export interface QueueHost {
  /** git in the fake's bare repository. */
  git(...args: string[]): string;
  /** An open or merged pull request of the fake. */
  pull(number: number): { head: string; headRef: string; title: string; state: string } | undefined;
  /** GitHub records the pull request as merged by `commit`. */
  merged(number: number, commit: string): void;
  /** The latest run of each name on a commit (the App's check runs). */
  latestRuns(sha: string): Map<string, { status: string; conclusion: string | null }>;
  /** The delivery's repository (as a webhook carries it). */
  repository(): Payload;
}

export interface QueueGroup {
  number: number;
  /** The queue branch (without refs/heads/). */
  branch: string;
  head: string;
  /** The base branch's commit the group was built on. */
  base: string;
}

export interface QueueEvent {
  event: 'merge_group' | 'push';
  action?: string;
  reason?: string;
  head: string;
  number?: number;
}

const numberOfNode = (id: unknown) => {
  const m = /^PR_kwDOfake(\d+)$/.exec(String(id));
  return m ? Number(m[1]) : undefined;
};

export class MergeQueueModel {
  /** Queued pull requests in order, with their current group. */
  readonly entries: QueueGroup[] = [];
  /** Every delivery made, in order. */
  readonly events: QueueEvent[] = [];
  /** Pull requests the queue merged, in order. */
  readonly mergedPulls: number[] = [];
  /** Pull requests that left the queue unmerged, in order. */
  readonly dequeued: number[] = [];
  /** Sends a delivery to the App (set by the test once its server runs). */
  deliver: (event: string, payload: Payload, id: string) => Promise<unknown> = async () => undefined;
  #chain: Promise<unknown> = Promise.resolve();
  #pending = 0;
  #delivery = 0;

  constructor(
    private readonly host: QueueHost,
    readonly base: string,
    /** The check names branch protection requires on the queue's groups. */
    readonly required: readonly string[],
  ) {}

  /** Whether every delivery made so far has been answered. */
  get idle(): boolean {
    return this.#pending === 0;
  }

  /** Resolves when the deliveries made so far are answered. */
  delivered(): Promise<unknown> {
    return this.#chain;
  }

  // --- GraphQL ---

  /** A GraphQL request (`POST /graphql`): [status, body] as GitHub answers. */
  graphql(body: { query?: string; variables?: Record<string, unknown> }): [number, unknown] {
    const query = body.query ?? '';
    const vars = body.variables ?? {};
    const error = (message: string, type = 'UNPROCESSABLE') =>
      [200, { data: null, errors: [{ type, message }] }] as [number, unknown];
    if (/\benqueuePullRequest\b/.test(query)) {
      const number = numberOfNode(vars.pullRequestId);
      const pull = number === undefined ? undefined : this.host.pull(number);
      if (number === undefined || !pull)
        return error(
          `Could not resolve to a node with the global id of '${String(vars.pullRequestId)}'`,
          'NOT_FOUND',
        );
      if (pull.state !== 'open') return error('Pull request is not open');
      if (vars.expectedHeadOid !== undefined && vars.expectedHeadOid !== pull.head)
        return error(
          `Expected head oid ${String(vars.expectedHeadOid)} does not match the pull request's head ${pull.head}`,
        );
      if (!this.entries.some((e) => e.number === number)) {
        const built = this.#build(number, this.entries.at(-1)?.head ?? this.#tip());
        if (!built) return error('Pull request has merge conflicts with the queue');
        this.entries.push(built);
        this.#checksRequested(built);
      }
      return [200, { data: { enqueuePullRequest: { mergeQueueEntry: { id: `MQE_${number}` } } } }];
    }
    if (/\bdequeuePullRequest\b/.test(query)) {
      const number = numberOfNode(vars.pullRequestId);
      const at = this.entries.findIndex((e) => e.number === number);
      if (at < 0) return error('Pull request is not in the merge queue');
      this.#remove(at, 'dequeued');
      return [200, { data: { dequeuePullRequest: { mergeQueueEntry: { id: `MQE_${number}` } } } }];
    }
    if (/\bisInMergeQueue\b/.test(query)) {
      const number = numberOfNode(vars.pullRequestId);
      if (number === undefined || !this.host.pull(number)) return [200, { data: { node: null } }];
      return [200, { data: { node: { isInMergeQueue: this.entries.some((e) => e.number === number) } } }];
    }
    return error(`the fake does not answer this query: ${query.slice(0, 200)}`);
  }

  // --- the queue ---

  /** Look at the groups' required checks: merge the front while green, drop a failed group. */
  evaluate(): void {
    for (let i = 0; i < this.entries.length;) {
      const group = this.entries[i]!;
      const state = this.#state(group.head);
      if (state === 'pending') return;
      if (state === 'failed') {
        this.#remove(i, 'dequeued');
        continue;
      }
      if (i > 0) {
        i++;
        continue;
      }
      // The front group is green: the base becomes its head.
      this.host.git('update-ref', `refs/heads/${this.base}`, group.head);
      this.#deleteBranch(group.branch);
      this.entries.shift();
      this.#mergedUpTo(group);
      this.#send('merge_group', this.#groupPayload(group, 'destroyed', 'merged'), group);
      this.#send('push', this.#pushPayload(group), group);
    }
  }

  /** The base branch moved outside the queue: every group is built again on it. */
  baseMoved(): void {
    this.#rebuildFrom(0);
  }

  /** The pull requests of the group merged into the base, each with its own merge commit. */
  #mergedUpTo(group: QueueGroup): void {
    const log = this.host.git('rev-list', '--first-parent', '--format=%s', `${group.base}..${group.head}`);
    const subjects = log.split('\n').filter((l) => !l.startsWith('commit '));
    const commits = log
      .split('\n')
      .filter((l) => l.startsWith('commit '))
      .map((l) => l.slice(7));
    for (const [i, subject] of subjects.entries()) {
      const number = Number(/#(\d+)/.exec(subject)?.[1]);
      if (this.mergedPulls.includes(number)) continue;
      this.mergedPulls.push(number);
      this.host.merged(number, commits[i]!);
    }
  }

  #tip(): string {
    return this.host.git('rev-parse', `refs/heads/${this.base}`);
  }

  /** 'passed' when every required check's latest run is green, 'failed' when one is not. */
  #state(head: string): 'pending' | 'passed' | 'failed' {
    const runs = this.host.latestRuns(head);
    let pending = false;
    for (const name of this.required) {
      const run = runs.get(name);
      if (!run || run.status !== 'completed') pending = true;
      else if (!['success', 'neutral', 'skipped'].includes(run.conclusion ?? '')) return 'failed';
    }
    return pending ? 'pending' : 'passed';
  }

  /** Pull request `number` merged onto `parent` as GitHub's merge commit; undefined on a conflict. */
  #build(number: number, parent: string): QueueGroup | undefined {
    const pull = this.host.pull(number)!;
    const message = `Merge pull request #${number} from Codertocat/${pull.headRef}\n\n${pull.title}`;
    let head: string;
    try {
      head = githubMergeCommit((...args) => this.host.git(...args), parent, pull.head, message);
    } catch {
      return undefined; // they conflict
    }
    const base = this.#tip();
    const branch = `gh-readonly-queue/${this.base}/pr-${number}-${base}`;
    this.host.git('update-ref', `refs/heads/${branch}`, head);
    return { number, branch, head, base };
  }

  /** Take entry `at` out (`reason` for its group), and build every group behind it again. */
  #remove(at: number, reason: 'dequeued'): void {
    const [gone] = this.entries.splice(at, 1);
    this.dequeued.push(gone!.number);
    this.#deleteBranch(gone!.branch);
    this.#send('merge_group', this.#groupPayload(gone!, 'destroyed', reason), gone!);
    this.#rebuildFrom(at);
  }

  #rebuildFrom(at: number): void {
    const behind = this.entries.splice(at);
    for (const old of behind) {
      this.#deleteBranch(old.branch);
      this.#send('merge_group', this.#groupPayload(old, 'destroyed', 'invalidated'), old);
    }
    for (const old of behind) {
      const built = this.#build(old.number, this.entries.at(-1)?.head ?? this.#tip());
      if (!built) {
        this.dequeued.push(old.number);
        continue;
      }
      this.entries.push(built);
      this.#checksRequested(built);
    }
  }

  /** GitHub deletes a destroyed group's queue branch (one already gone is no matter). */
  #deleteBranch(branch: string): void {
    try {
      this.host.git('update-ref', '-d', `refs/heads/${branch}`);
    } catch {
      // already gone
    }
  }

  #checksRequested(group: QueueGroup): void {
    this.#send('merge_group', this.#groupPayload(group, 'checks_requested'), group);
  }

  #groupPayload(group: QueueGroup, action: 'checks_requested' | 'destroyed', reason?: string): Payload {
    const payload = webhookExample('merge_group', 'checks_requested');
    payload.action = action;
    if (reason) payload.reason = reason;
    payload.installation = { id: 4242 };
    payload.repository = this.host.repository();
    const [sha, ...message] = [group.head, this.host.git('log', '-1', '--format=%B', group.head)];
    Object.assign(payload.merge_group, {
      head_sha: sha,
      head_ref: `refs/heads/${group.branch}`,
      base_sha: group.base,
      base_ref: `refs/heads/${this.base}`,
    });
    Object.assign(payload.merge_group.head_commit, {
      id: sha,
      tree_id: this.host.git('rev-parse', `${sha}^{tree}`),
      message: message.join('\n').trim(),
    });
    return payload;
  }

  #pushPayload(group: QueueGroup): Payload {
    const payload = webhookExample('push');
    payload.installation = { id: 4242 };
    payload.repository = { ...payload.repository, ...this.host.repository(), default_branch: this.base };
    Object.assign(payload, {
      ref: `refs/heads/${this.base}`,
      before: group.base,
      after: group.head,
      created: false,
      deleted: false,
      forced: false,
    });
    return payload;
  }

  #send(event: 'merge_group' | 'push', payload: Payload, group: QueueGroup): void {
    this.events.push({
      event,
      head: group.head,
      number: group.number,
      ...(typeof payload.action === 'string' && event === 'merge_group' ? { action: payload.action } : {}),
      ...(typeof payload.reason === 'string' ? { reason: payload.reason } : {}),
    });
    const id = `mq-${++this.#delivery}`;
    this.#pending++;
    // In order, one at a time, as GitHub's deliveries of one repository come.
    this.#chain = this.#chain
      .then(() => this.deliver(event, payload, id))
      .catch(() => undefined)
      .finally(() => this.#pending--);
  }
}
