// A bundle pull request for a semver-mode package still on the bundle index (docs/bundles.md,
// "Packages still on the index"): the real hazelcast-platform-operator 5.13.0, whose CSV has
// no spec.replaces, added to the repository as it was before. The index's semver mode puts it
// after 5.12.0 in the v4.17 index only (`com.redhat.openshift.versions: v4.16`), and its CRDs
// compared with 5.12.0's along that edge show what the real release changed.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeIndexRepo, type IndexRepo } from './helpers/cop-repo.js';
import { changeArgs, runCommand } from './helpers/cli.js';

interface Check {
  name: string;
  conclusion: string;
  title: string;
  findings: { rule: string; level: string; message: string; file: string | null }[];
  notes?: string[];
}

describe('catalog-bot check: a bundle of a semver-mode package on the index (hazelcast-platform-operator 5.13.0)', () => {
  let r: IndexRepo;
  beforeAll(() => {
    r = makeIndexRepo('hazelcast-platform-operator', '5.13.0');
    r.branch('pr');
  });
  afterAll(() => r.cleanup());

  it('is checked on the semver graph of the one catalog it goes into, its CRD changes named at its CSV', async () => {
    const csv = `${r.bundleDir}/manifests/hazelcast-platform-operator.clusterserviceversion.yaml`;
    // The edge below can only come from the semver mode: the CSV names nothing it replaces.
    expect(readFileSync(join(r.repo, csv), 'utf8')).not.toMatch(/^\s*replaces:/m);
    const got = await runCommand('check', changeArgs(r.repo, 'main', 'pr'));
    expect(got.err).toBe('');
    const checks = (JSON.parse(got.out) as { checks: Check[] }).checks;
    const byName = (n: string): Check => checks.find((c) => c.name === `catalog-bot/${n}`)!;
    expect(byName('upgrade-graph').notes?.[0]).toBe(
      'hazelcast-platform-operator is on the bundle index (semver-mode); checked on the catalogs the index will serve, emulated from operators/hazelcast-platform-operator: v4.12, v4.17: default channel alpha; channels alpha (14 bundles)',
    );
    // v4.12's index does not take 5.13.0: only v4.17's changes.
    expect(byName('validate').title).toBe('On the bundle index: 1 catalog valid');
    expect(byName('upgrade-graph').conclusion).toBe('success');
    const crd = byName('crd-upgrade');
    expect(crd.conclusion).toBe('failure');
    expect(got.code).toBe(1);
    const required = crd.findings.find((f) => f.rule === 'CRD-REQUIRED-ADDED');
    expect(required).toMatchObject({ level: 'error', file: csv });
    expect(required!.message).toContain(
      'upgrading hazelcast-platform-operator.v5.12.0 -> hazelcast-platform-operator.v5.13.0',
    );
    expect(required!.message).toContain('new required fields: [licenseKeySecretName]');
    expect(required!.message).toMatch(/\(as the bundle index will serve it for v4\.17\)$/);
  }, 60_000);
});
