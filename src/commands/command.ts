// What a `catalog-bot` command is: its options and argument rules, and what it runs. The
// parsing, the argument checks and the usage errors live here once, for every command
// (docs/architecture.md "Adding a command").
import { stat } from 'node:fs/promises';
import { parseArgs, type ParseArgsConfig } from 'node:util';

export const EXIT_OK = 0;
export const EXIT_FAIL = 1;
export const EXIT_USAGE = 2;

type Options = NonNullable<ParseArgsConfig['options']>;

/** The parsed arguments of a command with these options. */
export type Parsed<O extends Options> = ReturnType<
  typeof parseArgs<{ args: string[]; options: O; allowPositionals: true; strict: true }>
>;

export interface CommandIO {
  out: NodeJS.WritableStream;
  err: NodeJS.WritableStream;
  env: NodeJS.ProcessEnv;
}

/** Wrong arguments: one line naming what is wrong and where the usage is; exit 2. */
export class UsageError extends Error {}

/** The edit is already made: nothing is written, and that is success (exit 0). */
export class NothingToDo extends Error {}

/** Edit distance (Levenshtein): how many one-character edits turn one word into the other. */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++)
      current[j] = Math.min(
        previous[j]! + 1,
        current[j - 1]! + 1,
        previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    previous = current;
  }
  return previous[b.length]!;
}

/** The known word closest to a mistyped one, when it is close enough to be what was meant. */
export function closest(word: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const k of known) {
    const d = editDistance(word, k);
    if (d < bestDistance) [best, bestDistance] = [k, d];
  }
  // A third of the word may be wrong (`valdate`, `--fromat`), never more than three letters.
  return bestDistance <= Math.min(3, Math.max(1, Math.floor(word.length / 3))) ? best : undefined;
}

/** What node's parseArgs says about wrong options, in one line, with a suggestion. */
function usageErrorOf(problem: Error & { code?: string }, options: Options): UsageError {
  const unknown = /^Unknown option '([^']+)'/.exec(problem.message);
  if (unknown) {
    const typed = unknown[1]!;
    const names = Object.entries(options).flatMap(([name, o]) => [
      `--${name}`,
      ...(o.short ? [`-${o.short}`] : []),
    ]);
    const suggestion = closest(typed.split('=')[0]!, [...names, '--help']);
    return new UsageError(`unknown option ${typed}${suggestion ? ` (did you mean ${suggestion}?)` : ''}`);
  }
  const unexpected = /^Unexpected argument '([^']*)'/.exec(problem.message);
  if (unexpected) return new UsageError(`unexpected argument "${unexpected[1]}"`);
  // The rest (a missing option value) are one sentence already; keep only the first line.
  return new UsageError(problem.message.split('\n')[0]!);
}

/** Whether the arguments ask for help (before a `--`, which ends the options). */
export function asksForHelp(args: readonly string[]): boolean {
  const end = args.indexOf('--');
  return (end === -1 ? args : args.slice(0, end)).some((a) => a === '--help' || a === '-h');
}

/** The command cannot go on: the message alone, and this exit code. */
export class CommandFailure extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}

export interface CommandSpec<O extends Options> {
  /** `catalog-bot <command> --help`; without it, the command's entry of `catalog-bot --help`. */
  usage?: string;
  options: O;
  /** How many positional arguments (none allowed when absent), and what to say otherwise. */
  positionals?: { min: number; max?: number; message: string };
  /** The values `--format` may take, when it has one. */
  formats?: readonly string[];
  run(args: Parsed<O>, io: CommandIO): Promise<number> | number;
}

/** A command as the dispatcher sees it. */
export interface Command {
  usage: string | undefined;
  /** Its options, as typed: `--name` (and `-x` for a short form). */
  flags: readonly string[];
  /** Parses, checks and runs; throws UsageError, CommandFailure or any error. */
  execute(args: string[], io: CommandIO): Promise<number>;
}

export function defineCliCommand<const O extends Options>(spec: CommandSpec<O>): Command {
  return {
    usage: spec.usage,
    flags: Object.entries(spec.options).flatMap(([name, o]) => [
      `--${name}`,
      ...(o.short ? [`-${o.short}`] : []),
    ]),
    execute: async (args, io) => {
      let parsed: Parsed<O>;
      try {
        parsed = parseArgs({
          args,
          options: spec.options,
          allowPositionals: spec.positionals !== undefined,
          strict: true,
        });
      } catch (problem) {
        if ((problem as { code?: string }).code?.startsWith('ERR_PARSE_ARGS'))
          throw usageErrorOf(problem as Error, spec.options);
        throw problem;
      }
      const rule = spec.positionals;
      if (rule) {
        const count = parsed.positionals.length;
        if (count < rule.min || count > (rule.max ?? rule.min)) throw new UsageError(rule.message);
      }
      const format = (parsed.values as { format?: unknown }).format;
      if (spec.formats && typeof format === 'string' && !spec.formats.includes(format))
        throw new UsageError(`unknown format "${format}"`);
      return await spec.run(parsed, io);
    },
  };
}

/** Whether the path is a directory; undefined when nothing is there. */
export async function isDirectory(path: string): Promise<boolean | undefined> {
  const info = await stat(path).catch(() => undefined);
  return info?.isDirectory();
}

/** A catalog root or repository the command reads: it must be a directory. */
export async function requireDirectory(root: string): Promise<void> {
  const directory = await isDirectory(root);
  if (directory === undefined) throw new Error(`${root}: no such file or directory`);
  if (!directory) throw new Error(`${JSON.stringify(root)} is not a directory`);
}
