// The one list of pull-request checks (their check-run names are exact: branch protection
// and people require them by name). The check-run writer, the merge gate and `catalog-bot
// check` all read it; a flow that needs only some checks names them (`/approve` runs only the permissions decision), and each
// check does its own work, so nothing is loaded or validated for a check that is not asked
// for. The order is the order of the results (`catalog-bot check` prints them so).
import type { RootValidations } from './root-validations.js';
import { parseDocument } from 'yaml';
import type { DeclarativeConfig } from '../catalog/fbc/declcfg.js';
import type { Diagnostic } from '../catalog/diagnostics.js';
import { GitTreeSource, loadCatalog, validateCatalog } from '../catalog/index.js';
import { templateMappingsFromCiYaml } from '../catalog/templates/ci-yaml.js';
import {
  commitId,
  fileEntriesAt,
  namesInDirectory,
  newestCommitChangingText,
  type TreeFileEntry,
} from '../git/read.js';
import type { PolicyBundles, RegistryPolicy } from './registry-policy.js';
import { BUNDLE_CHECK } from './bundle.js';
import {
  bundleCheckForChange,
  bundleDirectories,
  ocpIndexesOfRoots,
  releaseMergedBundles,
  type DirectoryFiles,
  type PendingRelease,
} from './bundle-pr.js';
import type { BundleSettings } from '../catalog/edits/release.js';
import { catalogRoots, packageDigests } from './changes.js';
import { toAnnotations, type CheckResult } from './check.js';
import type { RepoConfig } from './config.js';
import { bundleDirectoryManifests, gitObjectLoader } from './crd-upgrade-objects.js';
import { crdUpgradeCheck, CRD_UPGRADE_CHECK } from './crd-upgrade.js';
import { dependenciesCheck, DEPENDENCIES_CHECK } from './dependencies.js';
import { addedImageUses, imagesCheck, IMAGES_CHECK } from './images.js';
import { allowedBundleRegistriesOf, OCP_CONTINUITY_CHECK, ocpContinuityForChange } from './ocp-continuity.js';
import { normLogin } from './owners.js';
import {
  agreedRows,
  blobFiles,
  decidePermissions,
  fileSubject,
  packageSubject,
  PERMISSIONS_CHECK,
  permissionsCheck,
  type PackageFilesInput,
} from './permissions.js';
import { metadataNamesOnly } from './package-files.js';
import type { CheckedRoot } from './checked-root.js';
import type { PrCheckInput } from './pr-input.js';
import {
  memoryCatalog,
  parsePruneTarget,
  pruneCheck,
  PRUNE_CHECK,
  prunedItems,
  publishedTag,
  targetCovers,
  type PruneDecision,
  type PruneRootOutcome,
} from './prune.js';
import { templatesCheck, TEMPLATES_CHECK, type TemplateMappingInput } from './templates.js';
import { upgradeGraphCheck, UPGRADE_GRAPH_CHECK } from './upgrade-graph/index.js';
import { validateCheck, VALIDATE_CHECK } from './validate.js';

export type ReadFile = (rev: string, path: string) => Promise<string | undefined>;

/** A touched catalog root as the permissions decision needs it: its configs, no validation. */
export interface ChangedRoot {
  path: string;
  base?: DeclarativeConfig;
  head?: DeclarativeConfig;
  packages: Set<string>;
}

/** What every check of one pull request reads: the change, prepared once, loaded as needed. */
export interface PrChange {
  input: PrCheckInput;
  repo: string;
  /** Roots the same work validated already (a comment's edit), reused for the same files only. */
  validations?: RootValidations;
  base: string;
  head: string;
  /** The commit whose config and owners files apply. */
  rules: string;
  config: RepoConfig;
  /** Problems of the base branch's config file (they fail `catalog-bot/validate`). */
  configFindings: Diagnostic[];
  globs: string[];
  /** Registries are contacted only as the base branch's config allows (docs/security.md). */
  policy: RegistryPolicy;
  bundles: Partial<PolicyBundles>;
  baseRoots: string[];
  headRoots: string[];
  /** Files the change touches. */
  files: string[];
  readFile: ReadFile;
  readDirectory: (rev: string, dir: string, maxBytes: number) => Promise<DirectoryFiles>;
  /** The touched roots loaded and validated at base and head (once, on first use). */
  checkedRoots(): Promise<CheckedRoot[]>;
  /** The touched roots' configs and changed packages: from checkedRoots() when loaded, else loaded without validating. */
  changedRoots(): Promise<ChangedRoot[]>;
  /** Set by the permissions check: each permission row -> a digest of its content at head. */
  subjects?: Map<string, string>;
  /** Set by the permissions check: the rows the author agrees to as an owner. */
  agreed?: string[];
  /** Set by the prune check: what each changed catalog removes from its published image. */
  pruned?: PruneRootOutcome[];
  /** Set by the bundle check: the catalog update a bundle-only pull request needs. */
  release?: PendingRelease;
}

export interface PrCheck {
  readonly name: string;
  /** Reads the validated catalogs (checkedRoots()): when any check run does, the others share them. */
  readonly validates: boolean;
  /**
   * Decided on every change (the others apply only to some: templates, OpenShift
   * continuity, bundle directories, images when registries can be asked).
   */
  readonly always: boolean;
  /** The check's result, or undefined when it does not apply to this change. */
  run(change: PrChange): Promise<CheckResult | undefined>;
}

export const PR_CHECKS = [
  {
    name: PERMISSIONS_CHECK,
    validates: false,
    always: true,
    run: permissions,
  },
  {
    name: VALIDATE_CHECK,
    validates: true,
    always: true,
    run: async (change) =>
      withConfigProblems(
        validateCheck(
          (await change.checkedRoots()).flatMap((r) => (r.head ? [{ path: r.path, report: r.head }] : [])),
        ),
        change.configFindings,
      ),
  },
  {
    name: UPGRADE_GRAPH_CHECK,
    validates: true,
    always: true,
    run: async (change) => upgradeGraphCheck(await change.checkedRoots()),
  },
  {
    name: DEPENDENCIES_CHECK,
    validates: true,
    always: true,
    run: async (change) =>
      dependenciesCheck(await change.checkedRoots(), {
        externalProviders: change.config.dependencies.externalProviders,
      }),
  },
  {
    name: CRD_UPGRADE_CHECK,
    validates: true,
    always: true,
    // Manifests the catalog lacks come from the bundle directories (the base's bundles.path),
    // read from git objects at the base (released) or the head (new).
    run: async (change) =>
      crdUpgradeCheck(await change.checkedRoots(), gitObjectLoader(change.repo, change.base, change.head), {
        bundleDirectories: bundleDirectoryManifests(change.config.bundles.path, (side, dir, maxBytes) =>
          change.readDirectory(side === 'base' ? change.base : change.head, dir, maxBytes),
        ),
        ...(change.bundles.manifests ? { renderBundle: change.bundles.manifests } : {}),
      }),
  },
  {
    name: OCP_CONTINUITY_CHECK,
    validates: true,
    always: false,
    // Untouched neighbours of a touched OpenShift catalog are the same at base and head.
    run: async (change) =>
      ocpContinuityForChange({
        roots: await change.checkedRoots(),
        baseRoots: change.baseRoots,
        headRoots: change.headRoots,
        config: change.config.ocp,
        // For hints that re-render a catalog: the templates of the packages in scope.
        templates: await packageTemplates(
          change.head,
          change.config.templates,
          (await change.checkedRoots()).flatMap((r) => [...r.packages]),
          change.readFile,
        ),
        load: async (path) =>
          (
            await (change.validations?.validate(change.head, path) ??
              validateCatalog(new GitTreeSource(change.repo, change.head, path)))
          ).model,
        // The base's root config.yaml, as operator-pipelines reads it (docs/bundle-rules.md).
        allowedBundleRegistries: await baseAllowedBundleRegistries(change.readFile, change.base),
      }),
  },
  {
    name: BUNDLE_CHECK,
    validates: false,
    always: false,
    // Bundle directories are found by the base's bundles.path: the change cannot move them.
    run: (change) =>
      bundleCheckForChange({
        base: change.base,
        head: change.head,
        files: change.files,
        settings: bundleSettings(change.config),
        suites: change.config.bundles.suites,
        // The base's OpenShift catalogs, as `bundle validate` reads the repository's (docs/bundle-rules.md).
        ocpIndexes: ocpIndexesOfRoots(change.baseRoots),
        waiverOrigin: (pattern) => waiverOrigin(change.repo, change.base, pattern),
        readFile: change.readFile,
        readDirectory: change.readDirectory,
        onRelease: (release) => (change.release = release),
      }),
  },
  {
    name: TEMPLATES_CHECK,
    validates: false,
    always: false,
    run: async (change) => {
      const templates = await templatesFor(
        change.head,
        change.config.templates,
        change.files,
        change.readFile,
      );
      if (templates.length === 0) return undefined;
      return templatesCheck({
        mappings: templates,
        read: (path: string) => change.readFile(change.head, path),
        ...(change.bundles.resolveBundle ? { resolveBundle: change.bundles.resolveBundle } : {}),
      });
    },
  },
  {
    name: IMAGES_CHECK,
    validates: true,
    always: false,
    // The only check that needs the network: run when the caller can ask registries.
    run: async (change) => {
      const ask = change.input.images;
      if (!ask) return undefined;
      const uses = (await change.checkedRoots()).flatMap((r) =>
        r.head ? addedImageUses(r.base?.config, r.head.config, r.path) : [],
      );
      const results = await ask(
        uses.map((u) => u.image),
        change.policy,
      );
      return imagesCheck(uses, results, { unverifiableRegistries: change.policy.unverifiableRegistries });
    },
  },
  {
    name: PRUNE_CHECK,
    validates: false,
    always: false,
    // Needs the network: run when the caller can read published images, a catalog changes
    // and the repository publishes (docs/publishing.md, "Pruning guard").
    run: prune,
  },
] as const satisfies readonly PrCheck[];

export type PrCheckName = (typeof PR_CHECKS)[number]['name'];

/** Every check-run name, in the order of the list. */
export const PR_CHECK_NAMES: readonly PrCheckName[] = PR_CHECKS.map((c) => c.name);

/** The checks decided on every change (the merge gate requires them whatever a record says). */
export const ALWAYS_CHECK_NAMES: readonly PrCheckName[] = PR_CHECKS.filter((c) => c.always).map(
  (c) => c.name,
);

/** The repository config's `bundles` as the release reads them. */
/** Larger root config.yaml files are not read (community-operators-prod's is a few KiB). */
const MAX_ROOT_CONFIG_BYTES = 256 * 1024;

/** The base's root config.yaml `allowed_bundle_registries` (none when absent or unreadable). */
async function baseAllowedBundleRegistries(readFile: ReadFile, base: string): Promise<string[]> {
  const text = await readFile(base, 'config.yaml');
  if (text === undefined || text.length > MAX_ROOT_CONFIG_BYTES) return [];
  const doc = parseDocument(text);
  if (doc.errors.length > 0) return [];
  try {
    return allowedBundleRegistriesOf(doc.toJS({ maxAliasCount: 100 }));
  } catch {
    return []; // too many aliases: not read, like a file that is not YAML
  }
}

/**
 * The newest commit of the base's history that added or removed a waiver pattern in config.yaml
 * (`git log -S`, a literal string; the pattern is there at the base, so it added it), as
 * "<author>'s commit <hash> (<subject>)": who waived and why.
 */
async function waiverOrigin(repo: string, base: string, pattern: string): Promise<string | undefined> {
  if (pattern.length === 0 || pattern.length > 200) return undefined;
  const origin = await newestCommitChangingText(repo, base, pattern, 'config.yaml');
  if (!origin) return undefined;
  const { author, hash, subject } = origin;
  // Names and subjects are the repository's text: keep them to one short line.
  const clean = (t: string, max: number): string =>
    [...t]
      .map((ch) => (ch.charCodeAt(0) < 0x20 || ch.charCodeAt(0) === 0x7f || ch === '`' ? ' ' : ch))
      .join('')
      .slice(0, max);
  return `${clean(author, 80)}'s commit ${clean(hash, 40)} (${clean(subject, 120)})`;
}

export function bundleSettings(config: RepoConfig): BundleSettings {
  const { bundles } = config;
  return {
    path: bundles.path,
    imageTemplate: bundles.imageTemplate,
    opmVersion: bundles.renderer.opmVersion,
    ...(bundles.renderer.csvMetadataFrom !== undefined
      ? { csvMetadataFrom: bundles.renderer.csvMetadataFrom }
      : {}),
  };
}

/**
 * The App's own release pull request (docs/bundles.md): approved when its change is exactly
 * the release of the bundles the merged pull request it is for added, computed here on its
 * base: nothing but the release of bundles already merged can pass, and any other byte fails
 * the comparison.
 */
async function derivedReleasePermissions(change: PrChange): Promise<CheckResult | undefined> {
  const source = change.input.derivedRelease;
  if (!source) return undefined;
  // The bundles the merged pull request added, as GitHub lists its files: never the head
  // commit's message, which anyone who can push to the branch writes.
  const dirs = bundleDirectories(source.changed, change.config.bundles.path).map((b) => b.dir);
  if (dirs.length === 0 || change.files.length === 0) return undefined;
  const release = await releaseMergedBundles({
    rev: change.base,
    dirs,
    settings: bundleSettings(change.config),
    readDirectory: change.readDirectory,
    readFile: change.readFile,
  });
  if (!('files' in release)) return undefined;
  const expected = new Map(release.files.map((f) => [f.path, f.after]));
  if (expected.size !== change.files.length || change.files.some((f) => !expected.has(f))) return undefined;
  for (const [path, after] of expected)
    if ((await change.readFile(change.head, path)) !== after) return undefined;
  change.subjects = new Map();
  return {
    name: PERMISSIONS_CHECK,
    conclusion: 'success',
    title: `The release of ${dirs.join(', ')}, made by catalog-bot`,
    summary: [
      `This change is exactly the catalog update of ${dirs.map((d) => `\`${d}\``).join(', ')}, bundles the base branch already holds, as catalog-bot computes it on the base (docs/bundles.md). Its owners approved the bundle when it was merged; nothing else is changed:`,
      '',
      ...[...expected.keys()].map((p) => `- \`${p}\``),
    ].join('\n'),
    findings: [],
    annotations: [],
  };
}

/** The permissions decision: with an author only (`catalog-bot check` without `--author` has none). */
async function permissions(change: PrChange): Promise<CheckResult | undefined> {
  const { input, repo, head, rules, files, globs, config } = change;
  if (input.author === undefined) return undefined;
  if (input.derivedRelease) {
    const derived = await derivedReleasePermissions(change);
    if (derived) return derived;
  }
  const roots = await change.changedRoots();
  const [baseEntries, headEntries] = await Promise.all([
    treeEntries(repo, change.base, files),
    treeEntries(repo, head, files),
  ]);
  const subjects = subjectDigests(roots, files, headEntries);
  change.subjects = subjects;
  const approvals = (input.approvals ?? []).map((a) => ({
    login: a.login,
    subjects: new Set(Object.keys(a.subjects).filter((what) => subjects.get(what) === a.subjects[what])),
  }));
  const baseFiles = { read: (path: string) => change.readFile(rules, path) };
  const decision = await decidePermissions(
    {
      author: input.author,
      approvers: input.approvers ?? [],
      approvals,
      changes: roots.map((r) => ({
        root: r.path,
        packages: r.packages,
        basePackages: declaredPackages(r.base),
        baseConfig: r.base,
        headConfig: r.head,
      })),
      otherFiles: files.map((path) => ({
        path,
        change: !baseEntries.has(path) ? 'added' : !headEntries.has(path) ? 'removed' : 'changed',
      })),
      config,
      // Only a package added to a root, or whose own files have no owners file in the base,
      // is looked for in the other roots (loaded only then).
      ...(roots.some(addsPackage) || config.ownership.packageOwners !== undefined
        ? await basePlaces(repo, [change.base, rules], globs, roots)
        : {}),
      ...(config.ownership.packageOwners !== undefined
        ? { packageFiles: packageFilesOf(change, headEntries) }
        : {}),
    },
    baseFiles,
    input.teams ??
      (async (team) => {
        throw new Error(`team ${team} cannot be resolved without GitHub`);
      }),
  );
  change.agreed = agreedRows(decision, input.author);
  return permissionsCheck(decision);
}

/**
 * The pruning guard: each changed catalog root against the image published for it. The tag
 * comes from the base branch's config (change.config), never the pull request's, and is read
 * with the base's registry policy.
 */
async function prune(change: PrChange): Promise<CheckResult | undefined> {
  const read = change.input.published;
  const { images, dispatch } = change.config.publish;
  if (!read || (images.length === 0 && !dispatch)) return undefined; // nothing is published
  const roots = await change.changedRoots();
  if (roots.length === 0) return undefined;
  const owners = pruneOwners(change);
  const outcomes: PruneRootOutcome[] = [];
  for (const root of roots) {
    const image = publishedTag(images, root.path);
    if (image === undefined) {
      outcomes.push({
        root: root.path,
        state: 'no-tag',
        reason:
          images.length === 0
            ? 'publish.images names no tag (images are built elsewhere, publish.dispatch)'
            : 'every publish.images tag has {sha}, so none names the image published now',
        items: [],
      });
      continue;
    }
    const answer = await read(image, change.policy);
    if (answer.status === 'none') {
      outcomes.push({ root: root.path, image, state: 'unpublished', items: [] });
      continue;
    }
    // Not read (the registry did not answer, a layer it cannot read): the base's catalog stands
    // in, so what this change itself removes still needs its owners' allow; a removal must
    // not pass because the image could not be read just then (docs/publishing.md).
    const published =
      answer.status === 'unreachable'
        ? root.base
        : (await loadCatalog(memoryCatalog(image, answer.files))).config;
    const digests = root.head ? packageDigests(root.head) : new Map<string, string>();
    const items: PruneDecision[] = [];
    for (const item of published ? prunedItems(published, root.head, root.packages) : []) {
      const digest = digests.get(item.package) ?? 'removed';
      const subject = packageSubject(item.package, root.path);
      const ownerAllows: string[] = [];
      let allowedBy: string | undefined;
      for (const allow of change.input.allowPrunes ?? []) {
        const target = parsePruneTarget(allow.target);
        if ('problem' in target || !targetCovers(target, item)) continue;
        if (!(await owners.owns(allow.login, item.package, root))) continue;
        ownerAllows.push(allow.login);
        if (allow.subjects[subject] === digest) allowedBy ??= allow.login;
      }
      items.push({
        ...item,
        mayAllow: await owners.mayAllow(item.package, root),
        ownerAllows,
        ...(allowedBy !== undefined ? { allowedBy } : {}),
        digest,
      });
    }
    outcomes.push(
      answer.status === 'unreachable'
        ? { root: root.path, image, state: 'unreachable', reason: answer.reason, items }
        : { root: root.path, image, state: 'compared', digest: answer.digest, items },
    );
  }
  change.pruned = outcomes;
  return pruneCheck(outcomes);
}

/**
 * Who may allow pruning a package: the permissions decision's own rules (owners from the
 * base, maintainers), asked for that one package with the login in the author's place.
 */
function pruneOwners(change: PrChange) {
  const baseFiles = { read: (path: string) => change.readFile(change.rules, path) };
  const teams =
    change.input.teams ??
    (async (team: string) => {
      throw new Error(`team ${team} cannot be resolved without GitHub`);
    });
  const decided = new Map<string, Promise<{ satisfied: boolean; mayApprove: string[] }>>();
  const decide = (login: string, pkg: string, root: ChangedRoot) => {
    const key = JSON.stringify([login.toLowerCase(), pkg, root.path]);
    let answer = decided.get(key);
    if (!answer) {
      answer = decidePermissions(
        {
          author: login,
          approvers: [],
          changes: [
            {
              root: root.path,
              packages: new Set([pkg]),
              basePackages: declaredPackages(root.base),
              ...(root.base ? { baseConfig: root.base } : {}),
              ...(root.head ? { headConfig: root.head } : {}),
            },
          ],
          otherFiles: [],
          config: change.config,
          baseRoots: change.baseRoots,
        },
        baseFiles,
        teams,
      ).then((d) => {
        const row = d.rows[0];
        // A package nobody owns (the new-package rule says anyone) is no one's to allow but
        // the maintainers'.
        const anyone = (row?.mayApprove ?? []).includes('*');
        const maintainer = change.config.maintainers.some((m) => normLogin(m) === normLogin(login));
        return {
          satisfied: row?.satisfiedBy != null && (!anyone || maintainer),
          mayApprove: anyone ? change.config.maintainers : (row?.mayApprove ?? []),
        };
      });
      decided.set(key, answer);
    }
    return answer;
  };
  return {
    owns: async (login: string, pkg: string, root: ChangedRoot) =>
      login !== '' && (await decide(login, pkg, root)).satisfied,
    mayAllow: async (pkg: string, root: ChangedRoot) => (await decide('', pkg, root)).mayApprove,
  };
}

/** The packages a config declares (`olm.package` blobs with a name): the keys of its model. */
export function declaredPackages(config: DeclarativeConfig | undefined): Set<string> {
  return new Set((config?.packages ?? []).filter((p) => p.name !== '').map((p) => p.name));
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
  checked: ChangedRoot[],
): Promise<{ baseRoots: string[]; basePackageFiles: (pkg: string) => Promise<string[]> }> {
  const revs = [...new Set(await Promise.all(commits.map((c) => commitId(repo, c))))];
  const rootsAt = await Promise.all(revs.map((rev) => catalogRoots(repo, rev, globs)));
  let places: Promise<Map<string, Set<string>>> | undefined;
  const load = async (): Promise<Map<string, Set<string>>> => {
    const out = new Map<string, Set<string>>();
    const known = new Map(checked.map((r) => [r.path, r.base]));
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

/** Does the change add a package to this root (one its base has no blob of)? */
function addsPackage(root: ChangedRoot): boolean {
  const inBase = root.base ? blobFiles(root.base) : new Map<string, Set<string>>();
  const declared = declaredPackages(root.base);
  return [...root.packages].some((p) => !declared.has(p) && !inBase.has(p));
}

/**
 * The entries of `files` in the tree of `rev`: one listing of the whole tree (no argument
 * list that grows with the change). A path the tree lacks has none.
 */
async function treeEntries(repo: string, rev: string, files: string[]): Promise<Map<string, TreeFileEntry>> {
  const out = new Map<string, TreeFileEntry>();
  if (files.length === 0) return out;
  const all = await fileEntriesAt(repo, rev);
  for (const path of files) {
    const entry = all.get(path);
    if (entry) out.set(path, entry);
  }
  return out;
}

/**
 * What an approval is given for: each touched package (named as in the permissions table)
 * and each other changed file, with a digest of its content at head (its blob id).
 */
function subjectDigests(
  roots: ChangedRoot[],
  files: string[],
  headEntries: Map<string, TreeFileEntry>,
): Map<string, string> {
  const out = new Map<string, string>();
  for (const root of roots) {
    const digests = root.head ? packageDigests(root.head) : new Map<string, string>();
    for (const pkg of root.packages) out.set(packageSubject(pkg, root.path), digests.get(pkg) ?? 'removed');
  }
  for (const path of files) out.set(fileSubject(path), headEntries.get(path)?.id ?? 'removed');
  return out;
}

/** A bundle's metadata/ is a few small files; more than this is not read (and names no package). */
const MAX_METADATA_BYTES = 1024 * 1024;

/**
 * What tells a package's own files (permissions.ts, README "Who may change what"), read from
 * git: bundle metadata at the merge base and the head, and directories at the base.
 */
function packageFilesOf(change: PrChange, headEntries: Map<string, TreeFileEntry>): PackageFilesInput {
  const { repo, base, head, rules } = change;
  const exists = async (rev: string, dir: string): Promise<boolean> => {
    const listed = await change.readDirectory(rev, dir, 0);
    return listed.bytes > 0 || listed.files.size > 0 || listed.unreadable.length > 0;
  };
  return {
    bundlesPath: change.config.bundles.path,
    notRegular: new Set(
      [...headEntries].filter(([, e]) => e.mode !== '100644' && e.mode !== '100755').map(([path]) => path),
    ),
    bundleNames: async (dir, pkg) => {
      for (const rev of new Set([base, head])) {
        if (!(await exists(rev, dir))) continue;
        const metadata = await change.readDirectory(rev, `${dir}/metadata`, MAX_METADATA_BYTES);
        if (!metadataNamesOnly(metadata, pkg)) return false;
      }
      return true;
    },
    // Without case: `operators/ClusterPulse/` is the same directory on a checkout that folds case.
    baseHas: async (dir) => {
      const slash = dir.lastIndexOf('/');
      const parent = slash < 0 ? '' : dir.slice(0, slash);
      const name = dir.slice(slash + 1).toLowerCase();
      for (const rev of new Set([base, rules])) {
        const names = await namesInDirectory(repo, rev, parent); // undefined: no such directory at this commit
        if (names?.some((entry) => entry.toLowerCase() === name)) return true;
      }
      return false;
    },
  };
}

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
  const packages = new Set<string>();
  for (const f of files) {
    // A template under operators/<package>/, or an output at catalogs/<version>/<package>/catalog.yaml.
    const pkg =
      /^operators\/([^/]+)\//.exec(f)?.[1] ?? /^catalogs\/[^/]+\/([^/]+)\/catalog\.yaml$/.exec(f)?.[1];
    if (pkg) packages.add(pkg);
  }
  mappings.push(...(await ciYamlMappings(head, packages, readFile)).filter(touched));
  return mappings;
}

/** The `operators/<package>/ci.yaml` mappings of these packages at `head` (none for a ci.yaml that is missing or does not parse). */
async function ciYamlMappings(
  head: string,
  packages: Iterable<string>,
  readFile: ReadFile,
): Promise<TemplateMappingInput[]> {
  const mappings: TemplateMappingInput[] = [];
  for (const pkg of [...new Set(packages)].sort()) {
    if (pkg === '.' || pkg === '..' || !/^[^/\\\0]+$/.test(pkg)) continue; // one path segment
    const ci = `operators/${pkg}/ci.yaml`;
    const text = await readFile(head, ci);
    if (text === undefined) continue;
    try {
      mappings.push(...templateMappingsFromCiYaml(ci, text));
    } catch {
      // a ci.yaml that does not parse maps nothing
    }
  }
  return mappings;
}

/** Every template that renders a catalog of these packages: the configured ones, then ci.yaml's. */
export async function packageTemplates(
  head: string,
  configured: { template: string; outputs: string[] }[],
  packages: Iterable<string>,
  readFile: ReadFile,
): Promise<TemplateMappingInput[]> {
  return [...configured, ...(await ciYamlMappings(head, packages, readFile))];
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

/**
 * The checks whose findings are compared with the base's (docs/output.md): the catalog
 * checks, each run a second time with the base standing in for the head. A finding both
 * runs give is one the base already had.
 */
export const BASE_COMPARED_CHECKS = new Set<string>([
  VALIDATE_CHECK,
  UPGRADE_GRAPH_CHECK,
  DEPENDENCIES_CHECK,
  CRD_UPGRADE_CHECK,
  OCP_CONTINUITY_CHECK,
]);

/** The findings `check` gives on the base alone (undefined when they cannot be had). */
export async function baseFindings(check: PrCheck, change: PrChange): Promise<Diagnostic[] | undefined> {
  if (!BASE_COMPARED_CHECKS.has(check.name)) return undefined;
  const roots = (await change.checkedRoots()).flatMap((r) =>
    r.base ? [{ path: r.path, base: r.base, head: r.base, packages: r.packages }] : [],
  );
  const onBase: PrChange = {
    ...change,
    head: change.base,
    headRoots: change.baseRoots,
    files: [],
    checkedRoots: async () => roots,
    changedRoots: async () => (await change.changedRoots()).map((r) => ({ ...r, head: r.base })),
  };
  return (await check.run(onBase))?.findings;
}
