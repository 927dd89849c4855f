// Each replica's own work directory (docs/replicas.md, "Work directories"): replicas that
// share a host or a volume and are given the same CATALOG_BOT_WORKDIR each take a slot of
// it, `replica-<n>`, so one never prunes, re-clones or renames a mirror another is using.
// A slot is held by a lock file naming its owner and touched while it lives; a slot whose
// owner died (same host, no such process) or went silent (another host) is taken over, so
// a restarted replica finds its mirrors again and the slots stay few.
import { hostname } from 'node:os';
import { join } from 'node:path';
import { mkdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';

const LOCK = 'catalog-bot-replica.lock';
/** More replicas than this on one work directory is a configuration error. */
const MAX_SLOTS = 64;

export interface WorkDirSlot {
  /** The directory this replica works in. */
  dir: string;
  /** Let the slot go (shutdown). */
  release(): Promise<void>;
}

export interface ClaimOptions {
  host?: string;
  pid?: number;
  /** A lock not touched for this long, from another host, is stale (default 2 minutes). */
  staleMs?: number;
  /** How often the lock is touched (default a quarter of staleMs). */
  touchMs?: number;
  /** Whether a process of this host is alive (default: signal 0). */
  alive?: (pid: number) => boolean;
}

export async function claimWorkDir(base: string, options: ClaimOptions = {}): Promise<WorkDirSlot> {
  const host = options.host ?? hostname();
  const pid = options.pid ?? process.pid;
  const staleMs = options.staleMs ?? 120_000;
  const alive = options.alive ?? processAlive;
  const owner = JSON.stringify({ host, pid });
  for (let n = 0; n < MAX_SLOTS; n++) {
    const dir = join(base, `replica-${n}`);
    const lock = join(dir, LOCK);
    await mkdir(dir, { recursive: true });
    if (!(await takeLock(lock, owner))) {
      if (!(await stale(lock, { host, staleMs, alive }))) continue;
      // Two replicas may find the same stale lock: the exclusive create decides.
      await rm(lock, { force: true });
      if (!(await takeLock(lock, owner))) continue;
    }
    const touch = setInterval(
      () => void utimes(lock, new Date(), new Date()).catch(() => undefined),
      options.touchMs ?? staleMs / 4,
    );
    touch.unref();
    return {
      dir,
      release: async () => {
        clearInterval(touch);
        // Only our own lock: a slot taken over while we were silent is no longer ours.
        if ((await readFile(lock, 'utf8').catch(() => '')) === owner) await rm(lock, { force: true });
      },
    };
  }
  throw new Error(
    `${base}: ${MAX_SLOTS} replicas already work here; give replicas work directories of their own (CATALOG_BOT_WORKDIR)`,
  );
}

async function takeLock(lock: string, owner: string): Promise<boolean> {
  try {
    await writeFile(lock, owner, { flag: 'wx' });
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

/** A lock whose owner is gone: a dead process of this host, or silent for staleMs. */
async function stale(
  lock: string,
  { host, staleMs, alive }: { host: string; staleMs: number; alive: (pid: number) => boolean },
): Promise<boolean> {
  let held: { host?: unknown; pid?: unknown };
  try {
    held = JSON.parse(await readFile(lock, 'utf8')) as typeof held;
  } catch {
    // Unreadable, or half written by a replica that died creating it: judged by its age.
    held = {};
  }
  if (held.host === host && typeof held.pid === 'number') return !alive(held.pid);
  const touched = await stat(lock).then(
    (s) => s.mtimeMs,
    () => 0,
  );
  return Date.now() - touched > staleMs;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: alive, someone else's.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
