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

/** Wrong arguments: the message is followed by the command's usage; exit 2. */
export class UsageError extends Error {}

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
  /** Shown after a usage error; without it the whole `catalog-bot --help` is shown. */
  usage?: string;
  /** Where its error messages go (the editing commands have always written them to stdout). */
  messages?: 'out' | 'err';
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
  messages: 'out' | 'err';
  /** Parses, checks and runs; throws UsageError, CommandFailure or any error. */
  execute(args: string[], io: CommandIO): Promise<number>;
}

export function defineCommand<const O extends Options>(spec: CommandSpec<O>): Command {
  return {
    usage: spec.usage,
    messages: spec.messages ?? 'err',
    execute: async (args, io) => {
      const parsed = parseArgs({
        args,
        options: spec.options,
        allowPositionals: spec.positionals !== undefined,
        strict: true,
      });
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
