// One bare, blobless mirror per repository under a work directory. The app only reads git
// objects from it (runPrChecks); it never checks anything out or runs anything from it.
// A mirror follows the repository, not its name (docs/security.md): it is keyed by the
// host and the repository id, and fetches from the payload's current `clone_url`.
import { KeptAnswers } from './kept.js';
import { runGit } from './run.js';
import { existsSync } from 'node:fs';
import { lstat, mkdir, mkdtemp, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface MirrorRequest {
  /** `repository.clone_url` of the payload (a local path or file:// URL in tests). */
  cloneUrl: string;
  /** `repository.id`: with the host of `cloneUrl`, what names the mirror (a rename keeps it). */
  repoId: number | string;
  /** The installation token; sent as `x-access-token` basic auth to http(s) remotes only. */
  token?: string;
  /** Commits and refs to fetch, e.g. the base sha and `refs/pull/7/head`. */
  fetch: string[];
}

export function defaultWorkDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.CATALOG_BOT_WORKDIR || join(tmpdir(), 'catalog-bot');
}

/** The disk the mirrors may use together (CATALOG_BOT_MIRROR_MAX_BYTES, default 10 GiB). */
export function defaultMirrorBudget(): number {
  const value = Number(process.env.CATALOG_BOT_MIRROR_MAX_BYTES);
  return Number.isFinite(value) && value > 0 ? value : 10 * 1024 ** 3;
}

/**
 * The mirror of a repository: named by the host of its clone URL and its id, never by its
 * name, which a rename or transfer changes (and someone else may then take).
 */
export function mirrorDir(
  repo: Pick<MirrorRequest, 'cloneUrl' | 'repoId'>,
  workDir = defaultWorkDir(),
): string {
  const safe = (s: string) => s.replace(/[^A-Za-z0-9_.-]/g, '_');
  return join(workDir, 'mirrors', `${safe(hostOf(repo.cloneUrl))}-${safe(String(repo.repoId))}.git`);
}

/** The host (with port) of a clone URL; `local` for a path (tests, file:// URLs). */
function hostOf(url: string): string {
  const scheme = /^[a-z][a-z0-9+.-]*:\/\/([^/]*)/i.exec(url);
  const host = scheme?.[1]?.replace(/^.*@/, '').toLowerCase();
  return host || 'local';
}

/** Whether a clone URL is a remote that needs the installation token. */
function isHttp(url: string): boolean {
  return /^https?:\/\//i.test(url);
}

/**
 * Make sure the mirror of a repository exists and has the given commits and refs; returns
 * the path of the bare repository. Callers must not run two of these for one repository
 * at once (the queue runs one job per repository at a time).
 */
export async function ensureMirror(req: MirrorRequest, workDir = defaultWorkDir()): Promise<string> {
  const dir = mirrorDir(req, workDir);
  const auth = isHttp(req.cloneUrl) && req.token ? req.token : undefined;
  if (!existsSync(join(dir, 'HEAD'))) {
    await mkdir(join(workDir, 'mirrors'), { recursive: true });
    // Clone next to the target and rename, so a half-finished clone is never used.
    const tmp = await mkdtemp(join(workDir, 'mirrors', '.clone-'));
    try {
      await git(
        undefined,
        ['clone', '--quiet', '--mirror', '--filter=blob:none', '--', req.cloneUrl, tmp],
        auth,
      );
      await rm(dir, { recursive: true, force: true });
      await rename(tmp, dir);
    } catch (error) {
      await rm(tmp, { recursive: true, force: true });
      throw error;
    }
  } else if ((await git(dir, ['config', '--get', 'remote.origin.url'], undefined)).trim() !== req.cloneUrl) {
    // Renamed or transferred: fetch (and lazily fetch) from where the repository is now.
    await git(dir, ['remote', 'set-url', 'origin', req.cloneUrl], undefined);
  }
  const refspecs = req.fetch.map((r) => (r.startsWith('refs/') ? `+${r}:${r}` : r));
  if (refspecs.length > 0) {
    await git(dir, ['fetch', '--quiet', '--no-tags', '--filter=blob:none', 'origin', ...refspecs], auth);
    // Every blob a job may read of these commits (and their merge bases) comes now, with the
    // token: git's lazy fetch during the checks has none, and fails on a private repository.
    const commits = await Promise.all(req.fetch.map((r) => revParse(dir, r).catch(() => '')));
    await fetchMissingBlobs(dir, commits.filter(Boolean), req.token);
  }
  // Git ignores unknown files in a bare repository: this one dates the last use for pruning.
  await writeFile(join(dir, LAST_USED), new Date().toISOString() + '\n');
  return dir;
}

const LAST_USED = 'catalog-bot-last-used';
/** Mirrors a job is using right now; pruning never removes these. */
const inUse = new Map<string, number>();

/**
 * Run `work` on the repository's mirror, then keep all mirrors within the disk budget by
 * removing the least recently used ones (never one in use). A removed mirror is cloned
 * again the next time it is needed, so pruning only costs time.
 */
export async function withMirror<T>(
  req: MirrorRequest,
  work: (dir: string) => Promise<T>,
  options: { workDir?: string; maxBytes?: number } = {},
): Promise<T> {
  const workDir = options.workDir ?? defaultWorkDir();
  const dir = mirrorDir(req, workDir);
  inUse.set(dir, (inUse.get(dir) ?? 0) + 1);
  try {
    return await work(await ensureMirror(req, workDir));
  } finally {
    const left = (inUse.get(dir) ?? 1) - 1;
    if (left > 0) inUse.set(dir, left);
    else inUse.delete(dir);
    // The mirror just used stays: it is the one most likely needed next.
    await pruneMirrors(workDir, options.maxBytes ?? defaultMirrorBudget(), [dir]).catch(() => undefined);
  }
}

/** Remove mirrors, least recently used first, until they fit in `maxBytes`; returns the removed paths. */
export async function pruneMirrors(
  workDir: string,
  maxBytes: number,
  keep: string[] = [],
): Promise<string[]> {
  const root = join(workDir, 'mirrors');
  let names: string[];
  try {
    names = (await readdir(root)).filter((n) => n.endsWith('.git'));
  } catch {
    return [];
  }
  const mirrors = await Promise.all(
    names.map(async (name) => {
      const dir = join(root, name);
      const used = await stat(join(dir, LAST_USED)).then(
        (s) => s.mtimeMs,
        () => 0,
      );
      return { dir, used, bytes: await diskUsage(dir) };
    }),
  );
  let total = mirrors.reduce((sum, m) => sum + m.bytes, 0);
  const removed: string[] = [];
  for (const mirror of mirrors.sort((a, b) => a.used - b.used)) {
    if (total <= maxBytes) break;
    if (inUse.has(mirror.dir) || keep.includes(mirror.dir)) continue;
    await rm(mirror.dir, { recursive: true, force: true });
    total -= mirror.bytes;
    removed.push(mirror.dir);
  }
  return removed;
}

/**
 * Remove one repository's mirrors (the app was uninstalled from it): the payload names it
 * by id only, so every host's mirror of that id goes (at worst one is cloned again), and
 * the `<id>.git` of older versions too.
 */
export async function removeMirror(repoId: number | string, workDir = defaultWorkDir()): Promise<void> {
  const root = join(workDir, 'mirrors');
  const id = String(repoId).replace(/[^A-Za-z0-9_.-]/g, '_');
  const names = await readdir(root).catch(() => [] as string[]);
  for (const name of names)
    if (name === `${id}.git` || name.endsWith(`-${id}.git`))
      await rm(join(root, name), { recursive: true, force: true });
}

async function diskUsage(path: string): Promise<number> {
  const info = await lstat(path).catch(() => undefined);
  if (!info) return 0;
  if (!info.isDirectory()) return info.size;
  const entries = await readdir(path).catch(() => [] as string[]);
  let sum = 0;
  for (const entry of entries) sum += await diskUsage(join(path, entry));
  return sum;
}

/**
 * Download the blobs of the given commits' trees that the blobless mirror lacks, in one
 * fetch with the token (git's lazy fetch during the checks would have no credentials).
 * The merge bases of the commits count too: a pull request behind its base is measured
 * from its merge base, and `git merge-tree` reads it (docs/security.md).
 */
export async function fetchMissingBlobs(dir: string, commits: string[], token?: string): Promise<number> {
  const all = new Set(commits);
  for (const [i, a] of commits.entries())
    for (const b of commits.slice(i + 1)) {
      // No common history: nothing to add.
      const base = await mergeBase(dir, a, b).catch(() => '');
      if (base) all.add(base);
    }
  const listing = await git(
    dir,
    ['rev-list', '--objects', '--no-walk', '--missing=print', ...all],
    undefined,
  );
  const missing = listing
    .split('\n')
    .filter((l) => l.startsWith('?'))
    .map((l) => l.slice(1).trim());
  if (missing.length === 0) return 0;
  const remote = (await git(dir, ['config', '--get', 'remote.origin.url'], undefined)).trim();
  await git(
    dir,
    [
      'fetch',
      '--quiet',
      '--no-tags',
      '--no-write-fetch-head',
      '--recurse-submodules=no',
      '--stdin',
      'origin',
    ],
    isHttp(remote) ? token : undefined,
    missing.join('\n') + '\n',
  );
  return missing.length;
}

/** The best common ancestor of two commits: where a pull request's change is measured from. */
export function mergeBase(dir: string, a: string, b: string): Promise<string> {
  const ask = async () => (await git(dir, ['merge-base', a, b], undefined)).trim();
  // Two commits named by id have the same merge base for good: each job asks it several times.
  return mergeBases.ask(dir, [a, b], ask);
}

const mergeBases = new KeptAnswers<string>(10_000, () => 1);

/** Resolve `ref` to a commit sha in the mirror. */
export async function revParse(dir: string, ref: string): Promise<string> {
  return (await git(dir, ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`], undefined)).trim();
}

/**
 * Run git without a shell. The token goes in through GIT_CONFIG_* environment variables
 * (the same as `-c http.extraheader=...`, but not visible in the process list); it is
 * never written to a config file and is scrubbed from error messages.
 */
async function git(
  cwd: string | undefined,
  args: string[],
  token: string | undefined,
  input?: string,
): Promise<string> {
  const env: NodeJS.ProcessEnv = { ...process.env, GIT_TERMINAL_PROMPT: '0', GIT_ASKPASS: 'true' };
  const secrets: string[] = [];
  if (token !== undefined) {
    const basic = Buffer.from(`x-access-token:${token}`).toString('base64');
    env.GIT_CONFIG_COUNT = '1';
    env.GIT_CONFIG_KEY_0 = 'http.extraheader';
    env.GIT_CONFIG_VALUE_0 = `AUTHORIZATION: basic ${basic}`;
    secrets.push(token, basic);
  }
  return (await runGit(cwd, args, input, { env, secrets })).toString('utf8');
}
