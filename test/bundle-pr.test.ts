// catalog-bot/bundle on real pull requests: each branch of a real git repository
// (test/helpers/bundle-repo.ts: the real jumpstarter-operator package before its 0.9.0
// release) is one pull request on `main`.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleCheckForChange, bundleDirectories, ocpIndexesOfRoots } from '../src/checks/bundle-pr.js';
import { stringify } from 'yaml';
import { bundleFiles, cleanBundle, withV1beta1Pdb } from './helpers/bundle-fixture.js';
import { DEFAULT_BUNDLE_SETTINGS } from '../src/catalog/edits/release.js';
import { runPrChecksInProcess } from '../src/checks/pr.js';
import { main } from '../src/cli.js';
import {
  BUNDLE_DIR as DIR,
  BUNDLE_PKG as PKG,
  makeBundleRepo,
  type BundleRepo,
} from './helpers/bundle-repo.js';

let made: BundleRepo;
let repo: string;

beforeAll(() => {
  made = makeBundleRepo();
  repo = made.repo;
  const { branch } = made;
  branch('bundle-only');
  branch('with-catalogs', made.applyRelease);
  branch('wrong-catalogs', () => {
    made.applyRelease();
    const file = join(repo, 'catalogs/v4.20', PKG, 'catalog.yaml');
    writeFileSync(
      file,
      readFileSync(file, 'utf8').replace(
        'jumpstarter-operator.v0.9.0-rc.2\n',
        'jumpstarter-operator.v0.8.1\n',
      ),
    );
  });
  branch('bad-csv', () => {
    const csv = join(repo, DIR, 'manifests', 'jumpstarter-operator.clusterserviceversion.yaml');
    writeFileSync(csv, readFileSync(csv, 'utf8').replace(/^spec:$/m, "spec: 'unclosed"));
  });
  branch('no-annotation', () => {
    const file = join(repo, DIR, 'metadata', 'annotations.yaml');
    writeFileSync(
      file,
      readFileSync(file, 'utf8').replace(
        /^.*operators\.operatorframework\.io\.bundle\.package\.v1:.*\n/m,
        '',
      ),
    );
  });
  branch(
    'edit-released',
    () => {
      const file = join(repo, `operators/${PKG}/0.8.1/metadata/annotations.yaml`);
      writeFileSync(file, readFileSync(file, 'utf8') + '  extra: value\n');
    },
    false,
  );
  branch('no-release-config-ci-off', () => {
    // The pull request drops release-config.yaml and turns fbc off in its own ci.yaml.
    rmSync(join(repo, DIR, 'release-config.yaml'));
    const ci = join(repo, `operators/${PKG}/ci.yaml`);
    writeFileSync(ci, readFileSync(ci, 'utf8').replace('enabled: true', 'enabled: false'));
  });
  // A base whose ci.yaml does not render the package from templates, and a pull request on it
  // that turns that on in its own ci.yaml.
  const setFbc = (enabled: boolean) => {
    const ci = join(repo, `operators/${PKG}/ci.yaml`);
    writeFileSync(ci, readFileSync(ci, 'utf8').replace(/enabled: (true|false)/, `enabled: ${enabled}`));
  };
  branch('base-fbc-off', () => setFbc(false), false);
  branch(
    'no-release-config-ci-on',
    () => {
      rmSync(join(repo, DIR, 'release-config.yaml'));
      setFbc(true);
    },
    true,
    'base-fbc-off',
  );
  // A removal: the pull request deletes a released bundle's directory (docs/remove.md).
  branch('delete-released', () => rmSync(join(repo, `operators/${PKG}/0.8.1`), { recursive: true }), false);
  branch(
    'templates-only',
    () => writeFileSync(join(repo, `operators/${PKG}/Makefile`), '# nothing\n'),
    false,
  );
}, 60_000);

afterAll(() => made.cleanup());

async function bundleCheck(head: string) {
  const result = await runPrChecksInProcess({ repo, base: 'main', head });
  return result.checks.find((c) => c.name === 'catalog-bot/bundle');
}

describe('catalog-bot/bundle on pull requests', () => {
  it('shows the catalog update a bundle-only pull request needs, and the command', async () => {
    const check = await bundleCheck('bundle-only');
    expect(check?.conclusion).toBe('success');
    expect(check?.title).toMatch(/the merge needs the catalog update of 6 files/);
    expect(check?.summary).toContain(`catalog-bot release ${DIR}`);
    // The diff is the real release: the template gains 0.9.0, every catalog its blob.
    expect(check?.summary).toContain('+++ b/operators/jumpstarter-operator/catalog-templates/basic.yaml');
    // The five byte-identical catalogs: one line, one diff (docs/bundles.md).
    expect(check?.summary).toContain(`catalogs/v4.18-v4.22/${PKG}/catalog.yaml +214 -0 (5 identical files)`);
    expect(check?.summary).toContain(`+++ b/catalogs/v4.18/${PKG}/catalog.yaml`);
    expect(check?.summary).not.toContain(`+++ b/catalogs/v4.19/${PKG}/catalog.yaml`);
    expect(check?.summary).toContain('+- name: jumpstarter-operator.v0.9.0\n');
    expect(check?.summary).toContain('+name: jumpstarter-operator.v0.9.0\n');
  });

  it('passes a pull request that carries the catalog update the release renders', async () => {
    const check = await bundleCheck('with-catalogs');
    expect(check?.conclusion, check?.summary).toBe('success');
    expect(check?.summary).toMatch(/carries the catalog update, and it equals/);
  });

  it('fails a catalog update that differs from the render, with the diff', async () => {
    const check = await bundleCheck('wrong-catalogs');
    expect(check?.conclusion).toBe('failure');
    const diff = check?.findings.filter((d) => d.rule === 'B-RELEASE-DIFF') ?? [];
    expect(diff.map((d) => d.file)).toEqual([`catalogs/v4.20/${PKG}/catalog.yaml`]);
    expect(diff[0]?.line).toBeGreaterThan(1);
    expect(check?.summary).toContain('-- name: jumpstarter-operator.v0.8.1\n');
    expect(check?.summary).toContain('+- name: jumpstarter-operator.v0.9.0-rc.2\n');
    expect(check?.summary).toContain(`catalog-bot release ${DIR}`);
  });

  it('fails a malformed CSV at its file and line, with a fix', async () => {
    const check = await bundleCheck('bad-csv');
    expect(check?.conclusion).toBe('failure');
    const errors = check?.findings.filter((d) => d.level === 'error') ?? [];
    expect(errors.map((d) => [d.rule, d.file])).toEqual([
      ['B-MANIFEST-SYNTAX', `${DIR}/manifests/jumpstarter-operator.clusterserviceversion.yaml`],
    ]);
    // The broken line is the `spec:` line the branch edited (106) or the end of the file.
    expect(errors[0]?.line).toBeGreaterThanOrEqual(106);
    expect(errors[0]?.hint).toMatch(/^Fix the YAML at line \d+/);
    expect(check?.annotations).toContainEqual(
      expect.objectContaining({ path: errors[0]?.file, line: errors[0]?.line, level: 'failure' }),
    );
    // Nothing is released from a bundle that does not load.
    expect(check?.summary).not.toContain('The merge needs');
  });

  it('fails a missing annotation, naming the annotation and the fix', async () => {
    const check = await bundleCheck('no-annotation');
    expect(check?.conclusion).toBe('failure');
    const found = check?.findings.find((d) => d.rule === 'B-ANNOTATIONS');
    expect(found?.file).toBe(`${DIR}/metadata/annotations.yaml`);
    expect(found?.message).toContain('operators.operatorframework.io.bundle.package.v1');
    expect(found?.hint).toContain(`operators.operatorframework.io.bundle.package.v1: ${PKG}`);
  });

  it('fails an edit of a released bundle', async () => {
    const check = await bundleCheck('edit-released');
    expect(check?.conclusion).toBe('failure');
    expect(check?.findings.map((d) => [d.rule, d.file])).toEqual([
      ['B-RELEASED-EDITED', `operators/${PKG}/0.8.1/metadata/annotations.yaml`],
    ]);
  });

  it("warns of a missing release-config.yaml by the base's ci.yaml, which the pull request cannot turn off", async () => {
    const check = await bundleCheck('no-release-config-ci-off');
    expect(check?.findings.map((d) => [d.rule, d.level, d.file])).toContainEqual([
      'B-RELEASE-CONFIG',
      'warning',
      DIR,
    ]);
  });

  it("takes B-RELEASE-CONFIG from the base's ci.yaml only: the pull request's own cannot raise it either", async () => {
    const result = await runPrChecksInProcess({
      repo,
      base: 'base-fbc-off',
      head: 'no-release-config-ci-on',
    });
    const check = result.checks.find((c) => c.name === 'catalog-bot/bundle');
    expect(check).toBeDefined();
    expect(check?.findings.filter((d) => d.rule === 'B-RELEASE-CONFIG')).toEqual([]);
  });

  it('has nothing to check in a bundle directory the change deletes: no bundle is left (a removal, docs/remove.md)', async () => {
    const check = await bundleCheck('delete-released');
    expect(check?.findings ?? []).toEqual([]);
    expect(check?.conclusion ?? 'success').toBe('success');
  });

  it('is not run on a change that touches no bundle directory', async () => {
    expect(await bundleCheck('templates-only')).toBeUndefined();
  });

  it('catalog-bot check prints the release diff and the command, and fails a malformed bundle', async () => {
    const run = async (head: string, format: string) => {
      const out = new PassThrough();
      const chunks: Buffer[] = [];
      out.on('data', (c: Buffer) => chunks.push(c));
      const code = await main(
        ['check', '--repo', repo, '--base', 'main', '--head', head, '--format', format],
        out,
        new PassThrough(),
      );
      return { code, out: Buffer.concat(chunks).toString('utf8') };
    };
    const text = await run('bundle-only', 'text');
    expect(text.out).toMatch(/✓ catalog-bot\/bundle: 1 bundle directory checked; the merge needs/);
    expect(text.out).toContain(
      `note: the merge needs the catalog update of 6 files: catalog-bot release ${DIR}`,
    );
    expect(text.out).toContain(`+++ b/operators/${PKG}/catalog-templates/basic.yaml`);
    expect(text.out).toContain('+++ b/catalogs/v4.18/jumpstarter-operator/catalog.yaml');
    expect(text.code).toBe(0);
    const json = await run('bad-csv', 'json');
    expect(json.code).toBe(1);
    const { checks } = JSON.parse(json.out) as {
      checks: { name: string; conclusion: string; findings: Record<string, unknown>[] }[];
    };
    const bundle = checks.find((c) => c.name === 'catalog-bot/bundle');
    expect(bundle?.conclusion).toBe('failure');
    expect(bundle?.findings[0]).toMatchObject({
      rule: 'B-MANIFEST-SYNTAX',
      file: `${DIR}/manifests/jumpstarter-operator.clusterserviceversion.yaml`,
      line: expect.any(Number),
      hint: expect.stringMatching(/^Fix the YAML at line/),
    });
  });
});

describe('which directories catalog-bot/bundle checks', () => {
  // A pull request's changed files: bundle parts, and files around them that are not bundles.
  const changedFiles = [
    'operators/a/1.0.0/manifests/a.csv.yaml',
    'operators/a/1.0.0/metadata/annotations.yaml',
    'operators/a/ci.yaml',
    'operators/a/catalog-templates/basic.yaml',
    'operators/b/latest/manifests/b.csv.yaml',
    'operators/c/2.0.0/release-config.yaml',
    'catalogs/v4.18/a/catalog.yaml',
  ];

  it('takes version directories and bundle parts, not templates or ci.yaml', () => {
    const dirs = bundleDirectories(changedFiles, 'operators/{package}/{version}');
    expect(dirs).toEqual([
      { dir: 'operators/a/1.0.0', package: 'a', version: '1.0.0' },
      { dir: 'operators/b/latest', package: 'b', version: 'latest' },
      { dir: 'operators/c/2.0.0', package: 'c', version: '2.0.0' },
    ]);
  });

  it('holds at most 16 MiB of bundle directories of one pull request, however they are split', async () => {
    // 10 new directories of 3 MiB each: every one is under the per-bundle bound.
    const held: number[] = [];
    const check = await bundleCheckForChange({
      base: 'main',
      head: 'pr',
      files: Array.from({ length: 10 }, (_, i) => `operators/p/1.0.${i}/manifests/csv.yaml`),
      settings: DEFAULT_BUNDLE_SETTINGS,
      readDirectory: async (rev, _dir, maxBytes) => {
        const bytes = rev === 'pr' ? 3 * 2 ** 20 : 0;
        if (bytes > maxBytes) return { files: new Map(), bytes, unreadable: [] };
        if (bytes > 0) held.push(bytes);
        return { files: new Map([['manifests/csv.yaml', Buffer.alloc(0)]]), bytes, unreadable: [] };
      },
      readFile: async () => undefined,
    });
    expect(held.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(16 * 2 ** 20);
    expect(held.length).toBeGreaterThan(0);
    const unread = check?.findings.filter((d) => d.rule === 'B-SIZE') ?? [];
    expect(unread.length).toBe(10 - held.length);
    expect(unread[0]?.message).toMatch(/more than 16 MiB together/);
    expect(check?.conclusion).toBe('failure');
  });

  it('refuses to read more than 20 bundle directories of one pull request', async () => {
    let reads = 0;
    const check = await bundleCheckForChange({
      base: 'main',
      head: 'pr',
      files: Array.from({ length: 21 }, (_, i) => `operators/p/1.0.${i}/manifests/csv.yaml`),
      settings: DEFAULT_BUNDLE_SETTINGS,
      readDirectory: async () => {
        reads++;
        return { files: new Map(), bytes: 0, unreadable: [] };
      },
      readFile: async () => {
        reads++;
        return undefined;
      },
    });
    expect(check?.conclusion).toBe('failure');
    expect(check?.findings.map((d) => d.rule)).toEqual(['B-TOO-MANY']);
    expect(reads).toBe(0);
  });
});

describe("bundles.suites: a bundle's OpenShift range on a pull request", () => {
  it("is read against the base's OpenShift catalogs, as bundle validate reads the repository's", async () => {
    expect(ocpIndexesOfRoots(['catalogs/v4.11', 'catalogs/v4.9', 'other', 'catalogs/v4.10'])).toEqual([
      '4.9',
      '4.10',
      '4.11',
    ]);
    // A policy/v1beta1 PodDisruptionBudget (removed in Kubernetes 1.25) for OpenShift 4.9 and later.
    const b = withV1beta1Pdb(cleanBundle(), 'v4.9');
    const files = bundleFiles(b);
    const bytes = [...files.values()].reduce((n, f) => n + f.length, 0);
    const dir = 'operators/demo-operator/1.0.0';
    const removedApi = async (baseRoots: string[]) =>
      (
        await bundleCheckForChange({
          base: 'main',
          head: 'pr',
          files: [`${dir}/manifests/pdb.yaml`],
          settings: DEFAULT_BUNDLE_SETTINGS,
          suites: ['operatorhub'],
          ocpIndexes: ocpIndexesOfRoots(baseRoots),
          readDirectory: async (rev, d) =>
            rev === 'pr' && d === dir
              ? { files, bytes, unreadable: [] }
              : { files: new Map(), bytes: 0, unreadable: [] },
          readFile: async (rev, path) =>
            rev === 'main' && path.endsWith('/ci.yaml') ? stringify(b.ci) : undefined,
        })
      )?.findings
        .filter((d) => d.rule === 'B-REMOVED-API')
        .map((d) => d.level);
    // Catalogs up to v4.11 (Kubernetes 1.24): the range reaches no Kubernetes without the API.
    expect(await removedApi(['catalogs/v4.9', 'catalogs/v4.10', 'catalogs/v4.11'])).toEqual(['warning']);
    // community-operators-prod's catalogs (v4.12 on): the newest runs Kubernetes 1.30.
    const cop = Array.from({ length: 11 }, (_, i) => `catalogs/v4.${12 + i}`);
    expect(await removedApi(cop)).toEqual(['error']);
    // No OpenShift catalog at the base: the default list, the same as community-operators-prod's.
    expect(await removedApi([])).toEqual(['error']);
  });
});
