// A push to the default branch (a merge): build and push the image of every changed
// catalog root to every configured tag, or trigger a workflow that builds elsewhere, and
// report `catalog-bot/publish` on the commit. Publishing in one repository is serialized
// (its own queue group), and a moving tag (one without {sha}) is only written while the
// commit is still the branch head: an older job never overwrites a newer tag.
import type { Context } from 'probot';
import { GitTreeSource, validateCatalog } from '../catalog/index.js';
import { runGit } from '../catalog/fbc/source.js';
import { catalogRoots, changedFiles, readRepoConfig } from '../checks/changes.js';
import type { RepoConfig } from '../checks/config.js';
import { revParse } from '../git-mirror.js';
import { commitTime, publishCatalog } from '../publish/publish.js';
import { credentialHostsOf } from '../publish/registry.js';
import { publishCheck, PUBLISH_CHECK, releaseComment, type RootPublication } from '../publish/report.js';
import { completeCheckRun, createCheckRuns } from './check-runs.js';
import { mergedPullOf, writeReleaseComment } from './release-comment.js';
import { openSession, repoTarget, type RepoTarget } from './session.js';
import type { JobContext, PrHandlerOptions } from './pull-request.js';

export const PUSH_EVENTS = ['push'] as const;

export interface PublishJob extends RepoTarget {
  /** For the OCI source annotation. */
  repoUrl: string;
  branch: string;
  /**
   * The branch's previous commit (all zeros for a new branch), or empty for "the pushed
   * commit's first parent" (a re-run of the check).
   */
  before: string;
  after: string;
  /**
   * Set when the reconciliation's watchdog queued this job: why the commit was overdue. The
   * publish check run's summary says so (docs/publishing.md, "Watchdog").
   */
  watchdog?: string;
}

const ZERO = /^0+$/;

export function pushHandler(options: PrHandlerOptions): (context: Context<'push'>) => Promise<void> {
  return async (context) => {
    const { payload } = context;
    const branch = payload.repository.default_branch;
    if (payload.ref !== `refs/heads/${branch}` || payload.deleted || ZERO.test(payload.after)) return;
    const job: PublishJob = {
      ...repoTarget(payload),
      repoUrl: payload.repository.html_url,
      branch,
      before: payload.before,
      after: payload.after,
    };
    await options.queue.enqueue({
      key: `delivery:${context.id}`,
      group: `publish:${job.repoId}`,
      kind: 'publish',
      data: job,
    });
  };
}

/** The catalog roots a push changed, read from the pushed commit's config. */
async function changedRoots(dir: string, job: PublishJob, config: RepoConfig): Promise<string[]> {
  const roots = await catalogRoots(dir, job.after, config.catalogs);
  const before = job.before === '' ? await revParse(dir, `${job.after}^`).catch(() => '') : job.before;
  if (before === '' || ZERO.test(before)) return roots;
  const files = await changedFiles(dir, before, job.after);
  return roots.filter((root) => files.some((f) => f.startsWith(root + '/')));
}

/** The queued work for one push. Never throws: what goes wrong is reported on the check run. */
export async function publishJob(
  context: JobContext,
  options: PrHandlerOptions,
  job: PublishJob,
): Promise<void> {
  const { octokit, log } = context;
  try {
    // Depth 2 of history is enough to find the parent on a re-run.
    const fetch = job.before === '' || ZERO.test(job.before) ? [job.after] : [job.before, job.after];
    // Tags without {sha} move: only the branch head may write them. Read first: it is also
    // the job's first request, which authenticates the client against the configured API
    // (the session's explicit token request does not know a GitHub Enterprise base URL).
    // A failure here is asked again below, only where the repository publishes.
    const getBranch = () => octokit.rest.repos.getBranch({ ...job.ref, branch: job.branch });
    const branchFirst = await getBranch().catch(() => undefined);
    await openSession(context, options, job, 'publish', { fetch }, async (session) => {
      const { dir } = session;
      const { config } = await readRepoConfig(dir, job.after);
      const { images, baseImage, dispatch } = config.publish;
      if (images.length === 0 && !dispatch) return; // this repository publishes nothing
      const roots = await changedRoots(dir, job, config);
      if (roots.length === 0) return;
      const runs = await createCheckRuns(octokit, job.ref, job.after, [PUBLISH_CHECK]);
      const runId = runs.get(PUBLISH_CHECK) as number;

      if (dispatch) {
        const payload = { sha: job.after, roots };
        if (dispatch.eventType)
          await octokit.rest.repos.createDispatchEvent({
            ...job.ref,
            event_type: dispatch.eventType,
            client_payload: payload,
          });
        else
          await octokit.rest.actions.createWorkflowDispatch({
            ...job.ref,
            workflow_id: dispatch.workflow as string,
            ref: job.branch,
            inputs: { sha: job.after, roots: roots.join(',') },
          });
        await completeCheckRun(octokit, job.ref, runId, {
          conclusion: 'success',
          title: `Publishing handed to ${dispatch.eventType ? `repository_dispatch ${dispatch.eventType}` : `workflow ${dispatch.workflow}`}`,
          summary: `Changed catalog roots: ${roots.map((r) => `\`${r}\``).join(', ')}. The images are built by that workflow.`,
        });
        return;
      }

      await session.fetchBlobs([job.after]);
      const branchNow = (branchFirst ?? (await getBranch())).data;
      const current = branchNow.commit.sha === job.after;
      const tags = current ? images : images.filter((t) => t.includes('{sha}'));
      if (!options.registry) throw new Error('no registry client is configured');
      // REGISTRY_USERNAME/REGISTRY_PASSWORD go only to the hosts this config publishes to.
      const client = options.registry().scoped(credentialHostsOf([...images, baseImage]));
      const publications: RootPublication[] = [];
      for (const root of roots) {
        const source = new GitTreeSource(dir, job.after, root);
        const report = await validateCatalog(source);
        if (!report.valid) {
          const errors = report.diagnostics.filter((d) => d.level === 'error').length;
          publications.push({
            root,
            error: `the catalog does not validate (${errors} error${errors === 1 ? '' : 's'}; see catalog-bot validate); nothing was pushed`,
          });
          continue;
        }
        try {
          const results =
            tags.length === 0
              ? []
              : await publishCatalog({
                  source,
                  root,
                  tags,
                  baseImage,
                  repoUrl: job.repoUrl,
                  commit: job.after,
                  created: await commitTime(dir, job.after),
                  client,
                });
          publications.push({ root, results });
        } catch (error) {
          publications.push({ root, error: error instanceof Error ? error.message : String(error) });
        }
      }
      const result = publishCheck(publications);
      if (!current && images.length !== tags.length)
        result.summary += `\n\n${job.branch} has moved past this commit: its moving tags (${images
          .filter((t) => !t.includes('{sha}'))
          .map((t) => `\`${t}\``)
          .join(', ')}) are left to the newer commit.`;
      if (job.watchdog) result.summary += `\n\n${watchdogNote(job.watchdog)}`;
      await completeCheckRun(octokit, job.ref, runId, result);

      // The merged pull request hears where its change went. A failure here is logged, not
      // a failed publish: the images are out and the check run says so.
      const body = releaseComment(job.after, publications);
      if (body !== undefined && options.appSlug)
        try {
          const message = (await runGit(dir, ['log', '-1', '--format=%B', job.after])).toString('utf8');
          const number = await mergedPullOf(octokit, job.ref, job.after, message);
          if (number !== undefined)
            await writeReleaseComment(
              octokit,
              job.ref,
              number,
              job.after,
              body,
              `${await options.appSlug()}[bot]`,
            );
        } catch (error) {
          log.warn({ err: error, sha: job.after }, 'could not write the release comment');
        }
    });
  } catch (error) {
    log.error({ err: error, sha: job.after }, 'publishing failed');
    const message = error instanceof Error ? error.message : String(error);
    try {
      const runs = await createCheckRuns(octokit, job.ref, job.after, [PUBLISH_CHECK]);
      await completeCheckRun(octokit, job.ref, runs.get(PUBLISH_CHECK) as number, {
        conclusion: 'failure',
        title: 'catalog-bot could not publish this commit',
        summary: `${message.slice(0, 4000)}\n\nRe-run this check to try again.${job.watchdog ? `\n\n${watchdogNote(job.watchdog)}` : ''}`,
      });
    } catch (again) {
      log.error({ err: again }, 'could not report the publishing failure');
    }
  }
}

/** What the publish check run of a watchdog retry says (docs/publishing.md, "Watchdog"). */
export function watchdogNote(reason: string): string {
  return `**Retried by catalog-bot's publish watchdog:** ${reason}.`;
}
