// The checks of a pull request, on two commits of a git repository: the same code path
// for the App and for `catalog-bot check`. Reads git objects only (never a worktree).
import { GitTreeSource, loadCatalog, validateCatalog } from '../catalog/index.js';
import type { DecodedFile } from '../catalog/fbc/decode.js';
import type { Diagnostic } from '../catalog/diagnostics.js';
import { GitFiles, runGit } from '../catalog/fbc/source.js';
import { catalogRoots, changedFiles, changedPackages, packageDigests, readRepoConfig } from './changes.js';
import { capAnnotations, toAnnotations, type CheckResult } from './check.js';
import { configProblemsAsDiagnostics } from './config.js';
import {
  blobFiles,
  decidePermissions,
  fileSubject,
  packageSubject,
  permissionsCheck,
} from './permissions.js';
import { bundlesWithPolicy, registryPolicy } from './registry-policy.js';
import { crdUpgradeCheck } from './crd-upgrade.js';
import { ocpContinuityForChange } from './ocp-continuity.js';
import { bundleCheckForChange, type DirectoryFiles } from './bundle-pr.js';
import { gitObjectLoader } from './crd-upgrade-objects.js';
import { dependenciesCheck } from './dependencies.js';
import { addedImageUses, imagesCheck } from './images.js';
import { templatesCheck, type TemplateMappingInput } from './templates.js';
import type { CheckedRoot } from './checked-root.js';
import { templateMappingsFromCiYaml } from '../catalog/templates/ci-yaml.js';
import { upgradeGraphCheck } from './upgrade-graph/index.js';
import { validateCheck } from './validate.js';
import { runIsolated } from './isolate.js';
import type { PrCheckInput, PrCheckResult } from './pr-input.js';

// The input and result types live apart so that the worker runner (isolate.ts) can name
// them without importing this module.
export type { PrCheckInput, PrCheckResult } from './pr-input.js';

/**
 * The checks of a pull request, off the event loop: in a worker thread with a wall-clock
 * deadline and a heap cap (src/checks/isolate.ts, docs/security.md). The App and
 * `catalog-bot check` call this; the roots come back without their reports.
 */
export async function runPrChecks(input: PrCheckInput): Promise<PrCheckResult> {
  return runIsolated(input);
}

/** The checks, in this thread (the worker runs them with this). */
export async function runPrChecksInProcess(input: PrCheckInput): Promise<PrCheckResult> {
  // One git process serves every file read of the run (config, OWNERS, ci.yaml, templates).
  const files = new GitFiles(input.repo);
  try {
    return await prChecks(input, (rev, path) => files.read(rev, path));
  } finally {
    files.close();
  }
}

type ReadFile = (rev: string, path: string) => Promise<string | undefined>;

async function prChecks(input: PrCheckInput, readFile: ReadFile): Promise<PrCheckResult> {
  const { repo, base, head } = input;
  const rules = input.rules ?? base;
  // The base branch decides: a pull request cannot change the rules that judge it.
  const { config, problems } = await readRepoConfig(repo, rules, readFile);
  const configFindings: Diagnostic[] = configProblemsAsDiagnostics(problems);
  const globs = input.globs ?? config.catalogs;
  // Registries are contacted only as the base branch's config allows (docs/security.md).
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

  const roots: CheckedRoot[] = [];
  for (const path of touched) {
    // Base first, then head with the base's decoded files: a pull request changes a few files
    // of a root, and only those are read and decoded again.
    const decodedFiles = new Map<string, DecodedFile>();
    // Blob digests: change detection sees every key of a blob; findings are capped (docs/security.md).
    const load = (rev: string) =>
      validateCatalog(new GitTreeSource(repo, rev, path), {
        blobDigests: true,
        maxDiagnostics: MAX_FINDINGS_PER_ROOT,
        decodedFiles,
      });
    const baseReport = baseRoots.includes(path) ? await load(base) : undefined;
    const headReport = headRoots.includes(path) ? await load(head) : undefined;
    roots.push({
      path,
      base: baseReport,
      head: headReport,
      packages: changedPackages(baseReport?.config, headReport?.config),
    });
  }

  const validate = validateCheck(roots.flatMap((r) => (r.head ? [{ path: r.path, report: r.head }] : [])));
  const checks: CheckResult[] = [
    withConfigProblems(validate, configFindings),
    upgradeGraphCheck(roots),
    dependenciesCheck(roots, { externalProviders: config.dependencies.externalProviders }),
    await crdUpgradeCheck(
      roots,
      gitObjectLoader(repo, base, head),
      bundles.manifests ? { renderBundle: bundles.manifests } : {},
    ),
  ];
  // Untouched neighbours of a touched OpenShift catalog are the same at base and head.
  const ocp = await ocpContinuityForChange({
    roots,
    baseRoots,
    headRoots,
    config: config.ocp,
    load: async (path) => (await validateCatalog(new GitTreeSource(repo, head, path))).model,
  });
  if (ocp) checks.push(ocp);
  // Bundle directories are found by the base's bundles.path: the change cannot move them.
  const bundleCheck = await bundleCheckForChange({
    base,
    head,
    files,
    settings: {
      path: config.bundles.path,
      imageTemplate: config.bundles.imageTemplate,
      opmVersion: config.bundles.renderer.opmVersion,
      ...(config.bundles.renderer.csvMetadataFrom !== undefined
        ? { csvMetadataFrom: config.bundles.renderer.csvMetadataFrom }
        : {}),
    },
    readFile,
    readDirectory: (rev, dir, maxBytes) => readDirectory(repo, rev, dir, maxBytes),
  });
  if (bundleCheck) checks.push(bundleCheck);
  const templates = await templatesFor(head, config.templates, files, readFile);
  if (templates.length > 0) {
    const read = (path: string) => readFile(head, path);
    checks.push(
      await templatesCheck({
        mappings: templates,
        read,
        ...(bundles.resolveBundle ? { resolveBundle: bundles.resolveBundle } : {}),
      }),
    );
  }
  if (input.images) {
    const uses = roots.flatMap((r) => (r.head ? addedImageUses(r.base?.config, r.head.config, r.path) : []));
    const results = await input.images(
      uses.map((u) => u.image),
      policy,
    );
    checks.push(imagesCheck(uses, results, { unverifiableRegistries: policy.unverifiableRegistries }));
  }
  let subjects: Map<string, string> | undefined;
  if (input.author !== undefined) {
    subjects = await subjectDigests(repo, head, roots, files);
    const current = subjects;
    const approvals = (input.approvals ?? []).map((a) => ({
      login: a.login,
      subjects: new Set(Object.keys(a.subjects).filter((what) => current.get(what) === a.subjects[what])),
    }));
    const baseFiles = { read: (path: string) => readFile(rules, path) };
    const decision = await decidePermissions(
      {
        author: input.author,
        approvers: input.approvers ?? [],
        approvals,
        changes: roots.map((r) => ({
          root: r.path,
          packages: r.packages,
          basePackages: new Set(r.base?.model.keys() ?? []),
          baseConfig: r.base?.config,
          headConfig: r.head?.config,
        })),
        otherFiles: files,
        config,
        // Only a package added to a root is looked for in the others.
        ...(roots.some(addsPackage) ? await basePlaces(repo, [base, rules], globs, roots) : {}),
      },
      baseFiles,
      input.teams ??
        (async (team) => {
          throw new Error(`team ${team} cannot be resolved without GitHub`);
        }),
    );
    checks.unshift(permissionsCheck(decision));
  }
  const listAll = `\`catalog-bot check --base ${base} --head ${head}${input.author !== undefined ? ` --author ${input.author}` : ''}\` in a clone of the repository`;
  return {
    roots,
    checks: checks.map((c) => capAnnotations(c, listAll)),
    ...(subjects ? { subjects } : {}),
  };
}

/**
 * Where packages sit in every catalog root of the base (the merge base and the commit whose
 * rules apply): a package one root lacks may be another root's, and is then not new
 * (docs/security.md). The other roots are loaded only when a package is added to a root.
 */
async function basePlaces(
  repo: string,
  commits: string[],
  globs: string[],
  checked: CheckedRoot[],
): Promise<{ baseRoots: string[]; basePackageFiles: (pkg: string) => Promise<string[]> }> {
  const revs = [...new Set(await Promise.all(commits.map((c) => resolveCommit(repo, c))))];
  const rootsAt = await Promise.all(revs.map((rev) => catalogRoots(repo, rev, globs)));
  let places: Promise<Map<string, Set<string>>> | undefined;
  const load = async (): Promise<Map<string, Set<string>>> => {
    const out = new Map<string, Set<string>>();
    const known = new Map(checked.map((r) => [r.path, r.base?.config]));
    for (const [i, rev] of revs.entries()) {
      for (const root of rootsAt[i] ?? []) {
        const config =
          (i === 0 ? known.get(root) : undefined) ??
          (await loadCatalog(new GitTreeSource(repo, rev, root))).config;
        for (const [pkg, files] of blobFiles(config)) {
          const set = out.get(pkg) ?? new Set<string>();
          for (const f of files) set.add(`${root}/${f}`);
          out.set(pkg, set);
        }
      }
    }
    return out;
  };
  return {
    baseRoots: [...new Set(rootsAt.flat())].sort(),
    basePackageFiles: async (pkg) => [...((await (places ??= load())).get(pkg) ?? [])].sort(),
  };
}

/**
 * A directory's files at a commit, from git objects; nothing is read when the listing says
 * they hold more than `maxBytes` (docs/security.md, bounded work).
 */
async function readDirectory(
  repo: string,
  rev: string,
  dir: string,
  maxBytes: number,
): Promise<DirectoryFiles> {
  const source = new GitTreeSource(repo, rev, dir);
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

/** Does the change add a package to this root (one its base has no blob of)? */
function addsPackage(root: CheckedRoot): boolean {
  const inBase = root.base ? blobFiles(root.base.config) : new Map<string, Set<string>>();
  return [...root.packages].some((p) => !root.base?.model.has(p) && !inBase.has(p));
}

async function resolveCommit(repo: string, rev: string): Promise<string> {
  return (await runGit(repo, ['rev-parse', '--verify', '--end-of-options', `${rev}^{commit}`]))
    .toString('utf8')
    .trim();
}

/**
 * Validation findings kept per catalog root and commit (docs/security.md, bounded work);
 * the rest are counted, and `catalog-bot validate <root>` lists them all.
 */
export const MAX_FINDINGS_PER_ROOT = 1000;

/**
 * The templates a change touches (the template or one of its outputs changed): from the
 * config, and from community-operators `operators/<package>/ci.yaml` files of the head.
 */
export async function templatesFor(
  head: string,
  configured: { template: string; outputs: string[] }[],
  files: string[],
  readFile: ReadFile,
): Promise<TemplateMappingInput[]> {
  const changed = new Set(files);
  const touched = (m: { template: string; outputs: string[] }) =>
    changed.has(m.template) || m.outputs.some((o) => changed.has(o));
  const mappings: TemplateMappingInput[] = configured.filter(touched);
  const ciFiles = new Set<string>();
  for (const f of files) {
    // A template under operators/<package>/, or an output at catalogs/<version>/<package>/catalog.yaml.
    const pkg =
      /^operators\/([^/]+)\//.exec(f)?.[1] ?? /^catalogs\/[^/]+\/([^/]+)\/catalog\.yaml$/.exec(f)?.[1];
    if (pkg) ciFiles.add(`operators/${pkg}/ci.yaml`);
  }
  for (const ci of [...ciFiles].sort()) {
    const text = await readFile(head, ci);
    if (text === undefined) continue; // no ci.yaml: no mapping
    try {
      mappings.push(...templateMappingsFromCiYaml(ci, text).filter(touched));
    } catch {
      // a ci.yaml that does not parse maps nothing
    }
  }
  return mappings;
}

/**
 * What an approval is given for: each touched package (named as in the permissions table)
 * and each other changed file, with a digest of its content at head.
 */
async function subjectDigests(
  repo: string,
  head: string,
  roots: CheckedRoot[],
  files: string[],
): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const root of roots) {
    const digests = root.head ? packageDigests(root.head.config) : new Map<string, string>();
    for (const pkg of root.packages) out.set(packageSubject(pkg, root.path), digests.get(pkg) ?? 'removed');
  }
  if (files.length > 0) {
    // One listing of the head tree (no argument list that grows with the change): blob
    // ids are content digests.
    const wanted = new Set(files);
    const listing = (await runGit(repo, ['ls-tree', '-r', '-z', head])).toString('utf8');
    const blobs = new Map<string, string>();
    for (const entry of listing.split('\0')) {
      const m = /^\S+ \S+ (\S+)\t(.*)$/s.exec(entry);
      if (m && wanted.has(m[2] as string)) blobs.set(m[2] as string, m[1] as string);
    }
    for (const path of files) out.set(fileSubject(path), blobs.get(path) ?? 'removed');
  }
  return out;
}

/** A bad repository config fails the validate check, naming the key and line. */
function withConfigProblems(check: CheckResult, problems: Diagnostic[]): CheckResult {
  if (problems.length === 0) return check;
  const findings = [...problems, ...check.findings];
  return {
    ...check,
    conclusion: 'failure',
    title: `Bad repository config; ${check.title}`,
    summary: `**${problems.length} problem${problems.length === 1 ? '' : 's'} in \`.github/catalog-bot.yml\`** (the base branch's copy applies; defaults are used until it is fixed).\n\n${check.summary}`,
    findings,
    annotations: [...toAnnotations(problems), ...check.annotations],
  };
}
