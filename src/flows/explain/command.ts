// `/explain <bundle> [from <version>] [in <catalog>]`: whether and how clusters get a bundle,
// in plain words with a Mermaid path (the answer: ./flow.ts); `/explain impact`: what the
// pull request changes for clusters (src/flows/impact/flow.ts). Read-only, so anyone may ask.
import { explainImpact } from '../impact/flow.js';
import { explainFromComment } from './flow.js';
import { inlineCode } from '../../handlers/quote.js';
import { defineCommentCommand } from '../../handlers/commands/command.js';
import { SAFE_ARGUMENT } from '../promote/command.js';

const USAGE = 'usage: `/explain <bundle> [from <version>] [in <catalog>]`';
// What people type as a version: `1.2.3`, `v1.2.3-rc.1+build`; the semver parser decides the rest.
const VERSION_ARGUMENT = /^v?[0-9][0-9A-Za-z.+-]{0,99}$/;

export const explain = defineCommentCommand({
  name: 'explain',
  costly: true,
  help: {
    line: '`/explain <bundle> [from <version>] [in <catalog>]` says whether and how clusters get a bundle; `/explain impact` what the pull request changes for clusters',
    rows: [
      {
        usage: '`/explain impact`',
        who: 'anyone',
        what: "answers what the pull request changes for clusters, per catalog (identical ones grouped), package and channel: bundles and edges added and removed, heads and default channel before and after, installed versions stranded or newly reaching the head, with a Mermaid graph per changed channel; the status comment's impact section when it is for the head. Writes nothing",
      },
      {
        usage: '`/explain <bundle> [from <version>] [in <catalog>]`',
        who: 'anyone',
        what: "answers, on the pull request's head catalogs (its base's when the head no longer has the bundle), whether a new install gets the bundle (which channel, default or not), which installed versions (or the one named) reach it and by what path under classic OLM and OLM v1, and where not, why; with a Mermaid path. Writes nothing",
      },
    ],
  },
  parse: (args, _typed, at) => {
    const [bundle, ...rest] = args;
    // `/explain impact` alone asks about the whole change (a bundle named so: add `in <catalog>`).
    if (bundle?.toLowerCase() === 'impact' && rest.length === 0)
      return { name: 'explain', bundle, impact: true, ...at };
    if (bundle === undefined || rest.length % 2 !== 0 || rest.length > 4) return { problem: USAGE };
    if (!SAFE_ARGUMENT.test(bundle) || bundle.includes('/'))
      return { problem: `${inlineCode(bundle, 100)} is not a bundle name` };
    const options: { from?: string; root?: string } = {};
    for (let i = 0; i < rest.length; i += 2) {
      const [key, value] = [rest[i]!.toLowerCase(), rest[i + 1]!];
      if (key === 'from' && options.from === undefined) {
        if (!VERSION_ARGUMENT.test(value)) return { problem: `${inlineCode(value, 100)} is not a version` };
        options.from = value;
      } else if (key === 'in' && options.root === undefined) {
        if (!SAFE_ARGUMENT.test(value)) return { problem: `${inlineCode(value, 100)} is not a catalog root` };
        options.root = value;
      } else return { problem: USAGE };
    }
    return { name: 'explain', bundle, ...options, ...at };
  },
  mayUse: async () => undefined,
  act: (run, command) => {
    if (command.impact) return explainImpact(run.context, run.options, run.job, run.pr, run.status);
    return explainFromComment(run.context, run.options, run.job, run.pr, {
      bundle: command.bundle,
      ...(command.from !== undefined ? { from: command.from } : {}),
      ...(command.root !== undefined ? { root: command.root } : {}),
    });
  },
});
