// The README's command table and `/help` come from the table of comment commands
// (src/handlers/commands/): a command added, renamed or reworded there shows here.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  COMMENT_COMMANDS,
  commandsMarkdown,
  helpRows,
  commentHelpText,
} from '../src/handlers/commands/index.js';
import { parseComment } from '../src/handlers/commands.js';

/** The rows of the first table after `heading`, cells trimmed (prettier pads them). */
function readmeTable(heading: string): string[][] {
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
  const lines = readme.slice(readme.indexOf(heading)).split('\n');
  const start = lines.findIndex((l) => l.startsWith('|'));
  const rows: string[][] = [];
  for (const line of lines.slice(start)) {
    if (!line.startsWith('|')) break;
    rows.push(
      line
        .slice(1, -1)
        .split(/(?<!\\)\|/)
        .map((c) => c.trim().replace(/\\\|/g, '|')),
    );
  }
  return rows.filter((r) => !r.every((c) => /^-+$/.test(c))); // no separator row
}

describe('comment command table', () => {
  it('is the README table', () => {
    const [header, ...rows] = readmeTable('## Comment commands and auto-merge');
    expect(header).toEqual(['command', 'who may', 'what it does']);
    // On a mismatch: paste commandsMarkdown() into README.md and run prettier on it.
    expect(rows, commandsMarkdown()).toEqual(helpRows().map((r) => [r.usage, r.who, r.what]));
  });

  it('gives /help one line per command, in the table order', () => {
    const lines = commentHelpText()
      .split('\n')
      .filter((l) => l.startsWith('- '));
    expect(lines).toEqual(COMMENT_COMMANDS.map((c) => `- ${c.help.line}`));
    expect(lines.map((l) => /`\/([a-z-]+)/.exec(l)?.[1])).toEqual(COMMENT_COMMANDS.map((c) => c.name));
  });

  it('reads every command and alias the table names, and only those', () => {
    for (const c of COMMENT_COMMANDS)
      for (const typed of [c.name, ...c.aliases]) {
        const args =
          {
            promote: ' foo.v1.0.0 stable',
            'default-channel': ' foo stable',
            'ocp-promote': ' v4.21 v4.22',
            explain: ' foo.v1.0.0',
            'allow-prune': ' foo.v1.0.0',
            deprecate: ' bundle foo.v1.0.0',
            undeprecate: ' bundle foo.v1.0.0',
            onboard: ' foo',
            remove: ' foo/1.0.0',
          }[c.name as string] ?? '';
        expect(parseComment(`/${typed}${args}`).commands.map((p) => p.name)).toEqual([c.name]);
      }
    expect(parseComment('/merge').problems.map((p) => p.reason)).toEqual([
      '`/merge` is not a catalog-bot command',
    ]);
  });
});
