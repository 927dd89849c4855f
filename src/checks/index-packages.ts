// The catalog checks of a bundle pull request for a package still on the bundle index
// (docs/bundles.md, "Packages still on the index"): its ci.yaml says `updateGraph`, not
// `fbc.enabled`, so the repository holds no catalog of it. The catalogs the index serves
// for each OpenShift version are emulated from its bundle directories at the base and at
// the head (onboardPackage, docs/legacy-index.md), checked as an FBC package's are, and the
// findings are moved onto the bundle directory files that make them (the CSV's
// spec.replaces line, annotations.yaml). Nothing is written to the repository.
import { LineCounter, parseDocument, isMap, isScalar, type Node } from 'yaml';
import type { Diagnostic } from '../catalog/diagnostics.js';
import type { BundleSettings, ReleaseTree } from '../catalog/edits/release.js';
import { onboardPackage, OnboardRefusal, type OnboardResult } from '../catalog/edits/onboard.js';
import { ocpCatalogVersion, rankOcp } from '../catalog/olm/ocp-continuity.js';
import { OPENSHIFT_VERSIONS_ANNOTATION } from '../catalog/legacy/openshift-versions.js';
import { CHANNELS_ANNOTATION, DEFAULT_CHANNEL_ANNOTATION } from '../catalog/legacy/bundle-annotations.js';
import { bundleDirectories, MAX_PACKAGE_BYTES, type ReadDirectory, type ReadFile } from './bundle-pr.js';
import { toAnnotations, type CheckResult } from './check.js';
import type { ExplainedCause } from './findings.js';

/** More packages on the index than this in one pull request are not emulated (bounded work). */
export const MAX_INDEX_PACKAGES = 4;
/** The rule of a bundle directory the index cannot take (docs/validation-rules.md). */
export const INDEX_RULE = 'INDEX-REFUSED';
/** The rule of a bundle whose CSV replaces a bundle its channel does not have (docs/validation-rules.md). */
export const INDEX_REPLACES_RULE = 'INDEX-REPLACES-MISSING';

export interface IndexChangeInput {
  base: string;
  head: string;
  files: string[];
  settings: BundleSettings;
  readFile: ReadFile;
  readDirectory: ReadDirectory;
  /** The catalog roots of each side (only those named after an OpenShift version are emulated). */
  baseRoots: string[];
  headRoots: string[];
}

/** One package's bundle directories read at one side, and what the index serves from them. */
interface Side {
  files: Map<string, Buffer>;
  /** Old bundle directories the index never took (refused when they came), with why. */
  leftOut?: { dir: string; reason: string }[];
  result?: OnboardResult;
  refusal?: OnboardRefusal;
}

interface EmulatedPackage {
  package: string;
  packageDir: string;
  /** The bundle directories the change adds or changes. */
  changed: string[];
  base: Side;
  head: Side;
}

/** The emulated catalogs of a change, and how findings on them are told. */
export interface IndexEmulation {
  /** Catalog files to lay over the base and over the head (never written to a ref). */
  baseFiles: { path: string; after: string }[];
  headFiles: { path: string; after: string }[];
  /** Findings of the emulation itself (a bundle the index cannot take, a package too large). */
  findings: Diagnostic[];
  /** Upgrade-graph findings only the emulation sees: a new bundle replacing a bundle not in its channel. */
  graphFindings: Diagnostic[];
  packages: EmulatedPackage[];
  /** One line per emulated package: what was checked. */
  described: string[];
}

const catalogNameOf = (root: string): string => root.slice(root.lastIndexOf('/') + 1);
const ocpRoots = (roots: string[]): string[] => roots.filter((r) => ocpCatalogVersion(catalogNameOf(r)));
const byOcp = (a: string, b: string): number =>
  rankOcp(ocpCatalogVersion(a)!) - rankOcp(ocpCatalogVersion(b)!) || (a < b ? -1 : a > b ? 1 : 0);

/** Whether a ci.yaml text puts the package on file-based catalogs (`fbc.enabled: true`). */
function onFbc(text: string): boolean {
  const doc = parseDocument(text);
  if (doc.errors.length > 0) return false; // onboardPackage refuses it with the reason
  const fbc = doc.getIn(['fbc', 'enabled']);
  return fbc === true;
}

/**
 * The packages on the index whose bundle directories the change touches, emulated at the
 * base and the head; undefined when there is none (or no OpenShift catalog to emulate).
 */
export async function emulateIndexPackages(input: IndexChangeInput): Promise<IndexEmulation | undefined> {
  const headRoots = ocpRoots(input.headRoots);
  if (headRoots.length === 0) return undefined;
  const baseRoots = ocpRoots(input.baseRoots);
  const wanted = await packagesOnTheIndex(input, baseRoots);
  if (wanted.length === 0) return undefined;
  const findings: Diagnostic[] = [];
  if (wanted.length > MAX_INDEX_PACKAGES) {
    findings.push({
      level: 'warning',
      rule: INDEX_RULE,
      message: `the pull request changes bundles of ${wanted.length} packages on the bundle index; catalog-bot emulates the index for at most ${MAX_INDEX_PACKAGES} in one pull request, so the first ${MAX_INDEX_PACKAGES} are checked`,
      hint: 'Send the bundles in smaller pull requests (one bundle per pull request is the usual way).',
    });
    wanted.length = MAX_INDEX_PACKAGES;
  }
  const emulation: IndexEmulation = {
    baseFiles: [],
    headFiles: [],
    findings,
    graphFindings: [],
    packages: [],
    described: [],
  };
  // One budget per side for every package: four packages at the bound are not held at once.
  const budget = { head: MAX_PACKAGE_BYTES, base: MAX_PACKAGE_BYTES };
  for (const w of wanted) {
    const pkg = await emulatePackage(input, w, { head: headRoots, base: baseRoots }, budget, findings);
    if (!pkg) continue;
    emulation.packages.push(pkg);
    pkg.base.files = new Map(); // findings are placed in the head's files only
    for (const e of catalogEdits(pkg.head.result!, w.package)) emulation.headFiles.push(e);
    if (pkg.base.result)
      for (const e of catalogEdits(pkg.base.result, w.package)) emulation.baseFiles.push(e);
    emulation.described.push(describe(pkg));
    emulation.graphFindings.push(...missingReplaces(pkg));
  }
  return emulation;
}

/** A package on the bundle index whose bundle directories the change touches. */
interface WantedPackage {
  package: string;
  packageDir: string;
  changed: string[];
}

/**
 * The packages of the changed bundle directories that the index serves at the head and
 * that have no catalogs of their own at the base, by name.
 */
async function packagesOnTheIndex(input: IndexChangeInput, baseRoots: string[]): Promise<WantedPackage[]> {
  const byPackage = new Map<string, { packageDir: string; changed: string[] }>();
  for (const b of bundleDirectories(input.files, input.settings.path)) {
    const packageDir = b.dir.slice(0, b.dir.lastIndexOf('/'));
    const entry = byPackage.get(b.package) ?? { packageDir, changed: [] };
    entry.changed.push(b.dir);
    byPackage.set(b.package, entry);
  }
  const wanted: WantedPackage[] = [];
  for (const [pkg, { packageDir, changed }] of [...byPackage].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const ciPath = `${packageDir}/ci.yaml`;
    const [baseCi, headCi] = await Promise.all([
      input.readFile(input.base, ciPath),
      input.readFile(input.head, ciPath),
    ]);
    // On the index at the head (what the pipeline adds the bundle with) and not leaving FBC.
    if (headCi === undefined || onFbc(headCi) || (baseCi !== undefined && onFbc(baseCi))) continue;
    // A package with catalogs of its own at the base is (partly) on FBC: those catalogs are
    // checked as they are. Catalogs only the pull request adds are not: the index would
    // still serve the bundle directories, so those are what is checked (the overlay
    // replaces such a catalog.yaml).
    if (await hasCatalogs(input, baseRoots, pkg)) continue;
    wanted.push({ package: pkg, packageDir, changed });
  }
  return wanted;
}

/**
 * One package emulated at the head and the base; undefined (with a finding) when a side is
 * too large or the head's bundle directories are refused.
 */
async function emulatePackage(
  input: IndexChangeInput,
  w: WantedPackage,
  roots: { head: string[]; base: string[] },
  budget: { head: number; base: number },
  findings: Diagnostic[],
): Promise<EmulatedPackage | undefined> {
  const head = await emulateSide(
    input,
    input.head,
    w.package,
    w.packageDir,
    roots.head,
    budget,
    'head',
    w.changed,
  );
  if ('tooLarge' in head) {
    findings.push(tooLargeFinding(w.package, w.packageDir, head.tooLarge));
    return undefined;
  }
  let base: Side | { tooLarge: number } = { files: new Map() };
  const baseCi = await input.readFile(input.base, `${w.packageDir}/ci.yaml`);
  if (baseCi !== undefined && roots.base.length > 0)
    base = await emulateSide(
      input,
      input.base,
      w.package,
      w.packageDir,
      roots.base,
      budget,
      'base',
      w.changed,
      head.files,
    );
  if ('tooLarge' in base) {
    findings.push(tooLargeFinding(w.package, w.packageDir, base.tooLarge));
    return undefined;
  }
  if (head.refusal) {
    // The same refusal at the base: an old problem of the package, not this change's.
    const old = base.refusal?.message === head.refusal.message;
    const file = head.refusal.file ?? w.changed[0]!;
    findings.push({
      level: old ? 'warning' : 'error',
      rule: INDEX_RULE,
      package: w.package,
      message: `the bundle index cannot take ${w.package} as its bundle directories are${old ? ' (already so before this change)' : ''}: ${head.refusal.message}`,
      file: file.endsWith('/') ? file.slice(0, -1) : file,
      line: lineOfRefusal(head, file),
      hint: `Fix what the message names; \`catalog-bot onboard ${w.package} --dry-run\` shows the same in a clone.`,
    });
    return undefined;
  }
  if (base.refusal)
    findings.push({
      level: 'warning',
      rule: INDEX_RULE,
      package: w.package,
      message: `the base's bundle directories of ${w.package} cannot be emulated (${base.refusal.message}); the head is checked as if the package were new`,
      file: w.changed[0]!,
      line: 1,
    });
  return { ...w, base, head };
}

/** Does an OpenShift catalog root of the base hold files of the package? */
async function hasCatalogs(input: IndexChangeInput, roots: string[], pkg: string): Promise<boolean> {
  for (const root of roots) {
    const listed = await input.readDirectory(input.base, `${root}/${pkg}`, 0).catch(() => undefined);
    if (listed && (listed.bytes > 0 || listed.unreadable.length > 0)) return true;
  }
  return false;
}

function tooLargeFinding(pkg: string, packageDir: string, bytes: number): Diagnostic {
  return {
    level: 'warning',
    rule: INDEX_RULE,
    package: pkg,
    message: `${packageDir} holds ${Math.ceil(bytes / 2 ** 20)} MiB of files: with the other packages of the pull request, more than the ${MAX_PACKAGE_BYTES / 2 ** 20} MiB catalog-bot reads to emulate the bundle index; ${pkg} is not checked on the index`,
    file: packageDir,
    line: 1,
  };
}

/**
 * One side's package directory as a tree, emulated. Files the head read already (same
 * bytes) are shared, so an unchanged bundle directory is held once.
 */
async function emulateSide(
  input: IndexChangeInput,
  rev: string,
  pkg: string,
  packageDir: string,
  roots: string[],
  budget: { head: number; base: number },
  side: 'head' | 'base',
  changed: string[],
  shared?: Map<string, Buffer>,
): Promise<Side | { tooLarge: number }> {
  const read = await input.readDirectory(rev, packageDir, budget[side]);
  if (read.bytes > budget[side]) return { tooLarge: read.bytes };
  budget[side] -= read.bytes;
  const files = new Map<string, Buffer>();
  for (const [p, data] of read.files) {
    const path = `${packageDir}/${p}`;
    const same = shared?.get(path);
    files.set(path, same && same.equals(data) ? same : data);
  }
  const leftOut: { dir: string; reason: string }[] = [];
  for (;;) {
    const paths = [...files.keys()].sort();
    const tree: ReleaseTree = {
      list: () => paths,
      readBytes: (p) => files.get(p),
      read: (p) => files.get(p)?.toString('utf8'),
    };
    try {
      const result = await onboardPackage({
        tree,
        package: pkg,
        catalogRoots: roots,
        settings: input.settings,
      });
      return { files, result, leftOut };
    } catch (err) {
      if (!(err instanceof OnboardRefusal)) throw err;
      // An old bundle directory the index cannot take was refused by `opm index add` when
      // it came, so the index never held it: left out, the rest is emulated. A directory the
      // change touches, ci.yaml, or more than a few such directories: the refusal stands.
      const dir = bundleDirOf(err.file, packageDir);
      if (!dir || changed.includes(dir) || leftOut.length >= MAX_LEFT_OUT)
        return { files, refusal: err, leftOut };
      leftOut.push({ dir, reason: err.message });
      for (const p of [...files.keys()]) if (p.startsWith(`${dir}/`)) files.delete(p);
    }
  }
}

/** Old bundle directories left out of one emulation, at most (each costs an emulation). */
const MAX_LEFT_OUT = 5;

/** The bundle directory (`<packageDir>/<version>`) a refusal names, if it names one. */
function bundleDirOf(file: string | undefined, packageDir: string): string | undefined {
  if (!file?.startsWith(`${packageDir}/`)) return undefined;
  const version = file.slice(packageDir.length + 1).split('/')[0];
  return version && version !== 'ci.yaml' ? `${packageDir}/${version}` : undefined;
}

/** The catalog.yaml texts of an onboarding: what the index serves per OpenShift catalog. */
function catalogEdits(result: OnboardResult, pkg: string): { path: string; after: string }[] {
  return result.edits
    .filter((e) => e.path.endsWith(`/${pkg}/catalog.yaml`))
    .map((e) => ({ path: e.path, after: e.after }));
}

function describe(pkg: EmulatedPackage): string {
  const result = pkg.head.result!;
  const groups = new Map<string, string[]>();
  for (const [catalog, c] of Object.entries(result.catalogs)) {
    const channels = Object.entries(c.channels)
      .map(([name, entries]) => `${name} (${entries.length} bundle${entries.length === 1 ? '' : 's'})`)
      .join(', ');
    const text = `default channel ${c.defaultChannel}; channels ${channels}`;
    groups.set(text, [...(groups.get(text) ?? []), catalog]);
  }
  const parts = [...groups].map(([text, catalogs]) => `${catalogs.sort(byOcp).join(', ')}: ${text}`);
  const left = pkg.head.leftOut ?? [];
  const without =
    left.length > 0
      ? `; left out as the index never took them: ${left.map((l) => `${l.dir} (${l.reason})`).join('; ')}`
      : '';
  return `${pkg.package} is on the bundle index (${result.mode}); checked on the catalogs the index will serve, emulated from ${pkg.packageDir}: ${parts.join('; ')}${without}`;
}

/**
 * Each bundle the change adds or changes whose CSV replaces a bundle that is not in its
 * channel of an OpenShift version's index: `opm index add` refuses it ("replaces
 * nonexistent bundle"), and the channel's installed versions would lose their way forward.
 */
function missingReplaces(pkg: EmulatedPackage): Diagnostic[] {
  const result = pkg.head.result!;
  if (result.mode !== 'replaces-mode') return [];
  const changed = new Map<string, CsvIndex>();
  for (const dir of pkg.changed) {
    const b = bundleAt(pkg, dir);
    if (b?.name && b.csvFile) changed.set(b.name, b);
  }
  const found = new Map<
    string,
    { b: CsvIndex; name: string; replaces: string; channel: string; heads: Set<string>; catalogs: string[] }
  >();
  for (const [catalog, c] of Object.entries(result.catalogs)) {
    const inCatalog = new Set(c.bundles);
    for (const [channel, entries] of Object.entries(c.channels))
      for (const e of entries) {
        const b = changed.get(e.name);
        if (!b || !e.replaces || inCatalog.has(e.replaces)) continue;
        const key = JSON.stringify([e.name, e.replaces, channel]);
        const f = found.get(key) ?? {
          b,
          name: e.name,
          replaces: e.replaces,
          channel,
          heads: new Set<string>(),
          catalogs: [],
        };
        f.catalogs.push(catalog);
        const before = pkg.base.result?.catalogs[catalog]?.channels[channel];
        const head = before ? channelHead(before) : undefined;
        if (head) f.heads.add(head);
        found.set(key, f);
      }
  }
  return [...found.values()].map((f) => {
    const versions = listed(f.catalogs.sort(byOcp));
    const heads = [...f.heads].sort();
    return {
      level: 'error' as const,
      rule: INDEX_REPLACES_RULE,
      package: pkg.package,
      message: `${f.name} replaces ${f.replaces}, which is not in channel "${f.channel}" of the bundle index for ${versions}${heads.length > 0 ? ` (the channel's head there is ${listed(heads)})` : ''}: opm index add refuses a bundle that replaces a bundle the index does not have, and the channel's installed versions would have no way to ${f.name}`,
      file: f.b.csvFile!,
      line: f.b.lines.replaces ?? f.b.lines.name ?? 1,
      hint:
        heads.length === 1
          ? `Set spec.replaces to ${heads[0]} (the channel's head), or to another bundle of channel "${f.channel}".`
          : `Set spec.replaces to a bundle of channel "${f.channel}".`,
    };
  });
}

/** The one entry no other entry replaces or skips. */
function channelHead(
  entries: { name: string; replaces: string | null; skips: string[] }[],
): string | undefined {
  const pointed = new Set<string>();
  for (const e of entries) {
    if (e.replaces) pointed.add(e.replaces);
    for (const s of e.skips) pointed.add(s);
  }
  const heads = entries.filter((e) => !pointed.has(e.name));
  return heads.length === 1 ? heads[0]!.name : undefined;
}

// ---- findings on the emulated catalogs, moved onto the bundle directories

/** Where a finding on an emulated catalog belongs: the root, its version and the package. */
interface EmulatedFile {
  root: string;
  catalog: string;
  pkg: EmulatedPackage;
  text: string;
}

/** A finding's place in the repository, from its place in an emulated catalog. */
export function presenter(emulation: IndexEmulation): {
  roots: string[];
  check: (result: CheckResult) => CheckResult;
  cause: (cause: ExplainedCause) => ExplainedCause;
} {
  const files = new Map<string, EmulatedFile>();
  for (const pkg of emulation.packages)
    for (const e of catalogEdits(pkg.head.result!, pkg.package)) {
      const root = e.path.slice(0, e.path.length - `/${pkg.package}/catalog.yaml`.length);
      files.set(e.path, { root, catalog: catalogNameOf(root), pkg, text: e.after });
    }
  const roots = [...new Set([...files.values()].map((f) => f.root))];
  return {
    roots,
    check: (result) => presentCheck(result, files),
    cause: (c) => presentCause(c, files),
  };
}

/** The emulated catalog a finding is about: its file, or its root and package. */
function emulatedFileOf(d: Diagnostic, files: ReadonlyMap<string, EmulatedFile>): EmulatedFile | undefined {
  if (d.file === undefined) return undefined;
  const exact = files.get(d.file);
  if (exact) return exact;
  // A finding on a root as a whole (OpenShift continuity) about an emulated package.
  for (const f of files.values())
    if (
      d.package === f.pkg.package &&
      (d.file === f.root || d.file.startsWith(`${f.root}/${f.pkg.package}/`))
    )
      return f;
  return undefined;
}

/**
 * A finding on an emulated catalog moved to the bundle directory it comes from, its text
 * naming the index instead of a catalog file the author cannot open.
 */
function moveFinding(
  d: Diagnostic,
  files: ReadonlyMap<string, EmulatedFile>,
): { d: Diagnostic; catalog?: string } {
  const f = emulatedFileOf(d, files);
  if (!f) return { d };
  const ocp = d.rule.startsWith('OCP-');
  // Across OpenShift versions the catalogs differ by com.redhat.openshift.versions alone.
  const place = placeOf(f, ocp ? undefined : d.line);
  const catalogRef = new RegExp(
    `(?:${escapeRe(f.root)}/)?${escapeRe(f.pkg.package)}/catalog\\.yaml(?::\\d+)?`,
    'g',
  );
  // "it was at <file>:<line> in the old catalog": a place the author cannot open.
  const wasAt = new RegExp(`it was at ${catalogRef.source} in the old catalog`, 'g');
  const scrub = (s: string): string =>
    s
      .replace(wasAt, 'it was in the index before')
      .replace(catalogRef, `the ${f.catalog} index`)
      .replaceAll(f.root, `the ${f.catalog} index`);
  const hint = ocp
    ? `On the bundle index each OpenShift version's catalog follows from the bundle directories: ${OPENSHIFT_VERSIONS_ANNOTATION} in ${place.file} decides which versions get the bundle; give it every version the package's installs must keep a way forward in.`
    : d.hint !== undefined
      ? scrub(d.hint)
      : undefined;
  return {
    d: {
      ...d,
      message: scrub(d.message),
      ...(hint !== undefined ? { hint } : {}),
      file: place.file,
      line: place.line,
    },
    catalog: f.catalog,
  };
}

/** A check's findings on emulated catalogs moved to the bundle directories, once across versions. */
function presentCheck(result: CheckResult, files: ReadonlyMap<string, EmulatedFile>): CheckResult {
  const moved = result.findings.map((d) => moveFinding(d, files));
  if (!moved.some((m) => m.catalog)) return { ...result, summary: scrubSummary(result.summary, files) };
  const findings = oncePerFinding(moved).map(({ d, catalogs }) => {
    if (catalogs.length === 0) return d;
    const list = catalogs.sort(byOcp);
    const first = list[0]!;
    const message =
      list.length === 1
        ? d.message
        : d.message.replaceAll(`the ${first} index`, `the ${listed(list)} indexes`);
    return {
      ...d,
      message: `${message.replace(/\.$/, '')} (as the bundle index will serve it for ${listed(list)})`,
    };
  });
  return {
    ...result,
    findings,
    annotations: toAnnotations(findings),
    summary: scrubSummary(result.summary, files),
  };
}

/** The same finding in several versions' catalogs, once, with the catalogs it is in. */
function oncePerFinding(
  moved: { d: Diagnostic; catalog?: string }[],
): { d: Diagnostic; catalogs: string[] }[] {
  const groups = new Map<string, { d: Diagnostic; catalogs: string[] }>();
  const out: { d: Diagnostic; catalogs: string[] }[] = [];
  for (const m of moved) {
    if (!m.catalog) {
      out.push({ d: m.d, catalogs: [] });
      continue;
    }
    const key = JSON.stringify([
      m.d.rule,
      m.d.level,
      m.d.file,
      m.d.line,
      m.d.message.replaceAll(m.catalog, '\0'),
      m.d.preExisting ?? false,
    ]);
    const g = groups.get(key);
    if (g) g.catalogs.push(m.catalog);
    else {
      const entry = { d: m.d, catalogs: [m.catalog] };
      groups.set(key, entry);
      out.push(entry);
    }
  }
  return out;
}

function presentCause(c: ExplainedCause, files: ReadonlyMap<string, EmulatedFile>): ExplainedCause {
  const f = files.get(c.file);
  if (!f) return c;
  const place = placeOf(f, c.line);
  return {
    ...c,
    file: place.file,
    line: place.line,
    message: `${c.message} (as the bundle index will serve it for ${c.roots.map(catalogNameOf).sort(byOcp).join(', ') || f.catalog})`,
  };
}

const escapeRe = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function listed(list: string[]): string {
  return list.length <= 1 ? (list[0] ?? '') : `${list.slice(0, -1).join(', ')} and ${list[list.length - 1]}`;
}

/** The summary with each emulated catalog's path named as what it is. */
function scrubSummary(summary: string, files: ReadonlyMap<string, EmulatedFile>): string {
  let out = summary;
  for (const [path, f] of files) out = out.replaceAll(path, `${f.catalog} index (emulated)`);
  return out;
}

/** A bundle's CSV and annotations, and where the lines the index reads are. */
interface CsvIndex {
  dir: string;
  name?: string;
  csvFile?: string;
  lines: { name?: number; replaces?: number; skips?: number; skipRange?: number };
  annotationsFile: string;
  annotationLines: Map<string, number>;
}

interface PackageIndex {
  /** Bundle directory -> its files (relative to it). */
  dirs: Map<string, Map<string, Buffer>>;
  /** Bundle directory -> its CSV and annotations, read on first use. */
  read: Map<string, CsvIndex>;
}

const indexed = new WeakMap<EmulatedPackage, PackageIndex>();

function packageIndex(pkg: EmulatedPackage): PackageIndex {
  const known = indexed.get(pkg);
  if (known) return known;
  const dirs = new Map<string, Map<string, Buffer>>();
  for (const [path, data] of pkg.head.files) {
    const rest = path.slice(pkg.packageDir.length + 1);
    const slash = rest.indexOf('/');
    if (slash < 0) continue;
    const dir = `${pkg.packageDir}/${rest.slice(0, slash)}`;
    const files = dirs.get(dir) ?? new Map<string, Buffer>();
    files.set(rest.slice(slash + 1), data);
    dirs.set(dir, files);
  }
  const index = { dirs, read: new Map<string, CsvIndex>() };
  indexed.set(pkg, index);
  return index;
}

/** One bundle directory of the head: its CSV's name and lines, its annotations' lines. */
function bundleAt(pkg: EmulatedPackage, dir: string): CsvIndex | undefined {
  const index = packageIndex(pkg);
  const known = index.read.get(dir);
  if (known) return known;
  const files = index.dirs.get(dir);
  if (!files) return undefined;
  const annotationsFile = files.has('metadata/annotations.yml')
    ? `${dir}/metadata/annotations.yml`
    : `${dir}/metadata/annotations.yaml`;
  const annotationLines = new Map<string, number>();
  const annotations = files.get(annotationsFile.slice(dir.length + 1));
  if (annotations) {
    const counter = new LineCounter();
    const doc = parseDocument(annotations.toString('utf8'), { lineCounter: counter, uniqueKeys: false });
    const map = doc.get('annotations', true);
    if (isMap(map))
      for (const pair of map.items) {
        const k = isScalar(pair.key) ? String(pair.key.value) : '';
        const at = (pair.key as Node | null)?.range?.[0];
        if (k && at !== undefined) annotationLines.set(k, counter.linePos(at).line);
      }
  }
  const out: CsvIndex = { dir, lines: {}, annotationsFile, annotationLines };
  for (const [name, data] of files) {
    if (!name.startsWith('manifests/') || !/\.ya?ml$/.test(name)) continue;
    const text = data.toString('utf8');
    if (!/kind:\s*ClusterServiceVersion/.test(text)) continue;
    const counter = new LineCounter();
    const doc = parseDocument(text, { lineCounter: counter, uniqueKeys: false });
    const csvName = doc.getIn(['metadata', 'name']);
    if (typeof csvName !== 'string') continue;
    const lineAt = (path: string[]): number | undefined => {
      const node = doc.getIn(path, true) as Node | undefined;
      const at = node?.range?.[0];
      return at === undefined ? undefined : counter.linePos(at).line;
    };
    out.name = csvName;
    out.csvFile = `${dir}/${name}`;
    out.lines = {
      name: lineAt(['metadata', 'name']),
      replaces: lineAt(['spec', 'replaces']),
      skips: lineAt(['spec', 'skips']),
      skipRange: lineAt(['metadata', 'annotations', 'olm.skipRange']),
    };
    break;
  }
  index.read.set(dir, out);
  return out;
}

/** The head's bundle directory whose CSV has this name: the changed ones first, the rest as needed. */
function bundleNamed(pkg: EmulatedPackage, name: string): CsvIndex | undefined {
  const index = packageIndex(pkg);
  const needle = Buffer.from(name);
  for (const dir of [...pkg.changed, ...index.dirs.keys()]) {
    // A directory none of whose manifests holds the name is not parsed.
    const files = index.dirs.get(dir);
    if (
      !index.read.has(dir) &&
      ![...(files?.entries() ?? [])].some(([p, d]) => p.startsWith('manifests/') && d.includes(needle))
    )
      continue;
    const b = bundleAt(pkg, dir);
    if (b?.name === name) return b;
  }
  return undefined;
}

/**
 * The bundle directory file and line behind a line of an emulated catalog: an entry's
 * `replaces` is the CSV's spec.replaces, its `skips` and `skipRange` the CSV's, its
 * channel membership the bundle's annotations.yaml; the package and the catalog as a whole
 * are the changed bundle's annotations (channels, OpenShift versions).
 */
function placeOf(f: EmulatedFile, line: number | undefined): { file: string; line: number } {
  const changed = bundleAt(f.pkg, f.pkg.changed[0]!);
  const fallback = (key: string): { file: string; line: number } =>
    changed
      ? {
          file: changed.annotationsFile,
          line: changed.annotationLines.get(key) ?? changed.annotationLines.get(CHANNELS_ANNOTATION) ?? 1,
        }
      : { file: f.pkg.changed[0]!, line: 1 };
  if (line === undefined) return fallback(OPENSHIFT_VERSIONS_ANNOTATION);
  const at = catalogLine(f.text, line);
  if (!at) return fallback(OPENSHIFT_VERSIONS_ANNOTATION);
  if (at.schema === 'olm.package') return fallback(DEFAULT_CHANNEL_ANNOTATION);
  const b = at.bundle !== undefined ? bundleNamed(f.pkg, at.bundle) : undefined;
  if (!b || !b.csvFile) return fallback(CHANNELS_ANNOTATION);
  if (at.schema === 'olm.bundle') return { file: b.csvFile, line: b.lines.name ?? 1 };
  const key = at.key as 'replaces' | 'skips' | 'skipRange' | undefined;
  if (key && key in b.lines && b.lines[key] !== undefined) return { file: b.csvFile, line: b.lines[key] };
  return { file: b.annotationsFile, line: b.annotationLines.get(CHANNELS_ANNOTATION) ?? 1 };
}

/**
 * What a line of a rendered catalog (YAML documents, as opm writes them) is part of: the
 * blob's schema, the bundle (a bundle blob's name, or the channel entry the line is in)
 * and the entry key on that line.
 */
function catalogLine(
  text: string,
  line: number,
): { schema: string; bundle?: string; key?: string } | undefined {
  const lines = text.split('\n');
  if (line < 1 || line > lines.length) return undefined;
  let start = line - 1;
  while (start > 0 && lines[start] !== '---') start--;
  let end = line;
  while (end < lines.length && lines[end] !== '---') end++;
  const doc = lines.slice(start, end);
  const schema = doc.map((l) => /^schema: (\S+)/.exec(l)?.[1]).find(Boolean);
  if (!schema) return undefined;
  if (schema === 'olm.bundle') {
    const name = doc.map((l) => /^name: (\S+)/.exec(l)?.[1]).find(Boolean);
    return { schema, ...(name ? { bundle: name } : {}) };
  }
  if (schema !== 'olm.channel') return { schema };
  const own = lines[line - 1]!;
  const key = /^\s*(?:- )?(replaces|skips|skipRange|name):/.exec(own)?.[1];
  // The entry: the nearest `- name:` at or above the line inside `entries:`.
  for (let i = line - 1; i > start; i--) {
    const m = /^(\s*)- name: (\S+)/.exec(lines[i]!);
    if (m) return { schema, bundle: m[2]!, ...(key ? { key } : {}) };
    if (/^\S/.test(lines[i]!) && !lines[i]!.startsWith('entries:')) break;
    if (lines[i]!.startsWith('entries:')) break;
  }
  return { schema, ...(key ? { key } : {}) };
}

function lineOfRefusal(side: Side, file: string): number {
  if (!file.endsWith('annotations.yaml') && !file.endsWith('annotations.yml')) return 1;
  const text = side.files.get(file)?.toString('utf8') ?? '';
  const msg = side.refusal?.message ?? '';
  const lines = text.split('\n');
  for (const key of [OPENSHIFT_VERSIONS_ANNOTATION, CHANNELS_ANNOTATION])
    if (msg.includes(key)) {
      const i = lines.findIndex((l) => l.includes(key));
      if (i >= 0) return i + 1;
    }
  return 1;
}
