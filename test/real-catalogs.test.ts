import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DirectorySource, renderJson, loadCatalog, validateCatalog } from '../src/catalog/index.js';
import { haveOpm, opmValidate, SHARED_DATA } from './helpers/oracle.js';
import { spawnSync } from 'node:child_process';
import { OPM } from './helpers/oracle.js';

const catalogsDir = join(SHARED_DATA, 'real-catalogs');
const roots = readdirSync(catalogsDir, { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .flatMap((repo) =>
    readdirSync(join(catalogsDir, repo.name, 'catalogs')).map((v) =>
      join(catalogsDir, repo.name, 'catalogs', v),
    ),
  );

describe.skipIf(!haveOpm)('real catalogs', () => {
  it('finds the three real catalog roots', () => {
    expect(roots.map((r) => r.slice(catalogsDir.length))).toEqual([
      '/certified-operators/catalogs/v4.22',
      '/community-operators-prod/catalogs/v4.16',
      '/community-operators-prod/catalogs/v4.21',
    ]);
  });

  for (const root of roots) {
    it(`validates ${root.slice(catalogsDir.length)} clean, as opm does`, async () => {
      const report = await validateCatalog(new DirectorySource(root));
      expect(report.diagnostics.filter((d) => d.level === 'error')).toEqual([]);
      expect(report.valid).toBe(true);
      expect(opmValidate(root).valid).toBe(true);
      // Every package, channel and bundle blob made it into the model.
      expect(report.model.size).toBe(report.config.packages.length);
      const entries = [...report.model.values()].flatMap((p) =>
        [...p.channels.values()].flatMap((c) => [...c.bundles.values()]),
      );
      expect(entries.every((b) => b.version !== undefined && b.blob !== undefined)).toBe(true);
      expect(entries.every((b) => typeof b.entry.line === 'number')).toBe(true);
    });
  }

  for (const root of roots) {
    it(`renders ${root.slice(catalogsDir.length)} byte for byte like opm render -o json`, async () => {
      const loaded = await loadCatalog(new DirectorySource(root), { keepBundleObjects: true });
      const ours = [...renderJson(loaded.config)].join('');
      const opm = spawnSync(OPM, ['render', root, '-o', 'json'], {
        encoding: 'utf8',
        maxBuffer: 512 * 1024 * 1024,
      });
      expect(opm.status).toBe(0);
      expect(ours.length).toBeGreaterThan(1_000_000);
      expect(ours === opm.stdout).toBe(true);
    });
  }
});
