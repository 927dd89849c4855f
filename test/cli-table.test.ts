// The CLI's command table (src/commands/index.ts): the help is written from it, every command
// in it runs through the one dispatcher, and a command loads only what it needs.
import { readFileSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DEFAULT_MAX_FILE_SIZE } from '../src/catalog/index.js';
import { main } from '../src/cli.js';
import { CLI_COMMANDS, cliHelpText } from '../src/commands/index.js';

const src = fileURLToPath(new URL('../src/', import.meta.url));

/** Every source file a module loads when it is loaded (type-only and `import()` load nothing yet). */
function loadedBy(file: string, seen = new Set<string>()): Set<string> {
  if (seen.has(file)) return seen;
  seen.add(file);
  const text = readFileSync(file, 'utf8');
  const specifiers = [
    ...text.matchAll(/^import\s+(?!type\s)[^;]*?from\s+'(\.[^']+)'/gms),
    ...text.matchAll(/^export\s+(?!type\s)[^;]*?from\s+'(\.[^']+)'/gms),
  ].map((m) => m[1]!);
  for (const spec of specifiers) {
    const target = join(dirname(file), spec).replace(/\.js$/, '.ts');
    if (existsSync(target)) loadedBy(target, seen);
  }
  return seen;
}

describe('the command table', () => {
  it('writes the help: every command once, with the loader default it documents', () => {
    const help = cliHelpText();
    for (const c of CLI_COMMANDS) expect(help).toContain(`\n  ${c.name} `);
    expect(new Set(CLI_COMMANDS.map((c) => c.name)).size).toBe(CLI_COMMANDS.length);
    expect(help).toContain(`(default: ${DEFAULT_MAX_FILE_SIZE})`);
  });

  it('runs every command through the dispatcher: a wrong option is a usage error, exit 2', async () => {
    for (const c of CLI_COMMANDS) {
      const out = new PassThrough();
      const err = new PassThrough();
      const code = await main([c.name, '--no-such-option'], out, err);
      expect(code, c.name).toBe(2);
      expect(out.read(), c.name).toBeNull();
      expect(String(err.read()), c.name).toMatch(/^catalog-bot [\w-]+: unknown option --no-such-option/);
    }
  });

  it('validate loads neither the App, the queues, the registry client nor the template engine', () => {
    const loaded = [...loadedBy(join(src, 'cli.ts'))].map((f) => f.slice(src.length));
    // The dispatcher itself loads only the table and the command plumbing.
    expect(loaded.sort()).toEqual(['cli.ts', 'commands/command.ts', 'commands/index.ts']);
    const validate = [...loadedBy(join(src, 'commands/validate.ts'))].map((f) => f.slice(src.length));
    expect(validate).toContain('catalog/index.ts');
    for (const f of validate)
      expect(f, f).not.toMatch(
        /^(app|server|queue|redis-queue|jobs)\.ts$|^handlers\/|^publish\/|templates\//,
      );
  });
});
