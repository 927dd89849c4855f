/**
 * What a fresh install of one package pulls in, and why: the bundle classic OLM installs
 * (the head of the chosen channel, by default the package's default channel), then for
 * every requirement the provider the resolver prefers (candidates in sortBundles order:
 * default channels first, then package and channel name, each channel head first), skipping
 * candidates that cannot be installed themselves or that clash with what is already picked
 * (one bundle per package, one provider per API). A greedy walk, not the full SAT solver:
 * it agrees with OLM whenever the first installable candidate does not lead to a conflict
 * further down.
 */
import { classicChannel } from './classic.js';
import {
  dependencyIndex,
  externallyMet,
  gvkKey,
  matches,
  versionText,
  type CatalogBundle,
  type DependencyType,
  type ExternalProviders,
} from './dependencies.js';
import type { Model } from '../fbc/model.js';

export interface DepsTreeOptions {
  /** The channel to install from; default: the package's default channel. */
  channel?: string;
  externalProviders?: ExternalProviders;
}

export interface DepsNode {
  bundle: string;
  package: string;
  version: string | null;
  /** Why this bundle was picked. */
  reason: string;
  file: string | null;
  line: number | null;
  requirements: DepsRequirement[];
}

export type DepsStatus = 'installed' | 'shared' | 'external' | 'unsatisfied' | 'invalid';

export interface DepsRequirement {
  requirement: string;
  type: DependencyType;
  line: number | null;
  /** `installed`: a new provider below; `shared`: a bundle already in the tree. */
  status: DepsStatus;
  provider: DepsNode | null;
  /** The bundle already in the tree that meets it (status `shared`). */
  sharedWith: string | null;
  /** The other candidates, most preferred first (at most five). */
  alternatives: string[];
  problem: string | null;
}

export interface DepsTree {
  package: string;
  channel: string | null;
  root: DepsNode | null;
  /** Every bundle the install pulls in, the package's own first. */
  installs: { bundle: string; package: string; version: string | null }[];
  unsatisfied: number;
  /**
   * Why nothing can be installed at all: an unknown package or channel (`unsatisfied` 0),
   * or a channel classic OLM cannot sort (`unsatisfied` 1).
   */
  error: string | null;
}

export function depsTree(model: Model, packageName: string, options: DepsTreeOptions = {}): DepsTree {
  const ext = options.externalProviders;
  const pkg = model.get(packageName);
  const empty = (channel: string | null, error: string, unsatisfied = 0): DepsTree => ({
    package: packageName,
    channel,
    root: null,
    installs: [],
    unsatisfied,
    error,
  });
  if (!pkg) return empty(null, `package "${packageName}" is not in this catalog`);
  const channel = options.channel !== undefined ? pkg.channels.get(options.channel) : pkg.defaultChannel;
  if (!channel) {
    return empty(
      options.channel ?? null,
      options.channel !== undefined
        ? `package "${packageName}" has no channel "${options.channel}" (channels: ${[...pkg.channels.keys()].sort().join(', ')})`
        : `package "${packageName}" has no default channel`,
    );
  }
  const classic = classicChannel(channel);
  if (classic.install === null) {
    // A catalog problem, not a usage one: counted as unmet.
    return empty(
      channel.name,
      `classic OLM cannot install from channel "${channel.name}": ${classic.error}`,
      1,
    );
  }
  const index = dependencyIndex(model);
  const rootBundle = index.bundle(packageName, classic.install)!;
  const chosen = new Map<string, CatalogBundle>();
  const apiOwner = new Map<string, string>();
  const installs: DepsTree['installs'] = [];
  let unsatisfied = 0;

  const pick = (b: CatalogBundle): void => {
    chosen.set(b.package, b);
    for (const g of b.gvks) if (!apiOwner.has(gvkKey(g.gvk))) apiOwner.set(gvkKey(g.gvk), b.package);
    installs.push({ bundle: b.name, package: b.package, version: b.version ? versionText(b) : null });
  };
  const clashes = (b: CatalogBundle): boolean => {
    const same = chosen.get(b.package);
    if (same && same !== b) return true;
    return b.gvks.some((g) => {
      const owner = apiOwner.get(gvkKey(g.gvk));
      return owner !== undefined && owner !== b.package;
    });
  };

  const visit = (b: CatalogBundle, reason: string): DepsNode => {
    const node: DepsNode = {
      bundle: b.name,
      package: b.package,
      version: b.version ? versionText(b) : null,
      reason,
      file: b.file ?? null,
      line: b.line ?? null,
      requirements: [],
    };
    for (const dep of b.dependencies) {
      const req: DepsRequirement = {
        requirement: dep.text,
        type: dep.type,
        line: dep.line ?? null,
        status: 'unsatisfied',
        provider: null,
        sharedWith: null,
        alternatives: [],
        problem: null,
      };
      node.requirements.push(req);
      const c = dep.constraint;
      if (!c) {
        req.status = 'invalid';
        req.problem = dep.error?.message ?? 'invalid requirement';
        unsatisfied++;
        continue;
      }
      const already = [...chosen.values()].find((x) => matches(c, x));
      if (already) {
        req.status = 'shared';
        req.sharedWith = already.name;
        continue;
      }
      if (externallyMet(c, ext)) {
        req.status = 'external';
        continue;
      }
      const candidates = index.candidates(c);
      const winner = candidates.find((x) => !clashes(x.bundle) && index.installable(x.bundle, ext));
      req.alternatives = candidates
        .filter((x) => x !== winner)
        .slice(0, 5)
        .map((x) => x.bundle.name);
      if (!winner) {
        unsatisfied++;
        req.problem =
          candidates.length === 0
            ? index.explain(c)
            : `every candidate (${req.alternatives.join(', ')}) clashes with a bundle already picked or has unmet requirements itself`;
        continue;
      }
      req.status = 'installed';
      pick(winner.bundle);
      const rank = candidates.indexOf(winner);
      req.provider = visit(
        winner.bundle,
        `${rank === 0 ? 'the most preferred candidate' : `candidate ${rank + 1} (the ones before it clash or cannot be installed)`}: channel ${winner.channel} of ${winner.bundle.package}${winner.defaultChannel ? ' (its default channel)' : ''}`,
      );
    }
    return node;
  };

  pick(rootBundle);
  const root = visit(
    rootBundle,
    `the head of channel ${channel.name}${pkg.defaultChannel === channel ? ' (the default channel)' : ''}, which classic OLM installs`,
  );
  return { package: packageName, channel: channel.name, root, installs, unsatisfied, error: null };
}

/** An indented tree, one requirement per line. */
export function depsText(tree: DepsTree): string {
  if (!tree.root) return `${tree.error}\n`;
  const lines: string[] = [
    `${tree.root.bundle} (${tree.root.package} ${tree.root.version ?? '?'}): ${tree.root.reason}`,
  ];
  const walk = (node: DepsNode, indent: string): void => {
    for (const r of node.requirements) {
      const head = `${indent}requires ${r.requirement}: `;
      switch (r.status) {
        case 'installed':
          lines.push(
            `${head}${r.provider!.bundle} (${r.provider!.package} ${r.provider!.version ?? '?'}), ${r.provider!.reason}`,
          );
          if (r.alternatives.length > 0) lines.push(`${indent}  also possible: ${r.alternatives.join(', ')}`);
          walk(r.provider!, indent + '  ');
          break;
        case 'shared':
          lines.push(`${head}met by ${r.sharedWith}, already in this install`);
          break;
        case 'external':
          lines.push(`${head}provided outside the catalog (external providers)`);
          break;
        default:
          lines.push(`${head}UNSATISFIED: ${r.problem}`);
      }
    }
  };
  walk(tree.root, '  ');
  lines.push(
    tree.unsatisfied === 0
      ? `installs ${tree.installs.length} bundle${tree.installs.length === 1 ? '' : 's'}: ${tree.installs.map((i) => i.bundle).join(', ')}`
      : `${tree.unsatisfied} requirement${tree.unsatisfied === 1 ? '' : 's'} cannot be met: OLM cannot install ${tree.package} from this catalog`,
  );
  return lines.join('\n') + '\n';
}

/** A mermaid flowchart: bundles as nodes, requirements as labelled edges. */
export function depsMermaid(tree: DepsTree): string {
  const lines = ['graph TD'];
  if (!tree.root) return `${lines[0]}\n  error["${esc(tree.error ?? '')}"]\n`;
  const ids = new Map<string, string>();
  const id = (name: string): string => {
    let v = ids.get(name);
    if (!v) {
      v = `n${ids.size}`;
      ids.set(name, v);
    }
    return v;
  };
  let extra = 0;
  const walk = (node: DepsNode): void => {
    lines.push(`  ${id(node.bundle)}["${esc(`${node.bundle}`)}"]`);
    for (const r of node.requirements) {
      const label = esc(r.requirement);
      if (r.status === 'installed') {
        lines.push(`  ${id(node.bundle)} -->|"${label}"| ${id(r.provider!.bundle)}`);
        walk(r.provider!);
      } else if (r.status === 'shared') {
        lines.push(`  ${id(node.bundle)} -->|"${label}"| ${id(r.sharedWith!)}`);
      } else {
        const other = `x${extra++}`;
        const text = r.status === 'external' ? 'outside the catalog' : `unsatisfied: ${r.problem ?? ''}`;
        lines.push(`  ${other}["${esc(text)}"]`, `  ${id(node.bundle)} -.->|"${label}"| ${other}`);
        if (r.status !== 'external') lines.push(`  style ${other} fill:#fdd,stroke:#c00`);
      }
    }
  };
  walk(tree.root);
  return lines.join('\n') + '\n';
}

const esc = (s: string): string => s.replace(/"/g, '#quot;').replace(/\n/g, ' ');
