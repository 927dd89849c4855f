// Comment commands on pull requests: parse, then (in the repository's queue) authorize and
// act. State stays on GitHub: labels, and the bot's status comment for approvals.
import type { Context } from 'probot';
import { PERMISSIONS_CHECK, unapprovedChanges } from '../checks/permissions.js';
import type { GitHub, RepoRef } from '../github/port.js';
import { addedCommands, parseComment, type ParsedComment } from './commands.js';
import {
  commandNamed,
  commandTyped,
  COSTLY_COMMANDS,
  commentHelpText,
  type Command,
  type CommandOutcome,
  type CommandRun,
} from './commands/index.js';
import type { ApprovalDecision } from './commands/command.js';
import { costlyCommands } from './command-limit.js';
import { enqueueChecks, type JobContext, type PrHandlerOptions, type PrJob } from './pull-request.js';
import { loadState, reply, saveState } from './pr-state.js';
import { checkPullHead, pullTarget, pullTargetOf, type PullTarget } from './session.js';

export const COMMENT_EVENTS = [
  'issue_comment.created',
  'issue_comment.edited',
  'issue_comment.deleted',
] as const;

type CommentContext =
  Context<'issue_comment.created'> | Context<'issue_comment.edited'> | Context<'issue_comment.deleted'>;

/** What the job needs, taken from the payload. */
export interface CommentJob extends PullTarget {
  commentId: number;
  commenter: string;
  parsed: ParsedComment;
  /** Approvals given in this comment are withdrawn (the comment was deleted, or edited to drop `/approve`). */
  withdraw: boolean;
  /**
   * When the comment's text was written (GitHub's `created_at`, or `updated_at` for an edit):
   * an `/approve` counts only for the head the pull request had then.
   */
  writtenAt?: string;
  /** A reply that needs no command run: an edit by someone other than the comment's author. */
  notice?: string;
  /** Written on an issue, not a pull request: only commands with `onIssue` are in it. */
  onIssue?: boolean;
}

export function issueCommentHandler(options: PrHandlerOptions): (context: CommentContext) => Promise<void> {
  return async (context) => {
    const { payload } = context;
    const { comment } = payload;
    // The bot's own comments and other bots' never command anything.
    if (comment.user?.type === 'Bot' || payload.sender?.type === 'Bot') return;
    // On an issue only the commands made for issues (`/onboard`), newly written; any other
    // line is the issue's own text.
    if (!payload.issue.pull_request) {
      if (payload.action !== 'created') return;
      const parsed = parseComment(comment.body ?? '');
      const issueParsed: ParsedComment = {
        commands: parsed.commands.filter((c) => commandNamed(c.name).onIssue),
        problems: parsed.problems.filter((p) => {
          const name = /^\/([A-Za-z][A-Za-z-]*)/.exec(p.text)?.[1]?.toLowerCase();
          return name !== undefined && commandTyped(name)?.onIssue !== undefined;
        }),
      };
      if (issueParsed.commands.length + issueParsed.problems.length > 0)
        await enqueueIssueCommands(context, options, issueParsed);
      return;
    }
    // What a comment records (an `/approve`, an `/allow-prune`) goes when the comment does.
    const approves = (body: string) =>
      parseComment(body).commands.some(
        (c) => (c.name === 'approve' && !c.cancel) || c.name === 'allow-prune',
      );
    let parsed: ParsedComment;
    let withdraw = false;
    let notice: string | undefined;
    if (payload.action === 'deleted') {
      // Whoever deleted it, the approval it held is gone (the safe direction).
      parsed = { commands: [], problems: [] };
      withdraw = approves(comment.body ?? '');
    } else if (payload.action === 'edited') {
      const before = (payload as { changes?: { body?: { from?: string } } }).changes?.body?.from ?? '';
      parsed = addedCommands(before, comment.body ?? '');
      withdraw = approves(before) && !approves(comment.body ?? '');
      // Someone with write access can edit anyone's comment; the commenter is the comment's
      // author, so an edit by anyone else would speak in the author's name (docs/security.md).
      // Such an edit can only take an approval away, never add a command.
      if (!sameUser(payload.sender, comment.user)) {
        if (parsed.commands.length > 0 || parsed.problems.length > 0)
          notice = `@${payload.sender?.login ?? ''} the commands you added to @${comment.user?.login ?? ''}'s comment were not run: only a comment's author can give commands in it.`;
        parsed = { commands: [], problems: [] };
      }
    } else {
      parsed = parseComment(comment.body ?? '');
    }
    if (parsed.commands.length === 0 && parsed.problems.length === 0 && !withdraw && !notice) return;
    const key = `delivery:${context.id}`;
    const commenter = comment.user?.login ?? '';
    // Catalog work waits in the repository's queue: a few comments of it per user at once.
    const costly = parsed.commands.filter((c) => commandNamed(c.name).costly);
    let counted = false;
    if (costly.length > 0) {
      const before = costlyCommands.count(commenter);
      const taken = costlyCommands.take(commenter, key);
      // A delivery GitHub sends again was counted the first time.
      counted = taken && costlyCommands.count(commenter) > before;
      if (!taken) {
        notice = `@${commenter} ${costly.map((c) => `\`/${c.name}\``).join(', ')} not run: you have ${costlyCommands.max} comments with commands that load catalogs (${COSTLY_COMMANDS.join(', ')}) waiting or running. Write it again once one has been answered.`;
        parsed = { ...parsed, commands: parsed.commands.filter((c) => !costly.includes(c)) };
      }
    }
    const job: CommentJob = {
      ...pullTarget(payload, payload.issue.number),
      commentId: comment.id,
      commenter,
      parsed,
      withdraw,
      ...(notice ? { notice } : {}),
      writtenAt: (payload.action === 'edited' ? comment.updated_at : comment.created_at) ?? undefined,
    };
    // A reply alone does not wait behind the repository's queue (the catalog work it refused).
    const replyOnly = parsed.commands.length === 0 && parsed.problems.length === 0 && !withdraw;
    const queued = await options.queue.enqueue({
      key,
      ...(replyOnly ? {} : { group: `repo:${job.repoId}` }),
      kind: 'commands',
      data: job,
    });
    if (!queued && counted) costlyCommands.release(commenter, key);
  };
}

/** An issue's commands, in the repository's queue as a pull request's are (one costly command per comment). */
async function enqueueIssueCommands(
  context:
    Context<'issue_comment.created'> | Context<'issue_comment.edited'> | Context<'issue_comment.deleted'>,
  options: PrHandlerOptions,
  parsed: ParsedComment,
): Promise<void> {
  const { commands } = parsed;
  const { payload } = context;
  const key = `delivery:${context.id}`;
  const commenter = payload.comment.user?.login ?? '';
  const base = { ...pullTarget(payload, payload.issue.number), commentId: payload.comment.id, commenter };
  if (commands.length > 0 && !costlyCommands.take(commenter, key)) {
    const notice = `@${commenter} ${commands.map((c) => `\`/${c.name}\``).join(', ')} not run: you have ${costlyCommands.max} comments with commands that load catalogs (${COSTLY_COMMANDS.join(', ')}) waiting or running. Write it again once one has been answered.`;
    const job: CommentJob = {
      ...base,
      parsed: { commands: [], problems: [] },
      withdraw: false,
      notice,
      onIssue: true,
    };
    await options.queue.enqueue({ key, kind: 'commands', data: job });
    return;
  }
  const job: CommentJob = { ...base, parsed, withdraw: false, onIssue: true };
  const queued = await options.queue.enqueue({
    key,
    group: `repo:${job.repoId}`,
    kind: 'commands',
    data: job,
  });
  if (!queued) costlyCommands.release(commenter, key);
}

/** The same GitHub account: the same login (both are current in one payload) and, when both carry one, the same id. */
function sameUser(
  a: { id?: number; login?: string } | null | undefined,
  b: { id?: number; login?: string } | null | undefined,
): boolean {
  if (!a?.login || !b?.login || a.login.toLowerCase() !== b.login.toLowerCase()) return false;
  return typeof a.id !== 'number' || typeof b.id !== 'number' || a.id === b.id;
}

interface Outcome extends CommandOutcome {
  command: Command;
}

/** Authorize and carry out the commands of one comment. Never throws. */
export async function runCommandsJob(
  context: JobContext,
  options: PrHandlerOptions,
  job: CommentJob,
  key: string,
): Promise<void> {
  try {
    if (job.onIssue) await runIssueCommands(context, options, job);
    else await runCommands(context, options, job, key);
  } finally {
    // Its catalog work is done: it no longer counts against the commenter (./command-limit.ts).
    costlyCommands.release(job.commenter, key);
  }
}

async function runCommands(
  context: JobContext,
  options: PrHandlerOptions,
  job: CommentJob,
  key: string,
): Promise<void> {
  const { github, log } = context;
  const { ref, number, commenter } = job;
  try {
    const pr = await github.pulls.get(ref, number);
    const author = pr.user?.login ?? '';
    const slug = options.appSlug ? await options.appSlug() : undefined;
    const status = slug ? await loadState(github, ref, number, `${slug}[bot]`) : undefined;
    // Who may do what, each looked up once and only when needed.
    let write: Promise<boolean> | undefined;
    let owner: Promise<ApprovalDecision> | undefined;
    const run: CommandRun = {
      context,
      options,
      job,
      pr,
      author,
      commenter,
      labels: pr.labels.map((l) => l.name),
      ...(status ? { status } : {}),
      approvals: status?.state.approvals ?? [],
      allowPrunes: status?.state.allowPrunes ?? [],
      ...(status?.state.head ? { seenHead: status.state.head } : {}),
      ...(status?.state.hold ? { hold: status.state.hold } : {}),
      recheck: false,
      hasWrite: () => (write ??= writeAccess(context.github, ref, commenter)),
      ownsAll: () => (owner ??= mayApproveAll(context, job, commenter, pr.base.sha, pr.head.sha, options)),
      target: { ...pullTargetOf(job), commenter },
      helpText: commentHelpText(),
    };

    const recordedAllows = run.allowPrunes;
    if (job.withdraw) {
      const left = run.approvals.filter((a) => a.comment !== job.commentId);
      if (left.length !== run.approvals.length) {
        run.approvals = left;
        run.recheck = true;
      }
      const allowsLeft = run.allowPrunes.filter((a) => a.comment !== job.commentId);
      if (allowsLeft.length !== run.allowPrunes.length) {
        run.allowPrunes = allowsLeft;
        run.recheck = true;
      }
    }

    const outcomes: Outcome[] = [];
    let costly = 0;
    for (const command of job.parsed.commands) {
      const entry = commandNamed(command.name);
      const refusal =
        entry.costly && costly++ > 0
          ? `\`/${command.name}\`: one command that edits or explains catalogs per comment (${COSTLY_COMMANDS.join(', ')}); write it in another comment.`
          : await entry.mayUse(run, command);
      outcomes.push(
        refusal !== undefined
          ? { command, ok: false, say: refusal }
          : { command, ...(await entry.act(run, command)) },
      );
    }

    const { approvals, seenHead, hold, allowPrunes } = run;
    const allowsChanged = allowPrunes !== recordedAllows;
    if (
      status &&
      (approvals !== status.state.approvals ||
        seenHead !== status.state.head ||
        hold !== status.state.hold ||
        allowsChanged)
    )
      await saveState(github, ref, number, status, {
        approvals,
        ...(seenHead ? { head: seenHead } : {}),
        hold,
        ...(allowsChanged ? { allowPrunes } : {}),
      });
    if (run.recheck && pr.state === 'open') {
      const prJob: PrJob = { ...pullTargetOf(job), headSha: pr.head.sha, author };
      await enqueueChecks(context, options, prJob, `${key}:checks`);
    }
    await acknowledge(context, job, outcomes);
  } catch (error) {
    log.error({ err: error, pr: number }, 'comment commands failed');
    await github.comments.react(ref, job.commentId, 'confused').catch(() => undefined);
  }
}

/** The commands of a comment on an issue: each entry's `onIssue`, one costly command per comment. */
async function runIssueCommands(
  context: JobContext,
  options: PrHandlerOptions,
  job: CommentJob,
): Promise<void> {
  const { github, log } = context;
  try {
    const outcomes: Outcome[] = [];
    for (const [i, command] of job.parsed.commands.entries()) {
      const entry = commandNamed(command.name);
      if (!entry.onIssue) continue;
      if (entry.costly && i > 0) {
        outcomes.push({
          command,
          ok: false,
          say: `\`/${command.name}\`: one command that edits or explains catalogs per comment (${COSTLY_COMMANDS.join(', ')}); write it in another comment.`,
        });
        continue;
      }
      const run = {
        context,
        options,
        commenter: job.commenter,
        target: { ...pullTargetOf(job), commenter: job.commenter },
      };
      outcomes.push({ command, ...(await entry.onIssue(run, command)) });
    }
    await acknowledge(context, job, outcomes);
  } catch (error) {
    log.error({ err: error, issue: job.number }, 'comment commands failed');
    await github.comments.react(job.ref, job.commentId, 'confused').catch(() => undefined);
  }
}

/** A reaction for every comment with commands, and one short reply when something needs saying. */
async function acknowledge(
  context: Pick<JobContext, 'github'>,
  job: CommentJob,
  outcomes: Outcome[],
): Promise<void> {
  const { github } = context;
  if (job.notice) await reply(github, job.ref, job.number, job.notice);
  const refused = outcomes.filter((o) => !o.ok);
  const problems = job.parsed.problems.map((p) => `\`${p.text.slice(0, 100)}\`: ${p.reason}`);
  if (outcomes.length > 0 || problems.length > 0) {
    const content = refused.length === 0 && problems.length === 0 ? '+1' : 'confused';
    await github.comments.react(job.ref, job.commentId, content);
  }
  const lines = [
    ...problems.map((p) => `- ${p}`),
    ...refused.map((o) => `- ${o.say ?? ''}`),
    ...outcomes.filter((o) => o.ok && o.say).map((o) => o.say as string),
  ];
  if (problems.length > 0 && !outcomes.some((o) => o.command.name === 'help'))
    lines.push('', commentHelpText());
  if (lines.length === 0) return;
  // reply() keeps what the lines quote (package names, arguments) from forging a status comment.
  await reply(
    github,
    job.ref,
    job.number,
    `@${job.commenter} ${lines.length === 1 ? lines[0]!.replace(/^- /, '') : '\n\n' + lines.join('\n')}`,
  );
}

async function writeAccess(github: GitHub, ref: RepoRef, login: string): Promise<boolean> {
  try {
    const permission = await github.permissions.ofCollaborator(ref, login);
    return permission === 'admin' || permission === 'write';
  } catch {
    return false; // not a collaborator (404) or cannot tell: no write access
  }
}

/**
 * May `login` (who commented `/approve`, or reviewed) approve everything the pull request
 * touches, or which part? The same decision as the permissions check, with them in the
 * author's place. Also returns the content digests the approval is given for.
 */
export async function mayApproveAll(
  context: JobContext,
  target: PullTarget,
  login: string,
  base: string,
  head: string,
  options: PrHandlerOptions,
): Promise<ApprovalDecision> {
  // Only the permissions decision: who may approve needs no validation, graph or render.
  const result = await checkPullHead(context, options, target, 'approve', base, head, {
    author: login,
    approvers: [],
    only: [PERMISSIONS_CHECK],
  });
  const check = result.checks.find((c) => c.name === PERMISSIONS_CHECK);
  const missing = check ? unapprovedChanges(check) : [];
  const may = check?.conclusion === 'success';
  // An owner of part of it approves that part only: each owner set agrees through its own
  // member (docs/security.md), so the approval is recorded for the rows they own.
  const agreed = new Set(result.agreed ?? []);
  const subjects = [...(result.subjects ?? [])].filter(([what]) => may || agreed.has(what));
  return {
    may,
    ownsPart: may || subjects.length > 0,
    subjects: Object.fromEntries(subjects),
    why:
      missing.length > 0
        ? `you may not approve everything this pull request changes, nor any part of it: ${missing.slice(0, 3).join('; ')}`
        : 'you may not approve this pull request.',
  };
}
