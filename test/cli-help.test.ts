// The README's command table and the commands agree: every command of the table answers
// `--help` (exit 0, its usage on stdout), every flag the README names is an option of the
// command and in its usage, the exit codes the README gives are the ones its usage gives, and
// the README lists every command of the CLI's table (src/commands/index.ts).
import { readFileSync } from 'node:fs';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { main } from '../src/cli.js';
import { CLI_COMMANDS } from '../src/commands/index.js';

interface Row {
  name: string;
  synopsis: string;
  exit: string;
}

/** The rows of the README's "Command line" table that name a command. */
function readmeRows(): Row[] {
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
  const section = readme.slice(
    readme.indexOf('\n## Command line'),
    readme.indexOf('\n## ', readme.indexOf('\n## Command line') + 1),
  );
  const rows: Row[] = [];
  for (const line of section.split('\n')) {
    if (!line.startsWith('| `catalog-bot ')) continue;
    const cells = line
      .slice(1, -1)
      .split(/(?<!\\)\|/)
      .map((c) => c.trim().replace(/\\\|/g, '|'));
    const name = /^`catalog-bot ([\w-]+)/.exec(cells[0]!)![1]!;
    rows.push({ name, synopsis: cells[0]!, exit: cells[2]! });
  }
  return rows;
}

async function run(args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  const out = new PassThrough();
  const err = new PassThrough();
  const status = await main(args, out, err);
  return { status, stdout: String(out.read() ?? ''), stderr: String(err.read() ?? '') };
}

/**
 * The exit codes a text names: the codes 0, 1 and 2 in each clause that starts with "exit",
 * up to the end of its sentence or of the bracket it is in.
 */
function exitCodes(text: string): string[] {
  const codes = new Set<string>();
  const flat = text.replace(/\s+/g, ' ');
  for (const m of flat.matchAll(/\bexit\b/gi)) {
    let depth = 0;
    let clause = '';
    for (const ch of flat.slice(m.index + 4)) {
      if (ch === '(') depth++;
      if (ch === ')' && depth-- === 0) break;
      if (ch === '.' && depth === 0) break;
      clause += ch;
    }
    for (const d of clause.matchAll(/(?:^|[\s,(])([0-2])\b/g)) codes.add(d[1]!);
  }
  return [...codes].sort();
}

const rows = readmeRows().filter((r) => r.name !== 'help');

describe('the README command table and the commands', () => {
  it('lists every command of the CLI, and only those', () => {
    expect(rows.map((r) => r.name).sort()).toEqual(CLI_COMMANDS.map((c) => c.name).sort());
  });

  it.each(rows)('$name --help: exit 0, usage on stdout; README flags and exit codes agree', async (row) => {
    const help = await run([row.name, '--help']);
    expect(help.status).toBe(0);
    expect(help.stderr).toBe('');
    expect(help.stdout).toContain(row.name);
    const entry = CLI_COMMANDS.find((c) => c.name === row.name)!;
    const { command } = await entry.load();
    for (const flag of row.synopsis.match(/(?<![\w-])--?[a-z][\w-]*/g) ?? []) {
      expect(command.flags, `${row.name}: README names ${flag}`).toContain(flag);
      expect(help.stdout, `${row.name} --help names ${flag}`).toContain(flag);
    }
    expect(exitCodes(`exit ${row.exit}`), `${row.name}: README "${row.exit}"`).toEqual(
      exitCodes(help.stdout),
    );
  });

  it('help <command> is <command> --help', async () => {
    for (const row of rows) expect(await run(['help', row.name])).toEqual(await run([row.name, '--help']));
  });
});
