// The `catalog-bot/crd-upgrade` check: along every upgrade edge a user can take in the new
// catalog (classic OLM candidates and OLM v1 successors: replaces, skips, skipRange), each
// CRD of the old bundle must change only in ways OLM applies (src/catalog/olm/crd-diff.ts).
// Pure apart from the `loadObjects` callback, which reads only the files holding the
// bundles it needs (pull-request reports are loaded without bundle manifests).
import { classicCandidates } from '../catalog/olm/classic.js';
import { bundleCrds, diffBundleCrds, type Crd, type CrdChange } from '../catalog/olm/crd-diff.js';
import type { Bundle } from '../catalog/fbc/declcfg.js';
import type { Diagnostic } from '../catalog/diagnostics.js';
import type { Model, ModelBundle } from '../catalog/fbc/model.js';
import type { Version } from '../catalog/versions/semver.js';
import { v1Successors } from '../catalog/olm/v1.js';
import { mapLimit } from '../catalog/map-limit.js';
import { parseImageReference } from '../catalog/image-ref.js';
import { findingsTable, toAnnotations, type CheckResult } from './check.js';
import type { BundleDirectoryManifests, LoadBundleObjects, Side } from './crd-upgrade-objects.js';
import type { CheckedRoot } from './checked-root.js';

export type { BundleDirectoryManifests, LoadBundleObjects, Side } from './crd-upgrade-objects.js';
export { bundleDirectoryManifests, directoryObjectLoader, gitObjectLoader } from './crd-upgrade-objects.js';

export const CRD_UPGRADE_CHECK = 'catalog-bot/crd-upgrade';

/**
 * Manifests (JSON texts) of a bundle image, for bundles the catalog has no objects for;
 * undefined when the image has none to give. Rejects when the image's registry could not be
 * asked (unreachable, over a limit): the check asks that registry about no other image.
 */
export type RenderBundle = (image: string) => Promise<string[] | undefined>;

/** Bundle images rendered at once by one check (each waits on a registry). */
const RENDER_CONCURRENCY = 8;

export interface CrdUpgradeOptions {
  /**
   * The repository's bundle directories (`bundles.path`): the manifests of bundles the
   * catalog carries only `olm.csv.metadata` for (docs/validation-rules.md).
   */
  bundleDirectories?: BundleDirectoryManifests;
  /** Later, with a registry client: render a bundle image whose manifests are not in the catalog. */
  renderBundle?: RenderBundle;
}

/** One upgrade a user can take: from an installed bundle to a newer catalog entry. */
export interface UpgradeEdge {
  package: string;
  from: string;
  to: string;
  /** Channels in which classic OLM offers `to` as a candidate for `from`. */
  classic: string[];
  /** OLM v1 counts `to` as a successor of `from` (any channel). */
  v1: boolean;
}

interface Installed {
  name: string;
  version?: Version;
}

/**
 * Every edge of a package under classic (candidates of each channel's chain) and v1
 * (successors from all channels). Installed bundles are the package's bundles in this
 * catalog plus `alsoInstalled` (bundles users got from the old catalog).
 */
export function upgradeEdges(
  model: Model,
  packageName: string,
  alsoInstalled: Installed[] = [],
): UpgradeEdge[] {
  const pkg = model.get(packageName);
  if (!pkg) return [];
  const installed = new Map<string, Installed>();
  for (const ch of pkg.channels.values())
    for (const b of ch.bundles.values()) if (!installed.has(b.name)) installed.set(b.name, b);
  for (const b of alsoInstalled) if (!installed.has(b.name)) installed.set(b.name, b);

  const edges = new Map<string, UpgradeEdge>();
  const edge = (from: string, to: string): UpgradeEdge => {
    const key = `${from}\0${to}`;
    let e = edges.get(key);
    if (!e) {
      e = { package: packageName, from, to, classic: [], v1: false };
      edges.set(key, e);
    }
    return e;
  };
  for (const x of installed.values()) {
    for (const ch of pkg.channels.values()) {
      for (const to of classicCandidates(ch, { name: x.name, version: x.version })) {
        if (to !== x.name) edge(x.name, to).classic.push(ch.name);
      }
    }
    if (x.version !== undefined) {
      for (const to of v1Successors(pkg, { name: x.name, version: x.version })) {
        if (to !== x.name) edge(x.name, to).v1 = true;
      }
    }
  }
  return [...edges.values()].sort((a, b) => cmp(a.from, b.from) || cmp(a.to, b.to));
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** The `olm.bundle` blobs of a package by name (any channel). */
function blobsOf(model: Model | undefined, packageName: string): Map<string, ModelBundle> {
  const out = new Map<string, ModelBundle>();
  for (const ch of model?.get(packageName)?.channels.values() ?? [])
    for (const b of ch.bundles.values()) if (b.blob && !out.has(b.name)) out.set(b.name, b);
  return out;
}

function olmsOf(e: UpgradeEdge): string {
  const parts: string[] = [];
  if (e.classic.length > 0)
    parts.push(`classic OLM (channel${e.classic.length === 1 ? '' : 's'} ${e.classic.join(', ')})`);
  if (e.v1) parts.push('OLM v1');
  return parts.join(' and ');
}

/** Objects (JSON texts) of bundles, per side, with parsed CRDs cached. */
class ObjectStore {
  private readonly objects = new Map<string, string[] | undefined>();
  /** Where the manifests of a bundle came from when not from the catalog (a directory, an image). */
  private readonly origin = new Map<string, string>();
  /** Why no manifests were found for a bundle the catalog has none for. */
  private readonly missing = new Map<string, { problem: string; dir?: string }>();
  private readonly crds = new Map<string, Map<string, Crd> | undefined>();
  private readonly rendered = new Map<string, Promise<string[] | undefined>>();
  /** The bundle image of a bundle that had to be rendered. */
  private readonly images = new Map<string, string>();
  /** Why a bundle image could not be read, by image. */
  private readonly unread = new Map<string, string>();
  /** Registries that could not be asked, and why: not asked again by this check. */
  private readonly down = new Map<string, string>();

  constructor(
    private readonly root: string,
    private readonly load: LoadBundleObjects,
    private readonly render?: RenderBundle,
    private readonly directories?: BundleDirectoryManifests,
  ) {}

  /** Read the files of these blobs that carry objects (one call per side). */
  async fetch(side: Side, blobs: Bundle[]): Promise<void> {
    const wanted = blobs.filter((b) => b.objectCount > 0 && !this.objects.has(`${side}\0${b.name}`));
    const files = [...new Set(wanted.map((b) => b.pos.file))].sort();
    const names = new Set(wanted.map((b) => b.name));
    for (const b of files.length === 0 ? [] : await this.load(this.root, side, files)) {
      if (names.has(b.name)) this.objects.set(`${side}\0${b.name}`, b.objects ?? []);
    }
    // Bundles without manifests in the catalog: their bundle directory, else the image if a
    // renderer is given.
    const toRender: { key: string; image: string }[] = [];
    for (const b of blobs) {
      const key = `${side}\0${b.name}`;
      if (this.objects.has(key)) continue;
      if (b.objectCount === 0 && this.directories) {
        const found = await this.directories(b);
        if ('objects' in found) {
          this.objects.set(key, found.objects);
          this.origin.set(key, found.dir);
          continue;
        }
        this.missing.set(key, found);
      }
      if (b.objectCount === 0 && this.render && b.image !== '') {
        toRender.push({ key, image: b.image });
        this.images.set(key, b.image);
      } else {
        this.objects.set(key, undefined);
      }
    }
    await mapLimit(toRender, RENDER_CONCURRENCY, async ({ key, image }) => {
      this.objects.set(key, await this.renderOnce(image));
    });
  }

  private renderOnce(image: string): Promise<string[] | undefined> {
    let pending = this.rendered.get(image);
    if (!pending) {
      pending = this.renderImage(image);
      this.rendered.set(image, pending);
    }
    return pending;
  }

  /** An image's manifests; a registry that could not be asked once is not asked again. */
  private async renderImage(image: string): Promise<string[] | undefined> {
    const registry = parseImageReference(image)?.domain;
    const down = registry === undefined ? undefined : this.down.get(registry);
    if (down !== undefined) {
      this.unread.set(image, down);
      return undefined;
    }
    try {
      return await this.render!(image);
    } catch (error) {
      const problem = (error as Error).message;
      if (registry !== undefined) this.down.set(registry, problem);
      this.unread.set(image, problem);
      return undefined;
    }
  }

  /** Why the bundle image of a bundle could not be read, when it was asked for and could not be. */
  unreadImageOf(side: Side, name: string): { image: string; problem: string } | undefined {
    const image = this.images.get(`${side}\0${name}`);
    const problem = image === undefined ? undefined : this.unread.get(image);
    return image === undefined || problem === undefined ? undefined : { image, problem };
  }

  /** Where a bundle's manifests were read from: the catalog, or the directory. */
  originOf(side: Side, name: string): string {
    return this.origin.get(`${side}\0${name}`) ?? 'the catalog';
  }

  /** Why a bundle has no manifests, when a bundle directory was looked for. */
  missingOf(side: Side, name: string): { problem: string; dir?: string } | undefined {
    return this.missing.get(`${side}\0${name}`);
  }

  text(side: Side, name: string): string[] | undefined {
    return this.objects.get(`${side}\0${name}`);
  }

  crdsOf(side: Side, name: string): Map<string, Crd> | undefined {
    const key = `${side}\0${name}`;
    if (!this.crds.has(key)) {
      const objects = this.objects.get(key);
      this.crds.set(key, objects === undefined ? undefined : bundleCrds(objects).crds);
    }
    return this.crds.get(key);
  }
}

const sameObjects = (a: string[] | undefined, b: string[] | undefined): boolean =>
  a !== undefined && b !== undefined && a.length === b.length && a.every((x, i) => x === b[i]);

interface PackageStats {
  root: string;
  name: string;
  edges: number;
  checked: number;
  crds: number;
  /** The edges this change adds or alters that were compared: which CRDs, from which manifests. */
  compared: { from: string; to: string; crds: string[]; sources: string[] }[];
  /** Bundles of unchecked edges that neither the catalog nor a bundle directory has manifests for. */
  unmanifested: Set<string>;
  /** Unchecked edges the base did not have: what this change adds is not known to be safe. */
  uncheckedNew: number;
}

interface Group {
  change: CrdChange;
  to: string;
  froms: string[];
  olms: Set<string>;
  preexisting: boolean;
}

interface PackagePlan {
  name: string;
  edges: UpgradeEdge[];
  baseEdges: Set<string>;
  headBlobs: Map<string, ModelBundle>;
  /** Which side an installed bundle's manifests come from (base: removed by the change). */
  fromSide: (bundle: string) => Side;
}

/** Every unsafe CRD change along the edges of the changed packages of one root. */
async function rootFindings(
  root: CheckedRoot,
  load: LoadBundleObjects,
  options: CrdUpgradeOptions,
  stats: PackageStats[],
): Promise<Diagnostic[]> {
  if (!root.head) return [];
  const store = new ObjectStore(root.path, load, options.renderBundle, options.bundleDirectories);
  // First the edges of every changed package and the bundles they need, so that each side's
  // files are read once.
  const { plans, needHead, needBase } = planPackages(root, root.head.model);
  await store.fetch('head', [...needHead.values()]);
  await store.fetch('base', [...needBase.values()]);
  const findings: Diagnostic[] = [];
  for (const plan of plans) {
    const { stat, groups, unchecked } = compareEdges(root, store, plan);
    stats.push(stat);
    findings.push(
      ...unsafeChangeFindings(root, plan, groups),
      ...uncheckedFindings(root, store, plan, unchecked, stat),
    );
  }
  return findings;
}

/** Upgrades to one bundle whose CRDs could not be compared, and the bundles without manifests. */
type Unchecked = Map<string, { froms: string[]; missing: Set<string> }>;

/** The upgrade edges of each changed package the head still has, and the bundles each side must read. */
function planPackages(
  root: CheckedRoot,
  headModel: Model,
): { plans: PackagePlan[]; needHead: Map<string, Bundle>; needBase: Map<string, Bundle> } {
  const plans: PackagePlan[] = [];
  const needHead = new Map<string, Bundle>();
  const needBase = new Map<string, Bundle>();
  for (const name of [...root.packages].sort()) {
    if (!headModel.has(name)) continue; // a removed package has no upgrades left
    const headBlobs = blobsOf(headModel, name);
    const baseBlobs = blobsOf(root.base?.model, name);
    // Users may sit on a bundle this change removes: it is still an upgrade source.
    const baseOnly = [...baseBlobs.values()].filter((b) => !headBlobs.has(b.name));
    const edges = upgradeEdges(headModel, name, baseOnly);
    const baseEdges = root.base
      ? new Set(upgradeEdges(root.base.model, name).map((e) => `${e.from}\0${e.to}`))
      : new Set<string>();
    const fromSide = (bundle: string): Side => (headBlobs.has(bundle) ? 'head' : 'base');
    plans.push({ name, edges, baseEdges, headBlobs, fromSide });
    const need = (side: Side, bundle: string): void => {
      const blob = (side === 'head' ? headBlobs : baseBlobs).get(bundle)?.blob;
      if (blob) (side === 'head' ? needHead : needBase).set(`${blob.package}\0${blob.name}`, blob);
    };
    for (const e of edges) {
      need(fromSide(e.from), e.from);
      need('head', e.to);
      // An edge the base had too is pre-existing only if both bundles are unchanged.
      if (baseEdges.has(`${e.from}\0${e.to}`)) {
        need('base', e.from);
        need('base', e.to);
      }
    }
  }
  return { plans, needHead, needBase };
}

/** Compare the CRDs along every edge of a package: unsafe changes grouped, edges not checkable. */
function compareEdges(
  root: CheckedRoot,
  store: ObjectStore,
  { name, edges, baseEdges, fromSide }: PackagePlan,
): { stat: PackageStats; groups: Map<string, Group>; unchecked: Unchecked } {
  const stat: PackageStats = {
    root: root.path,
    name,
    edges: edges.length,
    checked: 0,
    crds: 0,
    compared: [],
    unmanifested: new Set(),
    uncheckedNew: 0,
  };
  const groups = new Map<string, Group>();
  const unchecked: Unchecked = new Map();
  for (const e of edges) {
    const oldCrds = store.crdsOf(fromSide(e.from), e.from);
    const newCrds = store.crdsOf('head', e.to);
    if (oldCrds === undefined || newCrds === undefined) {
      const u = unchecked.get(e.to) ?? { froms: [], missing: new Set<string>() };
      u.froms.push(e.from);
      if (oldCrds === undefined) u.missing.add(e.from);
      if (newCrds === undefined) u.missing.add(e.to);
      unchecked.set(e.to, u);
      if (!baseEdges.has(`${e.from}\0${e.to}`)) stat.uncheckedNew++;
      continue;
    }
    stat.checked++;
    const diff = diffBundleCrds(oldCrds, newCrds);
    stat.crds += diff.compared.length;
    // The change did not cause it when the edge was there before with the same manifests.
    const preexisting =
      baseEdges.has(`${e.from}\0${e.to}`) &&
      sameObjects(store.text(fromSide(e.from), e.from), store.text('base', e.from)) &&
      sameObjects(store.text('head', e.to), store.text('base', e.to));
    if (!preexisting)
      stat.compared.push({
        from: e.from,
        to: e.to,
        crds: diff.compared,
        sources: [store.originOf(fromSide(e.from), e.from), store.originOf('head', e.to)],
      });
    for (const change of diff.changes) {
      if (change.safe) continue;
      const key = `${e.to}\0${change.crd}\0${change.key}\0${preexisting}`;
      const g = groups.get(key) ?? { change, to: e.to, froms: [], olms: new Set<string>(), preexisting };
      g.froms.push(e.from);
      g.olms.add(olmsOf(e));
      groups.set(key, g);
    }
  }
  return { stat, groups, unchecked };
}

/** One finding per unsafe change into a bundle: an error, or a warning when it was so before. */
function unsafeChangeFindings(
  root: CheckedRoot,
  { name, headBlobs }: PackagePlan,
  groups: Map<string, Group>,
): Diagnostic[] {
  return [...groups.values()].map((g) => {
    const blob = headBlobs.get(g.to)?.blob;
    const c = g.change;
    const from =
      g.froms.length === 1
        ? g.froms[0]
        : `${g.froms[0]} (and ${g.froms.length - 1} more: ${g.froms.slice(1, 6).join(', ')}${g.froms.length > 6 ? ', …' : ''})`;
    const where = [`CRD ${c.crd}`, c.version ? `version ${c.version}` : '', c.path ? `field ${c.path}` : '']
      .filter(Boolean)
      .join(', ');
    return {
      rule: c.rule,
      level: g.preexisting ? 'warning' : 'error',
      message:
        `upgrading ${from} -> ${g.to} (${[...g.olms].join('; ')}): ${where}: ${c.message}` +
        (g.preexisting ? ' (already so before this change)' : ''),
      file: blob ? `${root.path}/${blob.pos.file}` : undefined,
      line: blob?.pos.line,
      package: name,
      hint: c.hint,
    };
  });
}

/** A notice per bundle whose upgrades could not be compared, with why its manifests are missing. */
function uncheckedFindings(
  root: CheckedRoot,
  store: ObjectStore,
  { name, headBlobs, fromSide }: PackagePlan,
  unchecked: Unchecked,
  stat: PackageStats,
): Diagnostic[] {
  const findings: Diagnostic[] = [];
  for (const [to, u] of unchecked) {
    const blob = headBlobs.get(to)?.blob;
    const missing = [...u.missing].sort();
    for (const m of missing) stat.unmanifested.add(m);
    // Why each bundle has no manifests: a directory that is there but cannot be used is
    // something the author can fix; no directory at all needs the bundle image.
    const why = missing.map((m) => store.missingOf(m === to ? 'head' : fromSide(m), m));
    const unusable = why.filter((w) => w?.dir !== undefined);
    const reasons = why.flatMap((w) => (w ? [w.problem] : []));
    // Images asked for and not read (a registry down): a re-run may read them.
    const unread = missing.flatMap((m) => {
      const u = store.unreadImageOf(m === to ? 'head' : fromSide(m), m);
      return u ? [`the bundle image ${u.image} of ${m} could not be read: ${u.problem}`] : [];
    });
    findings.push({
      rule: unusable.length > 0 ? 'CRD-BUNDLE-DIRECTORY' : 'CRD-NEEDS-IMAGE',
      level: 'notice',
      message:
        `upgrades to ${to} (from ${u.froms.slice(0, 5).join(', ')}${u.froms.length > 5 ? `, and ${u.froms.length - 5} more` : ''}) were not checked for CRD changes: ` +
        `the catalog has no manifests for ${missing.join(', ')} (only olm.csv.metadata)` +
        (reasons.length > 0 ? `, and no bundle directory has them: ${reasons.join('; ')}` : '') +
        (unread.length > 0
          ? `; ${unread.slice(0, 3).join('; ')}${unread.length > 3 ? `; and ${unread.length - 3} more images` : ''}`
          : ''),
      file: blob ? `${root.path}/${blob.pos.file}` : undefined,
      line: blob?.pos.line,
      package: name,
      hint:
        unusable.length > 0
          ? `Fix the bundle directory so that opm can read it and its CSV is the bundle's (\`catalog-bot/bundle\` names the problem); then its CRDs are compared.`
          : unread.length > 0
            ? 'Re-run the check (/retest) when the registry answers, or add the bundle directory under bundles.path.'
            : 'The CRDs live in the bundle image: add the bundle directory under bundles.path, or compare the CRDs of the two bundle images (or render the bundle with its manifests as olm.bundle.object properties).',
    });
  }
  return findings;
}

/** Compared edges this change adds or alters, listed up to this many per package. */
const MAX_COMPARED_LINES = 20;

function comparedLines(s: PackageStats): string[] {
  if (s.compared.length === 0) return [];
  const line = (c: PackageStats['compared'][number]): string =>
    `- ${c.from} -> ${c.to}: ${c.crds.length === 0 ? 'no CRDs' : c.crds.map((x) => `\`${x}\``).join(', ')} (manifests from ${[...new Set(c.sources)].join(' and ')})`;
  const shown = s.compared.slice(0, MAX_COMPARED_LINES).map(line);
  const more = s.compared.length - shown.length;
  return [
    '',
    'CRDs compared along the edges this change adds or alters:',
    '',
    ...shown,
    ...(more > 0 ? [`- … and ${more} more`] : []),
  ];
}

/** The bundles no manifests were found for (for the title). */
function unmanifested(stats: PackageStats[]): string {
  const list = [...new Set(stats.flatMap((s) => [...s.unmanifested]))].sort();
  return list.length > 3
    ? `${list.slice(0, 3).join(', ')} and ${list.length - 3} more`
    : list.join(', ') || 'the bundles';
}

export async function crdUpgradeCheck(
  roots: CheckedRoot[],
  loadObjects: LoadBundleObjects,
  options: CrdUpgradeOptions = {},
): Promise<CheckResult> {
  const findings: Diagnostic[] = [];
  const stats: PackageStats[] = [];
  for (const root of roots) findings.push(...(await rootFindings(root, loadObjects, options, stats)));
  const count = (level: string, s?: PackageStats) =>
    findings.filter(
      (d) => d.level === level && (!s || (d.package === s.name && d.file?.startsWith(s.root + '/'))),
    ).length;
  const errors = count('error');
  const checked = stats.reduce((n, s) => n + s.checked, 0);
  const notes = count('notice');
  const summary =
    stats.length === 0
      ? 'This change touches no operator package.'
      : stats
          .map((s) => {
            const mine = findings.filter((d) => d.package === s.name && d.file?.startsWith(s.root + '/'));
            return [
              `#### \`${s.root}\` ${s.name}`,
              '',
              `${s.edges} upgrade edge${s.edges === 1 ? '' : 's'}, ${s.checked} checked (${s.crds} CRD comparison${s.crds === 1 ? '' : 's'}): ` +
                `${count('error', s)} error${count('error', s) === 1 ? '' : 's'}, ${count('warning', s)} warning${count('warning', s) === 1 ? '' : 's'}, ${count('notice', s)} note${count('notice', s) === 1 ? '' : 's'}.`,
              ...comparedLines(s),
              ...findingsTable(mine),
            ].join('\n');
          })
          .join('\n\n');
  // Neutral when nothing could be compared, or an edge this change adds could not be.
  const uncheckedNew = stats.reduce((n, s) => n + s.uncheckedNew, 0);
  const conclusion =
    errors > 0 ? 'failure' : (checked === 0 && notes > 0) || uncheckedNew > 0 ? 'neutral' : 'success';
  return {
    name: CRD_UPGRADE_CHECK,
    conclusion,
    title:
      stats.length === 0
        ? 'No package changed'
        : errors > 0
          ? `${errors} unsafe CRD change${errors === 1 ? '' : 's'}`
          : conclusion === 'neutral'
            ? `CRDs not checked: no manifests for ${unmanifested(stats)}`
            : `Every CRD upgrade is safe (${checked} upgrade edge${checked === 1 ? '' : 's'} checked)`,
    summary,
    findings,
    annotations: toAnnotations(findings),
  };
}
