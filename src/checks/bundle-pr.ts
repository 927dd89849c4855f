// `catalog-bot/bundle` on a pull request (docs/bundles.md): every bundle directory the change
// adds or changes is checked (checkBundle), and a new bundle is released in memory
// (releaseBundle) on the base's templates and catalogs, to show the catalog update the merge
// needs, or to compare it with the one the pull request carries. Files come from the caller
// (git objects); nothing from the pull request is run or written.
import type { Diagnostic } from '../catalog/diagnostics.js';
import type { CatalogSource } from '../catalog/fbc/source.js';
import { templateMappingsFromCiYaml } from '../catalog/templates/ci-yaml.js';
import { lineDiff } from '../catalog/edits/promote-diff.js';
import { boundedDiff, type ChangedFile } from '../catalog/edits/diff-summary.js';
import {
  pathPattern,
  releaseBundle,
  ReleaseRefusal,
  type BundleSettings,
  type ReleaseTree,
} from '../catalog/edits/release.js';
import {
  BUNDLE_CHECK,
  bundleNames,
  checkBundle,
  MAX_BUNDLE_BYTES,
  tooLarge,
  type BundleCheckInput,
} from './bundle.js';
import { shellWord, toAnnotations, type CheckResult } from './check.js';
import type { BundleSuite } from './bundle-rules/context.js';
import { parseWaivers, type Waiver } from './bundle-rules/waivers.js';
import { annotationsOf, isMap as isJsonMap, type SiblingBundle } from './bundle-rules/context.js';
import { decodeBundleFile } from '../catalog/bundle.js';
import { parseDocument } from 'yaml';

/** The files of one directory at one commit, read up to a byte budget. */
export interface DirectoryFiles {
  /** Path relative to the directory -> bytes (empty when over the budget: nothing was read). */
  files: Map<string, Buffer>;
  /** Bytes the directory's files hold, per the tree listing. */
  bytes: number;
  /** Files that cannot be read (symlinks out of the directory, submodules), with why. */
  unreadable: { path: string; problem: string }[];
}

/**
 * A directory's files from a source (git objects, or a directory on disk); nothing is read
 * when the listing says they hold more than `maxBytes` (docs/security.md, bounded work).
 */
export async function readSourceDirectory(source: CatalogSource, maxBytes: number): Promise<DirectoryFiles> {
  const entries = await source.list();
  const readable = entries.filter((e) => e.kind !== 'unreadable' && e.problem === undefined);
  const unreadable = entries.flatMap((e) =>
    e.kind === 'unreadable' || e.problem !== undefined
      ? [{ path: e.path, problem: e.problem ?? 'cannot be read' }]
      : [],
  );
  const bytes = readable.reduce((n, e) => n + e.size, 0);
  const files = new Map<string, Buffer>();
  if (bytes > maxBytes || readable.length === 0) return { files, bytes, unreadable };
  for (const [path, data] of await source.read(readable.map((e) => e.path)))
    if (!(data instanceof Error)) files.set(path, data);
  return { files, bytes, unreadable };
}

export type ReadDirectory = (rev: string, dir: string, maxBytes: number) => Promise<DirectoryFiles>;
export type ReadFile = (rev: string, path: string) => Promise<string | undefined>;

export interface BundleChangeInput {
  base: string;
  head: string;
  /** Paths the change touches. */
  files: string[];
  settings: BundleSettings;
  /** The upstream suites whose rules the check runs too (config `bundles.suites`, docs/bundle-rules.md). */
  suites?: readonly BundleSuite[];
  /**
   * The OpenShift versions the base has catalogs for (like `4.12`, from `catalogs/v4.12`): what a
   * bundle's `com.redhat.openshift.versions` is read against; the default list when absent.
   */
  ocpIndexes?: readonly string[];
  /**
   * Who added a waiver pattern to the base's root config.yaml and why (the commit that added
   * it: author, short hash, subject); undefined when not found. A waived finding names it.
   */
  waiverOrigin?: (pattern: string) => Promise<string | undefined>;
  readDirectory: ReadDirectory;
  readFile: ReadFile;
  /**
   * Told the catalog update the merge needs when the pull request carries only the bundle
   * (what the App pushes, or proposes after the merge: docs/bundles.md).
   */
  onRelease?: (release: PendingRelease) => void;
}

/** The OpenShift versions of catalog roots named like `v4.12` (`catalogs/v4.12` -> `4.12`), in version order. */
export function ocpIndexesOfRoots(roots: readonly string[]): string[] {
  return roots
    .map((r) => /(?:^|\/)v(\d+)\.(\d+)$/.exec(r))
    .filter((m): m is RegExpExecArray => m !== null)
    .sort((a, b) => Number(a[1]) - Number(b[1]) || Number(a[2]) - Number(b[2]))
    .map((m) => `${m[1]}.${m[2]}`);
}

/** The catalog update a bundle-only pull request needs: the release of its new bundles. */
export interface PendingRelease {
  /** The released bundle directories. */
  bundles: string[];
  /** Every template and catalog the release writes (before: the base's text; undefined: created). */
  files: { path: string; before?: string; after: string }[];
}

/** More bundle directories than this in one pull request are not checked one by one. */
export const MAX_BUNDLE_DIRS = 20;
/**
 * A package directory (every bundle, its templates) read to release a bundle in memory;
 * larger ones are not released in the check (docs/bundles.md).
 */
export const MAX_PACKAGE_BYTES = 64 * 2 ** 20;
/**
 * The bundle directories of one pull request (head and base) read together, at most: four
 * bundles at the limit (docs/security.md, "Checks are bounded work, off the event loop").
 */
export const MAX_PULL_REQUEST_BUNDLE_BYTES = 16 * 2 ** 20;
/** Diff text shown in a check run's summary (GitHub caps a summary at 65535 characters). */
const MAX_SUMMARY_DIFF_CHARS = 40_000;
const MAX_SUMMARY_DIFF_LINES = 400;
/** Findings listed in the summary (all are annotations, up to the annotation cap). */
const MAX_SUMMARY_FINDINGS = 50;
/** Diff printed by `catalog-bot check`: a screenful, the rest is one command away. */
const MAX_NOTE_DIFF_CHARS = 8_000;
const MAX_NOTE_DIFF_LINES = 40;

export interface BundleDirectory {
  dir: string;
  package: string;
  version: string;
}

/**
 * The bundle directories among changed paths: a directory at `bundles.path` whose name is a
 * version (starts with a digit) or that holds bundle parts (manifests/, metadata/,
 * release-config.yaml, or a nested bundle/). `operators/<pkg>/catalog-templates/` and
 * `operators/<pkg>/ci.yaml` are not bundles.
 */
export function bundleDirectories(files: string[], pathTemplate: string): BundleDirectory[] {
  const pattern = pathPattern(pathTemplate);
  const depth = pathTemplate.split('/').length;
  const out = new Map<string, BundleDirectory>();
  for (const f of files) {
    const parts = f.split('/');
    if (parts.length <= depth) continue;
    const dir = parts.slice(0, depth).join('/');
    if (out.has(dir)) continue;
    const m = pattern.exec(dir);
    if (!m?.groups) continue;
    const version = m.groups.version!;
    const inside = parts[depth]!;
    const bundleLike =
      /^\d/.test(version) || ['manifests', 'metadata', 'bundle', 'release-config.yaml'].includes(inside);
    if (bundleLike) out.set(dir, { dir, package: m.groups.package!, version });
  }
  return [...out.values()].sort((a, b) => (a.dir < b.dir ? -1 : a.dir > b.dir ? 1 : 0));
}

const packageDirOf = (dir: string): string => dir.slice(0, dir.lastIndexOf('/'));

/**
 * What the package-wide rules read of a package's bundles (docs/bundle-rules.md): the
 * annotations and CSV of every `<version>/` of the package directory that has manifests/ and
 * metadata/, as operator-pipelines finds them (`*.clusterserviceversion.yaml`).
 */
export function packageBundles(files: ReadonlyMap<string, Buffer>): SiblingBundle[] {
  const byVersion = new Map<string, Map<string, Buffer>>();
  for (const [path, data] of files) {
    const m = /^([^/]+)\/((?:manifests|metadata)\/[^/]+)$/.exec(path);
    if (!m) continue;
    if (!byVersion.has(m[1]!)) byVersion.set(m[1]!, new Map());
    byVersion.get(m[1]!)!.set(m[2]!, data);
  }
  const out: SiblingBundle[] = [];
  for (const [version, own] of [...byVersion].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const paths = [...own.keys()];
    if (!paths.some((p) => p.startsWith('manifests/')) || !paths.some((p) => p.startsWith('metadata/')))
      continue;
    const csvPath = paths.sort().find((p) => /^manifests\/[^/]+\.clusterserviceversion\.ya?ml$/.test(p));
    const csv = csvPath ? decodeBundleFile(own.get(csvPath)!).values[0]?.value : undefined;
    out.push({ version, csv: isJsonMap(csv) ? csv : undefined, annotations: annotationsOf(own) });
  }
  return out;
}

/** What one package directory may hold for the package-wide rules to read it (else they say nothing). */
const MAX_PACKAGE_RULES_BYTES = 16 * 2 ** 20;

/** The check for a change; undefined when it touches no bundle directory (nothing to check). */
export async function bundleCheckForChange(input: BundleChangeInput): Promise<CheckResult | undefined> {
  const dirs = bundleDirectories(input.files, input.settings.path);
  const repoConfig = input.suites && input.suites.length > 0 ? await readRepoConfig(input) : undefined;
  if (dirs.length === 0) return undefined;
  if (dirs.length > MAX_BUNDLE_DIRS) {
    const finding: Diagnostic = {
      level: 'error',
      rule: 'B-TOO-MANY',
      message: `the pull request changes ${dirs.length} bundle directories; catalog-bot checks at most ${MAX_BUNDLE_DIRS} in one pull request`,
      hint: 'Send the bundles in smaller pull requests (one bundle per pull request is the usual way).',
    };
    return result('failure', `${dirs.length} bundle directories: too many to check`, [finding], [], []);
  }
  const checked = await checkDirectories(input, dirs, repoConfig);
  const errors = (): boolean => checked.findings.some((d) => d.level === 'error');
  const directories = count(dirs.length, 'bundle directory', 'bundle directories');
  const report: Report = {
    ...checked,
    conclusion: errors() ? 'failure' : 'success',
    title: errors()
      ? `${count(checked.findings.filter((d) => d.level === 'error').length, 'problem')} in ${directories}`
      : `${directories} checked`,
    sections: [],
  };
  if (checked.releasable.length > 0) {
    const release = await releaseInMemory(input, checked.releasable, report.findings, checked.headFiles);
    if (release) reportRelease(input, checked.releasable, release, report);
    // releaseInMemory added no finding: it was not attempted (a package too large).
    else if (!errors()) report.conclusion = 'neutral';
    if (errors()) report.conclusion = 'failure';
  }
  return result(report.conclusion, report.title, report.findings, report.sections, report.notes);
}

/** The repository's config.yaml at the base: organization and static-test waivers, read once. */
interface RepoConfig {
  organization?: string;
  waivers: Waiver[];
}

async function readRepoConfig(input: BundleChangeInput): Promise<RepoConfig> {
  const text = await input.readFile(input.base, 'config.yaml');
  const value: unknown =
    text !== undefined && text.length <= 256 * 1024
      ? parseDocument(text).toJS({ maxAliasCount: 100 })
      : undefined;
  const organization =
    typeof value === 'object' && value !== null
      ? (value as { organization?: unknown }).organization
      : undefined;
  return {
    ...(typeof organization === 'string' ? { organization } : {}),
    waivers: parseWaivers(value).waivers,
  };
}

/** What checking the directories one by one gives. */
interface DirectoriesChecked {
  findings: Diagnostic[];
  /** New bundles without errors and with a release-config.yaml: released in memory next. */
  releasable: BundleDirectory[];
  notes: string[];
  /** The head's files of each directory, for the release: the same bytes, decoded once. */
  headFiles: Map<string, DirectoryFiles>;
}

/** What the check reads once per package, however many of its bundles the change holds. */
interface PackageReads {
  catalogs: Map<string, Awaited<ReturnType<typeof mappedCatalogs>>>;
  bundles: Map<string, SiblingBundle[] | undefined>;
  /** One look-up per waiver pattern, however many findings it waives. */
  origins: Map<string, Promise<string | undefined>>;
}

async function checkDirectories(
  input: BundleChangeInput,
  dirs: BundleDirectory[],
  repoConfig: RepoConfig | undefined,
): Promise<DirectoriesChecked> {
  const checked: DirectoriesChecked = { findings: [], releasable: [], notes: [], headFiles: new Map() };
  const reads: PackageReads = { catalogs: new Map(), bundles: new Map(), origins: new Map() };
  // Many directories each under the per-bundle bound must not add up to gigabytes held at once.
  let budget = MAX_PULL_REQUEST_BUNDLE_BYTES;
  for (const b of dirs) {
    const limit = Math.min(MAX_BUNDLE_BYTES, Math.floor(budget / 2));
    const [head, base] = await Promise.all([
      input.readDirectory(input.head, b.dir, limit),
      input.readDirectory(input.base, b.dir, limit),
    ]);
    if (limit < MAX_BUNDLE_BYTES && (head.bytes > limit || base.bytes > limit)) {
      checked.findings.push({
        level: 'error',
        rule: 'B-SIZE',
        package: b.package,
        message: `${b.dir} was not read: the bundle directories of this pull request hold more than ${MAX_PULL_REQUEST_BUNDLE_BYTES / 2 ** 20} MiB together`,
        file: b.dir,
        line: 1,
        hint: 'Send the bundles in smaller pull requests (one bundle per pull request is the usual way).',
      });
      continue;
    }
    budget -= (head.bytes <= limit ? head.bytes : 0) + (base.bytes <= limit ? base.bytes : 0);
    // A directory the change deletes is a removal (docs/remove.md): no bundle is left to check;
    // what it takes from the catalogs is for the catalog checks and the pruning guard.
    if (head.files.size === 0 && head.bytes === 0 && head.unreadable.length === 0) continue;
    const released = base.bytes > 0 || base.files.size > 0;
    const own = await directoryFindings(
      input,
      b,
      { head, base, released },
      reads,
      repoConfig,
      checked.headFiles,
    );
    await nameWaiverOrigins(input, own, reads.origins);
    checked.findings.push(...own);
    if (released) continue;
    if (own.some((d) => d.level === 'error')) continue;
    if (!head.files.has('release-config.yaml')) {
      checked.notes.push(
        `${b.dir} has no release-config.yaml: it is not added to any catalog template, so no catalog update is computed`,
      );
      continue;
    }
    checked.releasable.push(b);
  }
  return checked;
}

/** The findings for one bundle directory the change adds or changes. */
async function directoryFindings(
  input: BundleChangeInput,
  b: BundleDirectory,
  { head, base, released }: { head: DirectoryFiles; base: DirectoryFiles; released: boolean },
  reads: PackageReads,
  repoConfig: RepoConfig | undefined,
  headFiles: Map<string, DirectoryFiles>,
): Promise<Diagnostic[]> {
  const own: Diagnostic[] = head.unreadable.map((u) => ({
    level: 'error',
    rule: 'B-LAYOUT',
    package: b.package,
    message: `${b.dir}/${u.path}: ${u.problem}`,
    file: `${b.dir}/${u.path}`,
    line: 1,
    hint: 'A bundle holds plain files only: replace it by the file itself.',
  }));
  if (head.files.size === 0 && head.bytes > MAX_BUNDLE_BYTES) {
    own.push({ ...tooLarge(b.dir, head.bytes), package: b.package });
    return own;
  }
  headFiles.set(b.dir, head);
  const packageDir = packageDirOf(b.dir);
  // The base's ci.yaml only: configuration that judges a pull request is the base's.
  const baseCiYaml = await input.readFile(input.base, `${packageDir}/ci.yaml`);
  let catalogs = reads.catalogs.get(packageDir);
  if (!catalogs)
    reads.catalogs.set(packageDir, (catalogs = await mappedCatalogs(input, `${packageDir}/ci.yaml`)));
  own.push(
    ...checkBundle({
      dir: b.dir,
      package: b.package,
      version: b.version,
      files: head.files,
      ...(released && base.bytes <= MAX_BUNDLE_BYTES ? { baseFiles: base.files } : {}),
      ...(baseCiYaml !== undefined ? { baseCiYaml } : {}),
      catalogs,
      ...(input.suites && repoConfig ? await suiteInput(input, b, input.suites, repoConfig, reads) : {}),
    }),
  );
  if (released && base.bytes > MAX_BUNDLE_BYTES)
    own.push({
      level: 'error',
      rule: 'B-RELEASED-EDITED',
      package: b.package,
      message: `${b.dir} is a released bundle, and a released bundle must never change`,
      file: b.dir,
      line: 1,
      hint: `Release the change as a new version in a new directory, and leave ${b.dir} as it was.`,
    });
  return own;
}

/** What the upstream suites' rules read besides the bundle (docs/bundle-rules.md). */
async function suiteInput(
  input: BundleChangeInput,
  b: BundleDirectory,
  suites: readonly BundleSuite[],
  repoConfig: RepoConfig,
  reads: PackageReads,
): Promise<Partial<BundleCheckInput>> {
  const packageDir = packageDirOf(b.dir);
  // The head's package directory: the pull request's bundles, as the pipeline sees them.
  if (!reads.bundles.has(packageDir)) {
    const held = await input.readDirectory(input.head, packageDir, MAX_PACKAGE_RULES_BYTES);
    reads.bundles.set(packageDir, held.files.size > 0 ? packageBundles(held.files) : undefined);
  }
  const all = reads.bundles.get(packageDir);
  return {
    ...(all ? { otherBundles: all.filter((o) => o.version !== b.version) } : {}),
    suites,
    ...(input.ocpIndexes && input.ocpIndexes.length > 0 ? { ocpIndexes: [...input.ocpIndexes] } : {}),
    waivers: repoConfig.waivers,
    ...(repoConfig.organization !== undefined ? { organization: repoConfig.organization } : {}),
  };
}

/** A waived finding names who added the waiver and why, when that is known. */
async function nameWaiverOrigins(
  input: BundleChangeInput,
  findings: Diagnostic[],
  origins: Map<string, Promise<string | undefined>>,
): Promise<void> {
  const waiverOrigin = input.waiverOrigin;
  if (!waiverOrigin) return;
  for (const d of findings)
    if (d.waived) {
      const pattern = d.waived.pattern;
      if (!origins.has(pattern))
        origins.set(
          pattern,
          waiverOrigin(pattern).catch(() => undefined),
        );
      const origin = await origins.get(pattern)!;
      if (origin) d.message += ` The waiver came with ${origin}.`;
    }
}

/** The check run taking shape: what the release adds to the directories' findings. */
interface Report extends DirectoriesChecked {
  conclusion: CheckResult['conclusion'];
  title: string;
  sections: string[];
}

/** Compare the release of the new bundles with what the pull request carries. */
function reportRelease(
  input: BundleChangeInput,
  releasable: BundleDirectory[],
  release: { files: ReleasedFile[]; packages: string[] },
  report: Report,
): void {
  const commands = releasable.map((b) => `catalog-bot release ${shellWord(b.dir)}`);
  const fix = `\`${commands.join(' && ')}\` in a clone of the repository at the base branch with the bundle added`;
  const carried = release.files.filter((f) => f.head === f.after);
  const missing = release.files.filter((f) => f.head !== f.after && f.head === f.before);
  const differ = release.files.filter((f) => f.head !== f.after && f.head !== f.before);
  if (release.files.length === 0)
    report.sections.push(
      'The release changes no template or catalog: the bundle is already in every catalog it names.',
    );
  else if (carried.length === release.files.length)
    report.sections.push(
      `The pull request carries the catalog update, and it equals what \`${commands.join(' && ')}\` renders (${count(release.files.length, 'file')}).`,
    );
  // Only the bundle, or with some files already as the release writes them (an entry the
  // author listed by hand in the template): the rest is what the merge needs.
  else if (differ.length === 0)
    reportMissingUpdate(input, releasable, { carried, missing, commands, fix }, report);
  else reportDifferentUpdate(input, releasable, release.packages, [...missing, ...differ], fix, report);
}

function reportMissingUpdate(
  input: BundleChangeInput,
  releasable: BundleDirectory[],
  {
    carried,
    missing,
    commands,
    fix,
  }: { carried: ReleasedFile[]; missing: ReleasedFile[]; commands: string[]; fix: string },
  report: Report,
): void {
  const carries =
    carried.length > 0
      ? `the pull request carries ${count(carried.length, 'file')} of it already (${carried.map((f) => `\`${f.path}\``).join(', ')})`
      : 'the pull request carries only the bundle';
  const changed: ChangedFile[] = missing.map((f) => ({ path: f.path, before: f.before, after: f.after }));
  const rest = `\`git diff\` after ${fix}`;
  if (report.conclusion === 'success')
    report.title = `${report.title}; the merge needs the catalog update of ${count(missing.length, 'file')}`;
  const summary = boundedDiff(changed, {
    maxLines: MAX_SUMMARY_DIFF_LINES,
    maxChars: MAX_SUMMARY_DIFF_CHARS,
    rest,
  });
  report.sections.push(
    `**The merge needs this catalog update** (${count(missing.length, 'file')}); ${carries}. It is produced by ${fix}:`,
    summary.stats.map((s) => `- \`${s}\``).join('\n'),
    fenced(summary.diff),
  );
  report.notes.push(
    `the merge needs the catalog update of ${count(missing.length, 'file')}: ${commands.join(' && ')}`,
  );
  input.onRelease?.({
    bundles: releasable.map((b) => b.dir),
    files: missing.map((f) => ({
      path: f.path,
      ...(f.before !== undefined ? { before: f.before } : {}),
      after: f.after,
    })),
  });
  const note = boundedDiff(changed, { maxLines: MAX_NOTE_DIFF_LINES, maxChars: MAX_NOTE_DIFF_CHARS, rest });
  report.notes.push(...note.stats, note.diff.trimEnd());
}

function reportDifferentUpdate(
  input: BundleChangeInput,
  releasable: BundleDirectory[],
  packages: string[],
  wrong: ReleasedFile[],
  fix: string,
  report: Report,
): void {
  report.conclusion = 'failure';
  report.title = `the catalog update differs from the render of ${count(releasable.length, 'bundle')}`;
  for (const f of wrong) {
    const first = lineDiff(f.head ?? '', f.after)[0];
    report.findings.push({
      level: 'error',
      rule: 'B-RELEASE-DIFF',
      package: packages.join(', '),
      message:
        f.head === f.before
          ? `${f.path} is not updated, but the release of the bundle changes it`
          : `${f.path} differs from what the release of the bundle renders`,
      file: f.path,
      line: first?.line ?? 1,
      hint: `Produce the catalog update with ${fix}, and commit the result.`,
    });
  }
  const changed: ChangedFile[] = wrong.map((f) => ({ path: f.path, before: f.head, after: f.after }));
  const rest = `\`git diff ${input.head}\` after ${fix}`;
  const summary = boundedDiff(changed, {
    maxLines: MAX_SUMMARY_DIFF_LINES,
    maxChars: MAX_SUMMARY_DIFF_CHARS,
    rest,
  });
  report.sections.push(
    `**The catalog update in the pull request is not the render** of ${count(wrong.length, 'file')}. The diff from the pull request's files to the render:`,
    summary.stats.map((s) => `- \`${s}\``).join('\n'),
    fenced(summary.diff),
    `To fix: ${fix}.`,
  );
  const note = boundedDiff(changed, { maxLines: MAX_NOTE_DIFF_LINES, maxChars: MAX_NOTE_DIFF_CHARS, rest });
  report.notes.push(...note.stats, note.diff.trimEnd());
}

/** What releasing bundles already in a commit gives: the files it writes, or why it cannot. */
export type MergedRelease =
  { files: { path: string; before?: string; after: string }[] } | { refused: Diagnostic };

/**
 * Release bundle directories that are already in `rev` (merged) on that commit's templates
 * and catalogs: the catalog update the bot proposes after a fork's bundle pull request is
 * merged, and what the bot's own release pull request must equal (docs/bundles.md).
 * A bundle already in its templates is left there and the catalogs rendered (as the
 * release bot does): no files when they hold it already.
 */
export async function releaseMergedBundles(input: {
  rev: string;
  dirs: string[];
  settings: BundleSettings;
  readDirectory: ReadDirectory;
  readFile: ReadFile;
}): Promise<MergedRelease> {
  const bundles = bundleDirectories(
    input.dirs.map((d) => `${d}/release-config.yaml`),
    input.settings.path,
  ).slice(0, MAX_BUNDLE_DIRS);
  const findings: Diagnostic[] = [];
  const change: BundleChangeInput = { ...input, base: input.rev, head: input.rev, files: [] };
  const release = bundles.length > 0 ? await releaseInMemory(change, bundles, findings) : undefined;
  if (!release) {
    const refused = findings[0] ?? {
      level: 'error' as const,
      rule: 'B-RELEASE',
      message: `no bundle directory to release among ${input.dirs.join(', ') || 'none'}`,
    };
    return { refused };
  }
  return {
    files: release.files.map((f) => ({
      path: f.path,
      ...(f.before !== undefined ? { before: f.before } : {}),
      after: f.after,
    })),
  };
}

interface ReleasedFile {
  path: string;
  before: string | undefined;
  after: string;
  head: string | undefined;
}

/**
 * Release the bundles on the base's files with the head's bundle directories in place:
 * the catalog update the merge needs. A refusal becomes a finding; undefined when nothing
 * could be computed.
 */
async function releaseInMemory(
  input: BundleChangeInput,
  bundles: BundleDirectory[],
  findings: Diagnostic[],
  /** The head's directories the check read already. */
  readAlready: ReadonlyMap<string, DirectoryFiles> = new Map(),
): Promise<{ files: ReleasedFile[]; packages: string[] } | undefined> {
  const tree = await releaseInputs(input, bundles, findings, readAlready);
  if (!tree) return undefined;
  const original = new Map(tree.texts);
  const touched = await applyReleases(input, bundles, tree, findings);
  if (!touched) return undefined;
  const files: ReleasedFile[] = [];
  // In the release's order: templates first (what people read), then the catalogs.
  for (const path of touched) {
    const head = await input.readFile(input.head, path);
    files.push({
      path,
      before: original.get(path)?.toString('utf8'),
      after: tree.texts.get(path)!.toString('utf8'),
      head,
    });
  }
  return { files, packages: [...new Set(bundles.map((b) => b.package))] };
}

/** The files a release reads and writes, by path. */
interface ReleaseFiles {
  texts: Map<string, Buffer>;
  paths: Set<string>;
}

/**
 * The base's package directories with the head's bundle directories in place, and the
 * catalogs the base's ci.yaml files map templates to; undefined (with a warning) over
 * MAX_PACKAGE_BYTES together.
 */
async function releaseInputs(
  input: BundleChangeInput,
  bundles: BundleDirectory[],
  findings: Diagnostic[],
  readAlready: ReadonlyMap<string, DirectoryFiles>,
): Promise<ReleaseFiles | undefined> {
  const tree: ReleaseFiles = { texts: new Map(), paths: new Set() };
  const add = (prefix: string, files: ReadonlyMap<string, Buffer>): void => {
    for (const [p, data] of files) {
      tree.paths.add(`${prefix}/${p}`);
      tree.texts.set(`${prefix}/${p}`, data);
    }
  };
  const tooMuch = (message: string, file: string): undefined => {
    findings.push({
      level: 'warning',
      rule: 'B-RELEASE',
      message,
      file,
      line: 1,
      hint: `Run \`${bundles.map((x) => `catalog-bot release ${shellWord(x.dir)}`).join(' && ')}\` in a clone, and commit the result.`,
    });
    return undefined;
  };
  const packageDirs = [...new Set(bundles.map((b) => packageDirOf(b.dir)))];
  let bytes = 0;
  for (const packageDir of packageDirs) {
    const base = await input.readDirectory(input.base, packageDir, MAX_PACKAGE_BYTES);
    bytes += base.bytes;
    if (bytes > MAX_PACKAGE_BYTES)
      return tooMuch(
        `${packageDir} holds more than ${MAX_PACKAGE_BYTES / 2 ** 20} MiB of files; the catalog update is not computed in the check`,
        packageDir,
      );
    add(packageDir, base.files);
  }
  for (const b of bundles) {
    for (const p of [...tree.paths]) if (p.startsWith(`${b.dir}/`)) tree.paths.delete(p);
    const head = readAlready.get(b.dir) ?? (await input.readDirectory(input.head, b.dir, MAX_BUNDLE_BYTES));
    // Every file is held at once here: the package's and each new bundle's share one budget.
    bytes += head.bytes;
    if (bytes > MAX_PACKAGE_BYTES)
      return tooMuch(
        `the bundles and their packages hold more than ${MAX_PACKAGE_BYTES / 2 ** 20} MiB of files; the catalog update is not computed in the check`,
        b.dir,
      );
    add(b.dir, head.files);
  }
  for (const packageDir of packageDirs) {
    const ci = tree.texts.get(`${packageDir}/ci.yaml`)?.toString('utf8');
    if (ci === undefined) continue;
    let outputs: string[] = [];
    try {
      outputs = templateMappingsFromCiYaml(`${packageDir}/ci.yaml`, ci).flatMap((m) => m.outputs);
    } catch {
      // releaseBundle refuses it with the reason
    }
    for (const o of outputs) {
      const text = await input.readFile(input.base, o);
      if (text === undefined) continue;
      tree.paths.add(o);
      tree.texts.set(o, Buffer.from(text));
    }
  }
  return tree;
}

/** Release each bundle on the files in turn: the paths written, or undefined on a refusal (a finding). */
async function applyReleases(
  input: BundleChangeInput,
  bundles: BundleDirectory[],
  { texts, paths }: ReleaseFiles,
  findings: Diagnostic[],
): Promise<Set<string> | undefined> {
  const tree: ReleaseTree = {
    list: () => [...paths].sort(),
    readBytes: (p) => texts.get(p),
    read: (p) => texts.get(p)?.toString('utf8'),
  };
  const touched = new Set<string>();
  for (const b of bundles) {
    try {
      const released = await releaseBundle(b.dir, { tree, settings: input.settings });
      for (const e of released.edits) {
        touched.add(e.path);
        paths.add(e.path);
        texts.set(e.path, Buffer.from(e.after));
      }
    } catch (err) {
      if (!(err instanceof ReleaseRefusal)) throw err;
      findings.push({
        level: 'error',
        rule: 'B-RELEASE',
        package: b.package,
        message: `${b.dir} cannot be added to its catalogs: ${err.message}`,
        file: err.file ?? `${b.dir}/release-config.yaml`,
        line: err.line ?? 1,
        hint: `Fix what the message names; \`catalog-bot release ${shellWord(b.dir)}\` shows the same in a clone.`,
      });
      return undefined;
    }
  }
  return touched;
}

/** The base's rendered catalogs a package's ci.yaml maps its templates to. */
async function mappedCatalogs(
  input: BundleChangeInput,
  ciPath: string,
): Promise<{ path: string; text: string; template: string; names: ReadonlySet<string> }[]> {
  const ci = await input.readFile(input.base, ciPath);
  if (ci === undefined) return [];
  let mappings;
  try {
    mappings = templateMappingsFromCiYaml(ciPath, ci);
  } catch {
    return [];
  }
  const out = [];
  for (const m of mappings)
    for (const path of m.outputs) {
      const text = await input.readFile(input.base, path);
      if (text === undefined) continue;
      out.push({ path, text, template: m.template.split('/').pop()!, names: bundleNames(text) });
    }
  return out;
}

function result(
  conclusion: CheckResult['conclusion'],
  title: string,
  findings: Diagnostic[],
  sections: string[],
  notes: string[],
): CheckResult {
  const errors = findings.filter((d) => d.level === 'error');
  // The list is cut short so that the release section (diff and command) stays in the summary.
  const listed = findings.slice(0, MAX_SUMMARY_FINDINGS);
  const list = listed.map(
    (d) =>
      `- ${d.level === 'error' ? '**error**' : d.level} ${d.file ? `\`${d.file}:${d.line ?? 1}\` ` : ''}${d.message}${d.hint ? ` — ${d.hint}` : ''}`,
  );
  const summary = [
    errors.length > 0
      ? `**${count(errors.length, 'problem')}** in the bundle directories (docs/bundles.md):`
      : '',
    ...list,
    findings.length > listed.length
      ? `… and ${findings.length - listed.length} more (see the annotations, or \`catalog-bot check\`).`
      : '',
    ...sections,
  ]
    .filter(Boolean)
    .join('\n\n');
  return {
    name: BUNDLE_CHECK,
    conclusion,
    title,
    summary: summary || 'The bundle directories are well formed.',
    findings,
    annotations: toAnnotations(findings),
    ...(notes.length > 0 ? { notes } : {}),
  };
}

function count(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

function fenced(text: string): string {
  const fence = text.includes('```') ? '~~~~' : '```';
  return `${fence}diff\n${text}${text.endsWith('\n') ? '' : '\n'}${fence}`;
}
