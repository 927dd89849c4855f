// Reconciliation (issue: missed webhooks and crashes lose nothing): at start and then
// periodically, every open pull request whose head lacks a completed catalog-bot check
// run for a check that applies is queued for its checks, and every default branch whose head has no
// `catalog-bot/publish` run, or a failed one, while its config publishes is queued for
// publishing (so a registry that was down gets another try). The
// queue's keys make this safe to run on every replica at once.
import type { Probot } from 'probot';
import { parseRepoConfig } from './checks/config.js';
import { newerRun } from './handlers/check-runs.js';
import { resultsFor, unanswered } from './handlers/merge.js';
import { enqueueChecks, type PrHandlerOptions, type PrJob } from './handlers/pull-request.js';
import type { PublishJob } from './handlers/push.js';
import { PUBLISH_CHECK } from './publish/report.js';

export interface ReconcileSummary {
  repositories: number;
  checksQueued: number;
  publishQueued: number;
}

/** One pass over every installation's repositories. Errors of one repository do not stop the rest. */
export async function reconcile(app: Probot, options: PrHandlerOptions): Promise<ReconcileSummary> {
  const summary: ReconcileSummary = { repositories: 0, checksQueued: 0, publishQueued: 0 };
  const slug = options.appSlug ? await options.appSlug() : undefined;
  const appOctokit = await app.auth();
  const installations = await appOctokit.paginate(appOctokit.rest.apps.listInstallations, { per_page: 100 });
  for (const installation of installations) {
    const octokit = await app.auth(installation.id);
    const repos = await octokit.paginate(octokit.rest.apps.listReposAccessibleToInstallation, {
      per_page: 100,
    });
    for (const repository of repos) {
      summary.repositories++;
      const ref = { owner: repository.owner.login, repo: repository.name };
      try {
        // Every run, not GitHub's latest per name: two pull requests on the same head each have
        // their own record, and 'latest' would show one of them only (re-checked forever).
        const ours = async (sha: string) => {
          const runs = await octokit.paginate(octokit.rest.checks.listForRef, {
            ...ref,
            ref: sha,
            filter: 'all',
            per_page: 100,
          });
          return runs.filter((r) => slug === undefined || r.app?.slug === slug);
        };
        const pulls = await octokit.paginate(octokit.rest.pulls.list, {
          ...ref,
          state: 'open',
          per_page: 100,
        });
        for (const pr of pulls) {
          const runs = await ours(pr.head.sha);
          // Complete: a run for every check that applies (the newest record of this App for
          // this pull request and base says which; docs/github-limits.md).
          if (unanswered(resultsFor(runs, pr.base.ref, pr.number)) === undefined) continue;
          const job: PrJob = {
            ref,
            number: pr.number,
            headSha: pr.head.sha,
            author: pr.user?.login ?? '',
            installationId: installation.id,
            cloneUrl: repository.clone_url,
            repoId: repository.id,
          };
          if (
            await enqueueChecks(app, options, job, `reconcile:${repository.id}:${pr.number}:${pr.head.sha}`)
          )
            summary.checksQueued++;
        }

        // Publishing: only where the default branch's config asks for it.
        const branch = repository.default_branch;
        const config = await octokit.rest.repos
          .getContent({ ...ref, path: '.github/catalog-bot.yml', ref: branch })
          .then(({ data }) =>
            'content' in data && typeof data.content === 'string'
              ? Buffer.from(data.content, 'base64').toString('utf8')
              : undefined,
          )
          .catch(() => undefined);
        const { publish } = parseRepoConfig(config).config;
        if (publish.images.length === 0 && !publish.dispatch) continue;
        const { data: head } = await octokit.rest.repos.getBranch({ ...ref, branch });
        // Not published yet, or the last try failed (a registry down): try (again).
        let last: Awaited<ReturnType<typeof ours>>[number] | undefined;
        for (const r of await ours(head.commit.sha))
          if (r.name === PUBLISH_CHECK && (!last || newerRun(r, last))) last = r;
        if (last && (last.status !== 'completed' || last.conclusion !== 'failure')) continue;
        const job: PublishJob = {
          ref,
          repoId: repository.id,
          cloneUrl: repository.clone_url,
          repoUrl: repository.html_url,
          installationId: installation.id,
          branch,
          before: '',
          after: head.commit.sha,
          // The catalog images this looks after; bundle images are pushed on the merge itself.
          only: 'catalogs',
        };
        if (
          await options.queue.enqueue({
            key: `reconcile-publish:${repository.id}:${head.commit.sha}:${last?.id ?? 'none'}`,
            group: `publish:${repository.id}`,
            kind: 'publish',
            data: job,
          })
        )
          summary.publishQueued++;
      } catch (error) {
        app.log.error({ err: error, repo: repository.full_name }, 'reconciliation of a repository failed');
      }
    }
  }
  return summary;
}

/** Reconcile now and then every `everyMs`; returns a function that stops it. */
export function startReconciler(app: Probot, options: PrHandlerOptions, everyMs: number): () => void {
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
