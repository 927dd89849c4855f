// The impact of a change (./impact.ts) as people read it (docs/impact.md): text lines, and
// Markdown with identical catalogs grouped and a Mermaid graph per changed channel. Every
// name comes from files a pull request controls, so in Markdown each is a code span (GitHub
// renders no HTML, link or @mention inside one) and in Mermaid each label is entity-escaped.
// The bounded form keeps to a size (a GitHub comment holds 65,536 characters): past it, a
// summary with counts per catalog and the first channels, and where the rest is.
import type { ChannelImpact, PackageImpact } from './impact.js';

export type RootImpact = { packages: Record<string, PackageImpact> };
/** Catalog root path -> what changed there (roots without a change are left out). */
export type CatalogsImpact = Record<string, RootImpact>;

/** Roots with the same impact, once: ["catalogs/v4.17", ...] -> "v4.17-v4.21, 5 catalogs". */
export function groupRoots(
  catalogs: CatalogsImpact,
): { label: string; roots: string[]; impact: RootImpact }[] {
  const groups = new Map<string, { roots: string[]; impact: RootImpact }>();
  for (const [root, impact] of Object.entries(catalogs)) {
    const key = JSON.stringify(impact);
    const g = groups.get(key);
    if (g) g.roots.push(root);
    else groups.set(key, { roots: [root], impact });
  }
  return [...groups.values()].map(({ roots, impact }) => {
    const names = roots.map((r) => r.slice(r.lastIndexOf('/') + 1));
    const label =
      roots.length === 1 ? roots[0]! : `${names[0]}-${names[names.length - 1]}, ${roots.length} catalogs`;
    return { label, roots, impact };
  });
}

const list = (xs: string[]): string => xs.join(', ');

function channelLines(name: string, c: ChannelImpact): string[] {
  const lines = [`channel ${name} (${c.status}): head ${c.headOld ?? '(none)'} -> ${c.headNew ?? '(none)'}`];
  if (c.bundlesAdded.length) lines.push(`  + bundles: ${list(c.bundlesAdded)}`);
  if (c.bundlesRemoved.length) lines.push(`  - bundles: ${list(c.bundlesRemoved)}`);
  for (const e of c.edgesAdded) lines.push(`  + ${e.from} ${e.kind} ${e.to}`);
  for (const e of c.edgesRemoved) lines.push(`  - ${e.from} ${e.kind} ${e.to}`);
  for (const s of c.skipRangeChanged)
    lines.push(`  ~ ${s.bundle} skipRange ${s.old ?? '(none)'} -> ${s.new ?? '(none)'}`);
  if (c.stranded.length)
    lines.push(`  ! stranded (clusters on these lose their way to the head): ${list(c.stranded)}`);
  if (c.newlyReachable.length) lines.push(`  + newly reach the head: ${list(c.newlyReachable)}`);
  return lines;
}

/** One package's impact as text lines (the first names the package). */
export function packageLines(name: string, p: PackageImpact): string[] {
  const lines = [`package ${name} (${p.status})`];
  if (p.defaultChannel)
    lines.push(
      `  default channel ${p.defaultChannel.old ?? '(none)'} -> ${p.defaultChannel.new ?? '(none)'}`,
    );
  for (const [ch, c] of Object.entries(p.channels)) lines.push(...channelLines(ch, c).map((l) => `  ${l}`));
  if (p.bundlesChanged?.length)
    lines.push(`  ~ bundles changed (image, properties or related images): ${list(p.bundlesChanged)}`);
  if (p.deprecations?.added.length) lines.push(`  + deprecated: ${list(p.deprecations.added)}`);
  if (p.deprecations?.removed.length) lines.push(`  - no longer deprecated: ${list(p.deprecations.removed)}`);
  return lines;
}

/** The text form: one block per group of identical catalogs. */
export function impactText(catalogs: CatalogsImpact): string {
  const groups = groupRoots(catalogs);
  if (groups.length === 0) return 'no change that clusters would see\n';
  const out: string[] = [];
  for (const g of groups) {
    out.push(`${g.label}:`);
    for (const [name, p] of Object.entries(g.impact.packages))
      for (const l of packageLines(name, p)) out.push(`  ${l}`);
  }
  return `${out.join('\n')}\n`;
}

// Control characters and bidirectional overrides could make a line read otherwise than it says.
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu;

/** A name as a Markdown code span, cut to `max` characters: nothing in it renders. */
export function codeSpan(text: string, max = 200): string {
  let clean = text.replace(UNSAFE, '\ufffd');
  if (clean.length > max) clean = `${clean.slice(0, max - 1)}…`;
  let longest = 0;
  for (const run of clean.match(/`+/g) ?? []) longest = Math.max(longest, run.length);
  const ticks = '`'.repeat(longest + 1);
  const pad = clean.startsWith('`') || clean.endsWith('`') || clean === '' ? ' ' : '';
  return `${ticks}${pad}${clean}${pad}${ticks}`;
}

const codes = (xs: string[]): string => xs.map((x) => codeSpan(x)).join(', ');

function channelMarkdown(name: string, c: ChannelImpact): string[] {
  const lines = [
    `- channel ${codeSpan(name)} (${c.status}): head ${c.headOld === null ? '(none)' : codeSpan(c.headOld)} → ${c.headNew === null ? '(none)' : codeSpan(c.headNew)}`,
  ];
  const sub = (s: string): void => void lines.push(`  - ${s}`);
  if (c.bundlesAdded.length) sub(`bundles added: ${codes(c.bundlesAdded)}`);
  if (c.bundlesRemoved.length) sub(`bundles removed: ${codes(c.bundlesRemoved)}`);
  for (const e of c.edgesAdded) sub(`edge added: ${codeSpan(e.from)} ${e.kind} ${codeSpan(e.to)}`);
  for (const e of c.edgesRemoved) sub(`edge removed: ${codeSpan(e.from)} ${e.kind} ${codeSpan(e.to)}`);
  for (const s of c.skipRangeChanged)
    sub(
      `${codeSpan(s.bundle)} skipRange ${s.old === null ? '(none)' : codeSpan(s.old)} → ${s.new === null ? '(none)' : codeSpan(s.new)}`,
    );
  if (c.stranded.length)
    sub(`**stranded** (clusters on these lose their way to the head): ${codes(c.stranded)}`);
  if (c.newlyReachable.length) sub(`newly reach the head: ${codes(c.newlyReachable)}`);
  return lines;
}

function packageMarkdown(name: string, p: PackageImpact): string[] {
  const lines = [`**Package ${codeSpan(name)}** (${p.status})`, ''];
  if (p.defaultChannel)
    lines.push(
      `- default channel ${p.defaultChannel.old === null ? '(none)' : codeSpan(p.defaultChannel.old)} → ${p.defaultChannel.new === null ? '(none)' : codeSpan(p.defaultChannel.new)}`,
    );
  for (const [ch, c] of Object.entries(p.channels)) lines.push(...channelMarkdown(ch, c));
  if (p.bundlesChanged?.length)
    lines.push(`- bundles changed (image, properties or related images): ${codes(p.bundlesChanged)}`);
  if (p.deprecations?.added.length) lines.push(`- deprecated: ${codes(p.deprecations.added)}`);
  if (p.deprecations?.removed.length) lines.push(`- no longer deprecated: ${codes(p.deprecations.removed)}`);
  return lines;
}

/** Text safe inside a quoted Mermaid label: anything but a few plain characters as an entity. */
export const mermaidLabel = (s: string): string =>
  s.replace(/[^A-Za-z0-9._+-]/g, (ch) => `#${ch.codePointAt(0)};`);

/** One changed channel as a Mermaid graph: added edges thick, removed dotted. */
export function mermaidChannel(c: ChannelImpact): string {
  const ids = new Map<string, string>();
  const id = (name: string): string => {
    let got = ids.get(name);
    if (!got) ids.set(name, (got = `n${ids.size}`));
    return got;
  };
  const lines = ['```mermaid', 'graph LR'];
  const node = (name: string): string => `${id(name)}["${mermaidLabel(name)}"]`;
  for (const e of c.edgesAdded) lines.push(`  ${node(e.from)} ==>|${e.kind} added| ${node(e.to)}`);
  for (const e of c.edgesRemoved) lines.push(`  ${node(e.from)} -.->|${e.kind} removed| ${node(e.to)}`);
  for (const b of [...c.bundlesAdded, ...c.bundlesRemoved]) if (!ids.has(b)) lines.push(`  ${node(b)}`);
  lines.push('```');
  return lines.join('\n');
}

const drawn = (c: ChannelImpact): boolean =>
  c.edgesAdded.length + c.edgesRemoved.length + c.bundlesAdded.length + c.bundlesRemoved.length > 0;

/** The Markdown form, whole: every group of identical catalogs, a graph per changed channel. */
export function impactMarkdown(catalogs: CatalogsImpact): string {
  const groups = groupRoots(catalogs);
  if (groups.length === 0) return 'No change that clusters would see.\n';
  const out: string[] = [];
  for (const g of groups) {
    out.push(`### ${codeSpan(g.label, 1000)}`, '');
    for (const [name, p] of Object.entries(g.impact.packages)) {
      out.push(...packageMarkdown(name, p), '');
      for (const [ch, c] of Object.entries(p.channels))
        if (drawn(c)) out.push(`Channel ${codeSpan(ch)}:`, '', mermaidChannel(c), '');
    }
  }
  return `${out.join('\n').trimEnd()}\n`;
}

/** Channels listed per package in the summary before "and N more". */
const SUMMARY_CHANNELS = 3;
/** Name length in the summary: a long name must not eat the budget. */
const SUMMARY_NAME = 100;

/**
 * The Markdown form within `maxChars` characters (UTF-16 code units, as GitHub counts a
 * comment body): the whole form when it fits, else a summary (per group of identical
 * catalogs: packages, channels, bundles added and removed, stranded entries; the first
 * channels of each package), cut where it reaches the size, and `more` (where the whole
 * answer is) at the end.
 */
export function impactMarkdownWithin(catalogs: CatalogsImpact, maxChars: number, more: string): string {
  const whole = impactMarkdown(catalogs);
  if (whole.length <= maxChars) return whole;
  const groups = groupRoots(catalogs);
  const count = (p: PackageImpact, f: (c: ChannelImpact) => number): number =>
    Object.values(p.channels).reduce((n, c) => n + f(c), 0);
  const lines: string[] = [
    `The whole impact is ${whole.length} characters, more than a comment holds; a summary:`,
    '',
  ];
  for (const g of groups) {
    const pkgs = Object.entries(g.impact.packages);
    const total = (f: (c: ChannelImpact) => number): number => pkgs.reduce((n, [, p]) => n + count(p, f), 0);
    lines.push(
      `### ${codeSpan(g.label, 1000)}`,
      '',
      `${pkgs.length} package${pkgs.length === 1 ? '' : 's'}, ${total(() => 1)} channels changed, ${total((c) => c.bundlesAdded.length)} entries added, ${total((c) => c.bundlesRemoved.length)} removed, ${total((c) => c.stranded.length)} stranded.`,
      '',
    );
    for (const [name, p] of pkgs) {
      const channels = Object.entries(p.channels);
      lines.push(
        `- ${codeSpan(name, SUMMARY_NAME)} (${p.status})${p.defaultChannel ? `, default channel ${p.defaultChannel.old === null ? '(none)' : codeSpan(p.defaultChannel.old, SUMMARY_NAME)} → ${p.defaultChannel.new === null ? '(none)' : codeSpan(p.defaultChannel.new, SUMMARY_NAME)}` : ''}`,
      );
      for (const [ch, c] of channels.slice(0, SUMMARY_CHANNELS))
        lines.push(
          `  - ${codeSpan(ch, SUMMARY_NAME)} (${c.status}): head ${c.headOld === null ? '(none)' : codeSpan(c.headOld, SUMMARY_NAME)} → ${c.headNew === null ? '(none)' : codeSpan(c.headNew, SUMMARY_NAME)}; +${c.bundlesAdded.length} −${c.bundlesRemoved.length} entries${c.stranded.length ? `, **${c.stranded.length} stranded**` : ''}`,
        );
      if (channels.length > SUMMARY_CHANNELS)
        lines.push(`  - and ${channels.length - SUMMARY_CHANNELS} more channels`);
    }
    lines.push('');
  }
  const tail = `\n${more}\n`;
  let out = '';
  for (const [i, line] of lines.entries()) {
    const cut = `… and ${lines.length - i} more lines of summary.\n`;
    if (out.length + line.length + 1 + cut.length + tail.length > maxChars) {
      out += cut;
      break;
    }
    out += `${line}\n`;
  }
  const bounded = `${out.trimEnd()}\n${tail}`;
  return bounded.length <= maxChars ? bounded : more.slice(0, maxChars);
}
