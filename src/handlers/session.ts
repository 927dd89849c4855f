// A pull-request session: every flow of the App (the checks of a head, `/approve`,
// `/promote`, `/render`, the merge re-check, publishing) is "open a session, run these
// checks, act". The session is the target (repository, installation, pull request), a
// mirror opened on the commits the flow needs, and the one list of checks
// (src/checks/pr-checks.ts), from which the flow asks for the ones it needs: `/approve`
// runs only the permissions decision (docs/architecture.md).
import type { Context } from 'probot';
import { runPrChecks, type PrCheckInput, type PrCheckResult } from '../checks/pr.js';
import { ensureMirror, fetchMissingBlobs, mergeBase, revParse, withMirror } from '../git/mirror.js';
import type { GitHub, RepoRef } from '../github/port.js';
import { teamMembers } from './teams.js';

/** A repository the App works on, as a job carries it (plain JSON: it may travel through Redis). */
export interface RepoTarget {
  ref: RepoRef;
  repoId: number;
  cloneUrl: string;
  /** The installation whose token the job uses. */
  installationId?: number;
}

/** A pull request of a repository: the shape every pull-request job carries. */
export interface PullTarget extends RepoTarget {
  number: number;
}

/** The installation a webhook was delivered for (not every payload type declares it). */
export function installationOf(payload: object): number | undefined {
  if (!('installation' in payload)) return undefined;
  const installation = payload.installation;
  return typeof installation === 'object' &&
    installation !== null &&
    'id' in installation &&
    typeof installation.id === 'number'
    ? installation.id
    : undefined;
}

type RepositoryPayload = {
  repository: {
    id: number;
    name: string;
    clone_url: string;
    owner: { login?: string; name?: string | null } | null;
  };
};

/** The repository of a webhook payload. */
export function repoTarget(payload: RepositoryPayload): RepoTarget {
  const { repository } = payload;
  return {
    ref: { owner: repository.owner?.login ?? repository.owner?.name ?? '', repo: repository.name },
    repoId: repository.id,
    cloneUrl: repository.clone_url,
    installationId: installationOf(payload),
  };
}

/** Pull request `number` of a webhook payload's repository. */
export function pullTarget(payload: RepositoryPayload, number: number): PullTarget {
  return { ...repoTarget(payload), number };
}

/** Only the target of a job that carries more (the merge gate's job is the target alone). */
export function pullTargetOf(job: PullTarget): PullTarget {
  const { ref, number, cloneUrl, repoId, installationId } = job;
  return { ref, number, cloneUrl, repoId, installationId };
}

/** What a job runs with: GitHub as one installation (src/github/port.ts) and a logger. */
export type SessionContext = Pick<Context, 'log'> & { github: GitHub };

/** The checks a flow ran (for a test or a metric to see how much work each flow does). */
export type ObserveChecks = (flow: string, ran: NonNullable<PrCheckResult['ran']>) => void;

/**
 * The catalog trees a flow's work validated, one identity each in the order validated
 * (src/catalog/validation-log.ts): a tree validated twice shows twice. Told by the comment
 * edits (src/flows/catalog-edit/).
 */
export type ObserveValidations = (flow: string, validated: string[]) => void;

export interface SessionOptions {
  /** Where the mirrors live (default: CATALOG_BOT_WORKDIR or the temp dir). */
  workDir?: string;
  observeChecks?: ObserveChecks;
  observeValidations?: ObserveValidations;
}

/** The commits a session needs in its mirror. */
export interface SessionCommits {
  /** Fetched into the mirror (shas or refs such as `refs/pull/N/head`). */
  fetch: string[];
  /** Must be in the mirror once fetched (a head that was force-pushed away is an error). */
  verify?: string[];
  /** Their blobs are fetched at once (a partial mirror has trees only); `fetchBlobs` does it later. */
  blobs?: string[];
}

export interface Session {
  target: RepoTarget;
  /** The mirror's git directory. */
  dir: string;
  /** The installation token (for git only). */
  token: string;
  /** Fetch the blobs of these commits (and of their merge bases). */
  fetchBlobs(commits: string[]): Promise<void>;
  /** Fetch more commits (and their blobs) into the mirror, e.g. a branch head that moved on. */
  fetchCommits(commits: string[]): Promise<void>;
  /** The merge base of two commits of the mirror. */
  mergeBase(a: string, b: string): Promise<string>;
  /**
   * Run checks of the list on two commits of the mirror: `only` names the ones this flow
   * needs (default: all). Team members are asked of GitHub with the installation's client.
   */
  run(input: Omit<PrCheckInput, 'repo' | 'teams'>): Promise<PrCheckResult>;
}

/**
 * Open a session on `target` with `commits` in its mirror, run `act` in it, and close it.
 * `flow` names the flow for observeChecks.
 */
export async function openSession<T>(
  context: SessionContext,
  options: SessionOptions,
  target: RepoTarget,
  flow: string,
  commits: SessionCommits,
  act: (session: Session) => Promise<T>,
): Promise<T> {
  const { github } = context;
  const token = await github.installation.token();
  return withMirror(
    { cloneUrl: target.cloneUrl, repoId: target.repoId, token, fetch: commits.fetch },
    async (dir) => {
      for (const sha of commits.verify ?? []) {
        if ((await revParse(dir, sha).catch(() => '')) !== sha)
          throw new Error(`commit ${sha} was not fetched`);
      }
      const session: Session = {
        target,
        dir,
        token,
        fetchBlobs: async (shas) => {
          await fetchMissingBlobs(dir, shas, token);
        },
        fetchCommits: async (shas) => {
          await ensureMirror(
            { cloneUrl: target.cloneUrl, repoId: target.repoId, token, fetch: shas },
            options.workDir,
          );
        },
        mergeBase: (a, b) => mergeBase(dir, a, b),
        run: async (input) => {
          const result = await runPrChecks({
            ...input,
            repo: dir,
            teams: teamMembers(github, target.installationId),
          });
          if (result.ran) options.observeChecks?.(flow, result.ran);
          return result;
        },
      };
      if (commits.blobs) await session.fetchBlobs(commits.blobs);
      return act(session);
    },
    { workDir: options.workDir },
  );
}

/**
 * Run checks of the list on a pull request's head against its base (from where the head
 * forked off it, with the base's rules), in a session that fetches both: for a command that
 * asks the checks a question about the pull request before it acts.
 */
export function checkPullHead(
  context: SessionContext,
  options: SessionOptions,
  target: PullTarget,
  flow: string,
  base: string,
  head: string,
  input: Omit<PrCheckInput, 'repo' | 'teams' | 'base' | 'rules' | 'head'>,
): Promise<PrCheckResult> {
  const commits = { fetch: [base, `refs/pull/${target.number}/head`], blobs: [base, head] };
  return openSession(context, options, target, flow, commits, async (session) =>
    session.run({ base: await session.mergeBase(base, head), rules: base, head, ...input }),
  );
}
