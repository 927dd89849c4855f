// `onboard` on the real onboarding commits of community-operators-prod: from the bundle
// directories alone, the catalogs equal what the pipeline wrote from the published index
// (graph and bundle blobs) for every exact case; with `--index`, the two cases whose index
// differs from the directories keep the index and name every bundle on one side only.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { onboardPackage, type OnboardResult } from '../src/catalog/edits/onboard.js';
import { legacyBundle, readAnnotations } from '../src/catalog/legacy/bundle-annotations.js';
import { admitsCatalog } from '../src/catalog/legacy/openshift-versions.js';
import { parseBundle, bundleFilesFromMap } from '../src/catalog/bundle.js';
import { workingTree } from '../src/commands/working-tree.js';
import {
  blobsOf,
  bundleImagesOf,
  bundlesOf,
  graphOf,
  onboardingCases,
  type OnboardingCase,
} from './helpers/onboarding-cases.js';

const cases = onboardingCases();

function onboard(c: OnboardingCase, index?: Map<string, ReturnType<typeof blobsOf>>): Promise<OnboardResult> {
  const before = join(c.dir, 'before');
  return onboardPackage({
    tree: workingTree(before),
    package: c.package,
    catalogRoots: readdirSync(join(before, 'catalogs')).map((v) => `catalogs/${v}`),
    // With --index the bundles come from the index (what clusters are served), not the list.
    ...(index ? { index } : { bundleImages: bundleImagesOf(c) }),
    settings: {
      opmVersion: 'v1.46.0',
      ...(c.csvMetadataFrom ? { csvMetadataFrom: c.csvMetadataFrom } : { csvMetadataFrom: undefined }),
    },
  });
}

const expectedText = (c: OnboardingCase, v: string): string | undefined => {
  const p = join(c.dir, 'expected', 'catalogs', v, c.package, 'catalog.yaml');
  return existsSync(p) ? readFileSync(p, 'utf8') : undefined;
};

/** A, B and C of the cases' scoring; returns how many catalogs are byte-identical. */
function expectCatalogsEqual(c: OnboardingCase, result: OnboardResult, skip: string[] = []): number {
  const written = new Map(result.edits.map((e) => [e.path, e.after]));
  let identical = 0;
  for (const v of c.compared) {
    if (skip.includes(v)) continue;
    const want = expectedText(c, v);
    if (want === undefined) continue;
    const got = written.get(`catalogs/${v}/${c.package}/catalog.yaml`);
    expect(got, `${c.package} ${v}: written`).toBeDefined();
    const [w, g] = [blobsOf(want), blobsOf(got!)];
    expect(graphOf(g), `${c.package} ${v}: graph`).toEqual(graphOf(w));
    expect(bundlesOf(g), `${c.package} ${v}: bundle blobs`).toEqual(bundlesOf(w));
    if (got === want) identical++;
    // Older opm releases quoted empty strings as '' where ours write "" (YAML reads both alike);
    // past that, the pipeline's files and ours are the same bytes.
    else if (c.kind === 'exact') expect(got).toBe(want.replaceAll(": ''\n", ': ""\n'));
  }
  // Never a catalog the repository lacks, nor one outside the compared (and ignorable) ones.
  for (const path of written.keys()) {
    const m = /^catalogs\/([^/]+)\//.exec(path);
    if (m) expect([...c.compared, ...c.ignore], `${path} is not a compared catalog`).toContain(m[1]);
  }
  return identical;
}

describe('onboard on the real onboarding cases', () => {
  const exact = cases.filter((c) => c.kind === 'exact');
  it('has the six exact and two index cases', () => {
    expect(exact.length).toBe(6);
    expect(cases.filter((c) => c.kind === 'index-differs').length).toBe(2);
  });

  it.each(exact.map((c) => [c.package, c] as const))(
    '%s: every compared catalog equals the pipeline output in graph and blobs',
    async (_name, c) => {
      const result = await onboard(c);
      expect(result.mode).toBe(c.mode);
      const identical = expectCatalogsEqual(c, result);
      // amd-gpu-operator was rendered by the opm we emulate: byte for byte.
      if (c.package === 'amd-gpu-operator') expect(identical).toBe(8);
      // The JSON report's graph is the written one.
      for (const [v, report] of Object.entries(result.catalogs)) {
        const text = result.edits.find((e) => e.path === `catalogs/${v}/${c.package}/catalog.yaml`)!.after;
        const blobs = blobsOf(text);
        expect(report.defaultChannel).toBe(graphOf(blobs).defaultChannel);
        expect(report.bundles).toEqual(
          blobs
            .filter((b) => b.schema === 'olm.bundle')
            .map((b) => String(b.name))
            .sort(),
        );
      }
    },
    60_000,
  );

  it.each(cases.filter((c) => c.kind === 'index-differs').map((c) => [c.package, c] as const))(
    '%s with --index: the catalogs are the index, and every bundle on one side only is named',
    async (_name, c) => {
      const index = new Map<string, ReturnType<typeof blobsOf>>();
      for (const v of c.inBefore) {
        const text = c.indexWithoutPackage.includes(v) ? undefined : expectedText(c, v);
        index.set(v, text === undefined ? [] : blobsOf(text));
      }
      const result = await onboard(c, index);
      expectCatalogsEqual(c, result, c.indexWithoutPackage);
      for (const v of c.indexWithoutPackage)
        expect(result.edits.some((e) => e.path.startsWith(`catalogs/${v}/`))).toBe(false);
      // Bundle directories admitted by com.redhat.openshift.versions, by CSV name.
      const before = join(c.dir, 'before');
      const tree = workingTree(before);
      const dirs = new Set(
        tree
          .list()
          .filter((p) => p.startsWith(`operators/${c.package}/`) && p.endsWith('/metadata/annotations.yaml'))
          .map((p) => p.slice(0, -'/metadata/annotations.yaml'.length)),
      );
      const bundles = [...dirs].map((dir) => {
        const files = new Map<string, Buffer>();
        for (const p of tree.list())
          if (p.startsWith(`${dir}/`)) files.set(p.slice(dir.length + 1), tree.readBytes(p)!);
        const parsed = parseBundle(bundleFilesFromMap(files));
        const annotations = readAnnotations('a', files.get('metadata/annotations.yaml')!.toString());
        return legacyBundle(dir, annotations, parsed.csv, parsed.name);
      });
      let named = 0;
      for (const v of c.inBefore) {
        const served = new Set(Object.keys(bundlesOf(index.get(v)!)));
        const admitted = new Set(bundles.filter((b) => admitsCatalog(b.openshift, v)).map((b) => b.name));
        const oneSide = [...served]
          .filter((n) => !admitted.has(n))
          .concat([...admitted].filter((n) => !served.has(n)));
        const messages = result.differences.filter((d) => d.catalog === v).map((d) => d.message);
        for (const name of oneSide) {
          expect(
            messages.some((m) => m.includes(name)),
            `${v}: ${name} is on one side only`,
          ).toBe(true);
          named++;
        }
      }
      expect(named).toBeGreaterThan(0);
    },
    60_000,
  );
});
