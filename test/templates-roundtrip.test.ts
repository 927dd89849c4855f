// Every real template/output pair, rendered end to end through a registry: the bundle
// images the outputs were made from (public images, out of reach here) are rebuilt from
// the outputs' own bundles and pushed to a local docker-registry; the template is rendered
// with bundles pulled from there. Pulls go through a mirror mapping (as a registries.conf
// mirror does), so the rendered bundles keep the template's references and the render
// must equal the committed bytes as they are. The same images, with the template's
// references rewritten to the local registry, are also rendered by the real opm.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeFile } from '../src/catalog/fbc/decode.js';
import { changedLines } from '../src/catalog/edits/promote-diff.js';
import { parseTemplate, renderTemplateText, semverOptionsForOpm } from '../src/catalog/templates/index.js';
import type { JsonObject } from '../src/catalog/templates/write.js';
import { bundleRenderer } from '../src/publish/bundle-render.js';
import { RegistryClient } from '../src/publish/registry.js';
import { bundleFilesFromBlob, pushBundle } from './helpers/bundle-images.js';
import { haveOpm, OPM } from './helpers/oracle.js';
import { COP_TEMPLATES as C, REAL_TEMPLATES as T, type TemplatePair } from './helpers/real-templates.js';
import { haveRegistryTools, startRegistry, type RunningRegistry } from './helpers/registry.js';

const read = (path: string): string => readFileSync(path, 'utf8');

type Migrate = 'bundle-object-to-csv-metadata' | undefined;

interface Pair extends TemplatePair {
  migrate: Migrate;
  /** Channel entries the template has and its committed output does not (see below). */
  dropEntries?: RegExp;
  /**
   * Bundles whose committed relatedImages are not sorted by image, which opm (since
   * 2021, render.go) always does: their blobs were not written by opm render of these
   * references (Konflux-built catalogs render the build registry's references and swap
   * in registry.redhat.io afterwards, which changes the order). No bundle image makes opm
   * write them; the render differs from the committed bytes only in their order.
   */
  unsortedRelatedImages?: string[];
}

const ECR_NEWER = /v0\.(6\.0|5\.1)$/;

const PAIRS: Pair[] = [
  {
    name: 'clusterpulse semver -> v4.18 (csv metadata)',
    template: join(C, 'clusterpulse/catalog-templates/semver.yaml'),
    output: join(C, 'clusterpulse/rendered/v4.18/clusterpulse/catalog.yaml'),
    format: 'yaml',
    // rendered by the community pipeline's opm v1.46.0 (see test/templates.test.ts)
    opm: 'v1.46.0',
    migrate: 'bundle-object-to-csv-metadata',
  },
  {
    name: 'kairos-operator semver -> v4.16 (bundle objects)',
    template: join(C, 'kairos-operator/catalog-templates/semver.yaml'),
    output: join(C, 'kairos-operator/rendered/v4.16/kairos-operator/catalog.yaml'),
    format: 'yaml',
    opm: 'v1.73.0',
    migrate: undefined,
  },
  {
    name: 'kairos-operator semver -> v4.17 (csv metadata)',
    template: join(C, 'kairos-operator/catalog-templates/semver.yaml'),
    output: join(C, 'kairos-operator/rendered/v4.17/kairos-operator/catalog.yaml'),
    format: 'yaml',
    opm: 'v1.73.0',
    migrate: 'bundle-object-to-csv-metadata',
  },
  {
    name: 'ecr-secret-operator deprecated.yaml -> v4.12',
    template: join(C, 'ecr-secret-operator/catalog-templates/deprecated.yaml'),
    output: join(C, 'ecr-secret-operator/rendered/v4.12/ecr-secret-operator/catalog.yaml'),
    format: 'yaml',
    opm: 'v1.73.0',
    migrate: undefined,
  },
  // basic.yaml lists two channel entries its committed outputs were rendered before
  // (test/templates.test.ts); they are left out of the template here.
  {
    name: 'ecr-secret-operator basic.yaml -> v4.16 (bundle objects)',
    template: join(C, 'ecr-secret-operator/catalog-templates/basic.yaml'),
    output: join(C, 'ecr-secret-operator/rendered/v4.16/ecr-secret-operator/catalog.yaml'),
    format: 'yaml',
    opm: 'v1.73.0',
    migrate: undefined,
    dropEntries: ECR_NEWER,
  },
  {
    name: 'ecr-secret-operator basic.yaml -> v4.17 (csv metadata)',
    template: join(C, 'ecr-secret-operator/catalog-templates/basic.yaml'),
    output: join(C, 'ecr-secret-operator/rendered/v4.17/ecr-secret-operator/catalog.yaml'),
    format: 'yaml',
    opm: 'v1.73.0',
    migrate: 'bundle-object-to-csv-metadata',
    dropEntries: ECR_NEWER,
  },
  ...(['v4.16', 'v4.20'] as const).map((v): Pair => ({
    name: `cluster-kube-descheduler-operator ${v} (basic, JSON, ${v === 'v4.16' ? 'bundle objects' : 'csv metadata'})`,
    template: join(T, `cluster-kube-descheduler-operator/${v}/catalog-template.yaml`),
    output: join(
      T,
      `cluster-kube-descheduler-operator/${v}/catalog/cluster-kube-descheduler-operator/catalog.json`,
    ),
    format: 'json',
    opm: 'v1.73.0',
    migrate: v === 'v4.20' ? 'bundle-object-to-csv-metadata' : undefined,
    ...(v === 'v4.16' ? { unsortedRelatedImages: ['clusterkubedescheduleroperator.v5.0.4'] } : {}),
  })),
  {
    name: 'mtv-fbc v4.20 (JSON basic template, csv metadata)',
    template: join(T, 'mtv-fbc/v4.20/catalog-template.json'),
    output: join(T, 'mtv-fbc/v4.20/catalog/mtv-operator/catalog.json'),
    format: 'json',
    opm: 'v1.73.0',
    migrate: 'bundle-object-to-csv-metadata',
  },
];

function templateText(pair: Pair): string {
  const text = read(pair.template);
  if (!pair.dropEntries) return text;
  const doc = parseTemplate(text) as { entries: { schema: string; entries?: { name: string }[] }[] };
  for (const e of doc.entries)
    if (e.schema === 'olm.channel') e.entries = e.entries!.filter((x) => !pair.dropEntries!.test(x.name));
  return JSON.stringify(doc);
}

const blobsOf = (text: string): JsonObject[] =>
  decodeFile(Buffer.from(text))
    .values.map((v) => v.value as JsonObject)
    .filter((v) => v && typeof v === 'object');

describe.skipIf(!haveRegistryTools)('real templates rendered from rebuilt bundle images', () => {
  let registry: RunningRegistry;
  let client: RegistryClient;
  /** original reference -> where its rebuilt image lives */
  const located = new Map<string, string>();

  beforeAll(async () => {
    registry = await startRegistry();
    client = new RegistryClient({ insecureHosts: [registry.host] });
    let n = 0;
    for (const pair of PAIRS) {
      const blobs = blobsOf(read(pair.output));
      // csv-metadata bundles carry no icon; opm took the package icon from the head CSV
      const icon = blobs.find((b) => b.schema === 'olm.package')?.icon as JsonObject | undefined;
      for (const b of blobs.filter((x) => x.schema === 'olm.bundle')) {
        const image = String(b.image);
        // one rebuild per output: the same image can appear in several outputs
        const key = `${pair.output}\0${image}`;
        const files = bundleFilesFromBlob(b, icon);
        const repository = `rebuilt/b${n++}`;
        await pushBundle(
          client,
          { registry: registry.host, repository, tag: 'v1' },
          String((b.package as string) ?? ''),
          files,
        );
        located.set(key, `${registry.host}/${repository}:v1`);
      }
    }
  }, 120_000);

  afterAll(async () => {
    client?.close();
    await registry?.stop();
  });

  for (const pair of PAIRS) {
    it(`${pair.name}: the render equals the committed bytes`, async () => {
      const committed = read(pair.output);
      const renderer = bundleRenderer(client, { mirror: (image) => located.get(`${pair.output}\0${image}`) });
      const out = await renderTemplateText(templateText(pair), pair.format, {
        resolveBundle: renderer.resolver,
        ...semverOptionsForOpm(pair.opm),
        ...(pair.migrate ? { migrateLevel: pair.migrate } : {}),
      });
      const byImage = (a: { image: string }, b: { image: string }) =>
        Buffer.compare(Buffer.from(a.image), Buffer.from(b.image));
      const unsorted = blobsOf(committed).filter((b) => {
        const list = (b.relatedImages ?? []) as { image: string }[];
        return JSON.stringify(list) !== JSON.stringify([...list].sort(byImage));
      });
      expect(unsorted.map((b) => b.name)).toEqual(pair.unsortedRelatedImages ?? []);
      if (unsorted.length === 0) {
        expect(changedLines(committed, out)).toEqual([]);
        expect(out).toBe(committed);
      } else {
        // the same objects once those lists are sorted, and only relatedImages lines moved
        const sortLists = (text: string) =>
          blobsOf(text).map((b) =>
            Array.isArray(b.relatedImages)
              ? { ...b, relatedImages: [...(b.relatedImages as { image: string }[])].sort(byImage) }
              : b,
          );
        expect(sortLists(out)).toEqual(sortLists(committed));
        const changed = changedLines(committed, out);
        expect(changed.length).toBeGreaterThan(0);
        for (const line of changed) expect(line).toMatch(/^[-+]\s+("name": |"image": |\{$|\},?$)/);
      }
      expect(renderer.cached).toBe(blobsOf(committed).filter((b) => b.schema === 'olm.bundle').length);
    });
  }

  // opm pulls each image itself: the template is rewritten to the local references.
  describe.skipIf(!haveOpm)('the same images rendered by opm alpha render-template', () => {
    for (const pair of PAIRS) {
      it(
        pair.name,
        async () => {
          let text = templateText(pair);
          for (const [key, local] of located) {
            const [output, image] = key.split('\0') as [string, string];
            if (output === pair.output) text = text.split(image).join(local);
          }
          const opm = spawnSync(
            OPM,
            [
              'alpha',
              'render-template',
              '-',
              '-o',
              pair.format,
              '--use-http',
              ...(pair.migrate ? ['--migrate-level', pair.migrate] : []),
            ],
            { input: text, encoding: 'utf8', timeout: 120_000, maxBuffer: 64 * 1024 * 1024 },
          );
          expect(opm.status, opm.stderr).toBe(0);
          const ours = await renderTemplateText(text, pair.format, {
            resolveBundle: bundleRenderer(client).resolver,
            // the oracle is opm v1.73.0, whatever opm made the committed output
            ...semverOptionsForOpm('v1.73.0'),
            ...(pair.migrate ? { migrateLevel: pair.migrate } : {}),
          });
          expect(changedLines(opm.stdout, ours)).toEqual([]);
          expect(ours).toBe(opm.stdout);
        },
        120_000,
      );
    }
  });
});
