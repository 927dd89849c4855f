// catalog-bot check on a real git repository: the example pull request and a fixed one.
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { runPrChecks } from '../src/checks/pr.js';
import { main } from '../src/cli.js';
import { git } from './helpers/git.js';

const example = fileURLToPath(new URL('../examples/catalog-repo/', import.meta.url));
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** A repository whose `main` is the example base and whose `pr` is `head` (edited by `edit`). */
function exampleRepo(edit?: (repo: string) => void): string {
  const repo = mkdtempSync(join(tmpdir(), 'catalog-bot-check-'));
  dirs.push(repo);
  git(repo, 'init', '-q', '-b', 'main');
  cpSync(join(example, 'base'), repo, { recursive: true });
  git(repo, 'add', '-A');
  git(repo, 'commit', '-qm', 'base');
  git(repo, 'checkout', '-q', '-b', 'pr');
  rmSync(join(repo, 'catalogs'), { recursive: true });
  cpSync(join(example, 'head'), repo, { recursive: true });
  edit?.(repo);
  git(repo, 'add', '-A');
  git(repo, 'commit', '-qm', 'head');
  return repo;
}

async function check(
  repo: string,
  format = 'json',
  ...extra: string[]
): Promise<{ code: number; out: string }> {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (c: Buffer) => chunks.push(c));
  const code = await main(
    ['check', '--repo', repo, '--base', 'main', '--head', 'pr', '--format', format, ...extra],
    out,
    new PassThrough(),
  );
  return { code, out: Buffer.concat(chunks).toString('utf8') };
}

interface Finding {
  level: string;
  rule: string;
  message: string;
  file: string | null;
  line: number | null;
  package: string | null;
  hint: string | null;
}

describe('catalog-bot check', () => {
  it('fails the example pull request on both checks, with repository paths and fixes', async () => {
    const { code, out } = await check(exampleRepo());
    expect(code).toBe(1);
    const { checks } = JSON.parse(out) as {
      checks: { name: string; conclusion: string; findings: Finding[] }[];
    };
    expect(checks.map((c) => [c.name, c.conclusion])).toEqual([
      ['catalog-bot/validate', 'failure'],
      ['catalog-bot/upgrade-graph', 'failure'],
      ['catalog-bot/dependencies', 'success'],
      // The example's bundles carry no manifests: the CRDs cannot be compared.
      ['catalog-bot/crd-upgrade', 'neutral'],
      // v4.20 still has or leads to everything it had: nothing lost on an OpenShift upgrade.
      ['catalog-bot/ocp-continuity', 'success'],
    ]);
    const validate = checks[0]!.findings;
    expect(validate).toContainEqual(
      expect.objectContaining({
        rule: 'PR-VERSION',
        file: 'catalogs/v4.21/other-operator/catalog.json',
        package: 'other-operator',
      }),
    );
    // opm accepts example-operator, but users of v1.0.0 are stranded under classic OLM.
    const stranded = checks[1]!.findings.filter(
      (f) => f.level === 'error' && f.message.includes('example-operator.v1.0.0'),
    );
    expect(stranded.length).toBeGreaterThan(0);
    for (const f of stranded) {
      expect(f.file).toBe('catalogs/v4.21/example-operator/catalog.yaml');
      expect(f.line).toBeGreaterThan(0);
      expect(f.hint).toMatch(/example-operator\.v1\.2\.0/);
    }
    // v4.20 did not change, so nothing there is checked or reported.
    expect(checks.flatMap((c) => c.findings).some((f) => f.file?.includes('v4.20'))).toBe(false);
  });

  it('passes once the new bundle also covers v1.0.0', async () => {
    const repo = exampleRepo((dir) => {
      const file = join(dir, 'catalogs/v4.21/example-operator/catalog.yaml');
      const text = readFileSync(file, 'utf8').replace(
        '  - name: example-operator.v1.2.0\n    skips:\n      - example-operator.v1.1.0',
        '  - name: example-operator.v1.2.0\n    replaces: example-operator.v1.1.0',
      );
      writeFileSync(file, text);
      rmSync(join(dir, 'catalogs/v4.21/other-operator'), { recursive: true });
    });
    const { code, out } = await check(repo);
    const { checks } = JSON.parse(out) as { checks: { conclusion: string; findings: Finding[] }[] };
    expect(checks.flatMap((c) => c.findings).filter((f) => f.level === 'error')).toEqual([]);
    expect(code).toBe(0);
  });

  it('draws the changed channel before and after, new edges green and stranded users red', async () => {
    const { checks } = await runPrChecks({ repo: exampleRepo(), base: 'main', head: 'pr' });
    const summary = checks[1]!.summary;
    const after = summary.slice(summary.indexOf('after:'));
    const node = (name: string) => 'n' + Buffer.from(name).toString('hex');
    expect(summary).toContain('#### `catalogs/v4.21` example-operator / stable');
    expect(after).toContain(
      `${node('example-operator.v1.0.0')}["example-operator.v1.0.0<br/>1.0.0"]:::stranded`,
    );
    // The only new edge is v1.1.0 -skips-> v1.2.0; it is the second edge drawn.
    expect(after).toContain(
      `${node('example-operator.v1.1.0')} -.->|skips| ${node('example-operator.v1.2.0')}`,
    );
    expect(after).toMatch(/linkStyle 1 stroke:#1a7f37/);
    const before = summary.slice(summary.indexOf('before:'), summary.indexOf('after:'));
    expect(before).not.toContain('linkStyle');
    expect(before).not.toContain(':::stranded');
  });

  it('decides permissions from the base commit when an author is given', async () => {
    const repo = exampleRepo((dir) => {
      // The PR also tries to make its author a maintainer: the base's config still applies.
      writeFileSync(join(dir, '.github/catalog-bot.yml'), 'maintainers: [mallory]\n');
    });
    const run = async (author: string, approvers: string[] = []) =>
      (await runPrChecks({ repo, base: 'main', head: 'pr', author, approvers })).checks[0]!;
    const mallory = await run('mallory');
    expect(mallory.name).toBe('catalog-bot/permissions');
    expect(mallory.conclusion).toBe('failure');
    expect(mallory.summary).toContain('example-operator');
    // A new package is annotated on the head file that adds it.
    expect(mallory.findings.map((f) => f.file)).toContain('catalogs/v4.21/other-operator/catalog.json');
    const approved = await run('mallory', ['alice']);
    expect(approved.conclusion).toBe('success');
    expect(await run('alice')).toMatchObject({ conclusion: 'success' });
  });

  it('adds catalog-bot/permissions to the JSON output with --author', async () => {
    const { out } = await check(exampleRepo(), 'json', '--author', 'bob', '--approver', 'alice');
    const { checks } = JSON.parse(out) as { checks: { name: string; conclusion: string }[] };
    expect(checks[0]).toMatchObject({ name: 'catalog-bot/permissions', conclusion: 'success' });
  });

  it('fails on a bad repository config, naming the key and line', async () => {
    const repo = mkdtempSync(join(tmpdir(), 'catalog-bot-check-'));
    dirs.push(repo);
    git(repo, 'init', '-q', '-b', 'main');
    cpSync(join(example, 'base'), repo, { recursive: true });
    mkdirSync(join(repo, '.github'), { recursive: true });
    writeFileSync(
      join(repo, '.github/catalog-bot.yml'),
      'catalogs: [catalogs/*]\nautomerge:\n  method: fast-forward\n',
    );
    git(repo, 'add', '-A');
    git(repo, 'commit', '-qm', 'base');
    git(repo, 'checkout', '-q', '-b', 'pr');
    git(repo, 'commit', '-q', '--allow-empty', '-m', 'head');
    const { checks } = await runPrChecks({ repo, base: 'main', head: 'pr' });
    expect(checks[0]!.conclusion).toBe('failure');
    expect(checks[0]!.findings[0]).toMatchObject({
      rule: 'CONFIG-INVALID',
      file: '.github/catalog-bot.yml',
      line: 3,
    });
    expect(checks[0]!.findings[0]!.message).toContain('automerge.method');
  });

  it('prints a readable report', async () => {
    const { out } = await check(exampleRepo(), 'text');
    expect(out).toMatch(/^changed catalogs: catalogs\/v4\.21 \(example-operator, other-operator\)/);
    expect(out).toMatch(/✗ catalog-bot\/upgrade-graph: /);
  });
});
