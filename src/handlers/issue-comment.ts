// Comment commands on pull requests: parse, then (in the repository's queue) authorize and
// act. State stays on GitHub: labels, and the bot's status comment for approvals.
import type { Context } from 'probot';
import { PERMISSIONS_CHECK, unapprovedChanges } from '../checks/permissions.js';
import type { RepoRef } from './check-runs.js';
import { addedCommands, helpText, parseComment, type Command, type ParsedComment } from './commands.js';
import { enqueueChecks, type JobContext, type PrHandlerOptions, type PrJob } from './pull-request.js';
import {
  LABELS,
  loadState,
  observeHead,
  reply,
  saveState,
  setLabel,
  wasHeadWhenWritten,
} from './pr-state.js';
import { promoteFromComment, renderFromComment } from './promote.js';
import { openSession, pullTarget, type PullTarget } from './session.js';

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
}

export function issueCommentHandler(options: PrHandlerOptions): (context: CommentContext) => Promise<void> {
  return async (context) => {
    const { payload } = context;
    if (!payload.issue.pull_request) return; // commands work on pull requests only
    const { comment } = payload;
    // The bot's own comments and other bots' never command anything.
    if (comment.user?.type === 'Bot' || payload.sender?.type === 'Bot') return;
    const approves = (body: string) =>
      parseComment(body).commands.some((c) => c.name === 'approve' && !c.cancel);
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
    const job: CommentJob = {
      ...pullTarget(payload, payload.issue.number),
      commentId: comment.id,
      commenter: comment.user?.login ?? '',
      parsed,
      withdraw,
      ...(notice ? { notice } : {}),
      writtenAt: (payload.action === 'edited' ? comment.updated_at : comment.created_at) ?? undefined,
    };
    await options.queue.enqueue({
      key: `delivery:${context.id}`,
      group: `repo:${job.repoId}`,
      kind: 'commands',
      data: job,
    });
  };
}

/** The same GitHub account: the same login (both are current in one payload) and, when both carry one, the same id. */
function sameUser(
  a: { id?: number; login?: string } | null | undefined,
  b: { id?: number; login?: string } | null | undefined,
): boolean {
  if (!a?.login || !b?.login || a.login.toLowerCase() !== b.login.toLowerCase()) return false;
  return typeof a.id !== 'number' || typeof b.id !== 'number' || a.id === b.id;
}

interface Outcome {
  command: Command;
  ok: boolean;
  /** A line for the reply: why it was refused, or what it produced (`/help`). */
  say?: string;
}

/** Authorize and carry out the commands of one comment. Never throws. */
export async function runCommandsJob(
  context: JobContext,
  options: PrHandlerOptions,
  job: CommentJob,
  key: string,
): Promise<void> {
  const { octokit, log } = context;
  const { ref, number, commenter } = job;
  try {
    const { data: pr } = await octokit.rest.pulls.get({ ...ref, pull_number: number });
    const author = pr.user?.login ?? '';
    const labels = pr.labels.map((l) => l.name);
    const slug = options.appSlug ? await options.appSlug() : undefined;
    const status = slug ? await loadState(octokit, ref, number, `${slug}[bot]`) : undefined;
    let approvals = status?.state.approvals ?? [];
    let seenHead = status?.state.head;
    let recheck = false;

    // Who may do what, each looked up once and only when needed.
    let write: Promise<boolean> | undefined;
    const hasWrite = () => (write ??= writeAccess(context.octokit, ref, commenter));
    let owner: Promise<{ may: boolean; subjects: Record<string, string>; why: string }> | undefined;
    const ownsAll = () => (owner ??= mayApproveAll(context, job, pr.base.sha, pr.head.sha, options));

    if (job.withdraw) {
      const left = approvals.filter((a) => a.comment !== job.commentId);
      if (left.length !== approvals.length) {
        approvals = left;
        recheck = true;
      }
    }

    const target = {
      ref,
      number,
      commenter,
      cloneUrl: job.cloneUrl,
      repoId: job.repoId,
      installationId: job.installationId,
    };
    const outcomes: Outcome[] = [];
    for (const command of job.parsed.commands) {
      const refuse = (say: string) => outcomes.push({ command, ok: false, say });
      switch (command.name) {
        case 'help':
          outcomes.push({ command, ok: true, say: helpText() });
          break;
        case 'hold': {
          if (commenter !== author && !(await hasWrite()) && !(await ownsAll()).may) {
            refuse(
              `\`${command.text}\`: only the author, someone with write access or an owner may hold or unhold.`,
            );
            break;
          }
          await setLabel(octokit, ref, number, labels, LABELS.hold, !command.cancel);
          if (command.cancel) recheck = true; // the hold may have been all that kept it from merging
          outcomes.push({ command, ok: true });
          break;
        }
        case 'lgtm': {
          if (!command.cancel && commenter === author) {
            refuse('`/lgtm`: you cannot LGTM your own pull request.');
            break;
          }
          if (!command.cancel && !(await hasWrite()) && !(await ownsAll()).may) {
            refuse(
              '`/lgtm`: only someone with write access or an owner of the changed packages may say this.',
            );
            break;
          }
          await setLabel(octokit, ref, number, labels, LABELS.lgtm, !command.cancel);
          outcomes.push({ command, ok: true });
          break;
        }
        case 'approve': {
          if (command.cancel) {
            const left = approvals.filter((a) => a.login.toLowerCase() !== commenter.toLowerCase());
            recheck ||= left.length !== approvals.length;
            approvals = left;
            outcomes.push({ command, ok: true });
            break;
          }
          if (!status) {
            refuse('`/approve`: approvals cannot be recorded by this installation.');
            break;
          }
          // The approval is for the head the approver saw: the one the pull request had
          // when the comment was written, not whatever was pushed before this job ran.
          if (!(await wasHeadWhenWritten(octokit, ref, number, seenHead, pr.head.sha, job.writtenAt))) {
            // Look now, so that an `/approve` written after this reply can count.
            seenHead = await observeHead(octokit, ref, number, seenHead);
            refuse(
              `\`/approve\`: catalog-bot cannot tell that ${pr.head.sha.slice(0, 12)}, the head now, is the commit you saw when you wrote this (it may have been pushed since). Nothing was approved; please look at the pull request again and comment \`/approve\` anew.`,
            );
            break;
          }
          const decision = await ownsAll();
          if (!decision.may) {
            refuse(`\`/approve\`: ${decision.why}`);
            break;
          }
          approvals = [
            ...approvals.filter((a) => a.login.toLowerCase() !== commenter.toLowerCase()),
            { login: commenter, comment: job.commentId, sha: pr.head.sha, subjects: decision.subjects },
          ];
          recheck = true;
          outcomes.push({ command, ok: true });
          break;
        }
        case 'retest': {
          if (commenter !== author && !(await hasWrite()) && !(await ownsAll()).may) {
            refuse(
              '`/retest`: only the author, someone with write access or an owner may re-run the checks.',
            );
            break;
          }
          recheck = true;
          outcomes.push({ command, ok: true });
          break;
        }
        case 'promote': {
          const outcome = await promoteFromComment(context, options, target, pr, {
            bundle: command.bundle,
            channel: command.channel,
            ...(command.root ? { root: command.root } : {}),
          });
          outcomes.push({ command, ok: outcome.ok, say: outcome.say });
          break;
        }
        case 'render': {
          const outcome = await renderFromComment(
            context,
            options,
            target,
            pr,
            options.bundles?.resolveBundle,
          );
          outcomes.push({ command, ok: outcome.ok, say: outcome.say });
          break;
        }
      }
    }

    if (status && (approvals !== status.state.approvals || seenHead !== status.state.head))
      await saveState(octokit, ref, number, status, { approvals, ...(seenHead ? { head: seenHead } : {}) });
    if (recheck && pr.state === 'open') {
      const prJob: PrJob = {
        ref,
        number,
        headSha: pr.head.sha,
        author,
        installationId: job.installationId,
        cloneUrl: job.cloneUrl,
        repoId: job.repoId,
      };
      await enqueueChecks(context, options, prJob, `${key}:checks`);
    }
    await acknowledge(context, job, outcomes);
  } catch (error) {
    log.error({ err: error, pr: number }, 'comment commands failed');
    await octokit.rest.reactions
      .createForIssueComment({ ...ref, comment_id: job.commentId, content: 'confused' })
      .catch(() => undefined);
  }
}

/** A reaction for every comment with commands, and one short reply when something needs saying. */
async function acknowledge(
  context: Pick<Context, 'octokit'>,
  job: CommentJob,
  outcomes: Outcome[],
): Promise<void> {
  const { octokit } = context;
  if (job.notice) await reply(octokit, job.ref, job.number, job.notice);
  const refused = outcomes.filter((o) => !o.ok);
  const problems = job.parsed.problems.map((p) => `\`${p.text.slice(0, 100)}\`: ${p.reason}`);
  if (outcomes.length > 0 || problems.length > 0) {
    const content = refused.length === 0 && problems.length === 0 ? '+1' : 'confused';
    await octokit.rest.reactions.createForIssueComment({ ...job.ref, comment_id: job.commentId, content });
  }
  const lines = [
    ...problems.map((p) => `- ${p}`),
    ...refused.map((o) => `- ${o.say ?? ''}`),
    ...outcomes.filter((o) => o.ok && o.say).map((o) => o.say as string),
  ];
  if (problems.length > 0 && !outcomes.some((o) => o.command.name === 'help')) lines.push('', helpText());
  if (lines.length === 0) return;
  // reply() keeps what the lines quote (package names, arguments) from forging a status comment.
  await reply(
    octokit,
    job.ref,
    job.number,
    `@${job.commenter} ${lines.length === 1 ? lines[0]!.replace(/^- /, '') : '\n\n' + lines.join('\n')}`,
  );
}

async function writeAccess(octokit: Context['octokit'], ref: RepoRef, login: string): Promise<boolean> {
  try {
    const { data } = await octokit.rest.repos.getCollaboratorPermissionLevel({ ...ref, username: login });
    return data.permission === 'admin' || data.permission === 'write';
  } catch {
    return false; // not a collaborator (404) or cannot tell: no write access
  }
}

/**
 * May the commenter approve everything the pull request touches? The same decision as the
 * permissions check, with the commenter in the author's place. Also returns the content
 * digests the approval is given for.
 */
async function mayApproveAll(
  context: JobContext,
  job: CommentJob,
  base: string,
  head: string,
  options: PrHandlerOptions,
): Promise<{ may: boolean; subjects: Record<string, string>; why: string }> {
  const commits = { fetch: [base, `refs/pull/${job.number}/head`], blobs: [base, head] };
  // Only the permissions decision: who may approve needs no validation, graph or render.
  const result = await openSession(context, options, job, 'approve', commits, async (session) =>
    session.run({
      base: await session.mergeBase(base, head),
      rules: base,
      head,
      author: job.commenter,
      approvers: [],
      only: [PERMISSIONS_CHECK],
    }),
  );
  const check = result.checks.find((c) => c.name === PERMISSIONS_CHECK);
  const missing = check ? unapprovedChanges(check) : [];
  return {
    may: check?.conclusion === 'success',
    subjects: Object.fromEntries(result.subjects ?? []),
    why:
      missing.length > 0
        ? `you may not approve everything this pull request changes: ${missing.slice(0, 3).join('; ')}`
        : 'you may not approve this pull request.',
  };
}
