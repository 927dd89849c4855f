// Who owns a path: Prow-style `OWNERS` / `OWNERS_ALIASES` files and per-package owners files
// (OWNERS format, or community-operators `ci.yaml` with `reviewers:`). Pure: files come
// through a reader (the base commit's, so a pull request cannot change the rules that judge it).
//
// Semantics follow Prow's repoowners: the approvers of a file are the union of the
// `approvers` of every OWNERS file from the file's directory up to the repository root,
// stopping after one with `options.no_parent_owners: true`. `reviewers` never approve.
// `filters` (regexp on the path relative to the OWNERS file's directory → approvers) are
// honoured; as in Prow, an OWNERS file with `filters` ignores its top-level lists. Aliases
// come from the root `OWNERS_ALIASES`. Logins are compared case-insensitively, without a
// leading `@`. An entry with a `/` is a GitHub team (`org/team`). Bad YAML or a bad shape
// makes that file list nobody, with a problem reported, never a crash.
import { goYamlSchema, jsYaml } from '../catalog/fbc/yaml11.js';

/** Reads a file at the base commit; undefined when there is no such file. */
export interface FileReader {
  read(path: string): Promise<string | undefined>;
}

export interface OwnersProblem {
  /** Repository path of the owners file. */
  file: string;
  line?: number;
  /** What is wrong, without the file name. */
  message: string;
}

export interface OwnersFilter {
  /** Source text of the regexp, as written. */
  source: string;
  pattern: RegExp;
  approvers: string[];
  reviewers: string[];
}

/** One parsed OWNERS file; lists are normalised logins, aliases not yet resolved. */
export interface OwnersFile {
  approvers: string[];
  reviewers: string[];
  noParentOwners: boolean;
  filters: OwnersFilter[];
}

/** Alias name (lower case) → normalised logins. */
export type OwnersAliases = Map<string, string[]>;

export const OWNERS = 'OWNERS';
export const OWNERS_ALIASES = 'OWNERS_ALIASES';

/** GitHub logins compare case-insensitively; Prow also drops a leading `@`. */
export function normLogin(login: string): string {
  return login.trim().replace(/^@/, '').toLowerCase();
}

export function isTeam(entry: string): boolean {
  return entry.includes('/');
}

const EMPTY_OWNERS: OwnersFile = { approvers: [], reviewers: [], noParentOwners: false, filters: [] };

type Parsed = { ok: true; value: unknown } | { ok: false; problem: OwnersProblem };

function parseYaml(text: string, file: string): Parsed {
  const { load: loadYaml, YAMLException } = jsYaml();
  try {
    return { ok: true, value: loadYaml(text, { schema: goYamlSchema(), filename: file }) };
  } catch (e) {
    const line = e instanceof YAMLException && e.mark ? e.mark.line + 1 : undefined;
    const reason = e instanceof YAMLException ? e.reason : String(e);
    return {
      ok: false,
      problem: {
        file,
        line,
        message: `not valid YAML (${reason}); it is treated as listing no owners`,
      },
    };
  }
}

const isMap = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** A list of logins; numbers are logins too (YAML reads `1234` as a number). */
function loginList(value: unknown, file: string, key: string, problems: OwnersProblem[]): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    problems.push({ file, message: `\`${key}\` must be a list of GitHub logins; it is ignored` });
    return [];
  }
  const out: string[] = [];
  for (const item of value) {
    if (typeof item === 'string' || typeof item === 'number') {
      const login = normLogin(String(item));
      if (login !== '' && !out.includes(login)) out.push(login);
    } else {
      problems.push({ file, message: `an entry of \`${key}\` is not a login; it is ignored` });
    }
  }
  return out;
}

/** Parse an OWNERS file (Prow's simple or filters form). */
export function parseOwners(text: string, file: string): { owners: OwnersFile; problems: OwnersProblem[] } {
  const parsed = parseYaml(text, file);
  if (!parsed.ok) return { owners: EMPTY_OWNERS, problems: [parsed.problem] };
  const doc = parsed.value;
  if (doc === undefined || doc === null) return { owners: EMPTY_OWNERS, problems: [] };
  if (!isMap(doc))
    return {
      owners: EMPTY_OWNERS,
      problems: [{ file, message: `not a YAML mapping; it is treated as listing no owners` }],
    };
  const problems: OwnersProblem[] = [];
  const options = doc['options'];
  let noParentOwners = false;
  if (isMap(options)) {
    const npo = options['no_parent_owners'];
    if (typeof npo === 'boolean') noParentOwners = npo;
    else if (npo !== undefined && npo !== null)
      problems.push({ file, message: `\`options.no_parent_owners\` must be true or false` });
  } else if (options !== undefined && options !== null) {
    problems.push({ file, message: `\`options\` must be a mapping; it is ignored` });
  }

  const filters: OwnersFilter[] = [];
  const rawFilters = doc['filters'];
  if (isMap(rawFilters) && Object.keys(rawFilters).length > 0) {
    for (const [source, entry] of Object.entries(rawFilters)) {
      let pattern: RegExp;
      try {
        pattern = new RegExp(source);
      } catch {
        problems.push({ file, message: `filter \`${source}\` is not a valid regexp; it is ignored` });
        continue;
      }
      const e = isMap(entry) ? entry : {};
      filters.push({
        source,
        pattern,
        approvers: loginList(e['approvers'], file, `filters."${source}".approvers`, problems),
        reviewers: loginList(e['reviewers'], file, `filters."${source}".reviewers`, problems),
      });
    }
    if (doc['approvers'] !== undefined || doc['reviewers'] !== undefined)
      problems.push({
        file,
        message: `has both \`filters\` and top-level \`approvers\`/\`reviewers\`; as in Prow, the top-level lists are ignored (put them under the filter ".*")`,
      });
    return { owners: { approvers: [], reviewers: [], noParentOwners, filters }, problems };
  }
  if (rawFilters !== undefined && rawFilters !== null && !isMap(rawFilters))
    problems.push({ file, message: `\`filters\` must be a mapping; it is ignored` });
  return {
    owners: {
      approvers: loginList(doc['approvers'], file, 'approvers', problems),
      reviewers: loginList(doc['reviewers'], file, 'reviewers', problems),
      noParentOwners,
      filters,
    },
    problems,
  };
}

/** Parse `OWNERS_ALIASES`: `aliases: {name: [logins]}`. */
export function parseOwnersAliases(
  text: string,
  file: string = OWNERS_ALIASES,
): { aliases: OwnersAliases; problems: OwnersProblem[] } {
  const aliases: OwnersAliases = new Map();
  const parsed = parseYaml(text, file);
  if (!parsed.ok) return { aliases, problems: [parsed.problem] };
  const doc = parsed.value;
  if (doc === undefined || doc === null) return { aliases, problems: [] };
  const problems: OwnersProblem[] = [];
  const raw = isMap(doc) ? doc['aliases'] : undefined;
  if (!isMap(raw)) {
    const present = raw !== undefined && raw !== null;
    if (present || !isMap(doc))
      problems.push({ file, message: `expected \`aliases: {name: [logins]}\`; no alias is defined` });
    return { aliases, problems };
  }
  for (const [name, list] of Object.entries(raw))
    aliases.set(normLogin(name), loginList(list, file, `aliases.${name}`, problems));
  return { aliases, problems };
}

/** Replace alias names by their members (Prow: an alias is not expanded recursively). */
export function resolveAliases(entries: string[], aliases: OwnersAliases): string[] {
  const out = new Set<string>();
  for (const e of entries) for (const login of aliases.get(e) ?? [e]) out.add(login);
  return [...out];
}

/**
 * Parse a per-package owners file. An `OWNERS` file (by name, or having `approvers` or
 * `filters`) gives its approvers (and those of a `.*` filter); otherwise the file is read
 * as community-operators `ci.yaml`, whose `reviewers:` may approve.
 */
export function parsePackageOwners(
  text: string,
  file: string,
  aliases: OwnersAliases = new Map(),
): { approvers: string[]; problems: OwnersProblem[] } {
  const parsed = parseYaml(text, file);
  if (!parsed.ok) return { approvers: [], problems: [parsed.problem] };
  const doc = parsed.value;
  if (doc === undefined || doc === null) return { approvers: [], problems: [] };
  if (!isMap(doc))
    return {
      approvers: [],
      problems: [{ file, message: `not a YAML mapping; it is treated as listing no owners` }],
    };
  const base = file.split('/').pop();
  if (base === OWNERS || 'approvers' in doc || 'filters' in doc) {
    const { owners, problems } = parseOwners(text, file);
    const approvers = [
      ...owners.approvers,
      ...owners.filters.filter((f) => f.source === '.*').flatMap((f) => f.approvers),
    ];
    return { approvers: resolveAliases(approvers, aliases), problems };
  }
  const problems: OwnersProblem[] = [];
  return { approvers: loginList(doc['reviewers'], file, 'reviewers', problems), problems };
}

/** Directories from a file's own directory up to the repository root (`''`). */
export function ancestorDirs(path: string): string[] {
  const parts = path.split('/').filter((p) => p !== '' && p !== '.');
  parts.pop(); // the file itself
  const dirs: string[] = [];
  for (let i = parts.length; i >= 0; i--) dirs.push(parts.slice(0, i).join('/'));
  return dirs;
}

const join = (dir: string, name: string): string => (dir === '' ? name : `${dir}/${name}`);

export interface PathOwners {
  /** Normalised logins and `org/team` entries that may approve, aliases resolved. */
  approvers: string[];
  /** The OWNERS files that were applied, nearest first. */
  files: string[];
}

/**
 * Reads and caches OWNERS files from one reader. Problems are collected once per file.
 * A reader that throws is an I/O failure of the caller and propagates.
 */
export class OwnersIndex {
  readonly problems: OwnersProblem[] = [];
  private readonly files = new Map<string, Promise<OwnersFile | undefined>>();
  private readonly packageFiles = new Map<string, Promise<string[] | undefined>>();
  private aliasesPromise: Promise<OwnersAliases> | undefined;

  constructor(private readonly reader: FileReader) {}

  aliases(): Promise<OwnersAliases> {
    this.aliasesPromise ??= this.reader.read(OWNERS_ALIASES).then((text) => {
      if (text === undefined) return new Map();
      const { aliases, problems } = parseOwnersAliases(text, OWNERS_ALIASES);
      this.problems.push(...problems);
      return aliases;
    });
    return this.aliasesPromise;
  }

  /** The OWNERS file at `path`, or undefined when there is none. */
  ownersFile(path: string): Promise<OwnersFile | undefined> {
    let p = this.files.get(path);
    if (!p) {
      p = this.reader.read(path).then((text) => {
        if (text === undefined) return undefined;
        const { owners, problems } = parseOwners(text, path);
        this.problems.push(...problems);
        return owners;
      });
      this.files.set(path, p);
    }
    return p;
  }

  /** Who may approve a change to the file at `path` (a repository path) under OWNERS files. */
  async approversOf(path: string): Promise<PathOwners> {
    const approvers = new Set<string>();
    const files: string[] = [];
    for (const dir of ancestorDirs(path)) {
      const file = join(dir, OWNERS);
      const owners = await this.ownersFile(file);
      if (!owners) continue;
      files.push(file);
      for (const a of owners.approvers) approvers.add(a);
      const relative = dir === '' ? path : path.slice(dir.length + 1);
      for (const f of owners.filters)
        if (f.pattern.test(relative)) for (const a of f.approvers) approvers.add(a);
      if (owners.noParentOwners) break;
    }
    return { approvers: resolveAliases([...approvers], await this.aliases()), files };
  }

  /** A per-package owners file at `path`: its approvers, or undefined when it does not exist. */
  packageOwners(path: string): Promise<string[] | undefined> {
    let p = this.packageFiles.get(path);
    if (!p) {
      p = this.reader.read(path).then(async (text) => {
        if (text === undefined) return undefined;
        const { approvers, problems } = parsePackageOwners(text, path, await this.aliases());
        this.problems.push(...problems);
        return approvers;
      });
      this.packageFiles.set(path, p);
    }
    return p;
  }
}
