// `/help`: the commands, from the table.
import { defineCommentCommand, plain } from './command.js';

export const help = defineCommentCommand({
  name: 'help',
  help: {
    line: '`/help` lists these commands',
    rows: [{ usage: '`/help`', who: 'anyone', what: 'lists the commands' }],
  },
  parse: (args, _typed, at) => plain('help', args, at),
  mayUse: async () => undefined,
  act: async (run) => ({ ok: true, say: run.helpText }),
});
