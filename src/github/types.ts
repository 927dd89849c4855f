// GitHub's objects as its REST API describes them (the types Octokit generates from GitHub's
// OpenAPI description), named once here so that nothing outside src/github/ imports the
// client's types.
import type { Context } from 'probot';

/** Probot's installation client: only src/github/ sees it. */
export type Octokit = Context['octokit'];
type Rest = Octokit['rest'];
type Data<F extends (...args: never[]) => Promise<{ data: unknown }>> = Awaited<ReturnType<F>>['data'];
type Params<F extends (...args: never[]) => unknown> = NonNullable<Parameters<F>[0]>;
type Item<T> = T extends (infer I)[] ? I : never;

export type PullRequest = Data<Rest['pulls']['get']>;
export type PullRequestListed = Item<Data<Rest['pulls']['list']>>;
export type PullRequestFile = Item<Data<Rest['pulls']['listFiles']>>;
export type PullRequestCreated = Pick<Data<Rest['pulls']['create']>, 'number' | 'html_url'>;
export type CheckRun = Item<Data<Rest['checks']['listForRef']>['check_runs']>;
export type CheckRunCreate = Omit<Params<Rest['checks']['create']>, 'owner' | 'repo' | 'headers' | 'request'>;
export type CheckRunUpdate = Omit<
  Params<Rest['checks']['update']>,
  'owner' | 'repo' | 'check_run_id' | 'headers' | 'request'
>;
export type IssueComment = Item<Data<Rest['issues']['listComments']>>;
export type TimelineEvent = Item<Data<Rest['issues']['listEventsForTimeline']>>;
export type Repository = Data<Rest['repos']['get']>;
export type RepositoryBranch = Data<Rest['repos']['getBranch']>;
export type BranchRule = Item<Data<Rest['repos']['getBranchRules']>>;
export type Commit = Item<Data<Rest['repos']['listCommits']>>;
export type CommitComparison = Data<Rest['repos']['compareCommitsWithBasehead']>;
export type InstalledRepository = Item<
  Data<Rest['apps']['listReposAccessibleToInstallation']>['repositories']
>;
