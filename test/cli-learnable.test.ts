// The CLI can be learned from the CLI (issue 30, item 7), on a repository laid out like
// community-operators-prod: per-command help, the version, "did you mean", a closed pipe,
// `check` before committing, bad refs, --dry-run and idempotent edits, errors on stderr.
import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, cpSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli.js';
import { makeCopRepo, type CopRepo } from './helpers/cop-repo.js';
import { SHARED_DATA } from './helpers/oracle.js';

const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const REAL_REPO = join(SHARED_DATA, 'real-repo/community-operators-prod');

// One repository for the whole file (making it takes seconds): the editing tests leave it as
// it was (they check so), then `check` adds its uncommitted changes.
let cop: CopRepo;
beforeAll(() => {
  cop = makeCopRepo('clusterpulse/1.0.2');
}, 60_000);
afterAll(() => cop.cleanup());
/** A command line on the file's repository: `args`, then `--repo` with its path. */
const onCop = (...args: string[]): string[] => [...args, '--repo', cop.repo];

/** The dispatcher the command line runs (src/cli.ts main), in this process: fast. */
async function run(args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  const out = new PassThrough();
  const err = new PassThrough();
  const status = await main(args, out, err);
  return { status, stdout: String(out.read() ?? ''), stderr: String(err.read() ?? '') };
}

function cli(args: string[], cwd?: string): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 60_000, cwd });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('help, version and suggestions', () => {
  it("`validate --help` prints validate's usage on stdout and exits 0; `help validate` the same", () => {
    const help = cli(['validate', '--help']);
    expect(help).toMatchObject({ status: 0, stderr: '' });
    expect(help.stdout).toMatch(/validate <root>\.\.\./);
    expect(help.stdout).toContain('--max-file-size');
    // That command's usage, not all of them.
    expect(help.stdout).not.toContain('ocp-promote');
    expect(cli(['help', 'validate'])).toEqual(help);
  });

  it('--version prints the version of package.json', () => {
    const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    expect(cli(['--version'])).toEqual({ status: 0, stdout: `catalog-bot ${version}\n`, stderr: '' });
  });

  it('a mistyped command gets the closest command named, on stderr, exit 2', () => {
    const r = cli(['valdate', 'catalogs']);
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(
      /^catalog-bot: unknown command "valdate" \(did you mean "validate"\?\)[^\n]*\n$/,
    );
  });
});

describe('a closed pipe', () => {
  it('`render ... | head` ends quietly: no EPIPE, no stack trace', async () => {
    const child = spawn(process.execPath, [CLI, 'render', join(REAL_REPO, 'catalogs/v4.21')]);
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += String(c)));
    // Read the first chunk, then close the pipe as `head` does (the render is far larger).
    await new Promise<void>((done) => child.stdout.once('data', () => (child.stdout.destroy(), done())));
    const status = await new Promise<number | null>((done) => child.on('close', done));
    expect(stderr).toBe('');
    expect(status).toBe(0);
  });
});

describe('editing commands: --dry-run, nothing to do, errors on stderr', () => {
  it('ocp-promote --dry-run names the files it would write and writes none', async () => {
    const r = await run(
      onCop('ocp-promote', 'v4.22', 'v4.23', '--package', 'ecr-secret-operator', '--dry-run'),
    );
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('would write catalogs/v4.23/ecr-secret-operator/catalog.yaml');
    expect(r.stdout).toMatch(/dry run: .*nothing written/);
    expect(existsSync(join(cop.repo, 'catalogs/v4.23'))).toBe(false);
    expect(cop.git('status', '--porcelain')).toBe('');
  });

  it('default-channel to the channel already the default: nothing to do, exit 0, nothing written', async () => {
    const text = readFileSync(join(cop.repo, 'catalogs/v4.21/clusterpulse/catalog.yaml'), 'utf8');
    const current = /^defaultChannel: (\S+)$/m.exec(text)![1]!;
    const r = cli(onCop('default-channel', 'clusterpulse', current, '--root', 'catalogs/v4.21'));
    expect(r.status).toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^catalog-bot default-channel: nothing to do: .*already "/);
    expect(cop.git('status', '--porcelain')).toBe('');
  });

  it('a refusal goes to stderr, not into the output a script redirects', async () => {
    const r = await run(onCop('promote', 'no-such-bundle.v9.9.9', 'stable'));
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^catalog-bot promote: refused: [^\n]+\n$/);
  });

  it('promote --format json: the result as JSON', async () => {
    const r = await run(onCop('promote', 'no-such-bundle.v9.9.9', 'stable', '--format', 'json'));
    expect(r.status).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ done: false, written: false, files: [] });
  });
});

describe('crd-diff in the repository', () => {
  it('with no --root reads both bundle directories of the release, exits 0 and lists the CRDs compared', () => {
    cop.branch('crd-diff-release', () => cop.applyRelease());
    try {
      // The built CLI, run in the repository as a person would (no --repo).
      const run = cli(['crd-diff', 'clusterpulse.v1.0.1', 'clusterpulse.v1.0.2'], cop.repo);
      expect(run.stderr).toBe('');
      expect(run.status).toBe(0);
      expect(run.stdout.split('\n')).toEqual([
        'safe: clusterpulse.v1.0.1 -> clusterpulse.v1.0.2: 0 changes OLM refuses, 0 safe; 5 CRDs compared',
        'note: no catalog given (--root), so the upgrade edge is not looked up',
        'manifests from operators/clusterpulse/1.0.1 and operators/clusterpulse/1.0.2',
        // The five CRDs clusterpulse 1.0.1 and 1.0.2 own.
        'CRDs compared: clusterconnections.clusterpulse.io, clusterpulses.charts.clusterpulse.io, metricsources.clusterpulse.io, monitoraccesspolicies.clusterpulse.io, registryconnections.clusterpulse.io',
        '',
      ]);
    } finally {
      cop.reset();
      cop.git('branch', '-q', '-D', 'crd-diff-release');
    }
  });
});

describe('check before committing', () => {
  it('defaults: head is the working tree (untracked files too), base the merge-base with main; the index is left alone', () => {
    // The contributor's branch, one commit ahead of main, plus the bundle directory not yet added
    // to git and a broken catalog file not yet committed.
    cop.branch('wip', () => writeFileSync(join(cop.repo, 'NOTES.md'), 'work in progress\n'), false);
    cpSync(join(REAL_REPO, cop.bundleDir), join(cop.repo, cop.bundleDir), { recursive: true });
    appendFileSync(
      join(cop.repo, 'catalogs/v4.21/clusterpulse/catalog.yaml'),
      '\n---\nschema: olm.bundle\nname: [\n',
    );
    const status = cop.git('status', '--porcelain');
    const index = cop.git('ls-files', '--stage');
    const r = cli(['check', '--format', 'json'], cop.repo);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(1);
    const checks = (
      JSON.parse(r.stdout) as {
        checks: { name: string; conclusion: string; findings: { file: string | null }[] }[];
      }
    ).checks;
    const validate = checks.find((c) => c.name === 'catalog-bot/validate')!;
    expect(validate.conclusion).toBe('failure');
    expect(validate.findings.some((f) => f.file?.includes('catalogs/v4.21/clusterpulse/catalog.yaml'))).toBe(
      true,
    );
    // The untracked bundle directory was seen: the bundle check ran on it.
    expect(JSON.stringify(checks)).toContain(cop.bundleDir);
    // Nothing of the user's changed: the same status, the same index, no new branch.
    expect(cop.git('status', '--porcelain')).toBe(status);
    expect(cop.git('ls-files', '--stage')).toBe(index);
    expect(cop.git('branch', '--format=%(refname:short)').split('\n').sort()).toEqual(['main', 'wip']);
  });

  it("a bad ref is one line, without git's own error text", () => {
    const r = cli(onCop('check', '--base', 'no-such-branch', '--head', 'HEAD'));
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`catalog-bot check: --base no-such-branch: no such commit in ${cop.repo}\n`);
    const option = cli(onCop('check', '--base', '--output=/tmp/x', '--head', 'HEAD'));
    expect(option.status).toBe(2);
    expect(option.stderr).not.toMatch(/fatal|usage: git/);
  });
});
