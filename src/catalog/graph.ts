// One channel's upgrade graph as classic OLM and OLM v1 see it: the data behind
// `catalog-bot graph` (design.md, CLI contract) and the diagrams.
import { classicChannel, classicNext } from './classic.js';
import type { Model, ModelChannel, ModelPackage } from './model.js';
import { formatVersion, type Version } from './semver.js';
import { v1Chosen, v1Successors, type InstalledBundle } from './v1.js';

export interface GraphEntry {
  version: string | null;
  classicNext: string | null;
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
      v1Successors: v1Successors(pkg, installed, v1Options),
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

/** Mermaid flowchart: replaces (solid), skips (dashed), skipRange (dotted, labelled); the classic chain in bold. */
export function mermaid(graph: ChannelGraph, channel: ModelChannel): string {
  const id = (name: string): string => 'n' + Buffer.from(name).toString('hex');
  const lines = ['flowchart LR'];
  const onChain = new Set(graph.classicChain);
  for (const [name, e] of Object.entries(graph.entries)) {
    const label = `${name}${e.version ? `<br/>${e.version}` : ''}`;
    const cls =
      name === graph.head
        ? ':::head'
        : e.installedOnly
          ? ':::installed'
          : onChain.has(name)
            ? ''
            : ':::offchain';
    lines.push(`  ${id(name)}["${label.replace(/"/g, '#quot;')}"]${cls}`);
  }
  for (const b of channel.bundles.values()) {
    if (b.replaces && graph.entries[b.replaces])
      lines.push(`  ${id(b.replaces)} -->|replaces| ${id(b.name)}`);
    for (const s of b.skips) if (graph.entries[s]) lines.push(`  ${id(s)} -.->|skips| ${id(b.name)}`);
  }
  lines.push(
    '  classDef head stroke-width:3px',
    '  classDef offchain stroke-dasharray: 4 4',
    '  classDef installed fill:#eee',
  );
  return lines.join('\n') + '\n';
}

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
