// Repositories added to or removed from an installation. Added: the open pull requests
// there get checked, so a new installation does not wait for the next push. Removed: the
// repository's mirror is deleted (the app may no longer read it).
import type { Context } from 'probot';
import { removeMirror } from '../git/mirror.js';
import type { PullTarget } from './session.js';
import { enqueueChecks, type JobContext, type PrHandlerOptions, type PrJob } from './pull-request.js';

export const INSTALLATION_EVENTS = [
  'installation.created',
  'installation_repositories.added',
  'installation_repositories.removed',
] as const;

/** At most this many open pull requests are checked per added repository (newest first). */
export const MAX_PULLS_PER_REPOSITORY = 300;

type InstallationContext =
  | Context<'installation.created'>
  | Context<'installation_repositories.added'>
  | Context<'installation_repositories.removed'>;

interface RepoSummary {
  id: number;
  full_name: string;
}

export function installationHandler(
  options: PrHandlerOptions,
): (context: InstallationContext) => Promise<void> {
  return async (context) => {
    const { payload } = context;
    const installationId = payload.installation.id;
    if ('repositories_removed' in payload && payload.action === 'removed') {
      for (const repo of payload.repositories_removed as RepoSummary[]) {
        await options.queue.enqueue({
          key: `delivery:${context.id}:${repo.id}`,
          group: `repo:${repo.id}`,
          kind: 'remove-mirror',
          data: { repoId: repo.id },
        });
      }
      return;
    }
    const added = ('repositories_added' in payload ? payload.repositories_added : payload.repositories) ?? [];
    for (const repo of added as RepoSummary[]) {
      const data: OpenPullsJob = { repo: { id: repo.id, full_name: repo.full_name }, installationId };
      await options.queue.enqueue({
        key: `delivery:${context.id}:${repo.id}`,
        group: `repo:${repo.id}`,
        kind: 'check-open-pulls',
        data,
      });
    }
  };
}

export interface OpenPullsJob {
  repo: RepoSummary;
  installationId: number;
}

/** Remove a repository's mirror (queued behind its other jobs). */
export async function removeMirrorJob(options: PrHandlerOptions, data: { repoId: number }): Promise<void> {
  await removeMirror(data.repoId, options.workDir);
}

/** Queue the checks of every open pull request of a repository. Never throws. */
export async function checkOpenPullsJob(
  context: JobContext,
  options: PrHandlerOptions,
  { repo, installationId }: OpenPullsJob,
  key: string,
): Promise<void> {
  const [owner, name] = repo.full_name.split('/') as [string, string];
  try {
    const pulls = await context.github.pulls.list(
      { owner, repo: name },
      { state: 'open', sort: 'created', direction: 'desc' },
      MAX_PULLS_PER_REPOSITORY,
    );
    for (const pr of pulls) {
      // The base repository's URL: a fork's head is fetched through refs/pull/N/head.
      const target: PullTarget = {
        ref: { owner, repo: name },
        number: pr.number,
        cloneUrl: pr.base.repo.clone_url,
        repoId: repo.id,
        installationId,
      };
      const job: PrJob = { ...target, headSha: pr.head.sha, author: pr.user?.login ?? '' };
      await enqueueChecks(context, options, job, `${key}:${pr.number}`);
    }
    context.log.info({ repo: repo.full_name, pulls: pulls.length }, 'checking open pull requests');
  } catch (error) {
    context.log.error({ err: error, repo: repo.full_name }, 'could not list open pull requests');
  }
}
