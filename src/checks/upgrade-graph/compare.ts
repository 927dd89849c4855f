/**
 * Old catalog vs new catalog: the G12-G14 rules (docs/olm-upgrades.md, "What the checks ask
 * of a graph", item 3), the core pull-request check that no installed user is stranded.
 *
 * Every finding is about what the change does: a user who already had no way forward in the
 * old catalog (a dead end that G6 and G7 report) is not reported again here, and a
 * catalog compared with itself gives no findings. File and line point at the new catalog's
 * entry to edit; for removed things the old position is named in the message.
 *
 * Pure: two models in, findings out. Classic answers come from `classic.ts`, OLM v1 answers
 * from `v1.ts` with the channel filter set to the channel checked (docs/olm-upgrades.md).
 */
import { classicChannel, classicChannelEntries, classicNext } from '../../catalog/olm/classic.js';
import type { Position } from '../../catalog/fbc/declcfg.js';
import { sortDiagnostics, type Diagnostic } from '../../catalog/diagnostics.js';
import {
  versionString,
  type Model,
  type ModelBundle,
  type ModelChannel,
  type ModelPackage,
} from '../../catalog/fbc/model.js';
import { RangeEvaluationError, tryParseRange } from '../../catalog/versions/range.js';
import { compareVersions, formatVersion, type Version } from '../../catalog/versions/semver.js';
import { v1Chosen, v1Successors } from '../../catalog/olm/v1.js';

export interface CompareOptions {
  /** Only these packages; default: the packages whose graph data differs between the catalogs. */
  packages?: Set<string>;
}

type Where = Pick<Diagnostic, 'file' | 'line'>;

/** Bundles named in one finding; the rest are counted. */
const MAX_LISTED = 10;

/** All G12, G13 and G14 findings for the packages in scope, sorted by file and line. */
export function compareFindings(
  oldModel: Model,
  newModel: Model,
  options: CompareOptions = {},
): Diagnostic[] {
  const findings: Diagnostic[] = [];
  const names = options.packages ?? differingPackages(oldModel, newModel);
  for (const name of [...names].sort()) {
    const oldPkg = oldModel.get(name);
    const newPkg = newModel.get(name);
    if (oldPkg && newPkg) comparePackage(oldPkg, newPkg, findings);
    else if (oldPkg) {
      findings.push({
        rule: 'G14-PACKAGE-REMOVED',
        level: 'warning',
        message: `package "${name}" is removed (it was at ${at(oldPkg.pos)} in the old catalog): subscriptions and cluster extensions of it get no updates any more`,
        ...where(oldPkg.pos),
        package: name,
        hint: 'Removing a package strands every cluster that runs it; deprecate it first (an olm.deprecations entry) unless that is intended.',
      });
    } else if (newPkg) {
      // A new package: only the branch check applies (validation covers the rest).
      for (const channel of newPkg.channels.values()) multipleReplacers(undefined, channel, findings);
    }
  }
  return sortDiagnostics(findings);
}

// ---- Which packages changed ----

/** Packages added, removed, or with different channels, edges, versions, images or deprecations. */
export function differingPackages(oldModel: Model, newModel: Model): Set<string> {
  const names = new Set<string>();
  for (const [name, oldPkg] of oldModel) {
    const newPkg = newModel.get(name);
    if (!newPkg || !samePackage(oldPkg, newPkg)) names.add(name);
  }
  for (const name of newModel.keys()) if (!oldModel.has(name)) names.add(name);
  return names;
}

function samePackage(a: ModelPackage, b: ModelPackage): boolean {
  if (a.defaultChannel?.name !== b.defaultChannel?.name) return false;
  if (a.deprecation?.message !== b.deprecation?.message) return false;
  if (a.channels.size !== b.channels.size) return false;
  for (const [name, ca] of a.channels) {
    const cb = b.channels.get(name);
    if (!cb || ca.deprecation?.message !== cb.deprecation?.message || ca.bundles.size !== cb.bundles.size) {
      return false;
    }
    for (const [bundleName, x] of ca.bundles) {
      const y = cb.bundles.get(bundleName);
      if (!y || !sameEntry(x, y)) return false;
    }
  }
  return true;
}

function sameEntry(x: ModelBundle, y: ModelBundle): boolean {
  return (
    x.replaces === y.replaces &&
    x.skipRange === y.skipRange &&
    x.skips.length === y.skips.length &&
    x.skips.every((s, i) => s === y.skips[i]) &&
    x.image === y.image &&
    (x.blob === undefined) === (y.blob === undefined) &&
    x.deprecation?.message === y.deprecation?.message &&
    bundleVersion(x) === bundleVersion(y)
  );
}

/** The version as opm compares it (build metadata and release included); '' when unknown. */
function bundleVersion(b: ModelBundle): string {
  return b.version ? versionString(b.version, b.release, formatVersion) : '';
}

// ---- One package ----

function comparePackage(oldPkg: ModelPackage, newPkg: ModelPackage, out: Diagnostic[]): void {
  const p = newPkg.name;
  for (const [name, oldChannel] of oldPkg.channels) {
    const newChannel = newPkg.channels.get(name);
    if (!newChannel) {
      out.push({
        rule: 'G14-CHANNEL-REMOVED',
        level: 'warning',
        message: `channel "${name}" of package "${p}" is removed (it was at ${at(oldChannel.pos)} in the old catalog, with ${listSome([...oldChannel.bundles.keys()])}): subscriptions and cluster extensions pinned to it get no updates any more`,
        ...where(oldChannel.pos ?? oldPkg.pos),
        package: p,
        hint: 'Keep the channel (deprecate it with an olm.deprecations entry and point users to another channel) unless stranding its users is intended.',
      });
      continue;
    }
    new ChannelComparison(oldPkg, newPkg, oldChannel, newChannel, out).run();
  }
  for (const channel of newPkg.channels.values()) {
    multipleReplacers(oldPkg.channels.get(channel.name), channel, out);
  }

  const oldDefault = oldPkg.defaultChannel?.name;
  const newDefault = newPkg.defaultChannel?.name;
  if (oldDefault !== undefined && oldDefault !== newDefault) {
    out.push({
      rule: 'G14-DEFAULT-CHANNEL-CHANGED',
      level: 'warning',
      message: `the default channel of package "${p}" changes from "${oldDefault}" to ${newDefault === undefined ? 'none' : `"${newDefault}"`}: subscriptions and cluster extensions that name no channel now install from it, and classic OLM prefers its entries when it upgrades them`,
      ...where(newPkg.pos),
      package: p,
      hint: `Keep \`defaultChannel: ${oldDefault}\` unless the switch is intended; make sure every bundle of "${oldDefault}" has an upgrade in "${newDefault ?? ''}".`,
    });
  }

  bundleChanges(oldPkg, newPkg, out);
}

/** G14-BUNDLE-CHANGED: a bundle name in both catalogs must keep its version and image. */
function bundleChanges(oldPkg: ModelPackage, newPkg: ModelPackage, out: Diagnostic[]): void {
  const oldBundles = bundlesByName(oldPkg);
  for (const [name, y] of bundlesByName(newPkg)) {
    const x = oldBundles.get(name);
    if (!x) continue;
    const changes: string[] = [];
    const vx = bundleVersion(x);
    const vy = bundleVersion(y);
    if (vx !== vy) changes.push(`its version changes from ${vx || '(none)'} to ${vy || '(none)'}`);
    if (x.image !== y.image) changes.push(`its image changes from "${x.image}" to "${y.image}"`);
    if (changes.length === 0) continue;
    out.push({
      rule: 'G14-BUNDLE-CHANGED',
      level: 'error',
      message: `bundle ${name} of package "${newPkg.name}" is already published, but ${changes.join(' and ')}: clusters that installed it keep the old content under the same name`,
      ...where(y.blob?.pos ?? newPkg.pos),
      package: newPkg.name,
      hint: `A published bundle is immutable: restore its ${vx !== vy ? 'version' : 'image'} and publish the change as a new bundle (a new name and a higher version) that replaces ${name}.`,
    });
  }
}

function bundlesByName(pkg: ModelPackage): Map<string, ModelBundle> {
  const byName = new Map<string, ModelBundle>();
  for (const channel of pkg.channels.values()) {
    for (const b of channel.bundles.values()) {
      const seen = byName.get(b.name);
      if (!seen || (!seen.blob && b.blob)) byName.set(b.name, b);
    }
  }
  return byName;
}

/** G13-MULTIPLE-REPLACERS: a `replaces` target named by several entries, newly so in this change. */
function multipleReplacers(
  oldChannel: ModelChannel | undefined,
  channel: ModelChannel,
  out: Diagnostic[],
): void {
  const oldReplacers = oldChannel ? replacersByTarget(oldChannel) : new Map<string, ModelBundle[]>();
  for (const [target, replacers] of replacersByTarget(channel)) {
    if (replacers.length < 2) continue;
    const before = new Set((oldReplacers.get(target) ?? []).map((b) => b.name));
    const added = replacers.filter((b) => !before.has(b.name));
    if (added.length === 0) continue;
    const names = replacers.map((b) => b.name);
    const byVersion = [...replacers].sort(
      (a, b) =>
        (a.version && b.version ? compareVersions(a.version, b.version) : 0) || a.name.localeCompare(b.name),
    );
    const newest = byVersion[byVersion.length - 1]!;
    const previous = byVersion[byVersion.length - 2]!;
    out.push({
      rule: 'G13-MULTIPLE-REPLACERS',
      level: 'warning',
      message: `${target} is the \`replaces\` target of ${names.length} entries in channel "${channel.name}" of package "${channel.package}" (${list(names)}): the graph branches, which gives the channel two heads unless one branch skips the other`,
      ...entryWhere(channel, added[0]!),
      package: channel.package,
      hint: `Keep one replacement chain: let ${newest.name} have \`replaces: ${previous.name}\` (and add \`${target}\` to its \`skips\` if users of ${target} should jump straight to it).`,
    });
  }
}

function replacersByTarget(channel: ModelChannel): Map<string, ModelBundle[]> {
  const byTarget = new Map<string, ModelBundle[]>();
  for (const b of channel.bundles.values()) {
    if (b.replaces === '') continue;
    const list = byTarget.get(b.replaces);
    if (list) list.push(b);
    else byTarget.set(b.replaces, [b]);
  }
  for (const list of byTarget.values()) list.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return byTarget;
}

// ---- One channel present in both catalogs: G12, G13-CLASSIC-NEXT-CHANGED, G14-HEAD-REGRESSED ----

type Olm = 'classic' | 'v1';

interface Stranding {
  bundle: ModelBundle;
  olms: Olm[];
  reasons: string[];
  /** Classic fails for the whole channel (sortChannel error), not just for this bundle. */
  channelBroken: boolean;
  /** The new entry whose edges should cover this bundle (the nearest newer one on the chain). */
  target: ModelBundle | undefined;
}

interface Reported extends Stranding {
  hint: string;
  where: Where;
}

class ChannelComparison {
  private readonly p: string;
  private readonly oldHead: string | null;
  private readonly newHead: string | null;
  private readonly newError: string | null;
  /** Where classic moves users forward in the new channel (its chain, or the top head's walk). */
  private readonly forward: ModelBundle[];
  private readonly v1Options: { channels: string[] };
  private readonly highestNew: Version | undefined;
  private readonly highestOld: Version | undefined;
  private channelFix: { hint: string; edits: string[]; where: Where } | undefined;

  constructor(
    private readonly oldPkg: ModelPackage,
    private readonly newPkg: ModelPackage,
    private readonly oldChannel: ModelChannel,
    private readonly newChannel: ModelChannel,
    private readonly out: Diagnostic[],
  ) {
    this.p = newPkg.name;
    const oldClassic = classicChannel(oldChannel);
    const newClassic = classicChannel(newChannel);
    this.oldHead = oldClassic.heads.length === 1 ? oldClassic.heads[0]! : null;
    this.newHead = newClassic.heads.length === 1 ? newClassic.heads[0]! : null;
    this.newError = newClassic.error;
    this.forward = this.newError === null ? classicChannelEntries(newChannel) : topHeadWalk(newChannel);
    this.v1Options = { channels: [newChannel.name] };
    this.highestNew = highestVersion(newChannel);
    this.highestOld = highestVersion(oldChannel);
  }

  run(): void {
    this.headRegression();
    const strandings: Stranding[] = [];
    for (const b of this.oldChannel.bundles.values()) {
      const s = this.strandingOf(b);
      if (s) strandings.push(s);
      this.nextChanged(b);
    }
    this.report(this.withFixes(strandings));
  }

  private headRegression(): void {
    if (this.oldHead === null || this.newHead === null) return;
    const oldHead = this.oldChannel.bundles.get(this.oldHead)!;
    const newHead = this.newChannel.bundles.get(this.newHead)!;
    if (!oldHead.version || !newHead.version || compareVersions(newHead.version, oldHead.version) >= 0)
      return;
    this.out.push({
      rule: 'G14-HEAD-REGRESSED',
      level: 'error',
      message: `the head of channel "${this.newChannel.name}" of package "${this.p}" goes back from ${oldHead.name} (${formatVersion(oldHead.version)}) to ${newHead.name} (${formatVersion(newHead.version)}): classic OLM installs the lower version, and users of the old head have nothing to upgrade to`,
      ...entryWhere(this.newChannel, newHead),
      package: this.p,
      hint: `Keep ${oldHead.name} (or a higher version) as the head: publish the fix as a new bundle with a version above ${formatVersion(oldHead.version)} that replaces ${oldHead.name}.`,
    });
  }

  /** G12 for one old entry: which OLMs the change strands it under, and why. */
  private strandingOf(old: ModelBundle): Stranding | undefined {
    const name = old.name;
    if (name === this.newHead) return undefined;
    const version = old.version;
    // Nothing at or above its version is left to move to (a removed top is G14-HEAD-REGRESSED).
    if (version && !this.somethingAhead(name, version)) return undefined;
    const installed = { name, ...(version ? { version } : {}) };
    const olms: Olm[] = [];
    const reasons: string[] = [];
    let channelBroken = false;

    // Classic: must have a next bundle, unless it was already a dead end before the change.
    if (classicNext(this.newChannel, installed) === null) {
      const wasFine = name === this.oldHead || classicNext(this.oldChannel, installed) !== null;
      if (wasFine) {
        olms.push('classic');
        if (this.newError !== null) {
          channelBroken = true;
          reasons.push(`classic OLM cannot resolve the channel at all any more (${this.newError})`);
        } else {
          reasons.push(this.classicReason(name, version));
        }
      }
    }

    // v1: must choose something, and not stay put unless nothing is newer.
    if (version) {
      const v1 = { name, version };
      const chosen = v1Chosen(this.newPkg, v1, this.v1Options);
      if (!v1Fine(chosen, name, version, this.highestNew)) {
        const before = v1Chosen(this.oldPkg, v1, this.v1Options);
        if (v1Fine(before, name, version, this.highestOld)) {
          olms.push('v1');
          reasons.push(this.v1Reason(chosen, name, version));
        }
      }
    }
    if (olms.length === 0) return undefined;
    const target = nearestNewer(this.forward, version) ?? this.forward[0];
    return { bundle: old, olms, reasons, channelBroken, target };
  }

  /**
   * The fix for each stranded bundle. Bundles that need an edge from the same entry share
   * one edit (a single `replaces` cannot serve several of them, `skips` can); users whom
   * only the broken channel strands get the channel fix.
   */
  private withFixes(strandings: Stranding[]): Reported[] {
    const byTarget = new Map<ModelBundle | undefined, Stranding[]>();
    for (const s of strandings) {
      if (s.channelBroken && !s.olms.includes('v1')) continue;
      const list = byTarget.get(s.target);
      if (list) list.push(s);
      else byTarget.set(s.target, [s]);
    }
    const edits = new Map<ModelBundle | undefined, string>();
    for (const [target, list] of byTarget) if (target) edits.set(target, this.edit(target, list));
    return strandings.map((s) => {
      const edit = edits.get(s.target);
      const place = s.target
        ? entryWhere(this.newChannel, s.target)
        : where(this.newChannel.pos ?? this.newPkg.pos);
      if (s.channelBroken) {
        const channelFix = this.fixChannel();
        if (
          !s.olms.includes('v1') ||
          !edit ||
          (channelFix.edits.length === 1 && channelFix.edits[0] === edit)
        ) {
          return { ...s, hint: channelFix.hint, where: channelFix.where };
        }
        return {
          ...s,
          hint: `Give its users a way forward: ${edit}. For classic OLM, also ${lowerFirst(channelFix.hint)}`,
          where: place,
        };
      }
      const whose = (byTarget.get(s.target)?.length ?? 1) === 1 ? 'its' : 'their';
      const hint = edit
        ? `Give ${whose} users a way forward: ${edit}.`
        : `Give ${whose} users a way forward: make a newer entry of the channel \`replaces\` or \`skips\` it.`;
      return { ...s, hint, where: place };
    });
  }

  /** The edges `target` needs so that it covers every bundle in `stranded`. */
  private edit(target: ModelBundle, stranded: Stranding[]): string {
    const names = stranded.map((s) => s.bundle.name);
    if (names.length === 1) {
      const name = names[0]!;
      const present = this.newChannel.bundles.has(name);
      const isHead = classicChannel(this.newChannel).heads.includes(name);
      if (target.replaces === '' && (!present || isHead))
        return `add \`replaces: ${name}\` to ${target.name}`;
    }
    const quoted = names.map((n) => `\`${n}\``);
    let edit = `add ${quoted.length === 1 ? quoted[0] : `${quoted.slice(0, -1).join(', ')} and ${quoted.at(-1)}`} to the \`skips\` of ${target.name}`;
    const versions = stranded.map((s) => s.bundle.version);
    if (versions.every((v) => v !== undefined)) {
      const sorted = (versions as Version[]).sort(compareVersions);
      const shown = sorted.map(formatVersion);
      if (target.skipRange !== '') {
        edit += ` (or widen the skipRange of ${target.name}, \`${target.skipRange}\`, to cover ${shown.length === 1 ? shown[0] : `${shown.slice(0, -1).join(', ')} and ${shown.at(-1)}`})`;
      } else if (sorted.length > 1 && target.version) {
        edit += ` (or give it \`skipRange: '>=${shown[0]} <${formatVersion(target.version)}'\`)`;
      }
    }
    return edit;
  }

  /** Whether another entry of the new channel has this version or a higher one. */
  private somethingAhead(name: string, version: Version): boolean {
    if (!this.highestNew) return false;
    const cmp = compareVersions(this.highestNew, version);
    if (cmp !== 0) return cmp > 0;
    for (const b of this.newChannel.bundles.values()) {
      if (b.name !== name && b.version && compareVersions(b.version, version) === 0) return true;
    }
    return false;
  }

  private classicReason(name: string, version: Version | undefined): string {
    const onChain = new Set(this.forward.map((b) => b.name));
    const reachers = [...this.newChannel.bundles.values()]
      .filter((b) => !onChain.has(b.name) && reaches(b, name, version))
      .map((b) => b.name);
    const chain = this.forward.map((b) => b.name);
    if (reachers.length > 0) {
      return `classic OLM has no update for it: ${list(reachers)} ${reachers.length === 1 ? 'upgrades' : 'upgrade'} it, but classic only picks entries on the head's replaces chain minus skipped entries (${chain.join(' -> ')})`;
    }
    return `classic OLM has no update for it: no entry on the replacement chain (${chain.join(' -> ')}) replaces, skips or skipRange-covers it`;
  }

  private v1Reason(chosen: string | null, name: string, version: Version): string {
    if (chosen === null) {
      return 'OLM v1 finds no bundle to move to: nothing in the channel replaces, skips or skipRange-covers it, and no bundle has its version';
    }
    const successors = v1Successors(this.newPkg, { name, version }, this.v1Options);
    if (successors.length === 0) {
      return 'OLM v1 stays on it: nothing in the channel replaces, skips or skipRange-covers it';
    }
    return `OLM v1 stays on it: its only successors (${list(successors)}) are deprecated or not newer, and v1 prefers the installed bundle`;
  }

  /** How to make a channel that classic cannot order orderable again: one head, one chain. */
  private fixChannel(): { hint: string; edits: string[]; where: Where } {
    if (this.channelFix) return this.channelFix;
    const heads = classicChannel(this.newChannel).heads.map((n) => this.newChannel.bundles.get(n)!);
    const top = this.forward[0];
    const edits: string[] = [];
    const givenReplaces = new Set<ModelBundle>();
    let place: Where | undefined;
    if (heads.length > 1 && top && heads.every((h) => h.version)) {
      for (const head of heads) {
        if (head === top) continue;
        const target = nearestNewer(this.forward, head.version) ?? top;
        place ??= entryWhere(this.newChannel, target);
        // An entry has one `replaces`; every further head goes into its `skips`.
        if (target.replaces === '' && !givenReplaces.has(target)) {
          givenReplaces.add(target);
          edits.push(`add \`replaces: ${head.name}\` to ${target.name}`);
        } else {
          edits.push(`add \`${head.name}\` to the \`skips\` of ${target.name}`);
        }
      }
    }
    this.channelFix =
      edits.length > 0
        ? { hint: `Make ${top!.name} the only head: ${edits.join('; ')}.`, edits, where: place! }
        : {
            edits,
            hint: 'Make the channel orderable again: exactly one head, and a replaces chain without cycles (see the validate findings for this channel).',
            where: where(this.newChannel.pos ?? this.newPkg.pos),
          };
    return this.channelFix;
  }

  /** G13-CLASSIC-NEXT-CHANGED: classic moves an old bundle somewhere else (not just further ahead). */
  private nextChanged(old: ModelBundle): void {
    const installed = { name: old.name, ...(old.version ? { version: old.version } : {}) };
    const before = classicNext(this.oldChannel, installed);
    if (before === null) return;
    const after = classicNext(this.newChannel, installed);
    if (after === null || after === before) return;
    const beforeVersion = this.oldChannel.bundles.get(before)?.version;
    const afterBundle = this.newChannel.bundles.get(after)!;
    // A new release that users now jump to directly is the normal way a channel grows.
    if (beforeVersion && afterBundle.version && compareVersions(afterBundle.version, beforeVersion) > 0)
      return;
    this.out.push({
      rule: 'G13-CLASSIC-NEXT-CHANGED',
      level: 'warning',
      message: `classic OLM now upgrades ${old.name} to ${after}${versionNote(afterBundle.version)} instead of ${before}${versionNote(beforeVersion)} in channel "${this.newChannel.name}" of package "${this.p}"`,
      ...entryWhere(this.newChannel, afterBundle),
      package: this.p,
      hint: `Classic OLM takes the candidate nearest the head. If users of ${old.name} should still go to ${before}, remove the edge from ${after} to ${old.name}.`,
    });
  }

  /** One finding per group of bundles stranded the same way (same OLMs, reasons and fix). */
  private report(strandings: Reported[]): void {
    const groups = new Map<string, Reported[]>();
    for (const s of strandings) {
      const key = JSON.stringify([s.olms, s.reasons, s.hint, s.where]);
      const group = groups.get(key);
      if (group) group.push(s);
      else groups.set(key, [s]);
    }
    for (const group of groups.values()) {
      const { olms, reasons, hint, where: place } = group[0]!;
      const described = group.map((s) => this.describe(s.bundle));

      const who =
        olms.length === 2 ? 'both classic OLM and OLM v1' : olms[0] === 'classic' ? 'classic OLM' : 'OLM v1';
      this.out.push({
        rule: 'G12-NO-WAY-FORWARD',
        level: 'error',
        message: `installed ${described.length === 1 ? 'bundle' : `bundles (${described.length})`} ${listSome(described)} in channel "${this.newChannel.name}" of package "${this.p}" would be stranded by ${who}: ${reasons.join('; ')}`,
        ...place,
        package: this.p,
        hint,
      });
    }
  }

  private describe(b: ModelBundle): string {
    const version = b.version ? formatVersion(b.version) : 'no version';
    if (this.newChannel.bundles.has(b.name)) return `${b.name} (${version})`;
    return `${b.name} (${version}; removed from the channel by this change, it was at ${at(this.oldChannel.pos, b)} in the old catalog)`;
  }
}

/** v1 moves on, or stays only because nothing in the channel is newer. */
function v1Fine(
  chosen: string | null,
  name: string,
  version: Version,
  highest: Version | undefined,
): boolean {
  if (chosen === null) return false;
  return chosen !== name || highest === undefined || compareVersions(version, highest) >= 0;
}

function highestVersion(channel: ModelChannel): Version | undefined {
  let highest: Version | undefined;
  for (const b of channel.bundles.values()) {
    if (b.version && (!highest || compareVersions(b.version, highest) > 0)) highest = b.version;
  }
  return highest;
}

/** The lowest-version entry of `chain` above `version`. */
function nearestNewer(chain: ModelBundle[], version: Version | undefined): ModelBundle | undefined {
  if (!version) return undefined;
  let best: ModelBundle | undefined;
  for (const b of chain) {
    if (
      b.version &&
      compareVersions(b.version, version) > 0 &&
      (!best || compareVersions(b.version, best.version!) < 0)
    ) {
      best = b;
    }
  }
  return best;
}

/**
 * For a channel classic cannot order: the chain sortChannel would build from the head with
 * the highest version (its replaces walk minus skipped entries), where the fix belongs.
 */
function topHeadWalk(channel: ModelChannel): ModelBundle[] {
  const heads = classicChannel(channel)
    .heads.map((n) => channel.bundles.get(n)!)
    .sort((a, b) => (a.version && b.version ? compareVersions(b.version, a.version) : 0));
  const skipped = new Set<string>();
  for (const b of channel.bundles.values()) for (const s of b.skips) skipped.add(s);
  const walk: ModelBundle[] = [];
  const seen = new Set<string>();
  for (let b = heads[0]; b && !seen.has(b.name); b = channel.bundles.get(b.replaces)) {
    seen.add(b.name);
    if (!skipped.has(b.name)) walk.push(b);
  }
  return walk;
}

/** Whether entry `b` has an upgrade edge to the installed `name`/`version`. */
function reaches(b: ModelBundle, name: string, version: Version | undefined): boolean {
  if (b.replaces === name || b.skips.includes(name)) return true;
  if (!version || b.skipRange === '') return false;
  const parsed = tryParseRange(b.skipRange);
  if (!parsed.ok) return false;
  try {
    return parsed.range.matches(version);
  } catch (err) {
    if (err instanceof RangeEvaluationError) return false;
    throw err;
  }
}

// ---- Positions and wording ----

function entryWhere(channel: ModelChannel, b: ModelBundle): Where {
  if (channel.pos && b.entry.line !== undefined) return { file: channel.pos.file, line: b.entry.line };
  if (channel.pos) return where(channel.pos);
  return b.blob ? where(b.blob.pos) : {};
}

function where(pos: Position | undefined): Where {
  return pos ? { file: pos.file, line: pos.line } : {};
}

/** `file:line` of a position in the old catalog (an entry's own line when given). */
function at(pos: Position | undefined, b?: ModelBundle): string {
  if (!pos) return 'an unknown place';
  return `${pos.file}:${b?.entry.line ?? pos.line}`;
}

function versionNote(version: Version | undefined): string {
  return version ? ` (${formatVersion(version)})` : '';
}

function list(names: string[]): string {
  return names.join(', ');
}

/** At most MAX_LISTED items, then how many more. */
function listSome(items: string[]): string {
  if (items.length <= MAX_LISTED) return list(items);
  return `${list(items.slice(0, MAX_LISTED))} and ${items.length - MAX_LISTED} more`;
}

function lowerFirst(s: string): string {
  return s.charAt(0).toLowerCase() + s.slice(1);
}
