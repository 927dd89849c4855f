// `/approve`, `/approve cancel`: an approval recorded in the bot's status comment, for the
// content the approver saw (docs/security.md). Deciding it needs only the permissions
// decision, with the commenter in the author's place (no validation, graph or render).
import { cancelable, defineCommand, sawHeadNow } from './command.js';

export const approve = defineCommand({
  name: 'approve',
  help: {
    line: '`/approve` approves the change for the packages you own (`/approve cancel` takes it back)',
    rows: [
      {
        usage: '`/approve`',
        who: 'an owner of a changed package or file (of one of its owner sets, where several must agree), or a maintainer',
        what: 'records the approval for the content it saw, for what the approver owns (a maintainer: everything); a later push that changes a package needs a fresh `/approve` from its owners, pushes that touch other things keep it',
      },
      {
        usage: '`/approve cancel`',
        who: 'the approver',
        what: 'withdraws their approval (so do deleting the comment or editing `/approve` out of it)',
      },
    ],
  },
  parse: (args, _typed, at) => cancelable('approve', args, at),
  mayUse: async (run, command) => {
    if (command.cancel) return undefined;
    if (!run.status) return '`/approve`: approvals cannot be recorded by this installation.';
    // The approval is for the head the approver saw: the one the pull request had when the
    // comment was written, not whatever was pushed before this job ran.
    if (!(await sawHeadNow(run))) {
      return `\`/approve\`: catalog-bot cannot tell that ${run.pr.head.sha.slice(0, 12)}, the head now, is the commit you saw when you wrote this (it may have been pushed since). Nothing was approved; please look at the pull request again and comment \`/approve\` anew.`;
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
