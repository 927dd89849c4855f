// `catalog-bot impact [--base <ref>] [--head <ref>]`: what clusters will see differently
// after a change, per changed catalog root, package and channel (docs/impact.md). Same
// defaults as `check`: head is the working tree, base where HEAD left the default branch.
import { validateCatalog } from '../catalog/index.js';
import { GitTreeSource } from '../catalog/fbc/source.js';
import type { Model } from '../catalog/fbc/model.js';
import { catalogImpact, type ChannelImpact, type PackageImpact } from '../catalog/olm/impact.js';
import { catalogRoots, changedFiles, readRepoConfig } from '../checks/changes.js';
import { defineCommand, requireDirectory } from './command.js';
import { writeJson } from './output.js';
import { defaultBase, resolveCommit, workingTreeCommit } from './working-tree.js';

type RootImpact = { packages: Record<string, PackageImpact> };

async function modelAt(repo: string, rev: string, root: string, present: boolean): Promise<Model> {
  if (!present) return new Map();
  return (await validateCatalog(new GitTreeSource(repo, rev, root))).model;
}

/** Every changed catalog root's impact; roots without a change for users are left out. */
export async function impactOf(
  repo: string,
  base: string,
  head: string,
): Promise<Record<string, RootImpact>> {
  // The rules come from the base: a change cannot widen what is looked at.
  const { config } = await readRepoConfig(repo, base);
  const [atBase, atHead, changed] = await Promise.all([
    catalogRoots(repo, base, config.catalogs),
    catalogRoots(repo, head, config.catalogs),
    changedFiles(repo, base, head),
  ]);
  const roots = [...new Set([...atBase, ...atHead])]
    .filter((r) => changed.some((f) => f.startsWith(`${r}/`)))
    .sort();
  const out: Record<string, RootImpact> = {};
  for (const root of roots) {
    const [before, after] = await Promise.all([
      modelAt(repo, base, root, atBase.includes(root)),
      modelAt(repo, head, root, atHead.includes(root)),
    ]);
    const packages = catalogImpact(before, after);
    if (Object.keys(packages).length > 0) out[root] = { packages };
  }
  return out;
}

/** Roots with the same impact, once: ["catalogs/v4.17", ...] -> "v4.17-v4.21, 5 catalogs". */
function groupRoots(catalogs: Record<string, RootImpact>): { label: string; impact: RootImpact }[] {
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
    return { label, impact };
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

function packageLines(name: string, p: PackageImpact): string[] {
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

/** Text safe inside a Mermaid label and in Markdown. */
const mermaidLabel = (s: string): string => s.replace(/[^A-Za-z0-9._+-]/g, (ch) => `#${ch.codePointAt(0)};`);
const markdownText = (s: string): string => s.replace(/[\\`*_{}[\]()#+!<>|~-]/g, (ch) => `\\${ch}`);

/** One changed channel as a Mermaid graph: kept edges plain, added thick, removed dotted. */
function mermaidChannel(c: ChannelImpact): string {
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

export function markdown(catalogs: Record<string, RootImpact>): string {
  const groups = groupRoots(catalogs);
  if (groups.length === 0) return 'No change that clusters would see.\n';
  const out: string[] = [];
  for (const g of groups) {
    out.push(`### ${markdownText(g.label)}`, '');
    for (const [name, p] of Object.entries(g.impact.packages)) {
      out.push(`**${markdownText(name)}** (${p.status})`, '');
      for (const l of packageLines(name, p).slice(1)) out.push(`- ${markdownText(l.trim())}`);
      out.push('');
      for (const [ch, c] of Object.entries(p.channels))
        if (c.edgesAdded.length + c.edgesRemoved.length + c.bundlesAdded.length + c.bundlesRemoved.length > 0)
          out.push(`Channel ${markdownText(ch)}:`, '', mermaidChannel(c), '');
    }
  }
  return `${out.join('\n').trimEnd()}\n`;
}

const IMPACT_USAGE = `catalog-bot impact [--base <ref>] [--head <ref>] [--repo <dir>] [--format text|json|markdown]
  What clusters will see differently after the change, for every changed catalog root:
  per package and channel the bundles and edges added and removed, the heads and default
  channel before and after, skipRange changes, and the installed versions that lose (or
  gain) their way to the channel head under classic OLM. Default head: the working tree;
  default base: the merge-base of HEAD with the default branch. Exit 0, 2 usage/IO.
`;

export const command = defineCommand({
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
    const head =
      values.head === undefined
        ? workingTreeCommit(values.repo)
        : resolveCommit(values.repo, values.head, '--head');
    const base =
      values.base === undefined
        ? defaultBase(values.repo)
        : resolveCommit(values.repo, values.base, '--base');
    const catalogs = await impactOf(values.repo, base, head);
    if (values.format === 'json') writeJson(out, { catalogs });
    else if (values.format === 'markdown') out.write(markdown(catalogs));
    else {
      const groups = groupRoots(catalogs);
      if (groups.length === 0) out.write('no change that clusters would see\n');
      for (const g of groups) {
        out.write(`${g.label}:\n`);
        for (const [name, p] of Object.entries(g.impact.packages))
          for (const l of packageLines(name, p)) out.write(`  ${l}\n`);
      }
    }
    return 0;
  },
});
