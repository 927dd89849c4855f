// One channel's upgrade graph as classic OLM and OLM v1 see it: the data behind
// `catalog-bot graph` (README "Command line") and the diagrams.
import { classicChannel, classicNext } from './classic.js';
import type { Model, ModelChannel, ModelPackage } from '../fbc/model.js';
import { tryParseRange } from '../versions/range.js';
import { formatVersion, tryParseVersion, type Version } from '../versions/semver.js';
import { v1Chosen, v1LegacySuccessors, type InstalledBundle } from './v1.js';

export interface GraphEntry {
  version: string | null;
  classicNext: string | null;
  /** Every legacy successor, whatever the version range and deprecations say, highest version first. */
  v1Successors: string[];
  v1Chosen: string | null;
  /** True for a bundle given with --installed that the channel does not list. */
  installedOnly?: boolean;
  deprecated?: boolean;
}

export interface ChannelGraph {
  package: string;
  channel: string;
  heads: string[];
  head: string | null;
  classicError: string | null;
  classicChain: string[];
  classicInstall: string | null;
  v1Install: string | null;
  entries: Record<string, GraphEntry>;
}

export interface GraphOptions {
  /** Bundles installed on clusters, possibly absent from the catalog. */
  installed?: { name: string; version: Version }[];
  /** OLM v1 `spec.source.catalog.version` (Masterminds syntax). */
  v1VersionRange?: string;
}

export function channelGraph(
  pkg: ModelPackage,
  channel: ModelChannel,
  options: GraphOptions = {},
): ChannelGraph {
  const classic = classicChannel(channel);
  const v1Options = { channels: [channel.name], versionRange: options.v1VersionRange };
  const entries: Record<string, GraphEntry> = {};
  const describe = (installed: InstalledBundle, installedOnly: boolean): GraphEntry => {
    const entry = channel.bundles.get(installed.name);
    return {
      version: formatVersion(installed.version),
      classicNext: classicNext(channel, installed),
      v1Successors: v1LegacySuccessors(pkg, installed, { channels: [channel.name] }),
      v1Chosen: v1Chosen(pkg, installed, v1Options),
      ...(installedOnly ? { installedOnly: true } : {}),
      ...(entry?.deprecation ? { deprecated: true } : {}),
    };
  };
  for (const b of channel.bundles.values()) {
    entries[b.name] = b.version
      ? describe({ name: b.name, version: b.version }, false)
      : { version: null, classicNext: null, v1Successors: [], v1Chosen: null };
  }
  for (const i of options.installed ?? []) {
    entries[i.name] = describe({ name: i.name, version: i.version }, !channel.bundles.has(i.name));
  }
  return {
    package: pkg.name,
    channel: channel.name,
    heads: classic.heads,
    head: classic.heads.length === 1 ? (classic.heads[0] as string) : null,
    classicError: classic.error,
    classicChain: classic.chain,
    classicInstall: classic.install,
    v1Install: v1Chosen(pkg, null, v1Options),
    entries,
  };
}

/** The package and channel a graph is asked for, or why not. */
export function findChannel(
  model: Model,
  packageName: string,
  channelName?: string,
): { pkg: ModelPackage; channel: ModelChannel } | { error: string } {
  const pkg = model.get(packageName);
  if (!pkg)
    return { error: `no package "${packageName}" (packages: ${[...model.keys()].sort().join(', ')})` };
  const channel = channelName === undefined ? pkg.defaultChannel : pkg.channels.get(channelName);
  if (!channel || channel.bundles.size === 0) {
    return {
      error: `no channel "${channelName ?? '(default)'}" in package "${packageName}" (channels: ${[...pkg.channels.keys()].sort().join(', ')})`,
    };
  }
  return { pkg, channel };
}

export interface DiagramOptions {
  /** The same channel before the change: edges it lacks are drawn as new. */
  before?: ModelChannel;
  /** Bundles whose users have no way forward: drawn in red. */
  stranded?: Set<string>;
}

interface Edge {
  from: string;
  to: string;
  kind: 'replaces' | 'skips' | 'skipRange';
}

/** Every edge among the given nodes; skipRange edges to the versions the range covers. */
function edges(channel: ModelChannel, nodes: { name: string; version?: Version }[]): Edge[] {
  const out: Edge[] = [];
  const present = new Set(nodes.map((n) => n.name));
  for (const b of channel.bundles.values()) {
    if (b.replaces && present.has(b.replaces)) out.push({ from: b.replaces, to: b.name, kind: 'replaces' });
    for (const s of b.skips) if (present.has(s)) out.push({ from: s, to: b.name, kind: 'skips' });
    const range = b.skipRange ? tryParseRange(b.skipRange) : undefined;
    if (!range?.ok) continue;
    for (const n of nodes) {
      if (!n.version || n.name === b.name || n.name === b.replaces || b.skips.includes(n.name)) continue;
      if (range.range.covers(n.version)) out.push({ from: n.name, to: b.name, kind: 'skipRange' });
    }
  }
  return out;
}

const channelNodes = (channel: ModelChannel): { name: string; version?: Version }[] =>
  [...channel.bundles.values()].map((b) => ({ name: b.name, version: b.version }));

/**
 * Mermaid flowchart: replaces (solid), skips (dashed), skipRange (dotted) edges; the head
 * in bold, entries off the classic chain dashed, stranded bundles red, new edges green.
 */
export function mermaid(graph: ChannelGraph, channel: ModelChannel, options: DiagramOptions = {}): string {
  const id = (name: string): string => 'n' + Buffer.from(name).toString('hex');
  const lines = ['flowchart LR'];
  const onChain = new Set(graph.classicChain);
  for (const [name, e] of Object.entries(graph.entries)) {
    const label = `${name}${e.version ? `<br/>${e.version}` : ''}`;
    const cls = options.stranded?.has(name)
      ? ':::stranded'
      : name === graph.head
        ? ':::head'
        : e.installedOnly
          ? ':::installed'
          : onChain.has(name)
            ? ''
            : ':::offchain';
    lines.push(`  ${id(name)}["${label.replace(/"/g, '#quot;')}"]${cls}`);
  }
  const oldEdges = options.before
    ? new Set(edges(options.before, channelNodes(options.before)).map(edgeKey))
    : undefined;
  const nodes = Object.entries(graph.entries).map(([name, e]) => {
    const v = e.version === null ? undefined : tryParseVersion(e.version);
    return { name, version: v?.ok ? v.version : undefined };
  });
  const arrows = { replaces: '-->|replaces|', skips: '-.->|skips|', skipRange: '-.-|skipRange|' } as const;
  const fresh: number[] = [];
  edges(channel, nodes).forEach((e, i) => {
    lines.push(`  ${id(e.from)} ${arrows[e.kind]} ${id(e.to)}`);
    if (oldEdges && !oldEdges.has(edgeKey(e))) fresh.push(i);
  });
  if (fresh.length > 0) lines.push(`  linkStyle ${fresh.join(',')} stroke:#1a7f37,stroke-width:3px`);
  lines.push(
    '  classDef head stroke-width:3px',
    '  classDef offchain stroke-dasharray: 4 4',
    '  classDef installed fill:#eee',
    '  classDef stranded fill:#ffebe9,stroke:#cf222e,stroke-width:2px',
  );
  return lines.join('\n') + '\n';
}

const edgeKey = (e: Edge): string => `${e.kind}\0${e.from}\0${e.to}`;

/** Graphviz: the same edges as the Mermaid diagram. */
export function dot(graph: ChannelGraph, channel: ModelChannel): string {
  const q = (s: string): string => JSON.stringify(s);
  const lines = [`digraph ${q(`${graph.package}/${graph.channel}`)} {`, '  rankdir=LR;'];
  for (const [name, e] of Object.entries(graph.entries)) {
    const style =
      name === graph.head ? ', penwidth=3' : e.installedOnly ? ', style=filled, fillcolor=lightgrey' : '';
    lines.push(`  ${q(name)} [label=${q(`${name}\n${e.version ?? '?'}`)}${style}];`);
  }
  for (const b of channel.bundles.values()) {
    if (b.replaces && graph.entries[b.replaces])
      lines.push(`  ${q(b.replaces)} -> ${q(b.name)} [label="replaces"];`);
    for (const s of b.skips)
      if (graph.entries[s]) lines.push(`  ${q(s)} -> ${q(b.name)} [label="skips", style=dashed];`);
  }
  lines.push('}');
  return lines.join('\n') + '\n';
}

/** A reading of the graph for a terminal: where each installed bundle goes under each OLM. */
export function graphText(graph: ChannelGraph): string {
  const lines = [
    `package ${graph.package}, channel ${graph.channel}`,
    `  head: ${graph.head ?? `none (${graph.heads.length} heads: ${graph.heads.join(', ')})`}`,
    `  classic: ${graph.classicError ?? `chain ${graph.classicChain.join(' -> ')}; fresh install ${graph.classicInstall}`}`,
    `  OLM v1: fresh install ${graph.v1Install ?? 'nothing (no bundle matches)'}`,
    '  installed -> classic | OLM v1:',
  ];
  for (const [name, e] of Object.entries(graph.entries)) {
    const stay = (to: string | null): string => (to === null || to === name ? 'stays' : to);
    lines.push(
      `    ${name} (${e.version ?? 'no version'})${e.installedOnly ? ' [not in catalog]' : ''}: ${stay(e.classicNext)} | ${stay(e.v1Chosen)}`,
    );
  }
  return lines.join('\n') + '\n';
}
