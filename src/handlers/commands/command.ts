// What a comment command is (like Prow's plugins, one file per command): how its line is
// read, who may use it, what it does, and its help. The table of them is ./index.ts; the
// comment is read by ../commands.ts and run by ../issue-comment.ts.
import type { PullRequest } from '../../github/types.js';
import {
  observeHead,
  wasHeadWhenWritten,
  type RecordedAllowPrune,
  type RecordedApproval,
  type RecordedHold,
  type SeenHead,
  type StatusComment,
} from '../pr-state.js';
import type { EditTarget } from '../../flows/catalog-edit/flow.js';
import type { PullTarget } from '../session.js';
import type { DeprecationKind } from '../../catalog/edits/deprecate.js';
import type { JobContext, PrHandlerOptions } from '../pull-request.js';

/** Where a command was written: its line in the comment and the line's text. */
export interface At {
  line: number;
  text: string;
}

type Cancelable<N extends string> = { name: N; cancel: boolean } & At;
type Plain<N extends string> = { name: N } & At;

/** A parsed command (plain JSON: it travels in the queued job). */
export type Command =
  | (Cancelable<'approve'> & { sha?: string })
  | Cancelable<'lgtm'>
  | Cancelable<'hold'>
  | Plain<'retest'>
  | Plain<'render'>
  | Plain<'help'>
  | ({ name: 'promote'; bundle: string; channel: string; root?: string } & At)
  | ({ name: 'allow-prune'; target: string } & At)
  | ({ name: 'deprecate' | 'undeprecate'; kind: DeprecationKind; target: string; message?: string } & At)
  | ({ name: 'ocp-promote'; from: string; to: string } & At)
  | ({ name: 'default-channel'; package: string; channel: string } & At)
  | ({ name: 'explain'; bundle: string; from?: string; root?: string; impact?: true } & At)
  | ({ name: 'onboard'; package: string } & At)
  | ({ name: 'remove'; package: string; bundle?: string } & At);

export type CommandName = Command['name'];
export type CommandOf<N extends CommandName> = Extract<Command, { name: N }>;

/** One row of the README's command table. */
export interface HelpRow {
  usage: string;
  who: string;
  what: string;
}

export interface CommandHelp {
  /** The line `/help` prints. */
  line: string;
  /** Its rows in the README's table. */
  rows: HelpRow[];
}

type Pull = PullRequest;

/** May the commenter approve everything the pull request touches (the permissions decision, with them as author)? */
export interface ApprovalDecision {
  may: boolean;
  /**
   * Do they own part of it: a changed package or file, or one owner set of a package that
   * several must agree to (docs/security.md)? Their `/approve` then counts for that part.
   */
  ownsPart: boolean;
  /** Permission row -> content digest the approval is for: every row, or the part they own. */
  subjects: Record<string, string>;
  why: string;
}

/** One comment's commands being run: what they read, and the state they change. */
export interface CommandRun {
  context: JobContext;
  options: PrHandlerOptions;
  /** The comment's job (the whole of it: ../issue-comment.ts CommentJob). */
  job: PullTarget & { commentId: number; writtenAt?: string };
  pr: Pull;
  author: string;
  commenter: string;
  labels: string[];
  /** The bot's status comment (absent when the App's slug is unknown: nothing can be recorded). */
  status?: StatusComment;
  approvals: RecordedApproval[];
  /** Recorded `/allow-prune`s (saved with the approvals). */
  allowPrunes: RecordedAllowPrune[];
  seenHead?: SeenHead;
  /** Who holds the pull request, when it was not its author. */
  hold?: RecordedHold;
  /** Run the checks again once the commands are done. */
  recheck: boolean;
  /** Write access to the repository (asked once). */
  hasWrite(): Promise<boolean>;
  /** The permissions decision with the commenter as author (decided once). */
  ownsAll(): Promise<ApprovalDecision>;
  /** The pull request and who asked, for commands that edit files. */
  target: EditTarget;
  helpText: string;
}

/** A comment's commands on an issue (not a pull request): the few commands that work there. */
export type IssueCommandRun = Pick<CommandRun, 'context' | 'options' | 'commenter' | 'target'>;

export interface CommandOutcome {
  ok: boolean;
  /** A line for the reply: why it was refused, or what it produced. */
  say?: string;
}

export interface CommentCommand<N extends CommandName> {
  name: N;
  /** Other names it is typed as (`/unhold`). */
  aliases?: string[];
  /**
   * It opens a session and loads catalogs before it knows whether the commenter may have
   * what they ask: one such command per comment (a comment may hold 20).
   */
  costly?: boolean;
  help: CommandHelp;
  /** The command from its arguments, or why they are wrong. `typed` is the name as written. */
  parse(args: string[], typed: string, at: At): CommandOf<N> | { problem: string };
  /** Undefined when the commenter may use it; otherwise the refusal. */
  mayUse(run: CommandRun, command: CommandOf<N>): Promise<string | undefined>;
  act(run: CommandRun, command: CommandOf<N>): Promise<CommandOutcome>;
  /** What it does when written on an issue; commands without it do nothing there. */
  onIssue?(run: IssueCommandRun, command: CommandOf<N>): Promise<CommandOutcome>;
}

/** A command of the table, its own type closed over. */
export interface TableCommand {
  name: CommandName;
  aliases: string[];
  costly: boolean;
  help: CommandHelp;
  parse(args: string[], typed: string, at: At): Command | { problem: string };
  mayUse(run: CommandRun, command: Command): Promise<string | undefined>;
  act(run: CommandRun, command: Command): Promise<CommandOutcome>;
  onIssue?(run: IssueCommandRun, command: Command): Promise<CommandOutcome>;
}

export function defineCommentCommand<N extends CommandName>(def: CommentCommand<N>): TableCommand {
  const mine = (command: Command): command is CommandOf<N> => command.name === def.name;
  const other = (command: Command) => new Error(`/${command.name} is not /${def.name}`);
  return {
    name: def.name,
    aliases: def.aliases ?? [],
    costly: def.costly ?? false,
    help: def.help,
    parse: (args, typed, at) => def.parse(args, typed, at),
    mayUse: async (run, command) => {
      if (!mine(command)) throw other(command);
      return def.mayUse(run, command);
    },
    act: async (run, command) => {
      if (!mine(command)) throw other(command);
      return def.act(run, command);
    },
    ...(def.onIssue
      ? {
          onIssue: async (run: IssueCommandRun, command: Command) => {
            if (!mine(command)) throw other(command);
            return def.onIssue!(run, command);
          },
        }
      : {}),
  };
}

/** `/name` or `/name cancel`. */
export function cancelable<N extends 'approve' | 'lgtm' | 'hold'>(
  name: N,
  args: string[],
  at: At,
): Cancelable<N> | { problem: string } {
  if (args.length === 0) return { name, cancel: false, ...at };
  if (args.length === 1 && args[0]!.toLowerCase() === 'cancel') return { name, cancel: true, ...at };
  return { problem: `\`/${name}\` takes no argument other than \`cancel\`` };
}

/** `/name` with no argument. */
export function plain<N extends 'retest' | 'render' | 'help'>(
  name: N,
  args: string[],
  at: At,
): Plain<N> | { problem: string } {
  return args.length === 0 ? { name, ...at } : { problem: `\`/${name}\` takes no argument` };
}

/** The author, someone with write access, or an owner of everything the pull request touches. */
export async function authorWriterOrOwner(run: CommandRun): Promise<boolean> {
  return run.commenter === run.author || (await run.hasWrite()) || (await run.ownsAll()).may;
}

/**
 * Was the head now the one the commenter saw when writing (docs/security.md)? An approval
 * or an allow is for that head, not whatever was pushed before the job ran; `forMs`: it had
 * been the head at least that long. When it cannot tell, it looks at the head now, so that
 * a comment written after the reply can count.
 */
export async function sawHeadNow(run: CommandRun, forMs = 0): Promise<boolean> {
  const { context, job, pr } = run;
  const { github } = context;
  if (await wasHeadWhenWritten(github, job.ref, job.number, run.seenHead, pr.head.sha, job.writtenAt, forMs))
    return true;
  run.seenHead = await observeHead(context.github, job.ref, job.number, run.seenHead);
  return false;
}
