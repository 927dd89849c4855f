// The `catalog-bot/permissions` decision (README "Repository configuration"): the author may
// change every package and file touched, or someone who may has said `/approve`. Pure: the
// owners files come from a reader of the BASE commit, team members from an injected function.
//
// - A touched package P (decided by content and the files holding it, per catalog root)
//   needs the author or an approver in P's owners or the maintainers. P's owners come from
//   the base, by P's name, never from where the head puts P (docs/security.md): the
//   `packageOwners` file for P when configured and present; otherwise (with `ownersFiles`)
//   the approvers of the OWNERS files along every base file that holds a blob of P, and of
//   `<root>/P/OWNERS` when the base has one. Each of those owner sets must agree: putting a
//   blob of B into A's file never makes A's owners owners of B, nor does moving B's file
//   into A's directory. A set agrees through its own member, the author or an approver; one
//   person in every set (or a maintainer) is enough alone (docs/security.md).
// - A package is new only when no catalog root of the base has it and it has no owners
//   entry (packageOwners file, or with `ownersFiles` a `<root>/P/OWNERS` in any base root):
//   `newPackages: maintainers` lets only maintainers add it; `anyone` lets the author add
//   it. Adding a package that is not new to another root needs its owners.
// - A package's own files (with `packageOwners`; package-files.ts says which they are) are its
//   owners': the files under its directory (`operators/<package>/`, from `bundles.path` and
//   `packageOwners`), its packageOwners file, and its bundle directories when the bundle's
//   metadata names that package at base and head. The owners are the base's, as for its
//   blobs, so a change to the packageOwners file needs an owner the base lists. A bundle
//   directory naming another package, a symlink or submodule, or a path with `..` is no
//   package's own. A package directory the base lacks follows `newPackages`, and under
//   `anyone` only when the base knows the package nowhere (docs/security.md).
// - Every other changed file follows the OWNERS files along its path, and if none names an
//   approver, only the maintainers may approve it. Files that hold FBC blobs (in base or
//   head) are judged by the packages they touch, not by path.
// - Maintainers (users and `org/team`) may approve everything.
import type { DeclarativeConfig } from '../catalog/fbc/declcfg.js';
import type { Diagnostic } from '../catalog/diagnostics.js';
import { cell, toAnnotations, type CheckResult } from './check.js';
import { isTeam, normLogin, OWNERS, OwnersIndex, type FileReader, type PathOwners } from './owners.js';
import { packagePlace } from './package-files.js';

export type { FileReader } from './owners.js';

export const PERMISSIONS_CHECK = 'catalog-bot/permissions';

/** `"org/team"` → logins of its members (cached by the caller). May throw: reported, treated as empty. */
export type TeamMembers = (orgTeam: string) => Promise<string[]>;

/** The part of the repository config (src/checks/config.ts) this decision reads. */
export interface OwnershipConfig {
  maintainers: string[];
  ownership: {
    ownersFiles: boolean;
    /** Path template with `{package}`, e.g. `operators/{package}/ci.yaml`. */
    packageOwners?: string;
    newPackages: 'maintainers' | 'anyone';
  };
}

export type ChangeKind = 'added' | 'changed' | 'removed';

export interface PackageChanges {
  /** Catalog root, a repository path such as `catalogs/v4.21`. */
  root: string;
  /** Packages whose content differs between base and head (`changedPackages`). */
  packages: Set<string>;
  /** Packages present in the base catalog of this root. */
  basePackages: Set<string>;
  /**
   * The base catalog: which files hold each package's blobs (their OWNERS decide), and
   * which files are FBC files. Without it, a package's OWNERS are those of the root.
   */
  baseConfig?: DeclarativeConfig;
  /** The head catalog: tells a removed package from a changed one; its files are FBC files. */
  headConfig?: DeclarativeConfig;
}

/**
 * What an `/approve` is recorded against: a package in a root, or a file. The two kinds
 * never share a key (a file may be named like anything, `package foo (catalogs/v1)` too),
 * so approving one can never carry over to the other (docs/security.md).
 */
export const packageSubject = (pkg: string, root: string): string => `package ${pkg} (${root})`;
export const fileSubject = (path: string): string => `file ${path}`;

export interface PermissionInput {
  author: string;
  /** Logins whose approval covers everything (the CLI's `--approver`). */
  approvers: string[];
  /**
   * Approvals that cover only some rows (`packageSubject`, `fileSubject`): an `/approve` counts for the
   * package contents it saw, so a later push that changes a package needs a fresh one.
   */
  approvals?: { login: string; subjects: Set<string> }[];
  changes: PackageChanges[];
  /**
   * Changed repository paths that are not judged by package: files outside catalog roots and
   * non-FBC files inside them. A path that holds blobs in `baseConfig`/`headConfig` is skipped.
   * A plain string is a `changed` file.
   */
  otherFiles: (string | { path: string; change: ChangeKind })[];
  config: OwnershipConfig;
  /** Catalog roots of the base: `<root>/<package>/OWNERS` there names a package's owners. */
  baseRoots?: string[];
  /**
   * Repository paths of the files holding a package's blobs in every catalog root of the
   * base; asked only for a package the base of its own root lacks. Without it, such a
   * package is new unless it has an owners entry.
   */
  basePackageFiles?: (pkg: string) => Promise<string[]>;
  /**
   * What decides a package's own files (README "Who may change what"). Without it (or without
   * `packageOwners`), every file that holds no blob follows OWNERS files.
   */
  packageFiles?: PackageFilesInput;
}

/** What the decision reads, besides the base's owners files, to tell a package's own files. */
export interface PackageFilesInput {
  /** `bundles.path` of the base's config. */
  bundlesPath: string;
  /**
   * Does the bundle directory hold a bundle of `pkg` (its metadata names only `pkg`) at the
   * base and at the head, wherever it exists?
   */
  bundleNames: (dir: string, pkg: string) => Promise<boolean>;
  /** Changed paths that are not regular files at the head (symlinks, submodules). */
  notRegular: ReadonlySet<string>;
  /** Does the base have an entry of this name, compared without case (a package directory)? */
  baseHas: (dir: string) => Promise<boolean>;
}

/** One set of owners that must agree to a row, and who of them has. */
export interface OwnerSetStatus {
  /** Where the set comes from: the owners files that list it. */
  from: string;
  /** Normalised logins and `org/team` entries; empty when the files list nobody. */
  owners: string[];
  /** The author or approver (as given) in this set, or null. */
  agreedBy: string | null;
}

export interface PermissionRow {
  /** `package foo (catalogs/v4.21)` or a repository path. */
  what: string;
  change: ChangeKind;
  /**
   * Who may approve the row alone: normalised logins and `org/team` entries in every owner
   * set, and the maintainers; `*` means anyone (a new package under `newPackages: anyone`).
   */
  mayApprove: string[];
  /**
   * The author or approver (as given) who satisfies this row, or null. Where it took one
   * person per owner set, the first of them; `ownerSets` names each.
   */
  satisfiedBy: string | null;
  /** Set when more than one owner set applies: each must agree (or a maintainer). */
  ownerSets?: OwnerSetStatus[];
  /** Set for package rows. */
  package?: string;
  /** Set for a file row that is a package's own file: that package. */
  filesOf?: string;
  root?: string;
  /** Repository path to annotate: the file, or the first base file holding the package. */
  file?: string;
}

export interface PermissionProblem {
  file?: string;
  line?: number;
  message: string;
}

export interface PermissionDecision {
  satisfied: boolean;
  rows: PermissionRow[];
  /** Normalised maintainers (users and `org/team`): each may approve any row alone. */
  maintainers: string[];
  /** Human-readable problems (`file:line: message`), e.g. bad YAML in an owners file. */
  problems: string[];
  /** The same problems with their file and line, for annotations. */
  problemDetails: PermissionProblem[];
}

const repoPath = (root: string, file: string): string =>
  root === '' || root === '.' ? file : `${root.replace(/\/+$/, '')}/${file}`;

/** Package name → files (relative to the catalog root) that hold its blobs. */
export function blobFiles(config: DeclarativeConfig): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  const add = (pkg: string, file: string): void => {
    const set = out.get(pkg) ?? new Set<string>();
    set.add(file);
    out.set(pkg, set);
  };
  for (const p of config.packages) add(p.name, p.pos.file);
  for (const c of config.channels) add(c.package, c.pos.file);
  for (const b of config.bundles) add(b.package, b.pos.file);
  for (const d of config.deprecations) add(d.package, d.pos.file);
  for (const o of config.others) if (o.package) add(o.package, o.pos.file);
  return out;
}

/** A package name that can stand for `{package}` in a path without leaving its directory. */
function safePathSegment(name: string): boolean {
  return name !== '' && name !== '.' && name !== '..' && !/[/\\\0]/.test(name);
}

function dedupe(list: string[]): string[] {
  return [...new Set(list)];
}

/** Owners that must agree, and the owners files that list them. */
interface OwnerSet {
  members: string[];
  from: string[];
}

/** Who must approve one row: a maintainer, or a member of each of `ownerSets`. */
interface Requirement {
  anyone: boolean;
  ownerSets: OwnerSet[];
}

/** One set per distinct list of members: the same people need to agree only once. */
function distinctSets(sets: OwnerSet[]): OwnerSet[] {
  const byMembers = new Map<string, OwnerSet>();
  for (const set of sets) {
    const key = JSON.stringify([...set.members].sort());
    const seen = byMembers.get(key);
    if (!seen) byMembers.set(key, { ...set });
    else seen.from = dedupe([...seen.from, ...set.from]);
  }
  return [...byMembers.values()];
}

/** The owner set OWNERS files give a path, named by those files. */
function pathSet(path: string, owners: PathOwners): OwnerSet {
  return {
    members: owners.approvers,
    from: owners.files.length > 0 ? owners.files : [`${path} (no OWNERS file)`],
  };
}

export async function decidePermissions(
  input: PermissionInput,
  base: FileReader,
  teams: TeamMembers,
): Promise<PermissionDecision> {
  const judge = new PermissionJudge(input, base, teams);
  const rows = [...(await judge.packageRows()), ...(await judge.fileRows())];
  const problemDetails: PermissionProblem[] = [...judge.index.problems, ...judge.extraProblems];
  return {
    satisfied: rows.every((r) => r.satisfiedBy !== null),
    rows,
    maintainers: judge.maintainers,
    problems: problemDetails.map(formatProblem),
    problemDetails,
  };
}

type Owners = { known: boolean; sets: OwnerSet[] };

/**
 * One decision's state: the owners read from the base, team members listed once, and who
 * may satisfy a row. Its steps: a row per package (packageRows), then a row per other file
 * (fileRows), each decided by `decide` (docs/security.md).
 */
class PermissionJudge {
  readonly index: OwnersIndex;
  readonly extraProblems: PermissionProblem[] = [];
  readonly maintainers: string[];
  readonly #config: PermissionInput['config'];
  readonly #teamCache = new Map<string, Promise<Set<string>>>();
  /** Who may satisfy a row, the author first; satisfiedBy keeps their spelling. */
  readonly #candidates = new Map<string, string>();
  /** The blob files of every root's base and head: not "other files". */
  readonly #fbcFiles = new Set<string>();
  /** A package's owners for its own files: from the base, by name, whatever root holds it. */
  readonly #packageOwnersCache = new Map<string, Promise<Owners>>();
  readonly #bundleCache = new Map<string, Promise<boolean>>();

  constructor(
    private readonly input: PermissionInput,
    base: FileReader,
    private readonly teams: TeamMembers,
  ) {
    this.#config = input.config;
    this.index = new OwnersIndex(base);
    this.maintainers = dedupe(this.#config.maintainers.map(normLogin).filter((m) => m !== ''));
    for (const who of [input.author, ...input.approvers]) {
      const login = normLogin(who);
      if (login !== '' && !this.#candidates.has(login)) this.#candidates.set(login, who);
    }
  }

  #membersOf(team: string): Promise<Set<string>> {
    let p = this.#teamCache.get(team);
    if (!p) {
      p = (async () => {
        try {
          return new Set((await this.teams(team)).map(normLogin));
        } catch (e) {
          this.extraProblems.push({
            message: `could not list the members of team ${team} (${e instanceof Error ? e.message : String(e)}); nobody counts as its member`,
          });
          return new Set<string>();
        }
      })();
      this.#teamCache.set(team, p);
    }
    return p;
  }

  async #inEntries(login: string, entries: string[]): Promise<boolean> {
    if (entries.includes(login)) return true;
    for (const team of entries.filter(isTeam)) if ((await this.#membersOf(team)).has(login)) return true;
    return false;
  }

  #candidatesFor(what: string): Map<string, string> {
    const all = new Map(this.#candidates);
    for (const a of this.input.approvals ?? []) {
      const login = normLogin(a.login);
      if (login !== '' && !all.has(login) && a.subjects.has(what)) all.set(login, a.login);
    }
    return all;
  }

  async decide(
    subject: string,
    req: Requirement,
  ): Promise<Pick<PermissionRow, 'mayApprove' | 'satisfiedBy' | 'ownerSets'>> {
    if (req.anyone) return { mayApprove: ['*'], satisfiedBy: this.input.author };
    const [first, ...rest] = req.ownerSets;
    const owners = first ? first.members.filter((e) => rest.every((s) => s.members.includes(e))) : [];
    const mayApprove = dedupe([...owners, ...this.maintainers]);
    const people = this.#candidatesFor(subject);
    // Each set agrees through its own member, the author first (docs/security.md). A set that
    // lists nobody never agrees, and with no set at all only a maintainer may approve.
    const agreed: (string | null)[] = [];
    for (const set of req.ownerSets) {
      let by: string | null = null;
      for (const [login, spelled] of people)
        if (await this.#inEntries(login, set.members)) {
          by = spelled;
          break;
        }
      agreed.push(by);
    }
    const ownerSets =
      req.ownerSets.length > 1
        ? req.ownerSets.map((set, i) => ({
            from: set.from.join(', '),
            owners: set.members,
            agreedBy: agreed[i] ?? null,
          }))
        : undefined;
    const result = (satisfiedBy: string | null) => ({
      mayApprove,
      satisfiedBy,
      ...(ownerSets ? { ownerSets } : {}),
    });
    // One person who may approve it all: a maintainer, or a member of every set.
    for (const [login, spelled] of people) {
      if (await this.#inEntries(login, this.maintainers)) return result(spelled);
      if (req.ownerSets.length === 0) continue;
      let all = true;
      for (const set of req.ownerSets) if (!(await this.#inEntries(login, set.members))) all = false;
      if (all) return result(spelled);
    }
    const everySet = req.ownerSets.length > 0 && agreed.every((by) => by !== null);
    return result(everySet ? (agreed[0] ?? null) : null);
  }

  /**
   * A package's owners, from the base and by its name. `here`: the base files holding it in
   * the root being judged (undefined when that root's base lacks it: then every base root
   * counts). `known`: the base has the package somewhere or an owners entry for it, so it is
   * not new.
   */
  async ownersOf(pkg: string, root: string | undefined, here: string[] | undefined): Promise<Owners> {
    const { config, input, index } = { config: this.#config, input: this.input, index: this.index };
    const safe = safePathSegment(pkg);
    const template = config.ownership.packageOwners;
    if (template) {
      if (safe) {
        const file = template.replaceAll('{package}', pkg);
        const fromPackageFile = await index.packageOwners(file);
        if (fromPackageFile) return { known: true, sets: [{ members: fromPackageFile, from: [file] }] };
      } else {
        this.extraProblems.push({
          message: `package name ${JSON.stringify(pkg)} cannot be used in the packageOwners path ${template}; it is judged as if that file were absent`,
        });
      }
    }
    const elsewhere = here === undefined ? ((await input.basePackageFiles?.(pkg)) ?? []) : [];
    let known = here !== undefined || elsewhere.length > 0;
    const sets: OwnerSet[] = [];
    if (!config.ownership.ownersFiles) return { known, sets };
    // Without the base catalog, the package's files are unknown: the root's OWNERS decide.
    const paths =
      here === undefined ? elsewhere : here.length > 0 || root === undefined ? here : [repoPath(root, pkg)];
    for (const path of paths) sets.push(pathSet(path, await index.approversOf(path)));
    if (safe) {
      const roots = dedupe([
        ...(root !== undefined ? [root] : []),
        ...(here === undefined ? (input.baseRoots ?? []) : []),
      ]);
      for (const r of roots) {
        const byName = repoPath(r, `${pkg}/${OWNERS}`);
        if (!(await index.ownersFile(byName))) continue;
        known = true;
        sets.push(pathSet(byName, await index.approversOf(byName)));
      }
    }
    return { known, sets: distinctSets(sets) };
  }

  /** A row per changed package of every root, by root then name. */
  async packageRows(): Promise<PermissionRow[]> {
    const rows: PermissionRow[] = [];
    for (const change of [...this.input.changes].sort((a, b) => a.root.localeCompare(b.root))) {
      const baseFiles = change.baseConfig ? blobFiles(change.baseConfig) : undefined;
      const headFiles = change.headConfig ? blobFiles(change.headConfig) : undefined;
      for (const files of [baseFiles, headFiles])
        for (const set of files?.values() ?? [])
          for (const f of set) this.#fbcFiles.add(repoPath(change.root, f));

      for (const pkg of [...change.packages].sort()) {
        const what = packageSubject(pkg, change.root);
        const inBase = change.basePackages.has(pkg) || (baseFiles?.has(pkg) ?? false);
        const kind: ChangeKind = !inBase ? 'added' : headFiles && !headFiles.has(pkg) ? 'removed' : 'changed';
        const pkgFiles = [...(baseFiles?.get(pkg) ?? [])].sort().map((f) => repoPath(change.root, f));
        const owners = await this.ownersOf(pkg, change.root, inBase ? pkgFiles : undefined);
        const req: Requirement = {
          anyone: !owners.known && this.#config.ownership.newPackages === 'anyone',
          ownerSets: owners.sets,
        };
        // Annotate a base file of the package, or for a new package the head file that adds it.
        const annotated =
          pkgFiles[0] ?? [...(headFiles?.get(pkg) ?? [])].sort().map((f) => repoPath(change.root, f))[0];
        rows.push({
          what,
          change: kind,
          ...(await this.decide(what, req)),
          package: pkg,
          root: change.root,
          ...(annotated !== undefined ? { file: annotated } : {}),
        });
      }
    }
    return rows;
  }

  /** The requirement of a package's own file, or undefined when `path` is none. */
  async ownFile(path: string): Promise<{ pkg: string; req: Requirement } | undefined> {
    const config = this.#config;
    const layoutOwners = config.ownership.packageOwners;
    const packageFiles = this.input.packageFiles;
    if (!packageFiles || layoutOwners === undefined) return undefined;
    const place = packagePlace(path, { bundlesPath: packageFiles.bundlesPath, packageOwners: layoutOwners });
    // A symlink or submodule points elsewhere: it is no package's own, whatever its path.
    if (!place || packageFiles.notRegular.has(path)) return undefined;
    if (place.bundleDir !== undefined) {
      const key = JSON.stringify([place.bundleDir, place.package]);
      let names = this.#bundleCache.get(key);
      if (!names)
        this.#bundleCache.set(key, (names = packageFiles.bundleNames(place.bundleDir, place.package)));
      // A bundle of another package (or of none) in this package's directory: its owners
      // cannot vouch for it, nor can the other package's, who do not own the directory.
      if (!(await names)) return undefined;
    }
    const file = layoutOwners.replaceAll('{package}', place.package);
    const listed = await this.index.packageOwners(file);
    if (listed)
      return { pkg: place.package, req: { anyone: false, ownerSets: [{ members: listed, from: [file] }] } };
    // No owners file in the base. A directory the base has is nobody's package: the path decides.
    if (place.dir === undefined || (await packageFiles.baseHas(place.dir))) return undefined;
    // A new directory: only maintainers may add one, unless anyone may add a package; then it
    // must be new indeed, not one a catalog of the base holds (then its owners decide).
    if (config.ownership.newPackages !== 'anyone')
      return { pkg: place.package, req: { anyone: false, ownerSets: [] } };
    let owners = this.#packageOwnersCache.get(place.package);
    if (!owners)
      this.#packageOwnersCache.set(
        place.package,
        (owners = this.ownersOf(place.package, undefined, undefined)),
      );
    const { known, sets } = await owners;
    return { pkg: place.package, req: { anyone: !known, ownerSets: sets } };
  }

  /** A row per changed file outside the catalogs' blob files (after packageRows), by path. */
  async fileRows(): Promise<PermissionRow[]> {
    const others = new Map<string, ChangeKind>();
    for (const f of this.input.otherFiles) {
      const { path, change } = typeof f === 'string' ? { path: f, change: 'changed' as const } : f;
      if (!this.#fbcFiles.has(path) && !others.has(path)) others.set(path, change);
    }
    const rows: PermissionRow[] = [];
    for (const [path, change] of [...others].sort(([a], [b]) => a.localeCompare(b))) {
      const own = await this.ownFile(path);
      const req: Requirement = own?.req ?? { anyone: false, ownerSets: [] };
      if (!own && this.#config.ownership.ownersFiles)
        req.ownerSets.push(pathSet(path, await this.index.approversOf(path)));
      rows.push({
        what: path,
        change,
        ...(await this.decide(fileSubject(path), req)),
        file: path,
        ...(own ? { filesOf: own.pkg } : {}),
      });
    }
    return rows;
  }
}

function formatProblem(p: PermissionProblem): string {
  if (p.file === undefined) return p.message;
  return `${p.file}${p.line !== undefined ? `:${p.line}` : ''}: ${p.message}`;
}

function whoList(mayApprove: string[]): string {
  if (mayApprove.includes('*')) return 'anyone';
  if (mayApprove.length === 0) return 'nobody';
  return mayApprove.map((e) => `\`${e}\``).join(', ');
}

/** A row several owner sets must agree to: which set still needs whom, and who agreed. */
function ownerSetsNotAgreed(
  row: PermissionRow,
  sets: OwnerSetStatus[],
  maintainers: string[],
): { message: string; hint: string } {
  const names = (owners: string[]) => (owners.length === 0 ? 'nobody' : owners.join(', '));
  const status = sets.map((s) =>
    s.agreedBy !== null
      ? `${s.from}: agreed by ${s.agreedBy}`
      : s.owners.length === 0
        ? `${s.from}: names no owner`
        : `${s.from}: needs one of ${s.owners.join(', ')}`,
  );
  const asks = sets
    .filter((s) => s.agreedBy === null)
    .map((s) =>
      s.owners.length === 0
        ? `Nobody is listed in ${s.from}: only a maintainer can approve this change, or list approvers there on the base branch.`
        : `Ask one of ${s.owners.join(', ')} (${s.from}) to comment \`/approve\`.`,
    );
  return {
    message: `${row.what} is ${row.change}, and ${sets.length} owner sets must each agree (the author or an approver in the set), or a maintainer (${names(maintainers)}); ${status.join('; ')}`,
    hint: asks.join(' '),
  };
}

/** Who may approve a row, as the table shows it: per owner set where several apply. */
function whoCell(row: PermissionRow, maintainers: string[]): string {
  if (!row.ownerSets) return whoList(row.mayApprove);
  const sets = row.ownerSets.map((s) => `${whoList(s.owners)} (${s.from})`).join(' and ');
  return maintainers.length === 0 ? sets : `${sets}; or ${whoList(maintainers)}`;
}

function approvedCell(row: PermissionRow): string {
  if (row.satisfiedBy === null) return '**no**';
  const by =
    row.ownerSets && row.ownerSets.every((s) => s.agreedBy !== null)
      ? dedupe(row.ownerSets.map((s) => s.agreedBy as string))
      : [row.satisfiedBy];
  return `yes, by ${by.map((b) => `\`${cell(b)}\``).join(', ')}`;
}

/**
 * The rows `author` agrees to as an owner: rows they may approve alone, and rows where they
 * are the member of an owner set that agreed. A row anyone may change (a new package under
 * `newPackages: anyone`) needs no owner and is not among them.
 */
export function agreedRows(decision: PermissionDecision, author: string): string[] {
  return decision.rows
    .filter(
      (r) =>
        !r.mayApprove.includes('*') &&
        (r.satisfiedBy === author || (r.ownerSets ?? []).some((s) => s.agreedBy === author)),
    )
    .map((r) =>
      r.package !== undefined && r.root !== undefined
        ? packageSubject(r.package, r.root)
        : fileSubject(r.what),
    );
}

/** What a failed permissions check says nobody who may has approved (its own rule, read here). */
export function unapprovedChanges(check: CheckResult): string[] {
  return check.findings.filter((f) => f.rule === NOT_APPROVED).map((f) => f.message);
}

const NOT_APPROVED = 'PERM-NOT-APPROVED';

export function permissionsCheck(result: PermissionDecision): CheckResult {
  const findings: Diagnostic[] = [];
  for (const row of result.rows) {
    if (row.satisfiedBy !== null) continue;
    const who = row.mayApprove.length === 0 ? 'nobody' : row.mayApprove.join(', ');
    findings.push({
      rule: NOT_APPROVED,
      level: 'error',
      ...(row.ownerSets
        ? ownerSetsNotAgreed(row, row.ownerSets, result.maintainers)
        : {
            message: `${row.what} is ${row.change}${row.filesOf !== undefined ? `, a file of package ${row.filesOf},` : ''} and neither the author nor an approver may approve it; who may: ${who}`,
            hint:
              row.mayApprove.length === 0
                ? 'Nobody may approve this change: list maintainers in .github/catalog-bot.yml (or approvers in an OWNERS file) on the base branch.'
                : `Ask one of ${who} to comment \`/approve\` on this pull request.`,
          }),
      ...(row.file !== undefined ? { file: row.file } : {}),
      ...((row.package ?? row.filesOf) !== undefined ? { package: row.package ?? row.filesOf } : {}),
    });
  }
  for (const p of result.problemDetails) {
    findings.push({
      rule: 'PERM-OWNERS-FILE',
      level: 'warning',
      message: p.message,
      ...(p.file !== undefined ? { file: p.file } : {}),
      ...(p.line !== undefined ? { line: p.line } : {}),
      hint: 'Fix the owners file on the base branch; until then it lists no owners.',
    });
  }

  const n = result.rows.length;
  const missing = result.rows.filter((r) => r.satisfiedBy === null).length;
  const title =
    n === 0
      ? 'Nothing that needs approval'
      : result.satisfied
        ? `Approved: ${n} change${n === 1 ? '' : 's'}`
        : `${missing} of ${n} change${n === 1 ? '' : 's'} need${missing === 1 ? 's' : ''} /approve`;
  const table =
    n === 0
      ? 'This pull request changes no package and no file that needs an approval.'
      : [
          '| package or file | change | who may approve | approved |',
          '|---|---|---|---|',
          ...result.rows.map(
            (r) =>
              `| ${cell(r.what)} | ${r.change} | ${cell(whoCell(r, result.maintainers))} | ${approvedCell(r)} |`,
          ),
        ].join('\n');
  const summary = [
    table,
    ...(result.problems.length > 0
      ? ['', '**Problems with owners files:**', '', ...result.problems.map((p) => `- ${cell(p)}`)]
      : []),
  ].join('\n');
  return {
    name: PERMISSIONS_CHECK,
    conclusion: result.satisfied ? 'success' : 'failure',
    title,
    summary,
    findings,
    annotations: toAnnotations(findings),
  };
}
