// `catalog-bot impact [--base <ref>] [--head <ref>]`: what clusters will see differently
// after a change, per changed catalog root, package and channel (docs/impact.md). Same
// defaults as `check`: head is the working tree, base where HEAD left the default branch.
import { impactMarkdown, impactText } from '../../catalog/olm/impact-report.js';
import { impactOf } from './impact.js';
import { defineCliCommand, requireDirectory } from '../../commands/command.js';
import { writeJson } from '../../commands/output.js';
import { changeRange } from '../../commands/working-tree.js';

export { impactOf };
/** The Markdown form (src/flows/onboard/ quotes it in its pull request's description). */
export { impactMarkdown as markdown };

const IMPACT_USAGE = `catalog-bot impact [--base <ref>] [--head <ref>] [--repo <dir>] [--format text|json|markdown]
  What clusters will see differently after the change, for every changed catalog root:
  per package and channel the bundles and edges added and removed, the heads and default
  channel before and after, skipRange changes, and the installed versions that lose (or
  gain) their way to the channel head under classic OLM. Default head: the working tree;
  default base: the merge-base of HEAD with the default branch. Exit 0, 2 usage/IO.
`;

export const command = defineCliCommand({
  usage: IMPACT_USAGE,
  options: {
    repo: { type: 'string', default: '.' },
    base: { type: 'string' },
    head: { type: 'string' },
    format: { type: 'string', default: 'text' },
  },
  formats: ['text', 'json', 'markdown'],
  async run({ values }, { out }) {
    await requireDirectory(values.repo);
    const { head, base } = changeRange(values.repo, values.head, values.base);
    const catalogs = await impactOf(values.repo, base, head);
    if (values.format === 'json') writeJson(out, { catalogs });
    else if (values.format === 'markdown') out.write(impactMarkdown(catalogs));
    else out.write(impactText(catalogs));
    return 0;
  },
});
