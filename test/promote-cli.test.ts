import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { removeTree, SHARED_DATA, writeTree } from './helpers/oracle.js';
import { runCommandOutput as run } from './helpers/cli.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach(removeTree));

const VM = join(
  SHARED_DATA,
  'real-catalogs/community-operators-prod/catalogs/v4.21/victoriametrics-operator/catalog.yaml',
);
const CP = join(SHARED_DATA, 'real-templates/community-operators-prod/clusterpulse');

describe('catalog-bot promote', () => {
  it('writes the edit, prints a diff; --dry-run writes nothing; refusals exit 1; usage exits 2', async () => {
    const original = readFileSync(VM, 'utf8');
    const repo = writeTree({ 'catalogs/v4.21/victoriametrics-operator/catalog.yaml': original });
    dirs.push(repo);
    const path = join(repo, 'catalogs/v4.21/victoriametrics-operator/catalog.yaml');

    const dry = await run('promote', [
      'victoriametrics-operator.v0.74.1',
      'stable',
      '--repo',
      repo,
      '--dry-run',
    ]);
    expect(dry.code).toBe(0);
    expect(dry.output).toContain(
      '+- name: victoriametrics-operator.v0.74.1\n+  replaces: victoriametrics-operator.v0.68.5\n',
    );
    expect(dry.output).toContain('--- a/catalogs/v4.21/victoriametrics-operator/catalog.yaml');
    expect(readFileSync(path, 'utf8')).toBe(original);

    const done = await run('promote', ['victoriametrics-operator.v0.74.1', 'stable', '--repo', repo]);
    expect(done.code).toBe(0);
    expect(readFileSync(path, 'utf8')).not.toBe(original);

    const again = await run('promote', ['victoriametrics-operator.v0.74.1', 'stable', '--repo', repo]);
    expect(again.code).toBe(0);
    expect(again.output).toMatch(/^catalog-bot promote: nothing to do: .*already in channel "stable"/);

    expect((await run('promote', ['only-one-arg', '--repo', repo])).code).toBe(2);
    expect((await run('promote', ['a', 'b', '--repo', join(repo, 'missing')])).code).toBe(2);
  });

  it('finds template mappings in operators/<package>/ci.yaml', async () => {
    const repo = writeTree({
      'operators/clusterpulse/ci.yaml': readFileSync(join(CP, 'ci.yaml')),
      'operators/clusterpulse/catalog-templates/semver.yaml': readFileSync(
        join(CP, 'catalog-templates/semver.yaml'),
      ),
      'catalogs/v4.18/clusterpulse/catalog.yaml': readFileSync(
        join(CP, 'rendered/v4.18/clusterpulse/catalog.yaml'),
      ),
    });
    dirs.push(repo);
    const r = await run('promote', ['clusterpulse.v1.0.2', 'stable-v1', '--repo', repo]);
    expect(r.code).toBe(0);
    expect(
      readFileSync(join(repo, 'operators/clusterpulse/catalog-templates/semver.yaml'), 'utf8'),
    ).toContain(
      'Stable:\n  Bundles:\n  - Image: quay.io/community-operator-pipeline-prod/clusterpulse:1.0.2\n',
    );
    expect(readFileSync(join(repo, 'catalogs/v4.18/clusterpulse/catalog.yaml'), 'utf8')).toContain(
      'defaultChannel: stable-v1\n',
    );
  });
});

describe('catalog-bot render-template', () => {
  it('renders from bundles of a rendered catalog, with an older opm behaviour when asked', async () => {
    const committed = readFileSync(join(CP, 'rendered/v4.18/clusterpulse/catalog.yaml'), 'utf8');
    const args = [
      join(CP, 'catalog-templates/semver.yaml'),
      '--bundles-from',
      join(CP, 'rendered/v4.18'),
      '-o',
      'yaml',
    ];
    const old = await run('render-template', [...args, '--opm-version', 'v1.56.0']);
    expect(old.code).toBe(0);
    expect(old.output).toBe(committed);
    const current = await run('render-template', args);
    expect(current.code).toBe(0);
    expect(current.output).not.toBe(committed);
    // Bundles that neither the given catalog has nor (here) a registry can give: refused.
    const empty = mkdtempSync(join(tmpdir(), 'catalog-bot-no-bundles-'));
    const missing = await run('render-template', [
      join(CP, 'catalog-templates/semver.yaml'),
      '--bundles-from',
      empty,
    ]);
    rmSync(empty, { recursive: true, force: true });
    expect(missing.code).toBe(1);
    expect(missing.output).toMatch(/could not be rendered/);
    expect((await run('render-template', [join(CP, 'ci.yaml'), '-o', 'xml'])).code).toBe(2);
  });
});
