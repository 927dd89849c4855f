// The comment commands, one file each (like Prow's plugins). `/help`, the README's command
// table and the comment parser (../commands.ts) all read this table.
import { allowPrune } from './allow-prune.js';
import { approve } from './approve.js';
import { deprecate } from '../../flows/deprecate/command.js';
import type { CommandName, HelpRow, TableCommand } from './command.js';
import { defaultChannel } from '../../flows/default-channel/command.js';
import { explain } from '../../flows/explain/command.js';
import { help } from './help.js';
import { hold } from './hold.js';
import { lgtm } from './lgtm.js';
import { ocpPromote } from '../../flows/ocp-promote/command.js';
import { onboard } from '../../flows/onboard/command.js';
import { promote } from '../../flows/promote/command.js';
import { remove } from '../../flows/remove/command.js';
import { render } from '../../flows/render/command.js';
import { retest } from './retest.js';
import { undeprecate } from '../../flows/deprecate/undeprecate-command.js';

export type { Command, CommandName, CommandRun, CommandOutcome, TableCommand } from './command.js';

/** In the order `/help` and the README list them. */
export const COMMENT_COMMANDS: readonly TableCommand[] = [
  approve,
  lgtm,
  hold,
  retest,
  promote,
  render,
  allowPrune,
  deprecate,
  undeprecate,
  defaultChannel,
  ocpPromote,
  onboard,
  remove,
  explain,
  help,
];

const byTypedName = new Map<string, TableCommand>(
  COMMENT_COMMANDS.flatMap((c) => [c.name, ...c.aliases].map((n) => [n, c])),
);

/** The command a typed name (lower case) stands for, if any. */
/** The commands that load catalogs before they know the commenter may: one per comment. */
export const COSTLY_COMMANDS = COMMENT_COMMANDS.filter((c) => c.costly).map((c) => `\`/${c.name}\``);

export function commandTyped(name: string): TableCommand | undefined {
  return byTypedName.get(name);
}

/** The table entry of a parsed command. */
export function commandNamed(name: CommandName): TableCommand {
  const command = byTypedName.get(name);
  if (!command) throw new Error(`no command /${name}`);
  return command;
}

/** What `/help` says. */
export function commentHelpText(): string {
  return [
    'catalog-bot commands (one per line, anywhere in a comment):',
    '',
    ...COMMENT_COMMANDS.map((c) => `- ${c.help.line}`),
  ].join('\n');
}

/** The rows of the README's command table. */
export function helpRows(): HelpRow[] {
  return COMMENT_COMMANDS.flatMap((c) => c.help.rows);
}

/** The README's command table, as markdown (prettier pads it). */
export function commandsMarkdown(): string {
  const cell = (s: string) => s.replace(/\|/g, '\\|');
  return [
    '| command | who may | what it does |',
    '| --- | --- | --- |',
    ...helpRows().map((r) => `| ${cell(r.usage)} | ${cell(r.who)} | ${cell(r.what)} |`),
  ].join('\n');
}
