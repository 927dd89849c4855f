// Hostile pull requests: each gets a clear failing check naming the file, never a crash,
// and memory stays bounded. The checks run as the App runs them (two commits of a git
// repository, read from git objects), in a child process with a small heap: running out
// of memory would kill it instead of failing the check.
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const cliJs = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const exampleBase = fileURLToPath(new URL('../examples/catalog-repo/base/', import.meta.url));
const ROOT = 'catalogs/v4.21';
const HEAP_MB = 192;

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true, maxRetries: 5 })));

type Content = string | Buffer | { symlink: string };

/** A repository whose `main` is the example catalog repo and whose `pr` adds `files`. */
function repoWith(files: Record<string, Content>): string {
  const dir = mkdtempSync(join(tmpdir(), 'catalog-bot-hostile-'));
  dirs.push(dir);
  const git = (...args: string[]) =>
    // gc.auto=0: a commit of 50,000 files would start a background gc that outlives the test.
    execFileSync(
      'git',
      ['-C', dir, '-c', 'user.name=T', '-c', 'user.email=t@example.com', '-c', 'gc.auto=0', ...args],
      {
        encoding: 'utf8',
        maxBuffer: 64 * 1024 * 1024,
      },
    );
  git('init', '-q', '-b', 'main');
  cpSync(exampleBase, dir, { recursive: true });
  git('add', '-A');
  git('commit', '-qm', 'base');
  git('checkout', '-q', '-b', 'pr');
  for (const [path, content] of Object.entries(files)) {
    const full = join(dir, path);
    mkdirSync(dirname(full), { recursive: true });
    if (typeof content === 'object' && !Buffer.isBuffer(content)) symlinkSync(content.symlink, full);
    else writeFileSync(full, content);
  }
  git('add', '-A');
  git('commit', '-qm', 'hostile');
  return dir;
}

interface Finding {
  level: string;
  rule: string;
  message: string;
  file?: string;
  line?: number;
}

function check(repo: string): {
  code: number;
  checks: { name: string; conclusion: string; findings: Finding[] }[];
  ms: number;
} {
  const started = performance.now();
  const res = spawnSync(
    process.execPath,
    [
      `--max-old-space-size=${HEAP_MB}`,
      cliJs,
      'check',
      '--repo',
      repo,
      '--base',
      'main',
      '--head',
      'pr',
      '--format',
      'json',
    ],
    { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 },
  );
  const ms = performance.now() - started;
  if (res.status !== 0 && res.status !== 1)
    throw new Error(`exit ${res.status} ${res.signal ?? ''}: ${res.stderr.slice(0, 2000)}`);
  return { code: res.status, ...(JSON.parse(res.stdout) as { checks: never[] }), ms };
}

const validate = (r: ReturnType<typeof check>) => r.checks.find((c) => c.name === 'catalog-bot/validate')!;

describe('hostile pull requests', () => {
  it('a YAML alias bomb fails validation at its file and line', () => {
    const bomb = ['a: &a ["x","x","x","x","x","x","x","x","x"]'];
    for (let i = 1; i < 12; i++) {
      const prev = String.fromCharCode(96 + i);
      const name = String.fromCharCode(97 + i);
      bomb.push(
        `${name}: &${name} [*${prev},*${prev},*${prev},*${prev},*${prev},*${prev},*${prev},*${prev},*${prev}]`,
      );
    }
    const r = check(
      repoWith({
        [`${ROOT}/bomb/catalog.yaml`]: 'schema: olm.package\nname: bomb\n' + bomb.join('\n') + '\n',
      }),
    );
    expect(r.code).toBe(1);
    const f = validate(r).findings.find((x) => x.file === `${ROOT}/bomb/catalog.yaml` && x.level === 'error');
    expect(f).toBeDefined();
    expect(f!.line).toBeGreaterThan(0);
    expect(f!.message).toMatch(/alias/i);
  });

  it('a 200 MB file is refused by size without being read', () => {
    const big = Buffer.alloc(200 * 1024 * 1024, 0x20);
    const r = check(repoWith({ [`${ROOT}/big/catalog.json`]: big }));
    expect(r.code).toBe(1);
    const f = validate(r).findings.find((x) => x.file === `${ROOT}/big/catalog.json`);
    expect(f?.message).toMatch(/file is 209715200 bytes, over the/);
  });

  it('10,000-deep nesting fails with the file, in JSON and YAML', () => {
    const deepJson =
      '{"schema":"olm.package","name":"deep","x":' + '['.repeat(10_000) + ']'.repeat(10_000) + '}';
    const deepYaml = 'schema: olm.package\nname: deepy\nx: ' + '['.repeat(10_000) + ']'.repeat(10_000) + '\n';
    const r = check(
      repoWith({ [`${ROOT}/deep/catalog.json`]: deepJson, [`${ROOT}/deepy/catalog.yaml`]: deepYaml }),
    );
    expect(r.code).toBe(1);
    const files = validate(r).findings.map((f) => f.file);
    expect(files).toContain(`${ROOT}/deep/catalog.json`);
    expect(files).toContain(`${ROOT}/deepy/catalog.yaml`);
  });

  it('a symlink out of the repository is not followed, and says so', () => {
    const r = check(repoWith({ [`${ROOT}/link/catalog.yaml`]: { symlink: '/etc/passwd' } }));
    expect(r.code).toBe(1);
    const f = validate(r).findings.find((x) => x.file === `${ROOT}/link/catalog.yaml`);
    expect(f?.message).toMatch(/symlink/i);
    expect(JSON.stringify(r.checks)).not.toContain('root:x:0:0');
  });

  it('odd path names (dots, spaces, unicode, leading dashes) are only names', () => {
    const blob = (name: string) => `{"schema":"olm.package","name":"${name}"}`;
    const r = check(
      repoWith({
        [`${ROOT}/..foo/catalog.json`]: blob('dots'),
        [`${ROOT}/-rf/catalog.json`]: blob('dash'),
        [`${ROOT}/sp ace/ü.json`]: blob('space'),
      }),
    );
    // Three packages without channels: invalid, and every finding points into the PR's files.
    expect(r.code).toBe(1);
    const files = new Set(validate(r).findings.map((f) => f.file));
    for (const f of [`${ROOT}/..foo/catalog.json`, `${ROOT}/-rf/catalog.json`, `${ROOT}/sp ace/ü.json`])
      expect(files).toContain(f);
  });

  it('invalid UTF-8 fails at its file', () => {
    const r = check(
      repoWith({ [`${ROOT}/bad/catalog.json`]: Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]) }),
    );
    expect(r.code).toBe(1);
    expect(validate(r).findings.some((f) => f.file === `${ROOT}/bad/catalog.json`)).toBe(true);
  });

  it('50,000 changed files are checked in bounded time and memory', () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 50_000; i++) files[`docs/page-${Math.floor(i / 1000)}/${i}.md`] = `${i}\n`;
    const repo = repoWith(files);
    const r = check(repo);
    // The docs are not catalog files: validation and graph have nothing new to say.
    expect(r.code).toBe(0);
    expect(validate(r).conclusion).toBe('success');
    expect(r.ms).toBeLessThan(60_000); // a hang guard, not a benchmark
  }, 120_000);
});
