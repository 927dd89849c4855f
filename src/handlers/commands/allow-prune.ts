// `/allow-prune <bundle>`, `/allow-prune <package>/<channel>`: the package's owners allow this
// pull request to remove a bundle or channel from what the published catalog serves
// (docs/publishing.md, "Pruning guard"). Recorded in the bot's status comment like an
// `/approve`: for the head the owner saw and the package content at it. The prune check
// decides again on every run whether the allow counts (owners from the base branch).
import { parsePruneTarget, PRUNE_CHECK, targetCovers, type PruneDecision } from '../../checks/prune.js';
import { packageSubject } from '../../checks/permissions.js';
import { checkPullHead } from '../session.js';
import { defineCommentCommand, sawHeadNow, type CommandRun } from './command.js';

/** What the prune check says of the named target with the commenter's allow, once per command. */
interface Probe {
  refusal?: string;
  items: (PruneDecision & { root: string })[];
}
const probes = new WeakMap<object, Promise<Probe>>();

export const allowPrune = defineCommentCommand({
  name: 'allow-prune',
  costly: true,
  help: {
    line: '`/allow-prune <bundle>` (or `<package>/<channel>`) lets this PR remove it from the published catalog',
    rows: [
      {
        usage: '`/allow-prune <bundle>`, `/allow-prune <package>/<channel>`',
        who: "an owner of the bundle's or channel's package, or a maintainer",
        what: '`catalog-bot/prune` then lets this PR remove that bundle or channel from what the published image serves; it counts for the package content it saw (a push that changes the package needs a new one)',
      },
    ],
  },
  parse: (args, _typed, at) => {
    if (args.length !== 1)
      return { problem: '`/allow-prune` takes one bundle name, or `<package>/<channel>` for a channel' };
    const target = parsePruneTarget(args[0]!);
    if ('problem' in target) return { problem: `\`/allow-prune\`: ${target.problem}` };
    return { name: 'allow-prune', target: args[0]!, ...at };
  },
  mayUse: async (run, command) => {
    if (!run.status) return '`/allow-prune`: allows cannot be recorded by this installation.';
    // Like `/approve`: for the head the owner saw when writing, not whatever came since.
    if (!(await sawHeadNow(run))) {
      return `\`/allow-prune ${command.target}\`: catalog-bot cannot tell that ${run.pr.head.sha.slice(0, 12)}, the head now, is the commit you saw when you wrote this. Nothing was allowed; please look again and comment anew.`;
    }
    return (await probe(run, command)).refusal;
  },
  act: async (run, command) => {
    const { items } = await probe(run, command);
    const subjects: Record<string, string> = {};
    for (const item of items) subjects[packageSubject(item.package, item.root)] = item.digest;
    const mine = (a: { login: string; target: string }) =>
      a.login.toLowerCase() === run.commenter.toLowerCase() && a.target === command.target;
    run.allowPrunes = [
      ...run.allowPrunes.filter((a) => !mine(a)),
      {
        login: run.commenter,
        comment: run.job.commentId,
        sha: run.pr.head.sha,
        target: command.target,
        subjects,
      },
    ];
    run.recheck = true;
    return { ok: true };
  },
});

function probe(run: CommandRun, command: { target: string }): Promise<Probe> {
  let answer = probes.get(command);
  if (!answer) {
    answer = ask(run, command.target);
    probes.set(command, answer);
  }
  return answer;
}

/**
 * Run the prune check as if the commenter had allowed the target: which items it names, and
 * whether the commenter owns them. Only the prune check runs (no validation).
 */
async function ask(run: CommandRun, text: string): Promise<Probe> {
  const { context, options, job, pr, commenter } = run;
  const target = parsePruneTarget(text);
  if ('problem' in target) return { refusal: `\`/allow-prune\`: ${target.problem}`, items: [] };
  if (!options.published)
    return {
      refusal: '`/allow-prune`: this installation does not compare with published images.',
      items: [],
    };
  const result = await checkPullHead(context, options, job, 'allow-prune', pr.base.sha, pr.head.sha, {
    published: options.published,
    allowPrunes: [{ login: commenter, target: text, subjects: {} }],
    only: [PRUNE_CHECK],
  });
  const outcomes = result.pruned ?? [];
  if (outcomes.length === 0)
    return {
      refusal: `\`/allow-prune ${text}\`: this pull request changes no published catalog.`,
      items: [],
    };
  const items = outcomes.flatMap((o) =>
    o.items.filter((item) => targetCovers(target, item)).map((item) => ({ ...item, root: o.root })),
  );
  if (items.length === 0) {
    const unchecked = outcomes.filter((o) => o.state === 'unreachable' || o.state === 'no-tag');
    return {
      refusal:
        unchecked.length > 0
          ? `\`/allow-prune ${text}\`: catalog-bot could not read the published image now (${unchecked
              .map((o) => `${o.root}: ${o.reason ?? ''}`)
              .join('; ')}); nothing was allowed. Comment again when it can.`
          : `\`/allow-prune ${text}\`: this pull request does not remove it from a published catalog; nothing was allowed.`,
      items: [],
    };
  }
  const notOwned = items.filter(
    (i) => !i.ownerAllows.some((l) => l.toLowerCase() === commenter.toLowerCase()),
  );
  if (notOwned.length > 0) {
    const who = (entries: string[]) =>
      entries.length === 0 ? 'a maintainer' : entries.map((e) => (e.includes('/') ? e : `@${e}`)).join(', ');
    return {
      refusal: `\`/allow-prune ${text}\`: only the owners of package ${notOwned[0]!.package} or a maintainer may allow removing it (${who(notOwned[0]!.mayAllow)}); nothing was allowed.`,
      items: [],
    };
  }
  return { items };
}
