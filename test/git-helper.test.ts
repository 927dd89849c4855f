// Git through the helper process (src/git/helper.ts): the bytes, exit codes and errors a
// caller sees are git's own, whatever the size or the number of runs at once; a helper that
// dies fails its runs clearly and the next run starts another; the helper goes away with the
// thread that started it, and its socket is this user's alone.
import { mkdtempSync, rmSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { helper, startGit } from '../src/git/helper.js';
import { gitRecords, readBlobs, runGit } from '../src/git/run.js';
import { git } from './helpers/git.js';

let repo: string;
let bigBlob: string;
let big: Buffer;

beforeAll(() => {
  repo = mkdtempSync(join(tmpdir(), 'git-helper-'));
  git(repo, 'init', '-q', '-b', 'main');
  // 24 MiB of every byte value: more than any pipe or socket buffer holds at once.
  big = Buffer.alloc(24 * 1024 * 1024);
  for (let i = 0; i < big.length; i++) big[i] = (i * 7919) & 0xff;
  writeFileSync(join(repo, 'big.bin'), big);
  for (let i = 0; i < 300; i++) writeFileSync(join(repo, `f${i}.txt`), `file ${i}\n`);
  git(repo, 'add', '-A');
  git(repo, 'commit', '-qm', 'base');
  bigBlob = git(repo, 'rev-parse', 'HEAD:big.bin');
});
afterAll(() => rmSync(repo, { recursive: true, force: true }));

describe('git through the helper', () => {
  it('gives back git stdout byte for byte, large or small, and feeds its stdin', async () => {
    const blob = await runGit(repo, ['cat-file', 'blob', bigBlob]);
    expect(blob.equals(big)).toBe(true);
    const hashed = await runGit(repo, ['hash-object', '--stdin'], big);
    const direct = spawnSync('git', ['-C', repo, 'hash-object', '--stdin'], { input: big, encoding: 'utf8' });
    expect(hashed.toString('utf8')).toBe(direct.stdout);
    const blobs = await readBlobs(repo, [{ object: bigBlob, size: big.length }], 1024);
    expect(blobs.get(bigBlob)?.equals(big)).toBe(true);
    // The run went through this thread's helper, which listens on its socket.
    const { socket, pid } = await helper();
    expect(existsSync(socket)).toBe(true);
    expect(pid).not.toBe(process.pid);
  });

  it('streams records one at a time and answers many runs at once, each its own', async () => {
    const names: string[] = [];
    await gitRecords(repo, ['ls-tree', '-r', '-z', '--name-only', 'HEAD'], (r) =>
      names.push(r.toString('utf8')),
    );
    expect(names).toHaveLength(301);
    const ids = await Promise.all(
      Array.from({ length: 60 }, (_, i) => runGit(repo, ['rev-parse', `HEAD:f${i}.txt`])),
    );
    expect(ids.map((b) => b.toString('utf8').trim())).toEqual(
      Array.from({ length: 60 }, (_, i) => git(repo, 'rev-parse', `HEAD:f${i}.txt`)),
    );
  });

  it("fails with git's message and exit, hides secrets, and says when git cannot start", async () => {
    await expect(
      runGit(repo, ['rev-parse', '--verify', 'no-such-s3cret'], undefined, { secrets: ['s3cret'] }),
    ).rejects.toThrow(/^git rev-parse failed: fatal: Needed a single revision$/);
    await expect(
      runGit(repo, ['cat-file', '-p', 'tok-s3cret'], undefined, { secrets: ['s3cret'] }),
    ).rejects.toThrow(/tok-\*\*\*/);
    await expect(runGit(repo, ['status'], undefined, { env: { PATH: '/nonexistent' } })).rejects.toThrow(
      /ENOENT/,
    );
  });

  it('stops git when a record handler throws, and the error is the handler’s', async () => {
    let seen = 0;
    await expect(
      gitRecords(repo, ['ls-tree', '-r', '-z', 'HEAD'], () => {
        if (++seen === 3) throw new Error('enough');
      }),
    ).rejects.toThrow('enough');
    expect(seen).toBe(3);
  });

  it('fails the runs of a helper that dies, clearly, and the next run starts a new one', async () => {
    await runGit(repo, ['rev-parse', 'HEAD']);
    const first = await helper();
    // A cat-file that waits for input keeps a run open while the helper is killed.
    const open = startGit(['-C', repo, 'cat-file', '--batch'], { stdin: true });
    const ended = new Promise<string>((resolve) => {
      open.on('error', (e) => resolve(e.message));
      open.on('close', (code) => resolve(`closed ${code}`));
    });
    open.stdin?.write(`${bigBlob}\n`);
    await new Promise<void>((resolve) => open.stdout.on('data', () => resolve()));
    process.kill(first.pid, 'SIGKILL');
    // A clean close or a reset, as the kill finds the socket: either way, the same words.
    expect(await ended).toMatch(/^the git helper stopped during a run( \(read ECONNRESET\))?$/);
    // Runs started while it is dying may fail too; once it is gone, a new one serves.
    await expect.poll(() => running(first.pid), { timeout: 10_000 }).toBe(false);
    const next = await runGit(repo, ['rev-parse', 'HEAD']);
    expect(next.toString('utf8').trim()).toBe(git(repo, 'rev-parse', 'HEAD'));
    const second = await helper();
    expect(second.pid).not.toBe(first.pid);
    expect(existsSync(dirname(first.socket))).toBe(false); // the starter cleans up after a killed helper
  });

  it('a run stopped while its connection is being made never reaches git', async () => {
    await helper();
    const run = startGit(['-C', repo, 'update-ref', 'refs/heads/stopped', 'HEAD']);
    const closed = new Promise<number | null>((resolve) => run.on('close', resolve));
    await null; // the run is connecting now, not yet connected
    run.kill();
    expect(await closed).toBeNull();
    await runGit(repo, ['rev-parse', 'HEAD']); // a later run is answered: the helper had time to act
    expect(
      spawnSync('git', ['-C', repo, 'rev-parse', '--verify', '--quiet', 'refs/heads/stopped']).status,
    ).not.toBe(0);
  });

  it('starts a run on a new helper when the old one no longer answers (nothing was asked of it yet)', async () => {
    const old = await helper();
    rmSync(old.socket); // the old helper still runs, but nothing reaches it
    try {
      const out = await runGit(repo, ['rev-parse', 'HEAD']);
      expect(out.toString('utf8').trim()).toBe(git(repo, 'rev-parse', 'HEAD'));
      expect((await helper()).pid).not.toBe(old.pid);
    } finally {
      stop(old.pid);
    }
  });

  it('keeps its socket in a directory only this user may enter, gone when its thread ends', async () => {
    const worker = new Worker(
      `require('node:module').register(${JSON.stringify(new URL('../src/checks/worker-ts-hooks.mjs', import.meta.url).href)});` +
        `import(${JSON.stringify(new URL('../src/git/run.ts', import.meta.url).href)}).then(async (run) => {` +
        `  await run.runGit(${JSON.stringify(repo)}, ['rev-parse', 'HEAD']);` +
        `  require('node:worker_threads').parentPort.postMessage((await (await import(${JSON.stringify(new URL('../src/git/helper.ts', import.meta.url).href)})).helper()).socket);` +
        `});`,
      { eval: true },
    );
    const socket = await new Promise<string>((resolve, reject) =>
      worker.once('message', resolve).once('error', reject),
    );
    expect(statSync(dirname(socket)).mode & 0o777).toBe(0o700);
    expect(socket).not.toBe((await helper()).socket); // a thread has its own helper
    await worker.terminate();
    await expect.poll(() => existsSync(dirname(socket)), { timeout: 10_000 }).toBe(false);
  });
});

/** Ends a helper left running by a test, if it still runs. */
function stop(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

/** Whether process `pid` still exists (a helper not yet reaped by this process counts). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
