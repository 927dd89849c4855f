// One bare, blobless mirror per repository under a work directory. The app only reads git
// objects from it (runPrChecks); it never checks anything out or runs anything from it.
import { runGit } from './catalog/source.js';
import { existsSync } from 'node:fs';
import { lstat, mkdir, mkdtemp, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface MirrorRequest {
  /** `repository.clone_url` of the payload (a local path or file:// URL in tests). */
  cloneUrl: string;
  /** A stable id for the directory name: `repository.id`. */
  repoId: number | string;
  /** The installation token; sent as `x-access-token` basic auth to http(s) remotes only. */
  token?: string;
  /** Commits and refs to fetch, e.g. the base sha and `refs/pull/7/head`. */
  fetch: string[];
}

export function defaultWorkDir(): string {
  return process.env.CATALOG_BOT_WORKDIR || join(tmpdir(), 'catalog-bot');
}

/** The disk the mirrors may use together (CATALOG_BOT_MIRROR_MAX_BYTES, default 10 GiB). */
export function defaultMirrorBudget(): number {
  const value = Number(process.env.CATALOG_BOT_MIRROR_MAX_BYTES);
  return Number.isFinite(value) && value > 0 ? value : 10 * 1024 ** 3;
}

export function mirrorDir(repoId: number | string, workDir = defaultWorkDir()): string {
  return join(workDir, 'mirrors', `${String(repoId).replace(/[^A-Za-z0-9_-]/g, '_')}.git`);
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
  const dir = mirrorDir(req.repoId, workDir);
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
  }
  const refspecs = req.fetch.map((r) => (r.startsWith('refs/') ? `+${r}:${r}` : r));
  if (refspecs.length > 0) {
    await git(dir, ['fetch', '--quiet', '--no-tags', '--filter=blob:none', 'origin', ...refspecs], auth);
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
  const dir = mirrorDir(req.repoId, workDir);
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

/** Remove one repository's mirror (the app was uninstalled from it). */
export async function removeMirror(repoId: number | string, workDir = defaultWorkDir()): Promise<void> {
  await rm(mirrorDir(repoId, workDir), { recursive: true, force: true });
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
 */
export async function fetchMissingBlobs(dir: string, commits: string[], token?: string): Promise<number> {
  const listing = await git(
    dir,
    ['rev-list', '--objects', '--no-walk', '--missing=print', ...commits],
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
export async function mergeBase(dir: string, a: string, b: string): Promise<string> {
  return (await git(dir, ['merge-base', a, b], undefined)).trim();
}

/**
 * A commit in the mirror with `files` (path -> new text) changed on top of `parent`, made
 * with a private index: nothing is checked out. It exists to run the checks on an edit
 * before that edit goes to GitHub.
 */
export async function commitFiles(
  dir: string,
  parent: string,
  files: { path: string; text: string }[],
  message: string,
): Promise<string> {
  const work = await mkdtemp(join(tmpdir(), 'catalog-bot-index-'));
  const env = { ...process.env, GIT_INDEX_FILE: join(work, 'index') };
  const run = async (args: string[], input?: string) =>
    (await runGit(dir, args, input, { env })).toString('utf8').trim();
  try {
    await run(['read-tree', parent]);
    for (const f of files) {
      const blob = await run(['hash-object', '-w', '--stdin'], f.text);
      await run(['update-index', '--add', '--cacheinfo', `100644,${blob},${f.path}`]);
    }
    const tree = await run(['write-tree']);
    return await run([
      '-c',
      'user.name=catalog-bot',
      '-c',
      'user.email=catalog-bot@users.noreply.github.com',
      'commit-tree',
      tree,
      '-p',
      parent,
      '-m',
      message,
    ]);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

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
