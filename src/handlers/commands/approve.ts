// `/approve`, `/approve <commit>`, `/approve cancel`: an approval recorded in the bot's
// status comment, for the content the approver saw (docs/security.md "Approvals are what the
// approver saw"). Deciding it needs only the permissions decision, with the commenter in the
// author's place (no validation, graph or render).
import { approveGraceMsFromEnv } from '../pull-request.js';
import { cancelable, defineCommentCommand, sawHeadNow, type At, type CommandOf } from './command.js';

/** A commit named by its sha or a prefix of it, as `git log --oneline` shows it (7 or more hex digits). */
const COMMIT = /^[0-9a-f]{7,40}$/i;

function parseApprove(args: string[], at: At): CommandOf<'approve'> | { problem: string } {
  if (args.length === 1 && COMMIT.test(args[0]!))
    return { name: 'approve', cancel: false, sha: args[0]!.toLowerCase(), ...at };
  const parsed = cancelable('approve', args, at);
  return 'problem' in parsed
    ? {
        problem:
          '`/approve` takes no argument other than `cancel` or a commit (7 or more hex digits of its sha)',
      }
    : parsed;
}

export const approve = defineCommentCommand({
  name: 'approve',
  help: {
    line: '`/approve` approves the change for the packages you own (`/approve <commit>` names the head you looked at, `/approve cancel` takes it back)',
    rows: [
      {
        usage: '`/approve`',
        who: 'an owner of a changed package or file (of one of its owner sets, where several must agree), or a maintainer',
        what: 'records the approval for the content it saw, for what the approver owns (a maintainer: everything): the head that had been the head for the grace period (60 s by default) when the comment was written (otherwise nothing is approved and the reply names the head and how to approve it with `/approve <commit>`); a later push that changes a package needs a fresh `/approve` from its owners, pushes that touch other things keep it',
      },
      {
        usage: '`/approve <commit>`',
        who: 'as `/approve`',
        what: 'approves only if `<commit>` (7 or more hex digits of its sha) is the head and was the head when the comment was written, however recently it was pushed',
      },
      {
        usage: '`/approve cancel`',
        who: 'the approver',
        what: 'withdraws their approval (so do deleting the comment or editing `/approve` out of it)',
      },
    ],
  },
  parse: (args, _typed, at) => parseApprove(args, at),
  mayUse: async (run, command) => {
    if (command.cancel) return undefined;
    if (!run.status) return '`/approve`: approvals cannot be recorded by this installation.';
    const head = run.pr.head.sha;
    const confirm = `Nothing was approved; once you have looked at ${head.slice(0, 12)}, comment \`/approve ${head.slice(0, 7)}\` to approve it.`;
    if (command.sha) {
      // The approver names what they looked at: it must be the head, then and now.
      if (!head.startsWith(command.sha))
        return `\`/approve ${command.sha}\`: that is not the head of this pull request (the head is ${head.slice(0, 12)}). ${confirm}`;
      if (!(await sawHeadNow(run)))
        return `\`/approve ${command.sha}\`: catalog-bot cannot tell that ${head.slice(0, 12)} was already the head when you wrote this. ${confirm}`;
    } else {
      // The approval is for the head the approver saw: one pushed shortly before the comment
      // (or after it) may not be the one they read (docs/security.md).
      const graceMs = run.options.approveGraceMs ?? approveGraceMsFromEnv();
      if (!(await sawHeadNow(run, graceMs)))
        return `\`/approve\`: catalog-bot cannot tell that ${head.slice(0, 12)}, the head now, is the commit you saw when you wrote this (it may have been pushed less than ${Math.round(graceMs / 1000)} s before your comment, or after it). ${confirm}`;
    }
    const decision = await run.ownsAll();
    return decision.ownsPart ? undefined : `\`/approve\`: ${decision.why}`;
  },
  act: async (run, command) => {
    const { commenter } = run;
    const others = run.approvals.filter((a) => a.login.toLowerCase() !== commenter.toLowerCase());
    if (command.cancel) {
      run.recheck ||= others.length !== run.approvals.length;
      run.approvals = others;
      return { ok: true };
    }
    const { subjects } = await run.ownsAll();
    run.approvals = [
      ...others,
      { login: commenter, comment: run.job.commentId, sha: run.pr.head.sha, subjects },
    ];
    run.recheck = true;
    return { ok: true };
  },
});
