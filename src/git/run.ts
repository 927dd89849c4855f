// The one place git runs as a process (docs/architecture.md, "src/git/"): with arguments,
// never a shell; its output whole, as NUL-terminated records, or as blobs in batches. Runs
// that wait start git through the helper process (helper.ts); the CLI's few waiting runs
// start it here.
import { createRequire } from 'node:module';
import { startGit } from './helper.js';

// node:child_process is loaded only when git is run: it costs `catalog-bot validate`,
// which reads directories only, a noticeable part of its start-up (README, "Benchmarks").
const require = createRequire(import.meta.url);
const childProcess = (): typeof import('node:child_process') =>
  require('node:child_process') as typeof import('node:child_process');

export interface GitOptions {
  /** The environment (default: this process's). */
  env?: NodeJS.ProcessEnv;
  /** Text to replace by *** in error messages (tokens). */
  secrets?: string[];
}

/** Run git with arguments (never a shell) and return its stdout; `repo` undefined runs it in the current directory. */
export function runGit(
  repo: string | undefined,
  args: string[],
  input?: Buffer | string,
  options: GitOptions = {},
): Promise<Buffer> {
  const scrub = (text: string): string =>
    (options.secrets ?? []).reduce((t, secret) => t.split(secret).join('***'), text);
  return new Promise((resolvePromise, reject) => {
    const child = startGit(repo === undefined ? args : ['-C', repo, ...args], {
      env: options.env ?? process.env,
      stdin: input !== undefined,
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => err.push(d));
    child.on('error', (e) => reject(new Error(scrub(e.message))));
    child.on('close', (code) => {
      if (code === 0) resolvePromise(Buffer.concat(out));
      else reject(new Error(scrub(`git ${args[0]} failed: ${Buffer.concat(err).toString('utf8').trim()}`)));
    });
    // git may exit before reading all its input; its exit code tells.
    child.stdin?.end(input);
  });
}

/**
 * Run git and hand its stdout to `onRecord` one NUL-terminated record at a time, holding only
 * the record being assembled (not the whole output); `onRecord` copies what it keeps.
 */
export function gitRecords(repo: string, args: string[], onRecord: (record: Buffer) => void): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    const child = startGit(['-C', repo, ...args]);
    let parts: Buffer[] = [];
    const err: Buffer[] = [];
    let failed: unknown;
    child.stdout.on('data', (d: Buffer) => {
      if (failed !== undefined) return;
      try {
        let at = 0;
        for (let end = d.indexOf(0); end !== -1; end = d.indexOf(0, at)) {
          const piece = d.subarray(at, end);
          onRecord(parts.length > 0 ? Buffer.concat([...parts, piece]) : piece);
          parts = [];
          at = end + 1;
        }
        if (at < d.length) parts.push(d.subarray(at));
      } catch (e) {
        failed = e;
        child.kill();
      }
    });
    child.stderr.on('data', (d: Buffer) => err.push(d));
    child.on('error', reject);
    child.on('close', (code) => {
      if (failed !== undefined) return reject(failed as Error);
      if (code !== 0)
        return reject(new Error(`git ${args[0]} failed: ${Buffer.concat(err).toString('utf8').trim()}`));
      try {
        if (parts.length > 0) onRecord(Buffer.concat(parts));
        resolvePromise();
      } catch (e) {
        reject(e as Error);
      }
    });
  });
}

/**
 * Read blobs through `git cat-file --batch`, one run per batch of at most `batchBytes` (by
 * the sizes the tree gave), so no read concatenates more than that or one blob.
 */
export async function readBlobs(
  repo: string,
  objects: readonly { object: string; size: number }[],
  batchBytes: number,
): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  const unique = [...new Map(objects.map((o) => [o.object, o.size])).entries()];
  for (let i = 0; i < unique.length;) {
    const batch: string[] = [];
    let bytes = 0;
    while (i < unique.length && (batch.length === 0 || bytes + (unique[i]?.[1] ?? 0) <= batchBytes)) {
      const [object, size] = unique[i++] as [string, number];
      batch.push(object);
      bytes += size;
    }
    const data = await runGit(repo, ['cat-file', '--batch'], batch.join('\n') + '\n');
    let pos = 0;
    for (const object of batch) {
      const nl = data.indexOf(0x0a, pos);
      const header = data.subarray(pos, nl).toString('utf8');
      const [, type, size] = header.split(' ');
      if (type === undefined || size === undefined) throw new Error(`git cat-file: ${header}`);
      const n = Number(size);
      out.set(object, data.subarray(nl + 1, nl + 1 + n));
      pos = nl + 1 + n + 1;
    }
  }
  return out;
}

/**
 * Run git in `repo` and wait (the CLI, which reads the user's working tree): its stdout
 * trimmed, or undefined when git fails; its stderr is never printed.
 */
export function runGitSync(
  repo: string,
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  const run = childProcess().spawnSync('git', ['-C', repo, ...args], {
    env,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  return run.status === 0 ? run.stdout.trim() : undefined;
}
