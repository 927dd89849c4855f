// The impact section the App writes (the status comment, `/explain impact`; docs/impact.md):
// the Markdown of the impact within a size, and where the whole answer is.
import { impactMarkdownWithin, type CatalogsImpact } from '../../catalog/olm/impact-report.js';

/**
 * How much of a status comment the impact takes (GitHub holds 65,536 characters a comment;
 * the approvals and the hidden state need the rest).
 */
export const MAX_IMPACT_SECTION = 40_000;

/** The section: what clusters will see after the merge, bounded, and where the whole answer is. */
export function impactSection(
  catalogs: CatalogsImpact,
  base: string,
  head: string,
  max = MAX_IMPACT_SECTION,
  /** The pull request's impact page, when the App serves it (docs/site.md): named in a summary. */
  page?: string,
): string {
  const link = page ? `The whole impact, with a graph per changed channel: ${page}\n\n` : '';
  const whole = `${link}\`catalog-bot impact --base ${base.slice(0, 12)} --head ${head.slice(0, 12)} --format markdown\` in a clone of the repository prints the whole answer (\`--format json\` for tools).`;
  const heading = `#### What clusters will see after the merge (at ${head.slice(0, 12)})\n\n`;
  return `${heading}${impactMarkdownWithin(catalogs, max - heading.length, whole).trimEnd()}`;
}
