// `catalog-bot remove` of one bundle where catalogs are rendered from templates: the
// re-rendered catalogs against what the real opm renders from the edited template (images
// rebuilt from the committed bundles, in a local registry), and a semver template.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import type { JsonObject } from '../src/catalog/templates/write.js';
import { bundleFilesFromBlob, pushBundle } from './helpers/bundle-images.js';
import { runCommand } from './helpers/cli.js';
import { haveRealRepo, makeCopRepo, type CopRepo } from './helpers/cop-repo.js';
import { haveOpm, OPM } from './helpers/oracle.js';
import { haveRegistryTools, registryForSuite } from './helpers/registry.js';
import { blobsOf, remove } from './helpers/removal.js';

describe.skipIf(!haveRealRepo)('remove of a bundle rendered from templates', () => {
  let cop: CopRepo;
  beforeAll(() => {
    cop = makeCopRepo('clusterpulse/1.0.2');
  });
  afterAll(() => cop?.cleanup());

  describe.skipIf(!haveOpm || !haveRegistryTools)(
    'the re-rendered catalogs against opm alpha render-template',
    () => {
      const localRegistry = registryForSuite();

      it('equal what opm renders from the edited template, with and without the csv-metadata migration', async () => {
        const { registry, client } = localRegistry;
        cop.reset();
        const pkg = 'visionone-containersecurity';
        const r = await remove([`${pkg}/0.0.1`, '--repo', cop.repo]);
        expect(r.code, r.err).toBe(0);
        // Images rebuilt from the committed bundle-object catalog (v4.16), pushed under local names.
        const committed = blobsOf(cop.git('show', `main:catalogs/v4.16/${pkg}/catalog.yaml`));
        const icon = committed.find((b) => b.schema === 'olm.package')?.icon as JsonObject | undefined;
        const local = new Map<string, string>();
        let n = 0;
        for (const b of committed.filter((x) => x.schema === 'olm.bundle')) {
          const repository = `remove/b${n++}`;
          await pushBundle(
            client,
            { registry: registry.host, repository, tag: 'v1' },
            pkg,
            bundleFilesFromBlob(b, icon),
          );
          local.set(String(b.image), `${registry.host}/${repository}:v1`);
        }
        let template = readFileSync(join(cop.repo, `operators/${pkg}/catalog-templates/basic.yaml`), 'utf8');
        for (const [image, ref] of local) template = template.split(image).join(ref);
        for (const [v, migrate] of [
          ['v4.16', false],
          ['v4.17', true],
        ] as const) {
          const opm = spawnSync(
            OPM,
            [
              'alpha',
              'render-template',
              'basic',
              '-',
              '-o',
              'json',
              '--use-http',
              ...(migrate ? ['--migrate-level', 'bundle-object-to-csv-metadata'] : []),
            ],
            { input: template, encoding: 'utf8', timeout: 120_000, maxBuffer: 64 * 1024 * 1024 },
          );
          expect(opm.status, opm.stderr).toBe(0);
          let opmText = opm.stdout;
          for (const [image, ref] of local) opmText = opmText.split(ref).join(image);
          const ours = blobsOf(readFileSync(join(cop.repo, `catalogs/${v}/${pkg}/catalog.yaml`), 'utf8'));
          // opm sorts relatedImages by reference, and it saw the local ones: compare them sorted.
          const sorted = (blobs: JsonObject[]) =>
            blobs.map((b) =>
              Array.isArray(b.relatedImages)
                ? {
                    ...b,
                    relatedImages: [...(b.relatedImages as { image: string }[])].sort((x, y) =>
                      x.image < y.image ? -1 : 1,
                    ),
                  }
                : b,
            );
          expect(sorted(ours)).toEqual(sorted(blobsOf(opmText)));
        }
      }, 120_000);
    },
  );

  it('removes one bundle of a semver template: its Bundles item goes, the generated channels are re-rendered without it', async () => {
    cop.reset();
    const pkg = 'dotvirt-operator';
    const templatePath = join(cop.repo, `operators/${pkg}/catalog-templates/semver.yaml`);
    const original = readFileSync(templatePath, 'utf8');
    const bundleDirs = readdirSync(join(cop.repo, 'operators', pkg)).filter((d) => /^\d/.test(d));
    const oldest = bundleDirs.sort((a, b) => a.localeCompare(b, 'en', { numeric: true }))[0]!;
    const r = await remove([`${pkg}/${oldest}`, '--repo', cop.repo, '--format', 'json']);
    expect(r.code, r.err).toBe(0);
    const edited = readFileSync(templatePath, 'utf8');
    const removedLines = original.split('\n').filter((l) => !edited.split('\n').includes(l));
    expect(removedLines).toEqual([`  - Image: quay.io/community-operator-pipeline-prod/${pkg}:${oldest}`]);
    expect(edited.split('\n').length).toBe(original.split('\n').length - 1);
    const report = JSON.parse(r.out);
    const name = report.bundle as string;
    expect(name).toMatch(new RegExp(`^${pkg}\\.v?${oldest.replace(/\./g, '\\.')}$`));
    const mapped: string[] = parseYaml(readFileSync(join(cop.repo, `operators/${pkg}/ci.yaml`), 'utf8')).fbc
      .catalog_mapping[0].catalog_names;
    expect(Object.keys(report.catalogs).sort()).toEqual([...mapped].sort());
    for (const v of mapped) {
      const catalog = blobsOf(readFileSync(join(cop.repo, `catalogs/${v}/${pkg}/catalog.yaml`), 'utf8'));
      expect(catalog.some((b) => b.name === name)).toBe(false);
      // The semver template makes its edges itself: nothing is left pointing at the bundle.
      expect(JSON.stringify(catalog)).not.toContain(`"${name}"`);
      expect(report.catalogs[v].bundlesRemoved).toEqual([name]);
      expect(report.catalogs[v].dangling).toEqual([]);
    }
    const valid = await runCommand(
      'validate',
      mapped.map((v) => join(cop.repo, 'catalogs', v)),
    );
    expect(valid.code, valid.out + valid.err).toBe(0);
  });
});
