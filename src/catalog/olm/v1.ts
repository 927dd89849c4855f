/**
 * What OLM v1 (operator-controller v1.11) would install or upgrade to, for one package of
 * one catalog: docs/olm-upgrades.md "OLM v1", ported from operator-controller
 * `internal/operator-controller/resolve/catalog.go` (CatalogResolver.Resolve),
 * `catalogmetadata/filter/successors.go`, `bundle_predicates.go`, `compare/compare.go` and
 * `bundleutil/bundle.go`.
 *
 * v1 keeps the bundles that pass every filter (channels, version range, and "successor of
 * the installed bundle, or the installed version itself"), sorts non-deprecated first, then
 * highest version+release, and takes the top one. It never validates the catalog, so this
 * works on any model, valid or not.
 */
import { parseMastermindsRange, type MastermindsRange } from '../versions/masterminds.js';
import { parseRelease, type ModelBundle, type ModelPackage } from '../fbc/model.js';
import { tryParseRange, type VersionRange } from '../versions/range.js';
import { compareVersions, type PrereleasePart, type Version } from '../versions/semver.js';
import { PROPERTY_PACKAGE } from '../property.js';

export interface InstalledBundle {
  name: string;
  /** The installed version as operator-controller records it (legacy: release in build metadata). */
  version: Version;
  /** An explicit release (BundleMetadata.release, BundleReleaseSupport only); unset means legacy. */
  release?: PrereleasePart[];
}

export interface V1Options {
  /** spec.source.catalog.channels; unset or empty means every channel. */
  channels?: string[];
  /** spec.source.catalog.version (Masterminds syntax); unset or empty means any version. */
  versionRange?: string;
  /**
   * The alpha BundleReleaseSupport feature gate (off by default): a bundle's explicit
   * `olm.package` `release` field replaces the legacy release-in-build-metadata reading.
   */
  bundleReleaseSupport?: boolean;
}

/** `versionRange` is rejected by the CRD or by Masterminds; `message` is what the user would see. */
export class InvalidVersionRangeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidVersionRangeError';
  }
}

/**
 * Bundles (distinct by name) of the package that are v1 successors of `installed`
 * (replaces/skips/skipRange from any selected channel's entries), plus bundles with the
 * installed version (stay), after channel and range filters, in v1 preference order
 * (non-deprecated first, then highest version+release). With `installed` null (a fresh
 * install) every bundle that passes the filters. Throws InvalidVersionRangeError.
 */
export function v1Candidates(
  pkg: ModelPackage,
  installed: InstalledBundle | null,
  options: V1Options = {},
): string[] {
  return rank(pkg, installed && toInstalled(installed), options).map((c) => c.bundle.name);
}

/** Successor names only (no "stay" bundles), for display; sorted by preference. */
export function v1Successors(
  pkg: ModelPackage,
  installed: InstalledBundle,
  options: V1Options = {},
): string[] {
  return rank(pkg, toInstalled(installed), options)
    .filter((c) => c.successor)
    .map((c) => c.bundle.name);
}

/**
 * Every legacy successor of `installed` in the selected channels (an entry that replaces
 * it, skips it, or whose skipRange holds its version), before v1 filters them by version
 * range and ranks deprecated ones last: highest version+release first, then by name. The
 * candidates `catalog-bot graph` lists (README "Command line").
 */
export function v1LegacySuccessors(
  pkg: ModelPackage,
  installed: InstalledBundle,
  options: Pick<V1Options, 'channels' | 'bundleReleaseSupport'> = {},
): string[] {
  const prepared = prepare(pkg, options.bundleReleaseSupport ?? false);
  const channels = options.channels && options.channels.length > 0 ? new Set(options.channels) : null;
  return [...successorsOf(prepared, toInstalled(installed), channels)]
    .sort((a, b) => compareVersionRelease(b.vr, a.vr) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((b) => b.name);
}

/**
 * What v1 picks: the top candidate, or null ("no bundles found for package ..."). For a
 * fresh install (installed = null): the highest non-deprecated bundle after the filters.
 */
export function v1Chosen(
  pkg: ModelPackage,
  installed: InstalledBundle | null,
  options: V1Options = {},
): string | null {
  return rank(pkg, installed && toInstalled(installed), options)[0]?.bundle.name ?? null;
}

/**
 * The hops v1 takes from `installed` until it stays, for diagnostics: each bundle it
 * would move to, in order. Empty when it stays at once or finds nothing.
 */
export function v1Path(pkg: ModelPackage, installed: InstalledBundle, options: V1Options = {}): string[] {
  const path: string[] = [];
  const visited = new Set<string>([installed.name]);
  let current = toInstalled(installed);
  for (;;) {
    const next = rank(pkg, current, options)[0]?.bundle;
    if (!next || next.name === current.name) return path;
    path.push(next.name);
    // A hop only goes to a strictly preferred bundle once on the catalog; guard anyway.
    if (visited.has(next.name)) return path;
    visited.add(next.name);
    // bundleutil.MetadataFor round-trips the chosen bundle's version+release unchanged.
    current = { name: next.name, vr: next.vr };
  }
}

// ---- Versions and releases (bundleutil.GetVersionAndRelease, declcfg.VersionRelease) ----

interface VersionRelease {
  version: Version;
  release: PrereleasePart[];
}

/**
 * ParseLegacyVersionRelease: build metadata that is a valid release (model.NewRelease:
 * prerelease-style identifiers, at most 20 characters) becomes the release and is cleared
 * from the version; other build metadata (`+001`) stays and comparisons ignore it.
 */
function legacyVersionRelease(version: Version): VersionRelease {
  const parsed = parseRelease(version.build.join('.'));
  if (parsed.ok && parsed.release.length > 0) {
    return { version: { ...version, build: [] }, release: parsed.release };
  }
  return { version, release: [] };
}

/** VersionRelease.Compare: semver precedence, then the release (any release beats none). */
function compareVersionRelease(a: VersionRelease, b: VersionRelease): number {
  return compareVersions(a.version, b.version) || compareRelease(a.release, b.release);
}

function compareRelease(a: PrereleasePart[], b: PrereleasePart[]): number {
  if (a.length === 0 || b.length === 0) return Math.sign(a.length - b.length);
  const zero = { major: 0n, minor: 0n, patch: 0n, build: [] };
  return compareVersions({ ...zero, pre: a }, { ...zero, pre: b });
}

interface Installed {
  name: string;
  vr: VersionRelease;
}

/** filter.parseInstalledBundleVersionRelease: explicit release if recorded, else legacy. */
function toInstalled(installed: InstalledBundle): Installed {
  const vr =
    installed.release !== undefined
      ? { version: installed.version, release: installed.release }
      : legacyVersionRelease(installed.version);
  return { name: installed.name, vr };
}

// ---- The package as v1 sees it, prepared once ----

interface V1Bundle {
  name: string;
  vr: VersionRelease;
  /** Only `olm.deprecations` entries with schema olm.bundle change the ranking. */
  deprecated: boolean;
  channels: Set<string>;
}

/** One channel entry's upgrade edges. */
interface Edge {
  bundle: V1Bundle;
  channel: string;
  /** Null when empty or when blang cannot parse it: v1 silently ignores such a skipRange. */
  skipRange: VersionRange | null;
}

interface PreparedPackage {
  bundles: V1Bundle[];
  byReplaces: Map<string, Edge[]>;
  bySkips: Map<string, Edge[]>;
  withSkipRange: Edge[];
}

// Keyed by the package object: a model is not changed after validation builds it.
const preparedLegacy = new WeakMap<ModelPackage, PreparedPackage>();
const preparedExplicit = new WeakMap<ModelPackage, PreparedPackage>();

function prepare(pkg: ModelPackage, bundleReleaseSupport: boolean): PreparedPackage {
  const cache = bundleReleaseSupport ? preparedExplicit : preparedLegacy;
  const cached = cache.get(pkg);
  if (cached) return cached;

  const bundles = new Map<string, V1Bundle>();
  const prepared: PreparedPackage = {
    bundles: [],
    byReplaces: new Map(),
    bySkips: new Map(),
    withSkipRange: [],
  };
  const add = (index: Map<string, Edge[]>, key: string, edge: Edge): void => {
    const list = index.get(key);
    if (list) list.push(edge);
    else index.set(key, [edge]);
  };
  for (const channel of pkg.channels.values()) {
    for (const mb of channel.bundles.values()) {
      // Without a version v1 cannot rank a bundle, and fails if it would pick it.
      if (!mb.version || !mb.blob) continue;
      let bundle = bundles.get(mb.name);
      if (!bundle) {
        bundle = {
          name: mb.name,
          vr: bundleVersionRelease(mb, mb.version, bundleReleaseSupport),
          deprecated: false,
          channels: new Set(),
        };
        bundles.set(mb.name, bundle);
      }
      bundle.channels.add(channel.name);
      if (mb.deprecation) bundle.deprecated = true;

      const parsedRange = mb.skipRange === '' ? null : tryParseRange(mb.skipRange);
      const edge: Edge = {
        bundle,
        channel: channel.name,
        skipRange: parsedRange?.ok ? parsedRange.range : null,
      };
      if (mb.replaces !== '') add(prepared.byReplaces, mb.replaces, edge);
      for (const skip of new Set(mb.skips)) add(prepared.bySkips, skip, edge);
      if (edge.skipRange) prepared.withSkipRange.push(edge);
    }
  }
  prepared.bundles = [...bundles.values()];
  cache.set(pkg, prepared);
  return prepared;
}

/** bundleutil.parseVersionRelease: the explicit release only with the gate and the field present. */
function bundleVersionRelease(
  mb: ModelBundle,
  version: Version,
  bundleReleaseSupport: boolean,
): VersionRelease {
  if (bundleReleaseSupport && hasExplicitRelease(mb)) return { version, release: mb.release };
  return legacyVersionRelease(version);
}

/** Whether the `olm.package` value has a `release` string (Go's JSON keys match case-insensitively). */
function hasExplicitRelease(mb: ModelBundle): boolean {
  const value = mb.properties.find((p) => p.type === PROPERTY_PACKAGE)?.value;
  if (typeof value !== 'object' || value === null) return false;
  return Object.entries(value).some(([key, v]) => key.toLowerCase() === 'release' && typeof v === 'string');
}

// ---- Filtering and ranking (CatalogResolver.Resolve for one catalog) ----

interface RankedCandidate {
  bundle: V1Bundle;
  /** Reached by an upgrade edge; otherwise it is only there because it has the installed version. */
  successor: boolean;
}

function rank(pkg: ModelPackage, installed: Installed | null, options: V1Options): RankedCandidate[] {
  const prepared = prepare(pkg, options.bundleReleaseSupport ?? false);
  // Resolve deletes unselected channels in place, and the successor search reads the same
  // slice, so with `channels` set only their edges count (key finding 9).
  const channels = options.channels && options.channels.length > 0 ? new Set(options.channels) : null;
  const range = versionRangeOf(options.versionRange);

  const successors = installed ? successorsOf(prepared, installed, channels) : null;
  const candidates: RankedCandidate[] = [];
  for (const bundle of prepared.bundles) {
    if (channels && ![...bundle.channels].some((c) => channels.has(c))) continue;
    // InSemverRange checks the version with the legacy release already taken out.
    if (range && !range.matches(bundle.vr.version)) continue;
    if (installed && successors) {
      const successor = successors.has(bundle);
      // ExactVersionRelease: versions compare without build metadata, names are not compared.
      if (!successor && compareVersionRelease(bundle.vr, installed.vr) !== 0) continue;
      candidates.push({ bundle, successor });
    } else {
      candidates.push({ bundle, successor: false });
    }
  }
  return candidates.sort((a, b) => comparePreference(a.bundle, b.bundle));
}

function versionRangeOf(versionRange: string | undefined): MastermindsRange | null {
  if (versionRange === undefined || versionRange === '') return null;
  const parsed = parseMastermindsRange(versionRange);
  if (!parsed.ok) throw new InvalidVersionRangeError(parsed.error);
  return parsed.range;
}

/**
 * legacySuccessor: an entry (in a searched channel) for the bundle that replaces or skips
 * the installed name, or whose blang skipRange contains the installed version. No chain,
 * no "skipped" entries, and no version check: an edge to a lower version counts.
 */
function successorsOf(
  prepared: PreparedPackage,
  installed: Installed,
  channels: Set<string> | null,
): Set<V1Bundle> {
  const found = new Set<V1Bundle>();
  const consider = (edge: Edge): void => {
    if (!channels || channels.has(edge.channel)) found.add(edge.bundle);
  };
  for (const edge of prepared.byReplaces.get(installed.name) ?? []) consider(edge);
  for (const edge of prepared.bySkips.get(installed.name) ?? []) consider(edge);
  for (const edge of prepared.withSkipRange) {
    if (!found.has(edge.bundle) && edge.skipRange!.covers(installed.vr.version)) consider(edge);
  }
  return found;
}

/**
 * Non-deprecated first, then highest version+release (compare.ByDeprecationFunc, then
 * compare.ByVersionAndRelease, in a stable sort). Upstream breaks remaining ties by the
 * order LoadFS happened to read the bundle files in, which is concurrent; the name here.
 */
function comparePreference(a: V1Bundle, b: V1Bundle): number {
  if (a.deprecated !== b.deprecated) return a.deprecated ? 1 : -1;
  return compareVersionRelease(b.vr, a.vr) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
}
