// The description of a `/remove` pull request (docs/remove.md, "In the App"): what is removed
// and, per catalog (an OpenShift version), what the clusters using it lose, catalogs that
// lose the same things told once. Every name comes from the repository's files (a CSV's
// `metadata.name` can be any string), so each is quoted in a code span (src/handlers/quote.ts):
// no Markdown, HTML or @mention of a name renders. Bounded to what GitHub takes.
import type { CatalogLoss, RemovalResult } from '../../catalog/edits/remove.js';
import { codeBlock, inlineCode } from '../../handlers/quote.js';

/** GitHub refuses a pull request body over 65,536 characters; this leaves room for the end. */
export const MAX_BODY = 60_000;
/** Names listed per line before "and N more". */
const MAX_NAMES = 40;

type Removal = Omit<RemovalResult, 'edits' | 'deletedFiles'>;

const code = (name: string): string => inlineCode(name, 300);

function names(list: readonly string[]): string {
  const shown = list.slice(0, MAX_NAMES).map(code).join(', ');
  return list.length > MAX_NAMES ? `${shown} and ${list.length - MAX_NAMES} more` : shown;
}

function lossLines(loss: CatalogLoss): string[] {
  const out = [`- bundles removed: ${names(loss.bundlesRemoved) || 'none'}`];
  if (loss.channelsRemoved.length > 0) out.push(`- channels removed: ${names(loss.channelsRemoved)}`);
  if (loss.defaultChannelRemoved !== null)
    out.push(`- the default channel ${code(loss.defaultChannelRemoved)} is gone`);
  for (const h of loss.headsRemoved.slice(0, MAX_NAMES))
    out.push(
      `- channel ${code(h.channel)} loses its head ${code(h.head)}; new head: ${names(h.newHeads) || 'none'}`,
    );
  for (const d of loss.dangling.slice(0, MAX_NAMES))
    out.push(
      `- ${code(d.entry)} in channel ${code(d.channel)} ${d.replaces !== undefined ? `replaces ${code(d.replaces)}` : `skips ${code(d.skips ?? '')}`}, which is gone: clusters running it still upgrade, new installs cannot get it`,
    );
  for (const s of loss.stranded.slice(0, MAX_NAMES))
    out.push(
      `- installed versions stranded in channel ${code(s.channel)} (no way to its head any more): ${names(s.bundles)}`,
    );
  const cut = Math.max(loss.headsRemoved.length, loss.dangling.length, loss.stranded.length) > MAX_NAMES;
  if (cut) out.push(`- … (more channels: \`catalog-bot remove --dry-run\` lists them all)`);
  return out;
}

/** Catalogs that lose exactly the same things, in the order the removal lists them. */
export function groupedLosses(
  catalogs: Record<string, CatalogLoss>,
): { catalogs: string[]; loss: CatalogLoss }[] {
  const groups = new Map<string, { catalogs: string[]; loss: CatalogLoss }>();
  for (const [name, loss] of Object.entries(catalogs)) {
    const key = JSON.stringify(loss);
    const group = groups.get(key);
    if (group) group.catalogs.push(name);
    else groups.set(key, { catalogs: [name], loss });
  }
  return [...groups.values()];
}

/** What the removal is, in words (the title of its pull request; names are plain here). */
export function removalTitle(result: Removal): string {
  return result.bundle === null
    ? `Remove package ${result.package}`
    : `Remove bundle ${result.bundle} of ${result.package}`;
}

/** The pull request's description. */
export function removalPullBody(result: Removal, requested: { by: string; in: number }): string {
  const what =
    result.bundle === null
      ? `package ${code(result.package)}`
      : `bundle ${code(result.bundle)} (${code(result.directory ?? '')}) of package ${code(result.package)}`;
  const where =
    result.mode === 'fbc' ? 'on file-based catalogs' : `on the bundle index (${code(result.mode)})`;
  const lines = [
    `Removes ${what}, ${where}, as \`catalog-bot remove\` does (docs/remove.md). Requested by @${requested.by} in #${requested.in}.`,
    '',
    `Deletes ${result.removed.map((p) => `${code(p)}/`).join(', ')}.`,
    '',
    result.mode === 'fbc'
      ? '### What clusters lose, per catalog'
      : '### What clusters lose, per OpenShift index',
    '',
  ];
  const groups = groupedLosses(result.catalogs);
  if (groups.length === 0) lines.push('No catalog served it: clusters lose nothing.');
  const tail = guardLines(result);
  let used = lines.join('\n').length + tail.join('\n').length;
  for (const [i, g] of groups.entries()) {
    const section = [
      `**${g.catalogs.map(code).join(', ')}**${g.catalogs.length > 1 ? ' (the same for each)' : ''}:`,
      '',
      ...lossLines(g.loss),
      '',
    ];
    const size = section.join('\n').length + 1;
    if (used + size > MAX_BODY) {
      const left = groups.slice(i).flatMap((x) => x.catalogs).length;
      lines.push(`… and ${left} more catalogs: \`catalog-bot remove --dry-run\` lists them all.`, '');
      break;
    }
    used += size;
    lines.push(...section);
  }
  return [...lines, ...tail].join('\n');
}

/** What the pull request needs before it merges (docs/remove.md, "In the App"). */
function guardLines(result: Removal): string[] {
  const lines = ['### Before it merges', ''];
  lines.push(
    'The App opened this pull request, and it owns no package: an owner of the package (or a maintainer) approves it with `/approve`.',
  );
  if (result.allowPrune.length > 0) {
    lines.push(
      '',
      'Where these catalogs are published, `catalog-bot/prune` holds it until an owner of the package allows what the published images serve, one line each:',
      '',
      codeBlock(result.allowPrune.join('\n')),
    );
  } else
    lines.push(
      '',
      'The bundle index is built by the pipeline, not from the catalog roots: `catalog-bot/prune` does not see this removal.',
    );
  if (result.notes.length > 0)
    lines.push('', 'Notes:', '', codeBlock(result.notes.join('\n').slice(0, 5000)));
  return lines;
}
