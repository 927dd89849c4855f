// What a cluster that upgrades OpenShift finds of an operator (docs/ocp-lifecycle.md): the
// bundles a cluster can run from one OpenShift catalog, and whether the next catalog has
// each of them or a way forward from it, under classic OLM (classic.ts) and OLM v1 (v1.ts).
import { classicChannel, classicNext } from './classic.js';
import type { Bundle } from '../fbc/declcfg.js';
import type { ModelBundle, ModelChannel, ModelPackage } from '../fbc/model.js';
import { v1Chosen } from './v1.js';
import { maxOpenShiftVersions } from '../property.js';

/** An OpenShift `major.minor`. */
export interface OcpMinor {
  major: number;
  minor: number;
}

/** `4.21`, as olm.maxOpenShiftVersion writes it (no `v`, no patch). */
export function parseOcpMinor(s: string): OcpMinor | null {
  const m = /^(0|[1-9][0-9]{0,3})\.(0|[1-9][0-9]{0,3})$/.exec(s);
  return m ? { major: Number(m[1]), minor: Number(m[2]) } : null;
}

/** A catalog directory name like `v4.21`. */
export function ocpCatalogVersion(name: string): OcpMinor | null {
  return name.startsWith('v') ? parseOcpMinor(name.slice(1)) : null;
}

/** OLM ranks OpenShift 4.23 and later as 5.x (see the G20 rule in docs/validation-rules.md). */
export function rankOcp(m: OcpMinor): number {
  return m.major === 4 && m.minor >= 23 ? 5000 + (m.minor - 23) : m.major * 1000 + m.minor;
}

export const formatOcp = (m: OcpMinor): string => `${m.major}.${m.minor}`;

/** How clusters come to run a bundle from a catalog. */
export type Reach =
  /** on the classic replaces chain: installed fresh (the head) or upgraded through */
  | 'classic'
  /** what OLM v1 installs fresh in the channel, or moves an installed bundle to */
  | 'v1'
  /** only by asking for it: `startingCSV` (classic) or a pinned version (v1) */
  | 'pinned';

export interface Runnable {
  bundle: ModelBundle;
  reach: Reach[];
}

/**
 * OLM v1 ranks every bundle of the package for each bundle asked about: past this many
 * entries in a channel only classic OLM's answers are used (bounded work, docs/security.md).
 */
export const MAX_V1_ENTRIES = 2000;

/** Every entry of a channel, with how clusters reach it. */
export function runnableBundles(pkg: ModelPackage, channel: ModelChannel): Runnable[] {
  const reach = new Map<string, Set<Reach>>();
  const add = (name: string | null, how: Reach): void => {
    if (name === null || !channel.bundles.has(name)) return;
    const set = reach.get(name) ?? new Set<Reach>();
    set.add(how);
    reach.set(name, set);
  };
  for (const name of classicChannel(channel).chain) add(name, 'classic');
  const options = { channels: [channel.name] };
  add(v1Chosen(pkg, null, options), 'v1');
  for (const b of channel.bundles.size <= MAX_V1_ENTRIES ? channel.bundles.values() : []) {
    if (!b.version) continue;
    const chosen = v1Chosen(pkg, { name: b.name, version: b.version }, options);
    if (chosen !== b.name) add(chosen, 'v1');
  }
  return [...channel.bundles.values()].map((bundle) => ({
    bundle,
    reach: reach.has(bundle.name) ? [...reach.get(bundle.name)!] : ['pinned'],
  }));
}

export interface WayForward {
  /** The next catalog's channel has the same bundle. */
  same: boolean;
  /** Where classic OLM moves it in the next catalog's channel (null: nowhere). */
  classic: string | null;
  /** Where OLM v1 moves it (null: nowhere; undefined: not asked, the bundle has no version or the channel is too large). */
  v1: string | null | undefined;
}

/** What the next catalog's channel offers a cluster running `b`. */
export function wayForward(next: ModelPackage, channel: ModelChannel, b: ModelBundle): WayForward {
  if (channel.bundles.has(b.name)) return { same: true, classic: null, v1: null };
  const installed = { name: b.name, ...(b.version ? { version: b.version } : {}) };
  return {
    same: false,
    classic: classicNext(channel, installed),
    v1:
      b.version && channel.bundles.size <= MAX_V1_ENTRIES
        ? v1Chosen(next, { name: b.name, version: b.version }, { channels: [channel.name] })
        : undefined,
  };
}

/** The `olm.maxOpenShiftVersion` values of a bundle (its properties, else its CSV's `olm.properties`). */
export function maxOpenShiftValues(blob: Bundle): unknown[] {
  const { own, fromCsv } = maxOpenShiftVersions(blob.properties);
  return own.length > 0 ? own.map((p) => p.value) : fromCsv;
}

/** The bundle's max OpenShift version, when it declares exactly one readable value. */
export function maxOpenShiftVersion(blob: Bundle | undefined): OcpMinor | null {
  if (!blob) return null;
  const values = maxOpenShiftValues(blob);
  return values.length === 1 && typeof values[0] === 'string' ? parseOcpMinor(values[0]) : null;
}

/** Clusters running the bundle cannot upgrade OpenShift to `to` (its max is below). */
export function holdsClustersBefore(blob: Bundle | undefined, to: OcpMinor): boolean {
  const max = maxOpenShiftVersion(blob);
  return max !== null && rankOcp(max) < rankOcp(to);
}
