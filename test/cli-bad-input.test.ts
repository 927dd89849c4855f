// Bad input, for every command of the CLI's table (src/commands/index.ts): a missing path, a
// path of the wrong kind (a file for a directory, a directory for a file), a binary file and
// an unknown flag each get exactly one line on stderr, nothing on stdout, no stack trace, and
// exit 2 (usage or I/O error: docs/design.md "CLI contract"). The table names where each
// command reads a path, so a command added to it is covered here without a new test.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli.js';
import { CLI_COMMANDS } from '../src/commands/index.js';

const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), 'cli-bad-input-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const missing = join(scratch, 'no-such-path');
const textFile = join(scratch, 'notes.txt');
writeFileSync(textFile, 'just some text\n');
const directory = join(scratch, 'a-directory');
mkdirSync(directory);
// The first bytes of a gzip stream: NUL bytes and bytes that are not UTF-8.
const binaryFile = join(scratch, 'catalog.tar.gz');
writeFileSync(
  binaryFile,
  Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0xfe, 0x00]),
);

/** The real command line, as a process (slow on a busy machine: used for a few cases). */
function spawnCli(args: string[]): { status: number | null; stdout: string; stderr: string } {
  // cwd is the scratch directory: nothing of this repository is read by accident.
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd: scratch, encoding: 'utf8', timeout: 20_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The dispatcher the command line runs (src/cli.ts main), in this process. */
async function run(args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  const out = new PassThrough();
  const err = new PassThrough();
  const status = await main(args, out, err, {});
  return { status, stdout: String(out.read() ?? ''), stderr: String(err.read() ?? '') };
}

/** The command's path arguments with `path` where the table says it reads one. */
function withPath(args: readonly string[], path: string): string[] {
  return args.map((a) => (a === 'DIR' || a === 'FILE' ? path : a));
}

interface Case {
  command: string;
  input: string;
  args: string[];
}

const cases: Case[] = CLI_COMMANDS.flatMap((c): Case[] => {
  const reads = c.readsPath;
  const unknownFlag = {
    command: c.name,
    input: 'an unknown flag',
    args: [
      c.name,
      ...withPath(reads ?? [], c.readsPath?.includes('FILE') ? textFile : directory),
      '--no-such-flag',
    ],
  };
  if (reads === null) return [unknownFlag];
  const wrongKind = reads.includes('FILE') ? directory : textFile;
  return [
    { command: c.name, input: 'a missing path', args: [c.name, ...withPath(reads, missing)] },
    { command: c.name, input: 'a path of the wrong kind', args: [c.name, ...withPath(reads, wrongKind)] },
    { command: c.name, input: 'a binary file', args: [c.name, ...withPath(reads, binaryFile)] },
    unknownFlag,
  ];
});

describe('every command given bad input', () => {
  it('covers every command of the table', () => {
    expect(new Set(cases.map((c) => c.command))).toEqual(new Set(CLI_COMMANDS.map((c) => c.name)));
    expect(cases.length).toBeGreaterThan(CLI_COMMANDS.length * 3);
  });

  it.each(cases)('$command, $input: one line on stderr, nothing on stdout, exit 2', async ({ args }) => {
    const r = await run(args);
    expect(r.stdout, args.join(' ')).toBe('');
    expect(r.stderr, args.join(' ')).toMatch(new RegExp(`^catalog-bot ${args[0]}: [^\\n]+\\n$`));
    expect(r.stderr).not.toMatch(/\n\s+at |ERR_|Error:/);
    expect(r.status, `${args.join(' ')}\n${r.stderr}`).toBe(2);
  });

  it('as a process too: no stack trace, the same line and exit code', () => {
    for (const c of cases.filter((x) => x.command === 'validate' || x.command === 'render-template')) {
      const r = spawnCli(c.args);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(new RegExp(`^catalog-bot ${c.args[0]}: [^\\n]+\\n$`));
      expect(r.status, r.stderr).toBe(2);
    }
  });

  it('names the wrong flag and the closest right one', async () => {
    const r = await run(['validate', directory, '--fromat', 'json']);
    expect(r.stderr).toBe(
      `catalog-bot validate: unknown option --fromat (did you mean --format?) (usage: catalog-bot validate --help)\n`,
    );
  });
});
