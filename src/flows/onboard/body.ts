// The description of the pull request `/onboard` opens (docs/legacy-index.md, "`/onboard`
// in the App"): what it converts, and what clusters see differently once it merges. Names
// come from the bundle directories (channels, bundles), so they are quoted in code or
// escaped by the impact report, never as Markdown, HTML or @mentions (docs/security.md).
import { markdown as impactMarkdown } from '../impact/cli.js';
import { bounded, codeBlock, inlineCode } from '../../handlers/quote.js';
import { replyText } from '../../handlers/pr-state.js';
import type { OnboardPlan } from './work.js';

/** GitHub takes at most 65,536 characters in a pull request's body; the sections' bounds keep under this. */
export const MAX_BODY = 60_000;
/** The impact report's share of it; a larger one is summarised. */
const MAX_IMPACT = 25_000;
/** Each other section's most (files: 100 lines of at most 200 characters). */
const MAX_SECTION = 5_000;
const MAX_FILES = 100;

export const NOTHING_CHANGES = 'Nothing changes for clusters';

type Planned = Exclude<OnboardPlan, { refused: string }>;

/** `@name` outside code blocks would notify `name`: a zero-width space after `@` keeps the text and drops the mention. */
export function withoutMentions(text: string): string {
  let fence: string | undefined;
  return text
    .split('\n')
    .map((line) => {
      const m = /^ {0,3}(`{3,}|~{3,})/.exec(line);
      if (m) {
        if (fence === undefined) fence = m[1];
        else if (m[1]![0] === fence[0] && m[1]!.length >= fence.length) fence = undefined;
        return line;
      }
      return fence === undefined ? line.replace(/@/g, '@\u200b') : line;
    })
    .join('\n');
}

/** The catalogs written, identical ones on one line. */
function catalogLines(plan: Planned): string[] {
  const groups = new Map<string, string[]>();
  for (const c of plan.catalogs) {
    const channels = c.channels.map((ch) => `${ch.name} (${ch.entries})`).join(', ');
    const line = `default channel ${c.defaultChannel}; channels ${channels}; ${c.bundles} bundle(s)`;
    groups.set(line, [...(groups.get(line) ?? []), c.catalog]);
  }
  return [...groups].map(([line, catalogs]) => `${catalogs.join(', ')}: ${line}`);
}

/** What the App cannot see: the published index itself (docs/legacy-index.md). */
const EMULATED =
  'What the index serves is emulated from the bundle directories; where a published index was changed by hand (a bundle taken out, say), `catalog-bot onboard --index <v>=<render of the index>` keeps exactly what it serves and names every difference.';

function impactSection(plan: Planned): string[] {
  const roots = Object.keys(plan.impact);
  if (roots.length === 0)
    return [
      `${NOTHING_CHANGES}: in every OpenShift catalog the converted catalog has the graph, the bundles and the default channel that the bundle index serves today.`,
      '',
      EMULATED,
    ];
  const report = withoutMentions(impactMarkdown(plan.impact));
  if (report.length <= MAX_IMPACT)
    return [
      'The converted catalogs differ from what the bundle index serves today:',
      '',
      report.trimEnd(),
      '',
      EMULATED,
    ];
  return [
    `The converted catalogs differ from what the bundle index serves today in ${roots.length} catalog(s); the report (${report.length} characters) is too long for this description: run \`catalog-bot impact\` on this branch for all of it.`,
    '',
    codeBlock(roots.join('\n')),
  ];
}

/** The pull request's description. */
export function onboardBody(
  plan: Planned,
  request: { package: string; commenter: string; number: number; base: string; parent: string },
): string {
  const files = plan.edits.map((e) => `- ${inlineCode(e.path, 200)}`);
  const shown =
    files.length > MAX_FILES
      ? [...files.slice(0, MAX_FILES), `- … and ${files.length - MAX_FILES} more`]
      : files;
  const body = [
    `Moves ${inlineCode(request.package)} (${inlineCode(plan.mode)}) from the bundle index to file-based catalogs, as \`catalog-bot onboard\` does on ${request.parent.slice(0, 12)} of \`${request.base}\`. Requested by @${request.commenter} in #${request.number}.`,
    '',
    '### What clusters see differently',
    '',
    ...impactSection(plan),
    '',
    '### The catalogs written',
    '',
    codeBlock(bounded(catalogLines(plan).join('\n'), MAX_SECTION)),
    '',
    '### Files',
    '',
    ...shown,
    ...(plan.notes.length > 0
      ? ['', '### Notes', '', codeBlock(bounded(plan.notes.join('\n'), MAX_SECTION))]
      : []),
    '',
    'Checked like any pull request; once its checks pass and an owner of the package or a maintainer approves it (`/approve`), catalog-bot merges it.',
  ].join('\n');
  const safe = replyText(body);
  return safe.length <= MAX_BODY ? safe : `${safe.slice(0, MAX_BODY - 40)}\n\n… (description cut)`;
}
