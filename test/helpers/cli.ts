// One `catalog-bot` command as a function, run through the CLI's dispatcher (src/cli.ts)
// exactly as `catalog-bot <name> ...args` runs it; and a shell where `catalog-bot` is the
// built CLI, for running a printed command (a fix hint) exactly as a person would.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { main } from '../../src/cli.js';

/** The arguments of `check` (or `impact`) for the change from `base` to `head` in `repo`, answered as `format`. */
export const changeArgs = (repo: string, base: string, head: string, format = 'json'): string[] => [
  '--repo',
  repo,
  '--base',
  base,
  '--head',
  head,
  '--format',
  format,
];

export function cliCommand(
  name: string,
): (
  args: string[],
  out: NodeJS.WritableStream,
  err?: NodeJS.WritableStream,
  env?: NodeJS.ProcessEnv,
) => Promise<number> {
  return (args, out, err, env) => main([name, ...args], out, err, env);
}

/** A stream to hand a command as its stdout or stderr, and the text written to it so far. */
export function captureStream(): { stream: Writable; text: () => string } {
  let text = '';
  const stream = new Writable({
    write(chunk, _enc, done) {
      text += String(chunk);
      done();
    },
  });
  return { stream, text: () => text };
}

/** `catalog-bot ...argv` in this process: its exit code, stdout, stderr, and both in the order written. */
async function captureCli(
  argv: string[],
  env?: NodeJS.ProcessEnv,
): Promise<{ code: number; out: string; err: string; output: string }> {
  const out = new PassThrough();
  const err = new PassThrough();
  const o: Buffer[] = [];
  const e: Buffer[] = [];
  const both: Buffer[] = [];
  out.on('data', (b: Buffer) => (o.push(b), both.push(b)));
  err.on('data', (b: Buffer) => (e.push(b), both.push(b)));
  const code = await main(argv, out, err, env);
  const text = (chunks: Buffer[]) => Buffer.concat(chunks).toString('utf8');
  return { code, out: text(o), err: text(e), output: text(both) };
}

/** Runs `catalog-bot ...argv` (argv starts with the command's name): its exit code, stdout and stderr. */
export async function runCli(
  argv: string[],
  env?: NodeJS.ProcessEnv,
): Promise<{ code: number; out: string; err: string }> {
  const { code, out, err } = await captureCli(argv, env);
  return { code, out, err };
}

/** Runs one command and returns its exit code and what it wrote to stdout and stderr. */
export function runCommand(
  name: string,
  args: string[],
  env?: NodeJS.ProcessEnv,
): Promise<{ code: number; out: string; err: string }> {
  return runCli([name, ...args], env);
}

/**
 * Runs one command as a terminal shows it: data goes to stdout and messages to stderr, so
 * `output` is both in the order written (what a person reads) and `stdout` the data alone.
 */
export async function runCommandOutput(
  name: string,
  args: string[],
): Promise<{ code: number; output: string; stdout: string }> {
  const { code, out, output } = await captureCli([name, ...args]);
  return { code, output, stdout: out };
}

const cliJs = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));
// One wrapper for every test file, at a fixed place of the checkout: nothing left in /tmp.
const binDir = fileURLToPath(new URL('../../node_modules/.cache/catalog-bot-tests/bin', import.meta.url));

/**
 * A shell in `cwd` where `catalog-bot` is the built CLI (dist/cli.js), without network when
 * `unshare` allows it: a printed command runs as a person pasting it would run it.
 */
export function catalogBotShell(cwd: string): (command: string) => {
  status: number | null;
  stdout: string;
  stderr: string;
} {
  if (!existsSync(cliJs)) throw new Error('dist/cli.js is missing: run npm run build first');
  const wrapper = join(binDir, 'catalog-bot');
  const script = `#!/bin/sh\nexec "${process.execPath}" "${cliJs}" "$@"\n`;
  if (!existsSync(wrapper) || readFileSync(wrapper, 'utf8') !== script) {
    mkdirSync(binDir, { recursive: true });
    const partial = `${wrapper}.${process.pid}`; // renamed into place: test files run side by side
    writeFileSync(partial, script, { mode: 0o755 });
    renameSync(partial, wrapper);
  }
  const offline = spawnSync('unshare', ['-rn', 'true']).status === 0;
  const env = { ...process.env, PATH: `${binDir}:${process.env.PATH}` };
  return (command) => {
    const r = offline
      ? spawnSync('unshare', ['-rn', 'sh', '-c', command], { cwd, env, encoding: 'utf8' })
      : spawnSync('sh', ['-c', command], { cwd, env, encoding: 'utf8' });
    return { status: r.status, stdout: r.stdout, stderr: r.stderr };
  };
}
