// Reconciliation (issue: missed webhooks and crashes lose nothing): at start and then
// periodically, every open pull request whose head lacks a completed catalog-bot check
// run for a check that applies, and no checks job queued, running or being written, is
// queued for its checks, and every default branch whose head has no
// `catalog-bot/publish` run, or a failed one, while its config publishes is queued for
// publishing (so a registry that was down gets another try). The publish watchdog looks
// further back: merge commits of the default branch that changed a catalog and still have
// no successful `catalog-bot/publish` some time after the merge are queued again, counted
// for GET /metrics, and their check run says why (docs/publishing.md, "Watchdog"). The
// queue's keys make this safe to run on every replica at once.
import type { Probot } from 'probot';
import { probotGitHubApp } from './github/adapter.js';
import { matchesGlob } from './checks/changes.js';
import { parseRepoConfig } from './checks/config.js';
import { newerRun } from './handlers/check-runs.js';
import { resultsFor, unanswered } from './handlers/merge.js';
import { enqueueChecks, type PrHandlerOptions, type PrJob } from './handlers/pull-request.js';
import type { PublishJob } from './handlers/push.js';
import { PUBLISH_CHECK } from './publish/report.js';
import { checksSubject } from './queue.js';

export interface ReconcileSummary {
  repositories: number;
  checksQueued: number;
  /** Heads left alone because their checks were already queued, running or being written. */
  checksBusy: number;
  publishQueued: number;
  /** Merge commits the publish watchdog found without a successful publish in time. */
  publishOverdue: number;
}

/** When a merge without a successful publish is overdue, and how far back to look. */
export interface PublishWatchdog {
  /** A merge commit still unpublished this long after it was committed is overdue. */
  afterMs: number;
  /** Commits older than this are not looked at. */
  lookBackMs: number;
  /** At most this many commits of the default branch (first parents, newest first) per pass. */
  maxCommits: number;
}

/**
 * The watchdog's settings from CATALOG_BOT_PUBLISH_WATCHDOG_MINUTES (default 30; 0 or `off`
 * turns it off), CATALOG_BOT_PUBLISH_LOOKBACK_HOURS (default 24) and
 * CATALOG_BOT_PUBLISH_LOOKBACK_COMMITS (default 30).
 */
export function publishWatchdogFromEnv(env: NodeJS.ProcessEnv = process.env): PublishWatchdog | undefined {
  const number = (name: string, fallback: number): number => {
    const text = env[name];
    const value = text === undefined || text === '' ? fallback : Number(text);
    return Number.isFinite(value) && value >= 0 ? value : fallback;
  };
  if (env.CATALOG_BOT_PUBLISH_WATCHDOG_MINUTES === 'off') return undefined;
  const minutes = number('CATALOG_BOT_PUBLISH_WATCHDOG_MINUTES', 30);
  if (minutes === 0) return undefined;
  return {
    afterMs: minutes * 60_000,
    lookBackMs: number('CATALOG_BOT_PUBLISH_LOOKBACK_HOURS', 24) * 3_600_000,
    maxCommits: Math.max(1, Math.min(100, Math.floor(number('CATALOG_BOT_PUBLISH_LOOKBACK_COMMITS', 30)))),
  };
}

export interface ReconcileOptions extends PrHandlerOptions {
  /** The publish watchdog (default: publishWatchdogFromEnv()); `false` turns it off. */
  publishWatchdog?: PublishWatchdog | false;
}

/**
 * What earlier passes learnt for good, so a pass asks GitHub only about new commits:
 * commits published successfully, and commits that changed no catalog root. Bounded.
 */
const settled = new Set<string>();
const MAX_SETTLED = 20_000;
function settle(key: string): void {
  if (settled.size >= MAX_SETTLED) settled.delete(settled.values().next().value as string);
  settled.add(key);
}

/** One pass over every installation's repositories. Errors of one repository do not stop the rest. */
export async function reconcile(app: Probot, options: ReconcileOptions): Promise<ReconcileSummary> {
  const summary: ReconcileSummary = {
    repositories: 0,
    checksQueued: 0,
    checksBusy: 0,
    publishQueued: 0,
    publishOverdue: 0,
  };
  const watchdog =
    options.publishWatchdog === undefined ? publishWatchdogFromEnv() : options.publishWatchdog || undefined;
  const slug = options.appSlug ? await options.appSlug() : undefined;
  const gitHubApp = probotGitHubApp(app);
  for (const installation of await gitHubApp.installations()) {
    const github = await gitHubApp.as(installation.id);
    const repos = await github.installation.repositories();
    for (const repository of repos) {
      summary.repositories++;
      const ref = { owner: repository.owner.login, repo: repository.name };
      const pass: RepositoryPass = {
        app,
        options,
        github,
        ref,
        repository,
        installationId: installation.id,
        slug,
        summary,
        ...(watchdog ? { watchdog } : {}),
      };
      try {
        await queueUncheckedHeads(pass);
        await reconcilePublishing(pass);
      } catch (error) {
        app.log.error({ err: error, repo: repository.full_name }, 'reconciliation of a repository failed');
      }
    }
  }
  options.metrics?.publishOverdue.set(summary.publishOverdue);
  return summary;
}

type InstallationGitHub = Awaited<ReturnType<ReturnType<typeof probotGitHubApp>['as']>>;
type Repository = Awaited<ReturnType<InstallationGitHub['installation']['repositories']>>[number];
type Run = Awaited<ReturnType<InstallationGitHub['checks']['onCommit']>>[number];

/** One repository in a pass: what the steps below share. */
interface RepositoryPass {
  app: Probot;
  options: ReconcileOptions;
  github: InstallationGitHub;
  ref: { owner: string; repo: string };
  repository: Repository;
  installationId: number;
  slug: string | undefined;
  summary: ReconcileSummary;
  watchdog?: PublishWatchdog;
}

/**
 * This App's runs on a commit: every run, not GitHub's latest per name (two pull requests on
 * the same head each have their own record, and 'latest' would show one of them only:
 * re-checked forever).
 */
async function runsOfApp(pass: RepositoryPass, sha: string): Promise<Run[]> {
  const runs = await pass.github.checks.onCommit(pass.ref, sha, { filter: 'all' });
  return runs.filter((r) => pass.slug === undefined || r.app?.slug === pass.slug);
}

/** Queue the checks of every open pull request whose head is not answered and not busy. */
async function queueUncheckedHeads(pass: RepositoryPass): Promise<void> {
  const { app, options, github, ref, repository, summary } = pass;
  const pulls = await github.pulls.list(ref, { state: 'open' });
  for (const pr of pulls) {
    const runs = await runsOfApp(pass, pr.head.sha);
    // Complete: a run for every check that applies (the newest record of this App for
    // this pull request and base says which; docs/github-limits.md).
    if (unanswered(resultsFor(runs, pr.base.ref, pr.number)) === undefined) continue;
    // Queued, running or being written (by any replica): its results are on the way.
    if (await options.queue.busy(checksSubject(repository.id, pr.number, pr.head.sha))) {
      summary.checksBusy++;
      options.metrics?.reconciledHeads.inc({ outcome: 'busy' });
      continue;
    }
    const job: PrJob = {
      ref,
      number: pr.number,
      headSha: pr.head.sha,
      author: pr.user?.login ?? '',
      installationId: pass.installationId,
      cloneUrl: repository.clone_url,
      repoId: repository.id,
    };
    if (await enqueueChecks(app, options, job, `reconcile:${repository.id}:${pr.number}:${pr.head.sha}`)) {
      summary.checksQueued++;
      options.metrics?.reconciledHeads.inc({ outcome: 'queued' });
    }
  }
}

/** Publishing: only where the default branch's config asks for it; the head, then the watchdog's look back. */
async function reconcilePublishing(pass: RepositoryPass): Promise<void> {
  const { github, ref, repository } = pass;
  const branch = repository.default_branch;
  const config = await github.repos.fileText(ref, '.github/catalog-bot.yml', branch).catch(() => undefined);
  const { publish, catalogs } = parseRepoConfig(config).config;
  if (publish.images.length === 0 && !publish.dispatch) return;
  const head = await github.repos.branch(ref, branch);
  const { headLast, headQueued } = await publishHeadIfDue(pass, head, catalogs);
  if (pass.watchdog)
    await queueOverdueMerges(pass, pass.watchdog, head.commit.sha, headLast, headQueued, catalogs);
}

/** The newest `catalog-bot/publish` run of this App on a commit. */
async function lastPublish(pass: RepositoryPass, sha: string): Promise<Run | undefined> {
  let last: Run | undefined;
  for (const r of await runsOfApp(pass, sha))
    if (r.name === PUBLISH_CHECK && (!last || newerRun(r, last))) last = r;
  return last;
}

/** Queue a catalog publish of `sha`; `overdue` says why the watchdog asks for it again. */
async function queuePublish(pass: RepositoryPass, sha: string, last: Run | undefined, overdue?: string) {
  const { options, repository, summary } = pass;
  const job: PublishJob = {
    ref: pass.ref,
    repoId: repository.id,
    cloneUrl: repository.clone_url,
    repoUrl: repository.html_url,
    installationId: pass.installationId,
    branch: repository.default_branch,
    before: '',
    after: sha,
    // The catalog images this looks after; bundle images are pushed on the merge itself.
    only: 'catalogs',
    ...(overdue !== undefined ? { watchdog: overdue } : {}),
  };
  if (
    await options.queue.enqueue({
      key: `reconcile-publish:${repository.id}:${sha}:${last?.id ?? 'none'}`,
      group: `publish:${repository.id}`,
      kind: 'publish',
      data: job,
    })
  ) {
    summary.publishQueued++;
    if (overdue !== undefined) options.metrics?.publishWatchdogRetries.inc();
  }
}

/** The head: not published yet, or the last try failed (a registry down): try (again). */
async function publishHeadIfDue(
  pass: RepositoryPass,
  head: Awaited<ReturnType<InstallationGitHub['repos']['branch']>>,
  catalogs: string[],
): Promise<{ headLast: Run | undefined; headQueued: boolean }> {
  const { watchdog, repository } = pass;
  const headSha = head.commit.sha;
  const headLast = await lastPublish(pass, headSha);
  if (headLast && !(headLast.status === 'completed' && headLast.conclusion === 'failure'))
    return { headLast, headQueued: false };
  const committed = Date.parse(head.commit.commit?.committer?.date ?? '');
  // Overdue only when it is known to change a catalog: a failed run says so; without
  // one, its files do (the job itself decides what to publish either way).
  const headKey = `${repository.id}:${headSha}`;
  let changes = headLast !== undefined;
  if (!changes && watchdog && Number.isFinite(committed) && !settled.has(headKey)) {
    changes = await changesCatalog(pass, headSha, head.commit.parents?.[0]?.sha, catalogs);
    if (!changes) settle(headKey);
  }
  const overdue =
    watchdog && changes && Number.isFinite(committed)
      ? overdueReason(headLast, watchdog, committed)
      : undefined;
  if (overdue !== undefined) pass.summary.publishOverdue++;
  await queuePublish(pass, headSha, headLast, overdue);
  return { headLast, headQueued: true };
}

/** The watchdog: earlier merges (and a head whose run is stuck) within the look-back, queued again when overdue. */
async function queueOverdueMerges(
  pass: RepositoryPass,
  watchdog: PublishWatchdog,
  headSha: string,
  headLast: Run | undefined,
  headQueued: boolean,
  catalogs: string[],
): Promise<void> {
  for (const c of await firstParentsWithinLookBack(pass, watchdog, headSha)) {
    const key = `${pass.repository.id}:${c.sha}`;
    if (settled.has(key) || (c.sha === headSha && headQueued)) continue;
    const committed = Date.parse(c.commit.committer?.date ?? c.commit.author?.date ?? '');
    if (!Number.isFinite(committed) || Date.now() - committed < watchdog.afterMs) continue;
    const last = c.sha === headSha ? headLast : await lastPublish(pass, c.sha);
    if (last?.status === 'completed' && last.conclusion !== 'failure') {
      settle(key);
      continue;
    }
    if (!last && !(await changesCatalog(pass, c.sha, c.parents[0]?.sha, catalogs))) {
      settle(key);
      continue;
    }
    const overdue = overdueReason(last, watchdog, committed);
    if (overdue === undefined) continue;
    pass.summary.publishOverdue++;
    await queuePublish(pass, c.sha, last, overdue);
  }
}

/**
 * First parents from the head: the merges (or direct pushes) of the branch itself, within
 * the look-back. The list is by commit date, which a pull request's own commits carry as
 * their authors wrote them: many of them (or dated ahead) fill the page before the earlier
 * merges. A first parent not on the page is asked for (from it), so none is hidden; at most
 * one request per merge looked at.
 */
async function firstParentsWithinLookBack(pass: RepositoryPass, watchdog: PublishWatchdog, headSha: string) {
  const { github, ref, repository } = pass;
  const since = new Date(Date.now() - watchdog.lookBackMs).toISOString();
  const page = async (sha: string) => github.repos.commits(ref, { sha, since }, watchdog.maxCommits);
  const listed = await page(repository.default_branch);
  const bySha = new Map(listed.map((c) => [c.sha, c]));
  const merges: typeof listed = [];
  for (let c = bySha.get(headSha); c && merges.length < watchdog.maxCommits;) {
    merges.push(c);
    const parent = c.parents[0]?.sha;
    if (parent !== undefined && !bySha.has(parent) && merges.length < watchdog.maxCommits)
      for (const more of await page(parent)) bySha.set(more.sha, more);
    c = parent !== undefined ? bySha.get(parent) : undefined;
  }
  return merges;
}

/**
 * Whether a commit changed a file under a catalog root (asked once; unsure means yes).
 * A commit without a parent (a repository's first) is no merge.
 */
async function changesCatalog(
  pass: RepositoryPass,
  sha: string,
  parent: string | undefined,
  globs: string[],
): Promise<boolean> {
  if (parent === undefined) return false;
  try {
    const data = await pass.github.repos.compare(pass.ref, parent, sha);
    const files = data.files ?? [];
    // GitHub lists at most 300 files: more may hide a catalog change, so let the job decide.
    if (files.length >= 300) return true;
    return files.some((f) => {
      const parts = f.filename.split('/');
      return parts.some((_, i) => i > 0 && globs.some((g) => matchesGlob(parts.slice(0, i).join('/'), g)));
    });
  } catch {
    return true;
  }
}

/** Reconcile now and then every `everyMs`; returns a function that stops it. */
export function startReconciler(app: Probot, options: ReconcileOptions, everyMs: number): () => void {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const pass = async () => {
    try {
      const summary = await reconcile(app, options);
      app.log.info(summary, 'reconciled');
    } catch (error) {
      app.log.error({ err: error }, 'reconciliation failed');
    }
    if (!stopped) timer = setTimeout(() => void pass(), everyMs).unref();
  };
  timer = setTimeout(() => void pass(), 0).unref();
  return () => {
    stopped = true;
    if (timer) clearTimeout(timer);
  };
}

/**
 * Why a merge commit is overdue, or undefined when it is not yet: no publish run, a failed
 * one, or one still in progress, longer than the watchdog allows after the commit.
 */
function overdueReason(
  last: { status: string; conclusion: string | null; started_at?: string | null } | undefined,
  watchdog: PublishWatchdog,
  committed: number,
): string | undefined {
  const since = Date.now() - committed;
  if (since < watchdog.afterMs) return undefined;
  const minutes = Math.round(since / 60_000);
  const age = ` ${minutes} minute${minutes === 1 ? '' : 's'} after the merge`;
  if (!last) return `no ${PUBLISH_CHECK} run${age} (the push event was missed or lost)`;
  if (last.status === 'completed')
    return `the last ${PUBLISH_CHECK} run failed and nothing has published this merge${age}`;
  const started = Date.parse(last.started_at ?? '');
  if (Number.isFinite(started) && Date.now() - started < watchdog.afterMs) return undefined;
  return `the last ${PUBLISH_CHECK} run has not finished${age} (its job was lost)`;
}
