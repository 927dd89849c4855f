// The state of a pull request lives on GitHub, so the App stays stateless: labels people
// can see, and one status comment of the bot's whose hidden part records each `/approve`
// with the content it saw (docs/security.md "Approvals are what the approver saw").
import { createHash } from 'node:crypto';
import type { GitHub, RepoRef } from '../github/port.js';

export const LABELS = {
  approved: 'approved',
  lgtm: 'lgtm',
  hold: 'do-not-merge/hold',
} as const;

export interface RecordedApproval {
  login: string;
  /** The comment that said `/approve` (deleting or editing it withdraws the approval); 0 for a review. */
  comment: number;
  /** The approving review, when it was one (dismissing it withdraws the approval). */
  review?: number;
  /** The head commit it was given on. */
  sha: string;
  /** Permission row (`package foo (catalogs/v4.21)` or a path) -> content digest it saw. */
  subjects: Record<string, string>;
}

/**
 * The newest head the bot has seen: `sha` was the pull request's head at `at` (GitHub's
 * clock), and every later non-fast-forward change of the head shows on the timeline as an
 * event newer than `event` (docs/security.md: approvals are what the approver saw).
 */
export interface SeenHead {
  sha: string;
  at: string;
  event: number;
}

/**
 * An `/allow-prune` (docs/publishing.md, "Pruning guard"): the owner allows the change to
 * remove `target` (a bundle name, or `<package>/<channel>`) from the published catalog, for
 * the package content they saw.
 */
export interface RecordedAllowPrune {
  login: string;
  comment: number;
  sha: string;
  target: string;
  /** `package foo (catalogs/v4.21)` -> the content digest it was given for. */
  subjects: Record<string, string>;
}

/** Who put the hold on with `/hold`, when it was not the author (docs/security.md "Holds"). */
export interface RecordedHold {
  login: string;
  /** The comment that said `/hold`. */
  comment: number;
}

/**
 * The impact section the status comment shows (docs/impact.md): the head it was computed
 * for, and a digest of the section, so the body is still exactly what the bot wrote.
 */
export interface RecordedImpact {
  sha: string;
  digest: string;
}

export interface PrState {
  approvals: RecordedApproval[];
  head?: SeenHead;
  hold?: RecordedHold;
  /** Absent until the first `/allow-prune` (older status comments read the same). */
  allowPrunes?: RecordedAllowPrune[];
  /** Absent until the checks first said what the change means for clusters. */
  impact?: RecordedImpact;
}

/** GitHub's limit on a comment body, in characters (docs/github-limits.md). */
export const MAX_COMMENT_CHARS = 65_536;

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
    const data = JSON.parse(body.slice(start + MARKER.length, end)) as {
      approvals?: unknown;
      head?: Partial<SeenHead> | null;
      hold?: Partial<RecordedHold> | null;
      allowPrunes?: unknown;
      impact?: Partial<RecordedImpact> | null;
    };
    if (!Array.isArray(data.approvals)) return undefined;
    const approvals = data.approvals.filter(
      (a): a is RecordedApproval =>
        typeof a === 'object' &&
        a !== null &&
        typeof a.login === 'string' &&
        typeof a.comment === 'number' &&
        (a.review === undefined || typeof a.review === 'number') &&
        typeof a.sha === 'string' &&
        typeof a.subjects === 'object' &&
        a.subjects !== null,
    );
    const head = data.head;
    const seen =
      head &&
      typeof head.sha === 'string' &&
      typeof head.at === 'string' &&
      !Number.isNaN(Date.parse(head.at)) &&
      typeof head.event === 'number'
        ? { sha: head.sha, at: head.at, event: head.event }
        : undefined;
    const hold =
      data.hold && typeof data.hold.login === 'string' && typeof data.hold.comment === 'number'
        ? { login: data.hold.login, comment: data.hold.comment }
        : undefined;
    const allowPrunes = Array.isArray(data.allowPrunes)
      ? data.allowPrunes.filter(
          (a): a is RecordedAllowPrune =>
            typeof a === 'object' &&
            a !== null &&
            typeof a.login === 'string' &&
            typeof a.comment === 'number' &&
            typeof a.sha === 'string' &&
            typeof a.target === 'string' &&
            typeof a.subjects === 'object' &&
            a.subjects !== null,
        )
      : undefined;
    const impact =
      data.impact && typeof data.impact.sha === 'string' && typeof data.impact.digest === 'string'
        ? { sha: data.impact.sha, digest: data.impact.digest }
        : undefined;
    return {
      approvals,
      ...(seen ? { head: seen } : {}),
      ...(hold ? { hold } : {}),
      ...(allowPrunes !== undefined ? { allowPrunes } : {}),
      ...(impact ? { impact } : {}),
    };
  } catch {
    return undefined;
  }
}

/**
 * The status comment: what people read (the approvals, a hold, allowed removals, then the
 * impact section when the state records one and it is given), then the state (JSON cannot
 * contain `-->`: `>` is escaped).
 */
export function stateCommentBody(state: PrState, impactSection?: string): string {
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
  const held = state.hold
    ? `\n\n**Held** by @${state.hold.login}: only they or someone with write access can lift it (\`/unhold\`).`
    : '';
  const allows = (state.allowPrunes ?? []).map(
    (a) => `| @${a.login} | \`${a.target.replace(/[|`]/g, '')}\` | ${a.sha.slice(0, 12)} |`,
  );
  const pruning =
    allows.length === 0
      ? ''
      : `\n\n**Removals from the published catalog allowed** (\`/allow-prune\`; each counts for the package content it saw):\n\n| who | allowed | at commit |\n|---|---|---|\n${allows.join('\n')}`;
  // One key order, whatever order the state was put together in: the body is recognised by
  // being exactly what this function writes for what readState reads back.
  const canonical = {
    approvals: state.approvals,
    ...(state.head ? { head: state.head } : {}),
    ...(state.hold ? { hold: state.hold } : {}),
    ...(state.allowPrunes ? { allowPrunes: state.allowPrunes } : {}),
    ...(state.impact ? { impact: state.impact } : {}),
  };
  const json = JSON.stringify(canonical).replace(/>/g, '\\u003e');
  const impact = state.impact && impactSection !== undefined ? `\n\n${impactSection}` : '';
  return `${visible}${held}${pruning}${impact}\n\n${MARKER}${json}${MARKER_END}`;
}

/** The digest a state records for an impact section. */
export const sectionDigest = (section: string): string => createHash('sha256').update(section).digest('hex');

/**
 * The impact section of a status comment body holding `state`: the text between what
 * stateCommentBody writes before it and the state, when its digest is the recorded one.
 */
function impactSectionOf(body: string, state: PrState): string | undefined {
  if (!state.impact) return undefined;
  const bare = stateCommentBody(state);
  const split = bare.lastIndexOf(`\n\n${MARKER}`);
  const [before, after] = [bare.slice(0, split), bare.slice(split)];
  if (!body.startsWith(`${before}\n\n`) || !body.endsWith(after)) return undefined;
  const section = body.slice(before.length + 2, body.length - after.length);
  return sectionDigest(section) === state.impact.digest ? section : undefined;
}

export interface StatusComment {
  id?: number;
  state: PrState;
  /** The impact section it shows (docs/impact.md), kept when another job saves the state. */
  impact?: string;
}

/**
 * Find the bot's status comment on a pull request. Only a comment written by this App
 * counts: anyone can paste the marker into a comment of their own. And only one that is
 * exactly what stateCommentBody writes for the state it holds: the bot's other comments
 * quote text of the pull request and its comments (docs/security.md).
 */
export async function loadState(
  github: GitHub,
  ref: RepoRef,
  number: number,
  botLogin: string,
): Promise<StatusComment> {
  const comments = await github.comments.list(ref, number);
  for (const c of comments) {
    if (c.user?.type !== 'Bot' || c.user.login !== botLogin) continue;
    const state = readState(c.body);
    if (!state) continue;
    const impact = impactSectionOf(c.body ?? '', state);
    if (state.impact && impact === undefined) continue;
    if (stateCommentBody(state, impact) === c.body)
      return { id: c.id, state, ...(impact !== undefined ? { impact } : {}) };
  }
  return { state: { approvals: [] } };
}

/**
 * Text for a comment of the bot other than its status comment. What it quotes (names from
 * the pull request's files, command arguments) cannot open an HTML comment: nothing in
 * it is hidden from readers, and it never carries a status marker (docs/security.md).
 */
export function replyText(text: string): string {
  return text.replace(/<!--/g, '<\u200b!--');
}

/** Post a comment of the bot (not its status comment) on a pull request. */
export async function reply(github: GitHub, ref: RepoRef, number: number, body: string): Promise<void> {
  await github.comments.create(ref, number, replyText(body));
}

/** What stands in for an impact section that would take the comment past GitHub's limit. */
export const IMPACT_TOO_LARGE =
  '**What clusters will see:** too large for this comment; `catalog-bot impact --format markdown` in a clone prints it.';

export async function saveState(
  github: GitHub,
  ref: RepoRef,
  number: number,
  current: StatusComment,
  state: Partial<PrState>,
  /** A new impact section, for the head `sha` (docs/impact.md); without it the shown one stays. */
  impact?: { sha: string; section: string },
): Promise<void> {
  // What is not given stays as it was (approvals and the seen head are saved by different jobs).
  const next: PrState = { ...current.state, ...state };
  let section = current.impact;
  if (impact) {
    // An impact section never opens an HTML comment: it cannot hide text or forge a state.
    section = replyText(impact.section);
    next.impact = { sha: impact.sha, digest: sectionDigest(section) };
  }
  let body = stateCommentBody(next, section);
  if (body.length > MAX_COMMENT_CHARS && next.impact) {
    section = IMPACT_TOO_LARGE;
    next.impact = { sha: next.impact.sha, digest: sectionDigest(section) };
    body = stateCommentBody(next, section);
  }
  if (current.id !== undefined) {
    await github.comments.update(ref, current.id, body);
  } else {
    await github.comments.create(ref, number, body);
  }
}

/** Add or remove a label; a label that is already so is left alone. */
export async function setLabel(
  github: GitHub,
  ref: RepoRef,
  number: number,
  labels: string[],
  label: string,
  on: boolean,
): Promise<void> {
  const has = labels.includes(label);
  if (on && !has) await github.labels.add(ref, number, [label]);
  if (!on && has) await github.labels.remove(ref, number, label);
}

/** Timeline events after which the head may be any commit (not a fast-forward of the last one). */
const HEAD_REWRITES = new Set(['head_ref_force_pushed', 'head_ref_deleted', 'head_ref_restored', 'reopened']);

/** The id of the newest timeline event that can move the head other than by a fast-forward (0: none). */
export async function lastHeadRewrite(github: GitHub, ref: RepoRef, number: number): Promise<number> {
  const events = await github.comments.timeline(ref, number);
  let last = 0;
  for (const e of events as { event?: string; id?: number }[])
    if (e.event && HEAD_REWRITES.has(e.event) && typeof e.id === 'number' && e.id > last) last = e.id;
  return last;
}

/** Who added `label` last, as GitHub's timeline tells it (undefined: nobody the timeline shows). */
export async function lastLabeledBy(
  github: GitHub,
  ref: RepoRef,
  number: number,
  label: string,
): Promise<string | undefined> {
  const events = await github.comments.timeline(ref, number);
  let by: string | undefined;
  for (const e of events as {
    event?: string;
    actor?: { login?: string } | null;
    label?: { name?: string };
  }[])
    if (e.event === 'labeled' && e.label?.name === label) by = e.actor?.login ?? undefined;
  return by;
}

/**
 * Look at the pull request's head now: the timeline first, then the head with GitHub's time
 * (the `Date` of that answer), so a rewrite after the look is always a newer event. A head
 * the record already holds, with no rewrite since, keeps its older time: it has been the
 * head all along (fast-forwards cannot come back to a commit).
 */
export async function observeHead(
  github: GitHub,
  ref: RepoRef,
  number: number,
  previous: SeenHead | undefined,
): Promise<SeenHead> {
  const event = await lastHeadRewrite(github, ref, number);
  const { pull, at: answered } = await github.pulls.getAt(ref, number);
  const sha = pull.head.sha;
  if (previous && previous.sha === sha && event <= previous.event) return previous;
  // A 304 answer carries the time of the answer it confirms: the pull request (and so its
  // head) has not changed since then, so that time holds too.
  const date = Date.parse(answered ?? '');
  const at = new Date(Number.isNaN(date) ? Date.now() : date).toISOString();
  return { sha, at, event };
}

/**
 * Was `head` the pull request's head when a comment was written at `writtenAt`, and for at
 * least `forMs` before? Yes only when the record says it was the head that long before the
 * comment and no rewrite of the head has happened since: from then to now (when it is the
 * head again) every change was a fast-forward, which cannot leave a commit and come back.
 * Times are whole seconds, so the record must be more than `forMs` seconds older.
 */
export async function wasHeadWhenWritten(
  github: GitHub,
  ref: RepoRef,
  number: number,
  seen: SeenHead | undefined,
  head: string,
  writtenAt: string | undefined,
  forMs = 0,
): Promise<boolean> {
  if (!seen || seen.sha !== head || !writtenAt) return false;
  const written = Date.parse(writtenAt);
  if (Number.isNaN(written)) return false;
  const secondsBefore = Math.floor(written / 1000) - Math.floor(Date.parse(seen.at) / 1000);
  if (!(secondsBefore > forMs / 1000)) return false;
  return (await lastHeadRewrite(github, ref, number)) <= seen.event;
}
