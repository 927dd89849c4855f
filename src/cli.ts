#!/usr/bin/env node
// The catalog-bot command: the same checks as the GitHub App, on local files, no GitHub.
// A thin dispatcher: it finds the command in the table (src/commands/index.ts), loads that
// command's module only now, runs it, and prints usage errors the same way for every command.
import { realpathSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { CommandFailure, EXIT_OK, EXIT_USAGE, UsageError } from './commands/command.js';
import { COMMANDS, helpText } from './commands/index.js';

export async function main(
  argv: string[],
  out: NodeJS.WritableStream = process.stdout,
  err: NodeJS.WritableStream = process.stderr,
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  const [name, ...args] = argv;
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
    out.write(helpText());
    return name === undefined ? EXIT_USAGE : EXIT_OK;
  }
  const entry = COMMANDS.find((c) => c.name === name);
  if (!entry) {
    err.write(`catalog-bot: unknown command "${name}"\n\n${helpText()}`);
    return EXIT_USAGE;
  }
  const { command } = await entry.load();
  // Commands with their own usage text name themselves in their messages.
  const prefix = command.usage === undefined ? 'catalog-bot' : `catalog-bot ${name}`;
  const messages = command.messages === 'out' ? out : err;
  try {
    return await command.execute(args, { out, err, env });
  } catch (problem) {
    const message = (problem as Error).message;
    if (problem instanceof CommandFailure) {
      messages.write(`${prefix}: ${message}\n`);
      return problem.exitCode;
    }
    const usage =
      problem instanceof UsageError || (problem as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
    messages.write(`${prefix}: ${message}\n${usage ? `\n${command.usage ?? helpText()}` : ''}`);
    return EXIT_USAGE;
  }
}

function invokedAsCommand(): boolean {
  try {
    return process.argv[1] !== undefined && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url);
  } catch {
    return false;
  }
}

async function runAsCommand(argv: string[]): Promise<void> {
  // `validate` loads files on a second thread too: started before the command's code is
  // loaded, the thread gets ready while this one loads (README, "Benchmarks").
  const validate = argv[0] === 'validate';
  if (validate) {
    const [threads, compiler] = await Promise.all([
      import('./catalog/fbc/load-threads.js'),
      import('./catalog/fbc/short-run.js'),
    ]);
    if (availableParallelism() > 1) threads.startLoadHelperEarly();
    // A short run: the optimizing compiler is off until the catalog proves large (only here,
    // in a process of its own, never where main() runs inside another program).
    compiler.holdOptimizingCompiler();
  }
  process.exitCode = await main(argv);
  if (validate) {
    // Nothing is left to do once the report is written; exiting now spares tearing down the
    // loading thread and a heap the size of the catalog (tens of milliseconds).
    await Promise.all([process.stdout, process.stderr].map((s) => new Promise((done) => s.write('', done))));
    process.exit();
  }
}

if (invokedAsCommand()) {
  runAsCommand(process.argv.slice(2)).catch((err: unknown) => {
    process.stderr.write(`catalog-bot: ${(err as Error).stack ?? String(err)}\n`);
    process.exitCode = EXIT_USAGE;
  });
}
