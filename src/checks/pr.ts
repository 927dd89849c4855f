// The checks of a pull request, on two commits of a git repository: the same code path
// for the App and for `catalog-bot check`. Reads git objects only (never a worktree). The
// checks themselves are the list in pr-checks.ts; this prepares the change they read.
import { GitTreeSource, loadCatalog } from '../catalog/index.js';
import type { DeclarativeConfig } from '../catalog/fbc/declcfg.js';
import type { DecodedFile } from '../catalog/fbc/decode.js';
import { writeTree } from '../git/tree.js';
import { GitFiles, MAX_GIT_PATH_BYTES, PathTooLongError, shortPath } from '../git/files.js';
import type { Diagnostic } from '../catalog/diagnostics.js';
import { catalogRoots, changedFiles, changedPackages, readRepoConfig } from './changes.js';
import {
  capAnnotations,
  findingsTable,
  toAnnotations,
  presentedAnnotations,
  presentedFindingsTable,
  presentedSummary,
  type CheckResult,
} from './check.js';
import { groupCauses, markFindings, type ExplainedCause } from './findings.js';
import { replacesCauses } from './upgrade-graph/root-cause.js';
import type { CheckedRoot } from './checked-root.js';
import { configProblemsAsDiagnostics } from './config.js';
import {
  bundleDirectories,
  readSourceDirectory,
  releaseMergedBundles,
  type DirectoryFiles,
  type MergedRelease,
} from './bundle-pr.js';
import { MAX_BUNDLE_BYTES } from './bundle.js';
import {
  BASE_COMPARED_CHECKS,
  baseFindings,
  bundleSettings,
  PR_CHECKS,
  type ChangedRoot,
  type PrCheck,
  type PrChange,
  type ReadFile,
} from './pr-checks.js';
import { CRD_UPGRADE_CHECK } from './crd-upgrade.js';
import { DEPENDENCIES_CHECK } from './dependencies.js';
import { OCP_CONTINUITY_CHECK } from './ocp-continuity.js';
import { TEMPLATES_CHECK } from './templates.js';
import { UPGRADE_GRAPH_CHECK } from './upgrade-graph/index.js';
import { VALIDATE_CHECK } from './validate.js';
import type { PrCheckInput, PrCheckResult } from './pr-input.js';
import { bundlesWithPolicy, registryPolicy } from './registry-policy.js';
import { runIsolated } from './isolate.js';
import { validateRoot, type RootValidations } from './root-validations.js';
import { emulateIndexPackages, presenter } from './index-packages.js';
import { catalogImpact } from '../catalog/olm/impact.js';
import type { CatalogsImpact } from '../catalog/olm/impact-report.js';

// The input and result types live apart so that the worker runner (isolate.ts) can name
// them without importing this module.
export type { PrCheckInput, PrCheckResult } from './pr-input.js';
export type { CheckedRoot } from './checked-root.js';
export { MAX_FINDINGS_PER_ROOT } from './root-validations.js';

/**
 * The checks of a pull request, off the event loop: in a worker thread with a wall-clock
 * deadline and a heap cap (src/checks/isolate.ts, docs/security.md). The App and
 * `catalog-bot check` call this; the roots come back without their reports.
 */
export async function runPrChecks(input: PrCheckInput): Promise<PrCheckResult> {
  return runIsolated(input);
}

/**
 * The catalog update of the bundle directories among `changed` (a merged pull request's
 * files) that `rev` holds, released on `rev` (docs/bundles.md): what the App proposes after
 * a fork's bundle-only pull request is merged. Undefined when no such directory is there.
 */
export async function releaseOfMergedBundles(
  repo: string,
  rev: string,
  changed: string[],
): Promise<{ dirs: string[]; release: MergedRelease } | undefined> {
  const files = new GitFiles(repo);
  try {
    const readFile: ReadFile = (r, path) => files.read(r, path);
    const { config } = await readRepoConfig(repo, rev, readFile);
    const dirs: string[] = [];
    for (const b of bundleDirectories(changed, config.bundles.path)) {
      const held = await readDirectory(repo, rev, b.dir, MAX_BUNDLE_BYTES);
      if (held.bytes > 0) dirs.push(b.dir);
    }
    if (dirs.length === 0) return undefined;
    const release = await releaseMergedBundles({
      rev,
      dirs,
      settings: bundleSettings(config),
      readFile,
      readDirectory: (r, dir, maxBytes) => readDirectory(repo, r, dir, maxBytes),
    });
    return { dirs, release };
  } finally {
    files.close();
  }
}

/**
 * The checks, in this thread (the worker runs them with this). `validations`: roots the same
 * work validated already (a comment's edit: its plan), reused for the very same trees only.
 */
export async function runPrChecksInProcess(
  input: PrCheckInput,
  validations?: RootValidations,
): Promise<PrCheckResult> {
  if (input.releaseMerged) {
    const found = await releaseOfMergedBundles(input.repo, input.head, input.releaseMerged.changed);
    return { roots: [], checks: [], ...(found ? { mergedRelease: found } : {}) };
  }
  // One git process serves every file read of the run (config, OWNERS, ci.yaml, templates).
  const files = new GitFiles(input.repo);
  try {
    return await prChecks(input, (rev, path) => files.read(rev, path), validations);
  } finally {
    files.close();
  }
}

async function prChecks(
  input: PrCheckInput,
  readFile: ReadFile,
  validations?: RootValidations,
): Promise<PrCheckResult> {
  const wanted = input.only ? new Set<string>(input.only) : undefined;
  const selected = PR_CHECKS.filter((c) => !wanted || wanted.has(c.name));
  const change = await prepareChange(
    input,
    readFile,
    selected.some((c) => c.validates),
    validations,
  );
  const checks: CheckResult[] = [];
  for (const check of selected) {
    const result = await runCheck(check, change);
    if (result) checks.push(result);
  }
  const causes = await presentFindings(change, selected, checks);
  const { base, head } = change;
  const release = change.release;
  const released = input.checkRelease
    ? await checkReleased(input, readFile, change, selected, checks, validations)
    : undefined;
  if (released?.causes) causes.push(...released.causes);
  // From the catalogs the checks loaded: nothing is loaded or compared twice (docs/impact.md).
  const impact = input.impact ? (released?.impact ?? impactOfRoots(change.loaded)) : undefined;
  const listAll = `\`catalog-bot check --base ${base} --head ${head}${input.author !== undefined ? ` --author ${input.author}` : ''}\` in a clone of the repository`;
  return {
    roots: change.loaded ?? [],
    checks: checks.map((c) => capAnnotations(c, listAll)),
    ...(change.subjects ? { subjects: change.subjects } : {}),
    ...(change.agreed ? { agreed: change.agreed } : {}),
    ...(change.pruned ? { pruned: change.pruned } : {}),
    ran: { checks: checks.map((c) => c.name), validatedRoots: change.loaded?.length ?? 0 },
    ...(release ? { release } : {}),
    ...(causes.length > 0 ? { causes } : {}),
    ...(released ? { releasedRoots: released.roots.map((r) => r.path) } : {}),
    ...(released?.indexed ? { indexed: released.indexed } : {}),
    ...(impact ? { impact } : {}),
  };
}

/** The impact of the loaded roots, each compared only in the packages that differ. */
function impactOfRoots(roots: CheckedRoot[] | undefined): CatalogsImpact | undefined {
  if (!roots) return undefined;
  const out: CatalogsImpact = {};
  for (const r of roots) {
    const packages = catalogImpact(r.base?.model ?? new Map(), r.head?.model ?? new Map(), r.packages);
    if (Object.keys(packages).length > 0) out[r.path] = { packages };
  }
  return out;
}

/** Checks whose annotations are their findings, one each: those are regrouped. */
const REGROUPED = new Set<string>([...BASE_COMPARED_CHECKS, TEMPLATES_CHECK]);

/**
 * The findings as an author reads them (docs/output.md): each marked when the base has it
 * too or when a root cause explains it, and the catalog checks' annotations and summaries
 * regrouped (causes first, the change's own findings, then the base's; identical catalogs
 * once). Conclusions and levels are the checks' own: this changes what is shown first.
 */
async function presentFindings(
  change: PrChange & { loaded?: CheckedRoot[] },
  selected: readonly PrCheck[],
  checks: CheckResult[],
): Promise<ExplainedCause[]> {
  const loaded = change.loaded;
  if (!loaded) return [];
  const roots = loaded.map((r) => r.path);
  const onBase: (Diagnostic[] | undefined)[] = [];
  for (const result of checks) {
    const check = selected.find((c) => c.name === result.name);
    try {
      onBase.push(check ? await baseFindings(check, change) : undefined);
    } catch {
      onBase.push(undefined); // not comparable: every finding shows as the change's own
    }
  }
  const marked = markFindings(
    checks.map((c, i) => ({ findings: c.findings, ...(onBase[i] ? { onBase: onBase[i] } : {}) })),
    replacesCauses(loaded),
    roots,
  );
  const causes = groupCauses(marked.causes, roots);
  for (const [i, result] of checks.entries()) {
    const findings = marked.findings[i] ?? result.findings;
    const regroup = REGROUPED.has(result.name);
    const opening = presentedSummary(findings, roots, causes);
    // The check's flat findings table, where it has one, regrouped the same way.
    const flat = findingsTable(result.findings).join('\n');
    const body =
      regroup && flat !== '' && result.summary.includes(flat)
        ? result.summary.replace(flat, () => presentedFindingsTable(findings, roots).join('\n'))
        : result.summary;
    checks[i] = {
      ...result,
      findings,
      ...(regroup ? { annotations: presentedAnnotations(findings, roots, causes) } : {}),
      summary: [...opening, body].join('\n'),
    };
  }
  return causes;
}

/**
 * One check. A path too long to read (docs/security.md, "Reading a pull request's files is
 * bounded") fails that check with a finding naming it; the other checks still run.
 */
async function runCheck(check: PrCheck, change: PrChange): Promise<CheckResult | undefined> {
  try {
    return await check.run(change);
  } catch (err) {
    if (!(err instanceof PathTooLongError)) throw err;
    // The changed files under the directory whose file was asked for (its OWNERS, ci.yaml).
    const dir = err.path.slice(0, err.path.lastIndexOf('/') + 1);
    const culprits = change.files.filter((f) => f.startsWith(dir)).slice(0, 10);
    const finding: Diagnostic = {
      level: 'error',
      rule: 'PATH-TOO-LONG',
      message: `${err.message}; ${culprits.length > 0 ? `the pull request's ${culprits.map(shortPath).join(', ')} ${culprits.length === 1 ? 'is' : 'are'} there` : 'a path of the pull request leads there'}, and ${check.name} cannot be decided without it`,
      hint: `Give the file a path of at most ${MAX_GIT_PATH_BYTES} bytes, directories included (git cannot check out a longer one on Linux).`,
    };
    return {
      name: check.name,
      conclusion: 'failure',
      title: 'A path of the pull request is too long to read',
      summary: `**error** ${finding.message} — ${finding.hint}`,
      findings: [finding],
      annotations: [],
    };
  }
}

/**
 * The catalog checks of a bundle-only pull request on its head with the release applied
 * (docs/bundles.md): their results replace the ones on what the pull request carries, so a
 * bundle that breaks a channel fails before the merge. Not the permissions (judged on what
 * the pull request carries), the bundle check itself, or images (the bundle image is built
 * on the merge). A bundle of a package still on the bundle index is checked the same way on
 * the catalogs the index serves, emulated at the base and the head (docs/bundles.md,
 * "Packages still on the index").
 */
async function checkReleased(
  input: PrCheckInput,
  readFile: ReadFile,
  change: PrChange,
  selected: readonly { name: string }[],
  checks: CheckResult[],
  validations: RootValidations | undefined,
): Promise<PrCheckResult | undefined> {
  const names = selected.map((c) => c.name).filter((n) => RELEASE_CHECKED.has(n));
  if (names.length === 0) return undefined;
  const release = change.release;
  const index = await emulateIndexPackages({
    base: change.base,
    head: change.head,
    files: change.files,
    settings: bundleSettings(change.config),
    readFile,
    readDirectory: change.readDirectory,
    baseRoots: change.baseRoots,
    headRoots: change.headRoots,
  });
  if (!release && !index) return undefined;
  const emulated = index && (index.headFiles.length > 0 || index.baseFiles.length > 0);
  const asTree = (files: { path: string; after: string }[]) =>
    files.map((f) => ({ path: f.path, text: f.after }));
  // Trees, not commits: the head with the release's catalog files written over it.
  const head = await writeTree(
    input.repo,
    input.head,
    asTree([...(release?.files ?? []), ...(index?.headFiles ?? [])]),
  );
  const base = emulated ? await writeTree(input.repo, input.base, asTree(index.baseFiles)) : input.base;
  const released =
    release || emulated
      ? await prChecks(
          // The rules stay the base commit's: the emulated base is a tree, not a commit.
          { ...input, base, rules: input.rules ?? input.base, head, only: names, checkRelease: false },
          readFile,
          validations,
        )
      : { roots: [], checks: [] };
  const shown = index ? presenter(index) : undefined;
  const files = release?.files.length ?? 0;
  const what = [
    ...(release
      ? [
          `Checked on the pull request's head with the catalog update of ${files} file${files === 1 ? '' : 's'} applied (the release of ${release.bundles.map((b) => `\`${b}\``).join(', ')}; see \`catalog-bot/bundle\`).`,
        ]
      : []),
    ...(index?.described.length
      ? [
          `Checked on the catalogs the bundle index will serve, emulated from the bundle directories at the base and the head (docs/bundles.md, "Packages still on the index"); no such catalog is a file of the repository, so findings point at the bundle directory files that make them.`,
          ...index.described.map((d) => `- ${d}`),
        ]
      : []),
  ].join('\n');
  for (const result of released.checks) {
    const at = checks.findIndex((c) => c.name === result.name);
    const moved = shown ? shown.check(result) : result;
    const checked: CheckResult = {
      ...moved,
      title: `${release ? "With the bundle's catalog update" : 'On the bundle index'}: ${moved.title}`,
      summary: `${what}\n\n${moved.summary}`,
      // What was emulated, once: on the upgrade graph.
      ...(index?.described.length && result.name === UPGRADE_GRAPH_CHECK
        ? { notes: [...index.described, ...(moved.notes ?? [])] }
        : {}),
    };
    if (at >= 0) checks[at] = checked;
    else checks.push(checked);
  }
  if (index && index.findings.length > 0)
    addIndexFindings(
      checks,
      VALIDATE_CHECK,
      index.findings,
      'The bundle index cannot take the bundle directories',
    );
  if (index && index.graphFindings.length > 0 && names.includes(UPGRADE_GRAPH_CHECK))
    addIndexFindings(
      checks,
      UPGRADE_GRAPH_CHECK,
      index.graphFindings,
      'A new bundle replaces a bundle its channel does not have',
    );
  if (shown && released.causes) released.causes = released.causes.map(shown.cause);
  return { ...released, ...(index?.described.length ? { indexed: index.described } : {}) };
}

/**
 * Findings of the emulation itself, added to a check: a bundle the index cannot take fails
 * validate (nothing valid is served), a replaces the channel lacks fails upgrade-graph.
 */
function addIndexFindings(checks: CheckResult[], name: string, findings: Diagnostic[], failed: string): void {
  const at = checks.findIndex((c) => c.name === name);
  const errors = findings.some((d) => d.level === 'error');
  const lines = findings.map(
    (d) =>
      `- ${d.level === 'error' ? '**error**' : d.level} ${d.file ? `\`${d.file}:${d.line ?? 1}\` ` : ''}${d.message}${d.hint ? ` — ${d.hint}` : ''}`,
  );
  const prior = at >= 0 ? checks[at]! : undefined;
  const result: CheckResult = {
    name,
    conclusion: errors ? 'failure' : (prior?.conclusion ?? 'success'),
    title: errors
      ? `${failed}${prior ? `; ${prior.title}` : ''}`
      : (prior?.title ?? 'The bundle index emulated'),
    summary: [
      `**The bundle index, emulated from the bundle directories** (docs/bundles.md):`,
      ...lines,
      prior?.summary ?? '',
    ]
      .filter(Boolean)
      .join('\n'),
    findings: [...findings, ...(prior?.findings ?? [])],
    annotations: [...toAnnotations(findings), ...(prior?.annotations ?? [])],
    ...(prior?.notes ? { notes: prior.notes } : {}),
  };
  if (at >= 0) checks[at] = result;
  else checks.push(result);
}

/** The checks that judge catalogs: run again on a bundle's release. */
const RELEASE_CHECKED = new Set<string>([
  VALIDATE_CHECK,
  UPGRADE_GRAPH_CHECK,
  DEPENDENCIES_CHECK,
  CRD_UPGRADE_CHECK,
  OCP_CONTINUITY_CHECK,
  TEMPLATES_CHECK,
]);

/** The change as every check reads it; catalogs are loaded only when a check asks. */
async function prepareChange(
  input: PrCheckInput,
  readFile: ReadFile,
  /** A check run reads the validated catalogs: every check reads those. */
  validating: boolean,
  validations: RootValidations | undefined,
): Promise<PrChange & { loaded?: CheckedRoot[] }> {
  const { repo, base, head } = input;
  const rules = input.rules ?? base;
  // The base branch decides: a pull request cannot change the rules that judge it.
  const { config, problems } = await readRepoConfig(repo, rules, readFile);
  const globs = input.globs ?? config.catalogs;
  const policy = registryPolicy(config);
  const bundles = bundlesWithPolicy(
    {
      ...(input.resolveBundle ? { resolveBundle: input.resolveBundle } : {}),
      ...(input.bundleManifests ? { manifests: input.bundleManifests } : {}),
    },
    policy,
  );
  const [baseRoots, headRoots, files] = await Promise.all([
    catalogRoots(repo, base, globs),
    catalogRoots(repo, head, globs),
    changedFiles(repo, base, head),
  ]);
  const all = [...new Set([...baseRoots, ...headRoots])].sort();
  const touched = all.filter((root) => files.some((f) => f.startsWith(root + '/')));

  let checked: Promise<CheckedRoot[]> | undefined;
  const change: PrChange & { loaded?: CheckedRoot[] } = {
    input,
    repo,
    ...(validations ? { validations } : {}),
    base,
    head,
    rules,
    config,
    configFindings: configProblemsAsDiagnostics(problems),
    globs,
    policy,
    bundles,
    baseRoots,
    headRoots,
    files,
    readFile,
    readDirectory: (rev, dir, maxBytes) => readDirectory(repo, rev, dir, maxBytes),
    checkedRoots: () =>
      (checked ??= loadRoots(touched, (rev, path, decodedFiles) =>
        validations
          ? validations.validate(rev, path, decodedFiles)
          : validateRoot(new GitTreeSource(repo, rev, path), decodedFiles),
      ).then((roots) => (change.loaded = roots))),
    changedRoots: async () => {
      // Validated roots when another check loaded them; otherwise only decoded (permissions
      // needs the configs, not the validation).
      if (validating) return (await change.checkedRoots()).map(configsOf);
      return loadRoots(touched, async (rev, path, decodedFiles) => ({
        config: (await loadCatalog(new GitTreeSource(repo, rev, path), { blobDigests: true, decodedFiles }))
          .config,
      })).then((roots) => roots.map(configsOf));
    },
  };
  return change;

  async function loadRoots<R extends { config: DeclarativeConfig }>(
    paths: string[],
    load: (rev: string, path: string, decodedFiles: Map<string, DecodedFile>) => Promise<R>,
  ): Promise<{ path: string; base?: R; head?: R; packages: Set<string> }[]> {
    const out: { path: string; base?: R; head?: R; packages: Set<string> }[] = [];
    for (const path of paths) {
      // Base first, then head with the base's decoded files: a pull request changes a few
      // files of a root, and only those are read and decoded again. Blob digests: change
      // detection sees every key of a blob; findings are capped (docs/security.md).
      const decodedFiles = new Map<string, DecodedFile>();
      const baseReport = baseRoots.includes(path) ? await load(base, path, decodedFiles) : undefined;
      const headReport = headRoots.includes(path) ? await load(head, path, decodedFiles) : undefined;
      out.push({
        path,
        base: baseReport,
        head: headReport,
        packages: changedPackages(baseReport?.config, headReport?.config),
      });
    }
    return out;
  }
}

function configsOf(root: {
  path: string;
  base?: { config: DeclarativeConfig };
  head?: { config: DeclarativeConfig };
  packages: Set<string>;
}): ChangedRoot {
  return {
    path: root.path,
    ...(root.base ? { base: root.base.config } : {}),
    ...(root.head ? { head: root.head.config } : {}),
    packages: root.packages,
  };
}

/**
 * A directory's files at a commit, from git objects; nothing is read when the listing says
 * they hold more than `maxBytes` (docs/security.md, bounded work).
 */
function readDirectory(repo: string, rev: string, dir: string, maxBytes: number): Promise<DirectoryFiles> {
  return readSourceDirectory(new GitTreeSource(repo, rev, dir), maxBytes);
}
