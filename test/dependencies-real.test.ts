// catalog-bot/dependencies on the real catalogs: every package checked as if newly added
// (no old catalog) and as unchanged (old = new). Errors must be real: each one is
// confirmed by a brute-force scan that shares no code with the dependency index.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { classicChannelEntries } from '../src/catalog/olm/classic.js';
import type { ExternalProviders } from '../src/catalog/olm/dependencies.js';
import { DirectorySource, validateCatalog } from '../src/catalog/index.js';
import type { Model, ModelBundle } from '../src/catalog/fbc/model.js';
import { parseRange } from '../src/catalog/versions/range.js';
import { parseVersion } from '../src/catalog/versions/semver.js';
import { dependencyFindings } from '../src/checks/dependencies.js';
import { SHARED_DATA } from './helpers/oracle.js';

const ROOTS = [
  'community-operators-prod/catalogs/v4.16',
  'community-operators-prod/catalogs/v4.21',
  'certified-operators/catalogs/v4.22',
].map((r) => join(SHARED_DATA, 'real-catalogs', r));

// What these catalogs lean on outside themselves on OpenShift: cert-manager and OpenShift
// Pipelines come from the redhat-operators catalog. This is what a repository would put
// under `dependencies.externalProviders`.
const OPENSHIFT: ExternalProviders = {
  gvks: [
    ...['Certificate', 'Issuer', 'ClusterIssuer'].map((kind) => ({
      group: 'cert-manager.io',
      version: 'v1',
      kind,
    })),
    { group: 'operator.tekton.dev', version: 'v1alpha1', kind: 'TektonConfig' },
  ],
  packages: ['openshift-pipelines-operator-rh'],
};

type Obj = Record<string, unknown>;

/** Brute force: requirements of chain bundles that no chain bundle of the catalog meets. */
function unmetByScan(model: Model): Set<string> {
  const chain: ModelBundle[] = [];
  for (const p of model.values())
    for (const ch of p.channels.values()) chain.push(...classicChannelEntries(ch));
  const unmet = new Set<string>();
  for (const b of chain) {
    for (const p of b.properties) {
      const v = p.value as Obj;
      let met: (x: ModelBundle) => boolean;
      if (p.type === 'olm.gvk.required') {
        met = (x) =>
          x.properties.some((q) => {
            const w = q.value as Obj;
            return (
              q.type === 'olm.gvk' && w.group === v.group && w.version === v.version && w.kind === v.kind
            );
          });
      } else if (p.type === 'olm.package.required') {
        const range = parseRange(v.versionRange as string);
        met = (x) =>
          x.properties.some((q) => {
            const w = q.value as Obj;
            return (
              q.type === 'olm.package' &&
              w.packageName === v.packageName &&
              range.matches(parseVersion(w.version as string))
            );
          });
      } else continue;
      if (!chain.some(met)) unmet.add(`${b.package}/${b.name}/${p.line}`);
    }
  }
  return unmet;
}

describe.skipIf(!ROOTS.every((r) => existsSync(r)))('catalog-bot/dependencies on the real catalogs', () => {
  for (const root of ROOTS) {
    const name = root.slice(join(SHARED_DATA, 'real-catalogs').length + 1);

    it(`${name}: every package as newly added, with OpenShift's providers configured: no errors`, async () => {
      const { model } = await validateCatalog(new DirectorySource(root));
      const findings = dependencyFindings(model, { externalProviders: OPENSHIFT });
      expect(findings.filter((d) => d.level === 'error')).toEqual([]);
    });

    it(`${name}: without external providers, the errors are exactly the unmet requirements a scan finds`, async () => {
      const { model } = await validateCatalog(new DirectorySource(root));
      const errors = dependencyFindings(model).filter((d) => d.level === 'error');
      expect(new Set(errors.map((d) => d.rule))).toEqual(new Set(errors.length > 0 ? ['D-UNSATISFIED'] : []));
      const reported = new Set(
        errors.map((d) => `${d.package}/${/bundle (\S+) /.exec(d.message)![1]}/${d.line}`),
      );
      expect(reported).toEqual(unmetByScan(model));
    });

    it(`${name}: unchanged (old = new catalog), nothing is the change's fault`, async () => {
      const [before, after] = await Promise.all([
        validateCatalog(new DirectorySource(root)),
        validateCatalog(new DirectorySource(root)),
      ]);
      const findings = dependencyFindings(after.model, { base: before.model });
      expect(findings.filter((d) => d.level === 'error')).toEqual([]);
    });
  }
});
