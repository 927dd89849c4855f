// The pruning guard (docs/publishing.md, "Pruning guard"): a pull request must not remove a
// bundle or channel that clusters may be running from the image published for a catalog,
// unless the package's owners allow it with `/allow-prune`. The compare is pure; reading the
// published image's catalog layer is declared here (ReadPublishedCatalog) and implemented in
// src/publish, so this module never talks to a registry.
import type { DeclarativeConfig } from '../catalog/fbc/declcfg.js';
import type { Diagnostic } from '../catalog/diagnostics.js';
import type { CatalogSource, SourceEntry } from '../catalog/fbc/source.js';
import { goStringCompare } from '../catalog/go/gostrings.js';
import type { CheckResult } from './check.js';
import type { RegistryPolicy } from './registry-policy.js';

export const PRUNE_CHECK = 'catalog-bot/prune';

/** The catalog files of the image at a tag, as its catalog layer holds them. */
export type PublishedCatalog =
  | { status: 'published'; image: string; digest: string; files: [string, Uint8Array][] }
  /** The registry answers that there is no such image (never published yet). */
  | { status: 'none'; image: string }
  /** The image could not be read: the registry did not answer, refused, or the image has no catalog layer. */
  | { status: 'unreachable'; image: string; reason: string };

/** Reads the catalog an image serves; called with the base branch's registry policy. */
export type ReadPublishedCatalog = (image: string, policy: RegistryPolicy) => Promise<PublishedCatalog>;

export type PruneKind = 'bundle' | 'channel';

/** Something clusters may run from the published image that the change takes away. */
export interface PrunedItem {
  kind: PruneKind;
  package: string;
  /** The bundle's or the channel's name. */
  name: string;
}

/**
 * What the published catalog has and the new one lacks: bundles (by package and name) and
 * channels (by package and name), only of `packages` when given (the packages the change
 * touches: what another, unpublished merge removed is not this change's doing). No new
 * catalog (the root is deleted) prunes everything.
 */
export function prunedItems(
  published: DeclarativeConfig,
  next: DeclarativeConfig | undefined,
  packages?: Set<string>,
): PrunedItem[] {
  const key = (pkg: string, name: string) => JSON.stringify([pkg, name]);
  const bundles = new Set((next?.bundles ?? []).map((b) => key(b.package, b.name)));
  const channels = new Set((next?.channels ?? []).map((c) => key(c.package, c.name)));
  const out = new Map<string, PrunedItem>();
  const consider = (kind: PruneKind, pkg: string, name: string, kept: Set<string>) => {
    if (packages && !packages.has(pkg)) return;
    if (kept.has(key(pkg, name))) return;
    out.set(JSON.stringify([kind, pkg, name]), { kind, package: pkg, name });
  };
  for (const b of published.bundles) consider('bundle', b.package, b.name, bundles);
  for (const c of published.channels) consider('channel', c.package, c.name, channels);
  return [...out.values()].sort(
    (a, b) =>
      goStringCompare(a.package, b.package) ||
      goStringCompare(a.kind, b.kind) ||
      goStringCompare(a.name, b.name),
  );
}

/** What `/allow-prune` names: a bundle by its name, or a channel as `<package>/<channel>`. */
export type PruneTarget =
  { kind: 'bundle'; name: string } | { kind: 'channel'; package: string; name: string };

/** Longer than any bundle name in real catalogs; keeps comments from storing essays. */
const MAX_TARGET = 253;

export function parsePruneTarget(text: string): PruneTarget | { problem: string } {
  if (text === '' || text.length > MAX_TARGET || /[\s`<>]/.test(text))
    return {
      problem:
        'name one bundle (`/allow-prune <bundle>`) or one channel (`/allow-prune <package>/<channel>`)',
    };
  const slash = text.indexOf('/');
  if (slash < 0) return { kind: 'bundle', name: text };
  const pkg = text.slice(0, slash);
  const name = text.slice(slash + 1);
  if (pkg === '' || name === '' || name.includes('/'))
    return { problem: 'a channel is named `<package>/<channel>`, one slash' };
  return { kind: 'channel', package: pkg, name };
}

/** Does an allow name this item? A bundle allow never covers a channel, nor one of another name. */
export function targetCovers(target: PruneTarget, item: PrunedItem): boolean {
  if (target.kind !== item.kind || target.name !== item.name) return false;
  return target.kind === 'bundle' || target.package === item.package;
}

export function targetText(item: PrunedItem): string {
  return item.kind === 'bundle' ? item.name : `${item.package}/${item.name}`;
}

function describe(item: PrunedItem): string {
  return item.kind === 'bundle'
    ? `bundle ${item.name} of package ${item.package}`
    : `channel ${item.name} of package ${item.package}`;
}

/**
 * The tag that names what is published now for a catalog root: the first `publish.images`
 * pattern without `{sha}` (a `{sha}` tag names one merge, not the current image), with
 * `{root}` expanded as publishing expands it. Undefined when every pattern has `{sha}`.
 */
export function publishedTag(patterns: string[], root: string): string | undefined {
  const name = root.replace(/\/+$/, '').split('/').pop() ?? root;
  const moving = patterns.find((p) => !p.includes('{sha}'));
  return moving?.replaceAll('{root}', name);
}

/** A catalog held in memory (the published image's files), for the loader. */
export function memoryCatalog(label: string, files: [string, Uint8Array][]): CatalogSource {
  const data = new Map(
    files.map(([path, bytes]) => [path, Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)]),
  );
  const entries: SourceEntry[] = [...data.keys()]
    .sort(goStringCompare)
    .map((path) => ({ path, kind: 'file', size: data.get(path)!.length }));
  return {
    label,
    list: async () => entries,
    read: async (paths) =>
      new Map(paths.map((p) => [p, data.get(p) ?? new Error(`read ${p}: no such file in the image`)])),
  };
}

/** One pruned item and who may allow it. */
export interface PruneDecision extends PrunedItem {
  /** Logins and `org/team` entries that may allow it (the package's owners, the maintainers). */
  mayAllow: string[];
  /** Owners (or maintainers) who said `/allow-prune` for it, whatever content they saw. */
  ownerAllows: string[];
  /** The owner whose allow counts: given for the package content the change has now. */
  allowedBy?: string;
  /** A digest of the package's content at head (what an allow is recorded against). */
  digest: string;
}

/** What the guard found for one changed catalog root. */
export interface PruneRootOutcome {
  root: string;
  /** The tag compared with (undefined when the config names none). */
  image?: string;
  state: 'compared' | 'unpublished' | 'unreachable' | 'no-tag';
  /** For `unreachable` and `no-tag`: why nothing was compared. */
  reason?: string;
  /** The digest of the image compared with. */
  digest?: string;
  items: PruneDecision[];
}

const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/**
 * The check run: failure when an item is pruned that no owner allowed (when the image could
 * not be read, an item this change removes from the base's catalog); neutral when a catalog
 * could not be compared (the registry did not answer, no tag names the current image), never
 * success then; success otherwise.
 */
export function pruneCheck(outcomes: PruneRootOutcome[]): CheckResult {
  const items = outcomes.flatMap((o) => o.items.map((item) => ({ root: o.root, item })));
  const blocked = items.filter((i) => i.item.allowedBy === undefined);
  const uncompared = outcomes.filter((o) => o.state === 'unreachable' || o.state === 'no-tag');
  const findings: Diagnostic[] = [];
  for (const { root, item } of blocked)
    findings.push({
      rule: item.kind === 'bundle' ? 'PRUNE-BUNDLE' : 'PRUNE-CHANNEL',
      level: 'error',
      message: `${root}: this change removes ${describe(item)}, which the published image serves: clusters subscribed to it lose it`,
      package: item.package,
      hint: `Keep it, or an owner of ${item.package} (${who(item.mayAllow)}) comments \`/allow-prune ${targetText(item)}\`.`,
    });
  for (const o of uncompared)
    findings.push({
      rule: 'PRUNE-UNCHECKED',
      level: 'warning',
      message: `${o.root}: not compared with the published image${o.image ? ` ${o.image}` : ''}: ${o.reason ?? ''}`,
      hint: 'Re-run the check (`/retest`) when the registry answers.',
    });
  const conclusion = blocked.length > 0 ? 'failure' : uncompared.length > 0 ? 'neutral' : 'success';
  const title =
    blocked.length > 0
      ? `Removes ${blocked.length} published bundle${blocked.length === 1 ? '' : 's'} or channel${blocked.length === 1 ? '' : 's'}`
      : uncompared.length > 0
        ? `${uncompared.length} catalog${uncompared.length === 1 ? '' : 's'} not compared with the published image`
        : items.length > 0
          ? `Removals allowed by their owners (${items.length})`
          : 'Nothing published is removed';
  const lines: string[] = [
    'Compared with the image published for each changed catalog (the first `publish.images` tag without `{sha}`, from the base branch): a bundle or channel in that image and not in this change is one clusters may be running, and removing it strands them.',
    '',
    '| catalog | image | result |',
    '|---|---|---|',
    ...outcomes.map(
      (o) =>
        `| ${cell(o.root)} | ${cell(o.image ? `${o.image}${o.digest ? ` (${o.digest})` : ''}` : '-')} | ${cell(rootResult(o))} |`,
    ),
  ];
  if (items.length > 0) {
    lines.push('', '| catalog | removed | may allow | allowed by |', '|---|---|---|---|');
    for (const { root, item } of items)
      lines.push(
        `| ${cell(root)} | ${cell(describe(item))} | ${cell(who(item.mayAllow))} | ${item.allowedBy ? `@${cell(item.allowedBy)}` : '-'} |`,
      );
  }
  if (blocked.length > 0)
    lines.push(
      '',
      'To remove them anyway, an owner of the package (or a maintainer) comments `/allow-prune <bundle>` for a bundle, `/allow-prune <package>/<channel>` for a channel. An allow counts for the package content it saw: a push that changes the package needs a new one.',
    );
  return {
    name: PRUNE_CHECK,
    conclusion,
    title,
    summary: lines.join('\n'),
    findings,
    annotations: [],
  };
}

function rootResult(o: PruneRootOutcome): string {
  switch (o.state) {
    case 'unpublished':
      return 'no image published yet: nothing to compare';
    case 'unreachable':
      return `not compared: ${o.reason ?? ''}${o.items.length > 0 ? `; the base's catalog stands in: ${o.items.length} removed (${o.items.filter((i) => i.allowedBy === undefined).length} not allowed)` : ''}`;
    case 'no-tag':
      return `not compared: ${o.reason ?? ''}`;
    default:
      return o.items.length === 0
        ? 'nothing it serves is removed'
        : `${o.items.length} removed (${o.items.filter((i) => i.allowedBy === undefined).length} not allowed)`;
  }
}

function who(entries: string[]): string {
  return entries.length === 0
    ? 'nobody is listed'
    : entries.map((e) => (e.includes('/') ? e : `@${e}`)).join(', ');
}
