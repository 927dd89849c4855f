// One bare, blobless mirror per repository under a work directory. The app only reads git
// objects from it (runPrChecks); it never checks anything out or runs anything from it.
import { runGit } from './catalog/source.js';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rename, rm } from 'node:fs/promises';
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
  const dir = join(workDir, 'mirrors', `${String(req.repoId).replace(/[^A-Za-z0-9_-]/g, '_')}.git`);
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
  return dir;
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
