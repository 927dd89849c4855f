#!/usr/bin/env node
// The catalog-bot command: the same checks as the GitHub App, on local files, no GitHub.
// A thin dispatcher: it finds the command in the table (src/commands/index.ts), loads that
// command's module only now, runs it, and prints usage errors the same way for every command.
import { readFileSync, realpathSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import {
  asksForHelp,
  closest,
  CommandFailure,
  EXIT_OK,
  EXIT_USAGE,
  NothingToDo,
  UsageError,
} from './commands/command.js';
import { CLI_COMMANDS, cliHelpText } from './commands/index.js';

export async function main(
  argv: string[],
  out: NodeJS.WritableStream = process.stdout,
  err: NodeJS.WritableStream = process.stderr,
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  const [name, ...args] = argv;
  if (name === '--version' || name === '-V' || name === 'version') {
    out.write(`catalog-bot ${packageVersion()}\n`);
    return EXIT_OK;
  }
  // `help <command>` is `<command> --help`.
  if (name === 'help' && args.length > 0) return main([args[0]!, '--help', ...args.slice(1)], out, err, env);
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
    (name === undefined ? err : out).write(cliHelpText());
    return name === undefined ? EXIT_USAGE : EXIT_OK;
  }
  const entry = CLI_COMMANDS.find((c) => c.name === name);
  if (!entry) {
    const known = [...CLI_COMMANDS.map((c) => c.name), 'help'];
    const suggestion = name.startsWith('-') ? closest(name, ['--help', '--version']) : closest(name, known);
    err.write(
      `catalog-bot: unknown ${name.startsWith('-') ? 'option' : 'command'} "${name}"` +
        `${suggestion ? ` (did you mean "${suggestion}"?)` : ''}; catalog-bot --help lists the commands\n`,
    );
    return EXIT_USAGE;
  }
  const { command } = await entry.load();
  const prefix = `catalog-bot ${name}`;
  if (asksForHelp(args)) {
    out.write(command.usage ?? `Usage: catalog-bot <command> [options]\n\n${entry.help}`);
    return EXIT_OK;
  }
  // Errors go to stderr, one line each: stdout carries only the command's data (docs/design.md
  // "CLI contract"), so `catalog-bot x > file` never writes an error into the file.
  try {
    return await command.execute(args, { out, err, env });
  } catch (problem) {
    const message = (problem as Error).message.split('\n')[0];
    if (problem instanceof NothingToDo) {
      err.write(`${prefix}: nothing to do: ${message}\n`);
      return EXIT_OK;
    }
    if (problem instanceof CommandFailure) {
      err.write(`${prefix}: ${message}\n`);
      return problem.exitCode;
    }
    const usage = problem instanceof UsageError;
    err.write(`${prefix}: ${message}${usage ? ` (usage: catalog-bot ${name} --help)` : ''}\n`);
    return EXIT_USAGE;
  }
}

/** The version of this package, from its package.json (one directory above src/ and dist/). */
function packageVersion(): string {
  const text = readFileSync(fileURLToPath(new URL('../package.json', import.meta.url)), 'utf8');
  return (JSON.parse(text) as { version: string }).version;
}

function invokedAsCommand(): boolean {
  try {
    return process.argv[1] !== undefined && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url);
  } catch {
    return false;
  }
}

/**
 * A reader that stops early (`catalog-bot render ... | head`) closes the pipe: the rest of the
 * output is not wanted, so the command ends quietly, as Unix tools do, instead of throwing EPIPE.
 */
function endQuietlyOnClosedPipe(): void {
  for (const stream of [process.stdout, process.stderr])
    stream.on('error', (problem: NodeJS.ErrnoException) => {
      if (problem.code !== 'EPIPE') throw problem;
      process.exit(process.exitCode ?? EXIT_OK);
    });
}

async function runAsCommand(argv: string[]): Promise<void> {
  endQuietlyOnClosedPipe();
  // `validate` loads files on a second thread too: started before the command's code is
  // loaded, the thread gets ready while this one loads (README, "Benchmarks").
  const validate = argv[0] === 'validate';
  if (validate) {
    const [threads, compiler] = await Promise.all([
      import('./catalog/fbc/fast/load-threads.js'),
      import('./catalog/fbc/fast/short-run.js'),
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
    process.stderr.write(`catalog-bot: ${(err as Error).message ?? String(err)}\n`);
    process.exitCode = EXIT_USAGE;
  });
}
