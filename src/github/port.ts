// The GitHub port: what the App asks of GitHub, one narrow interface per concern
// (docs/architecture.md, "The GitHub port"). Handlers and flows see these interfaces only;
// src/github/adapter.ts implements them with Probot's client (installation token, write
// pacing, conditional requests, rate-limit waits), and tests hand in a fake. Parameter and
// field names are GitHub's own REST names, so a call reads like GitHub's documentation and
// the test fakes check it against GitHub's published description.
import type {
  BranchRule,
  CheckRun,
  CheckRunCreate,
  CheckRunUpdate,
  Commit,
  CommitComparison,
  InstalledRepository,
  IssueComment,
  PullRequest,
  PullRequestCreated,
  PullRequestFile,
  PullRequestListed,
  Repository,
  RepositoryBranch,
  TimelineEvent,
} from './types.js';

/** A repository: its owner's login and its name. */
export interface RepoRef {
  owner: string;
  repo: string;
}

export interface PullRequests {
  get(ref: RepoRef, number: number): Promise<PullRequest>;
  /** The pull request with GitHub's time of the answer (its `Date`; undefined if none). */
  getAt(ref: RepoRef, number: number): Promise<{ pull: PullRequest; at: string | undefined }>;
  /** Every pull request that matches, all pages (at most `limit` when given, in GitHub's order). */
  list(
    ref: RepoRef,
    query: {
      state?: 'open' | 'closed' | 'all';
      head?: string;
      base?: string;
      sort?: 'created' | 'updated' | 'popularity' | 'long-running';
      direction?: 'asc' | 'desc';
    },
    limit?: number,
  ): Promise<PullRequestListed[]>;
  /** The files a pull request changes (all pages). */
  files(ref: RepoRef, number: number): Promise<PullRequestFile[]>;
  /** The pull requests GitHub associates with a commit (its head or merge commit). */
  ofCommit(ref: RepoRef, sha: string): Promise<PullRequestListed[]>;
  create(
    ref: RepoRef,
    pull: { title: string; head: string; base: string; body: string; maintainer_can_modify?: boolean },
  ): Promise<PullRequestCreated>;
  /** Merge at `sha` only (GitHub refuses with 409 when the head moved). */
  merge(
    ref: RepoRef,
    number: number,
    merge: { sha: string; merge_method?: 'merge' | 'squash' | 'rebase'; commit_title?: string },
  ): Promise<{ sha: string; merged: boolean }>;
}

export interface CheckRuns {
  /** The check runs on a commit (all pages); `filter: 'all'` every run, not the latest per name. */
  onCommit(
    ref: RepoRef,
    sha: string,
    query?: { filter?: 'latest' | 'all'; check_name?: string },
  ): Promise<CheckRun[]>;
  create(ref: RepoRef, run: CheckRunCreate): Promise<{ id: number }>;
  update(ref: RepoRef, id: number, run: CheckRunUpdate): Promise<void>;
}

export interface Comments {
  /** The comments of an issue or pull request (all pages). */
  list(ref: RepoRef, issue: number): Promise<IssueComment[]>;
  create(ref: RepoRef, issue: number, body: string): Promise<{ id: number }>;
  update(ref: RepoRef, id: number, body: string): Promise<void>;
  react(
    ref: RepoRef,
    commentId: number,
    content: '+1' | '-1' | 'eyes' | 'confused' | 'rocket',
  ): Promise<void>;
  /** The timeline of an issue or pull request (all pages): labels, force-pushes, ... */
  timeline(ref: RepoRef, issue: number): Promise<TimelineEvent[]>;
}

export interface Labels {
  add(ref: RepoRef, issue: number, labels: string[]): Promise<void>;
  /** Remove a label; one already gone is no error. */
  remove(ref: RepoRef, issue: number, label: string): Promise<void>;
}

/** A file of a tree to write: its text, or a blob GitHub already has; `sha: null` deletes it. */
export type TreeEntry = { path: string; mode: '100644' | '100755'; type: 'blob' } & (
  { content: string } | { sha: string | null }
);

/** Git objects and references written through the API (commits the App makes itself). */
export interface GitData {
  createTree(ref: RepoRef, tree: { base_tree: string; tree: TreeEntry[] }): Promise<{ sha: string }>;
  createCommit(
    ref: RepoRef,
    commit: { message: string; tree: string; parents: string[]; author?: { name: string; email: string } },
  ): Promise<{ sha: string }>;
  /** Create `refs/heads/<branch>` at `sha` (GitHub refuses with 422 when it exists). */
  createBranch(ref: RepoRef, branch: string, sha: string): Promise<void>;
  /** Move a branch to `sha`; without `force` only forwards (GitHub refuses with 422). */
  moveBranch(ref: RepoRef, branch: string, sha: string, force: boolean): Promise<void>;
}

export interface Repositories {
  get(ref: RepoRef): Promise<Repository>;
  branch(ref: RepoRef, name: string): Promise<RepositoryBranch>;
  /** A branch that may be gone (a contributor's, a queue's, the bot's own): undefined when it is. */
  findBranch(ref: RepoRef, name: string): Promise<RepositoryBranch | undefined>;
  /** Repository rules (rulesets) that apply to a branch. */
  branchRules(ref: RepoRef, name: string): Promise<BranchRule[]>;
  /** A file's text on a branch or commit; undefined when there is none. */
  fileText(ref: RepoRef, path: string, at: string): Promise<string | undefined>;
  /** Commits reachable from `sha`, newest first, one page of at most `limit`. */
  commits(ref: RepoRef, query: { sha: string; since?: string }, limit: number): Promise<Commit[]>;
  /** `base...head` with the files it changes (GitHub lists at most 300). */
  compare(ref: RepoRef, base: string, head: string): Promise<CommitComparison>;
  /** A `repository_dispatch` event, or a `workflow_dispatch` of one workflow on a branch. */
  dispatch(ref: RepoRef, eventType: string, payload: Record<string, unknown>): Promise<void>;
  dispatchWorkflow(
    ref: RepoRef,
    workflow: string,
    branch: string,
    inputs: Record<string, string>,
  ): Promise<void>;
}

export interface Permissions {
  /** `admin`, `write`, `read` or `none` (the classic permission of a collaborator). */
  ofCollaborator(ref: RepoRef, login: string): Promise<string>;
  /** Logins of an organisation team's members (all pages). */
  teamMembers(org: string, team: string): Promise<string[]>;
}

/**
 * GitHub's merge queue (GraphQL only: REST has no merge-queue API). A pull request is named
 * by its node id (`node_id` of the REST pull request). docs/merge-queue.md.
 */
export interface MergeQueue {
  /** Whether the pull request is in its base branch's merge queue. */
  isQueued(pullRequestId: string): Promise<boolean>;
  /** Queue the pull request; GitHub refuses when its head is no longer `expectedHeadOid`. */
  enqueue(pullRequestId: string, expectedHeadOid: string): Promise<void>;
  /** Take the pull request out of the queue (GitHub refuses one that is not in it). */
  dequeue(pullRequestId: string): Promise<void>;
}

/** The installation the port acts as. */
export interface Installation {
  /** An installation access token, for git over HTTPS. */
  token(): Promise<string>;
  /** The repositories the installation may use (all pages). */
  repositories(): Promise<InstalledRepository[]>;
}

/** Everything the App asks of GitHub, as one installation. */
export interface GitHub {
  pulls: PullRequests;
  checks: CheckRuns;
  comments: Comments;
  labels: Labels;
  git: GitData;
  repos: Repositories;
  permissions: Permissions;
  mergeQueue: MergeQueue;
  installation: Installation;
}
