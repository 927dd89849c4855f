// The crd-upgrade check over every package of the real catalogs: once as if nothing changed
// (base = head: every finding is pre-existing, so no error), once as if every package were
// new (every edge judged), with each reported field removal re-checked against the raw
// manifests by an independent path walk, so that an error is never a false one.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { DirectorySource, loadCatalog, validateCatalog, type CatalogReport } from '../src/catalog/index.js';
import type { Diagnostic } from '../src/catalog/diagnostics.js';
import { crdUpgradeCheck, directoryObjectLoader } from '../src/checks/crd-upgrade.js';
import type { CheckResult } from '../src/checks/check.js';
import { SHARED_DATA } from './helpers/oracle.js';

const catalogsDir = join(SHARED_DATA, 'real-catalogs');
const roots = existsSync(catalogsDir)
  ? readdirSync(catalogsDir, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .flatMap((repo) =>
        readdirSync(join(catalogsDir, repo.name, 'catalogs')).map((v) => join(repo.name, 'catalogs', v)),
      )
  : [];

async function run(root: string, report: CatalogReport, preexisting: boolean): Promise<CheckResult> {
  const dir = join(catalogsDir, root);
  return crdUpgradeCheck(
    [
      {
        path: root,
        head: report,
        base: preexisting ? report : undefined,
        packages: new Set(report.model.keys()),
      },
    ],
    directoryObjectLoader(() => dir),
  );
}

const withoutSuffix = (d: Diagnostic) =>
  `${d.rule}\0${d.message.replace(/ \(already so before this change\)$/, '')}`;

type Obj = Record<string, unknown>;

/** Independent of crd-diff's walker: follow a simple location through properties/items. */
function hasPath(schema: unknown, path: string): boolean {
  let node = schema as Obj | undefined;
  for (const part of path.split('.').slice(1)) {
    if (!node) return false;
    if (part === 'items' && typeof node.items === 'object' && !Array.isArray(node.items))
      node = node.items as Obj;
    else node = (node.properties as Obj | undefined)?.[part] as Obj | undefined;
  }
  return node !== undefined;
}

describe.skipIf(roots.length === 0)('crd-upgrade on the real catalogs', () => {
  const reports = new Map<string, CatalogReport>();
  beforeAll(async () => {
    for (const root of roots)
      reports.set(root, await validateCatalog(new DirectorySource(join(catalogsDir, root))));
  }, 60_000);

  it('finds the three real catalog roots', () => {
    expect([...roots].sort()).toEqual([
      'certified-operators/catalogs/v4.22',
      'community-operators-prod/catalogs/v4.16',
      'community-operators-prod/catalogs/v4.21',
    ]);
  });

  for (const root of ['community-operators-prod/catalogs/v4.21', 'certified-operators/catalogs/v4.22']) {
    it(`${root}: no manifests in the catalog (olm.csv.metadata only), so only notes and a neutral check`, async () => {
      for (const preexisting of [true, false]) {
        const result = await run(root, reports.get(root)!, preexisting);
        expect(result.conclusion).toBe('neutral');
        expect(result.findings.length).toBeGreaterThan(0);
        expect(new Set(result.findings.map((d) => `${d.rule} ${d.level}`))).toEqual(
          new Set(['CRD-NEEDS-IMAGE notice']),
        );
      }
    }, 60_000);
  }

  it('community v4.16 (manifests included): nothing is an error when nothing changed', async () => {
    const root = 'community-operators-prod/catalogs/v4.16';
    const before = await run(root, reports.get(root)!, true);
    const fresh = await run(root, reports.get(root)!, false);
    expect(before.findings.filter((d) => d.level === 'error')).toEqual([]);
    expect(before.conclusion).toBe('success');
    // The same problems, judged as new: errors, one for one.
    expect(fresh.conclusion).toBe('failure');
    expect(
      fresh.findings
        .filter((d) => d.level === 'error')
        .map(withoutSuffix)
        .sort(),
    ).toEqual(
      before.findings
        .filter((d) => d.level === 'warning')
        .map(withoutSuffix)
        .sort(),
    );
    for (const d of fresh.findings) {
      expect(d.file).toMatch(/^community-operators-prod\/catalogs\/v4\.16\/[^/]+\/catalog\.yaml$/);
      expect(d.line).toBeGreaterThan(0);
      expect(d.package).toBeTruthy();
      expect(d.hint).toBeTruthy();
    }
  }, 120_000);

  it('community v4.16: every reported field removal is real in the raw manifests; known problems are found', async () => {
    const root = 'community-operators-prod/catalogs/v4.16';
    const fresh = await run(root, reports.get(root)!, false);
    const full = await loadCatalog(new DirectorySource(join(catalogsDir, root)), { keepBundleObjects: true });
    const crdOf = (bundle: string, crd: string, version: string): unknown => {
      const b = full.config.bundles.find((x) => x.name === bundle)!;
      for (const text of b.objects ?? []) {
        const o = JSON.parse(text) as Obj;
        if (o.kind !== 'CustomResourceDefinition' || (o.metadata as Obj).name !== crd) continue;
        const v = ((o.spec as Obj).versions as Obj[]).find((x) => x.name === version)!;
        return (v.schema as Obj).openAPIV3Schema;
      }
      throw new Error(`${crd} not in ${bundle}`);
    };
    const removals = fresh.findings.filter((d) => d.rule === 'CRD-FIELD-REMOVED');
    expect(removals.length).toBeGreaterThan(0);
    const shape =
      /^upgrading (\S+)(?: \(and \d+ more: [^)]*\))? -> (\S+) \(.*?\): CRD (\S+), version (\S+), field (\S+): field removed/;
    for (const d of removals) {
      const m = shape.exec(d.message);
      expect(m, d.message).not.toBeNull();
      const [, from, to, crd, version, path] = m as unknown as string[];
      expect(hasPath(crdOf(from!, crd!, version!), path!), `${path} in ${from}`).toBe(true);
      expect(hasPath(crdOf(to!, crd!, version!), path!), `${path} in ${to}`).toBe(false);
    }
    // Checked by hand against the manifests (see the report): genuine incompatibilities.
    const messages = fresh.findings.map((d) => `${d.rule} ${d.message}`);
    expect(messages).toContainEqual(
      expect.stringMatching(
        /^CRD-ENUM upgrading openstack-lightspeed-operator.v0.0.1 -> openstack-lightspeed-operator.v0.0.2 .*field \^.spec.llmEndpointType: allowed enum values removed: \["bam", "fake_provider"\]/,
      ),
    );
    expect(messages).toContainEqual(
      expect.stringMatching(
        /^CRD-TYPE-CHANGED upgrading patterns-operator.v0.0.29 -> patterns-operator.v0.0.30 .*field \^.status.analyticsSent: type changed: "boolean" -> "integer"/,
      ),
    );
    expect(messages).toContainEqual(
      expect.stringMatching(
        /^CRD-REMOVED upgrading koku-metrics-operator.v3.3.2 -> koku-metrics-operator.v4.0.0 .*CRD kokumetricsconfigs.koku-metrics-cfg.openshift.io \(KokuMetricsConfig\) removed/,
      ),
    );
  }, 120_000);
});
