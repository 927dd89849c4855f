// The state of a pull request lives on GitHub, so the App stays stateless: labels people
// can see, and one status comment of the bot's whose hidden part records each `/approve`
// with the content it saw (design.md: an approval counts for the package contents it saw).
import type { Context } from 'probot';
import type { RepoRef } from './check-runs.js';

export const LABELS = {
  approved: 'approved',
  lgtm: 'lgtm',
  hold: 'do-not-merge/hold',
} as const;

export interface RecordedApproval {
  login: string;
  /** The comment that said `/approve` (deleting or editing it withdraws the approval). */
  comment: number;
  /** The head commit it was given on. */
  sha: string;
  /** Permission row (`package foo (catalogs/v4.21)` or a path) -> content digest it saw. */
  subjects: Record<string, string>;
}

export interface PrState {
  approvals: RecordedApproval[];
}

const MARKER = '<!-- catalog-bot:state ';
const MARKER_END = ' -->';

/** The state recorded in a status comment body, or undefined when it holds none (or garbage). */
export function readState(body: string | null | undefined): PrState | undefined {
  if (!body) return undefined;
  const start = body.lastIndexOf(MARKER);
  if (start < 0) return undefined;
  const end = body.indexOf(MARKER_END, start + MARKER.length);
  if (end < 0) return undefined;
  try {
    const data = JSON.parse(body.slice(start + MARKER.length, end)) as { approvals?: unknown };
    if (!Array.isArray(data.approvals)) return undefined;
    const approvals = data.approvals.filter(
      (a): a is RecordedApproval =>
        typeof a === 'object' &&
        a !== null &&
        typeof a.login === 'string' &&
        typeof a.comment === 'number' &&
        typeof a.sha === 'string' &&
        typeof a.subjects === 'object' &&
        a.subjects !== null,
    );
    return { approvals };
  } catch {
    return undefined;
  }
}

/** The status comment: what people read, then the state (JSON cannot contain `-->`: `>` is escaped). */
export function stateCommentBody(state: PrState): string {
  const rows = state.approvals.map(
    (a) =>
      `| @${a.login} | ${Object.keys(a.subjects)
        .sort()
        .map((s) => s.replace(/\|/g, '\\|'))
        .join('<br>')} | ${a.sha.slice(0, 12)} |`,
  );
  const visible =
    rows.length === 0
      ? '**catalog-bot approvals:** none yet. An owner of the changed packages (or a maintainer) can comment `/approve`.'
      : [
          '**catalog-bot approvals** (each counts for the content it saw; a push that changes a package needs a fresh `/approve` from its owners):',
          '',
          '| who | approved | at commit |',
          '|---|---|---|',
          ...rows,
        ].join('\n');
  const json = JSON.stringify(state).replace(/>/g, '\\u003e');
  return `${visible}\n\n${MARKER}${json}${MARKER_END}`;
}

type Octokit = Context['octokit'];

export interface StatusComment {
  id?: number;
  state: PrState;
}

/**
 * Find the bot's status comment on a pull request. Only a comment written by this App
 * counts: anyone can paste the marker into a comment of their own.
 */
export async function loadState(
  octokit: Octokit,
  ref: RepoRef,
  number: number,
  botLogin: string,
): Promise<StatusComment> {
  const comments = await octokit.paginate(octokit.rest.issues.listComments, {
    ...ref,
    issue_number: number,
    per_page: 100,
  });
  for (const c of comments) {
    if (c.user?.type !== 'Bot' || c.user.login !== botLogin) continue;
    const state = readState(c.body);
    if (state) return { id: c.id, state };
  }
  return { state: { approvals: [] } };
}

export async function saveState(
  octokit: Octokit,
  ref: RepoRef,
  number: number,
  current: StatusComment,
  state: PrState,
): Promise<void> {
  const body = stateCommentBody(state);
  if (current.id !== undefined) {
    await octokit.rest.issues.updateComment({ ...ref, comment_id: current.id, body });
  } else {
    await octokit.rest.issues.createComment({ ...ref, issue_number: number, body });
  }
}

/** Add or remove a label; a label that is already so is left alone. */
export async function setLabel(
  octokit: Octokit,
  ref: RepoRef,
  number: number,
  labels: string[],
  label: string,
  on: boolean,
): Promise<void> {
  const has = labels.includes(label);
  if (on && !has) await octokit.rest.issues.addLabels({ ...ref, issue_number: number, labels: [label] });
  if (!on && has) {
    await octokit.rest.issues
      .removeLabel({ ...ref, issue_number: number, name: label })
      .catch((e: unknown) => {
        if ((e as { status?: number }).status !== 404) throw e; // already gone
      });
  }
}
