// catalog-bot/ocp-continuity: every rule with a catalog set that breaks it and one that
// passes, and the findings on the six real community-operators packages.
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { DirectorySource, validateCatalog } from '../src/catalog/index.js';
import { runnableBundles } from '../src/catalog/olm/ocp-continuity.js';
import { runPrChecksInProcess } from '../src/checks/pr.js';
import {
  allowedBundleRegistriesOf,
  DEFAULT_OCP_CONFIG,
  ocpContinuityCheck,
  ocpContinuityFindings,
  type OcpCatalog,
  type OcpConfig,
  type OcpMatrix,
} from '../src/checks/ocp-continuity.js';
import { bundle, channel, pkg, yamlStream, type Obj } from './helpers/catalogs.js';
import { haveRealRepo, ocpCatalogs, REAL_REPO } from './helpers/ocp-history.js';
import { removeTree, writeTree } from './helpers/oracle.js';
import { runCommand } from './helpers/cli.js';
import { commitBaseAndPr } from './helpers/git.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach(removeTree));

/** Catalogs named like `v4.20`, each the given objects in `<name>/foo/catalog.yaml`. */
async function catalogs(spec: Record<string, Obj[]>): Promise<OcpCatalog[]> {
  const files: Record<string, string> = {};
  for (const [name, objs] of Object.entries(spec))
    files[`catalogs/${name}/foo/catalog.yaml`] = yamlStream(...objs);
  const dir = writeTree(files);
  dirs.push(dir);
  const out: OcpCatalog[] = [];
  for (const name of Object.keys(spec)) {
    const report = await validateCatalog(new DirectorySource(join(dir, 'catalogs', name)), {
      keepBundleObjects: true,
    });
    out.push({ name, root: `catalogs/${name}`, model: report.model });
  }
  return out;
}

async function findings(spec: Record<string, Obj[]>, config?: OcpConfig) {
  return ocpContinuityFindings({ catalogs: await catalogs(spec), ...(config ? { config } : {}) });
}

const withProps = (version: string, props: Obj[]): Obj => {
  const b = bundle(version);
  return { ...b, properties: [...(b.properties as Obj[]), ...props] };
};
const maxOcp = (value: unknown): Obj => ({ type: 'olm.maxOpenShiftVersion', value });
const csvMetadata = (extra: Obj = {}): Obj => ({
  type: 'olm.csv.metadata',
  value: { displayName: 'Foo', provider: { name: 'Example' }, ...extra },
});

/** foo with stable: 1.0.0 <- 1.1.0. */
const base = (): Obj[] => [
  pkg(),
  channel(['foo.v1.0.0', { name: 'foo.v1.1.0', replaces: 'foo.v1.0.0' }]),
  bundle('1.0.0'),
  bundle('1.1.0'),
];

/** base() with 1.2.0 added on top of stable. */
const grown = (): Obj[] => [
  pkg(),
  channel([
    'foo.v1.0.0',
    { name: 'foo.v1.1.0', replaces: 'foo.v1.0.0' },
    { name: 'foo.v1.2.0', replaces: 'foo.v1.1.0' },
  ]),
  bundle('1.0.0'),
  bundle('1.1.0'),
  bundle('1.2.0'),
];

describe('continuity between consecutive OpenShift catalogs', () => {
  it('passes: the next catalog has the same bundles, or more', async () => {
    expect(await findings({ 'v4.20': base(), 'v4.21': base() })).toEqual([]);
    expect(await findings({ 'v4.20': base(), 'v4.21': grown() })).toEqual([]);
  });

  it('passes: a bundle missing from the next catalog that a newer entry still replaces', async () => {
    const trimmed = [pkg(), channel([{ name: 'foo.v1.1.0', replaces: 'foo.v1.0.0' }]), bundle('1.1.0')];
    expect(await findings({ 'v4.20': base(), 'v4.21': trimmed })).toEqual([]);
  });

  it('fails: bundles of v4.20 with neither themselves nor an upgrade in v4.21, naming both catalogs and the edit', async () => {
    const only = [pkg(), channel(['foo.v1.2.0']), bundle('1.2.0')];
    const result = await findings({ 'v4.20': base(), 'v4.21': only });
    expect(result).toEqual([
      {
        rule: 'OCP-NO-WAY-FORWARD',
        level: 'error',
        message:
          'catalog v4.20 -> v4.21: bundles (2) foo.v1.0.0 (1.0.0), foo.v1.1.0 (1.1.0) of package "foo" run on clusters from v4.20 in channel "stable" (on classic OLM\'s upgrade path; installed or upgraded to by OLM v1), but channel "stable" of v4.21 has neither them nor an upgrade from them: after the cluster upgrades to OpenShift 4.21, classic OLM and OLM v1 leave them without updates',
        file: 'catalogs/v4.21/foo/catalog.yaml',
        line: expect.any(Number),
        package: 'foo',
        hint: 'In v4.21, add `foo.v1.0.0`, `foo.v1.1.0` to the `skips` of foo.v1.2.0 (channel "stable"), or keep them in the channel as in v4.20.',
      },
    ]);
  });

  it('a bundle only installed by name is a warning, not an error', async () => {
    // 1.0.1 is skipped by 1.1.0: off the classic chain, and v1 never moves anyone to it.
    const skipped = [
      pkg(),
      channel([
        'foo.v1.0.0',
        { name: 'foo.v1.0.1', replaces: 'foo.v1.0.0' },
        { name: 'foo.v1.1.0', replaces: 'foo.v1.0.0', skips: ['foo.v1.0.1'] },
      ]),
      bundle('1.0.0'),
      bundle('1.0.1'),
      bundle('1.1.0'),
    ];
    const [model] = await catalogs({ 'v4.20': skipped });
    const foo = model!.model.get('foo')!;
    expect(
      runnableBundles(foo, foo.channels.get('stable')!).map((r) => [r.bundle.name, r.reach.sort()]),
    ).toEqual([
      ['foo.v1.0.0', ['classic']],
      ['foo.v1.0.1', ['pinned']],
      ['foo.v1.1.0', ['classic', 'v1']],
    ]);
    const result = await findings({ 'v4.20': skipped, 'v4.21': base() });
    expect(result.map((d) => [d.rule, d.level])).toEqual([['OCP-NO-WAY-FORWARD', 'warning']]);
    expect(result[0]!.message).toMatch(
      /foo\.v1\.0\.1 \(1\.0\.1\) .*installed only when asked for by name or version/,
    );
  });

  it('fails: a package dropped from v4.21', async () => {
    const result = await findings({ 'v4.20': base(), 'v4.21': [], 'v4.22': base() });
    expect(result.map((d) => [d.rule, d.level, d.file])).toEqual([
      ['OCP-PACKAGE-DROPPED', 'error', 'catalogs/v4.20/foo/catalog.yaml'],
    ]);
    expect(result[0]!.message).toBe(
      'catalog v4.20 -> v4.21: package "foo" is in v4.20 but not in v4.21: clusters that upgrade to OpenShift 4.21 lose it (no updates, and it can no longer be installed); its newest bundle foo.v1.1.0 declares no olm.maxOpenShiftVersion below 4.21 that would hold them back',
    );
    expect(result[0]!.hint).toMatch(/catalog-bot ocp-promote v4\.20 v4\.21 --package foo/);
  });

  it("notice only: the newest bundle's olm.maxOpenShiftVersion stops clusters before v4.21", async () => {
    const retiring = [...base().slice(0, 3), withProps('1.1.0', [maxOcp('4.20')])];
    const check = ocpContinuityCheck({ catalogs: await catalogs({ 'v4.20': retiring, 'v4.21': [] }) });
    expect(check.conclusion).toBe('success');
    expect(check.findings.map((d) => [d.rule, d.level])).toEqual([['OCP-PACKAGE-RETIRED', 'notice']]);
    expect(check.findings[0]!.message).toMatch(
      /newest bundle foo\.v1\.1\.0 declares olm\.maxOpenShiftVersion 4\.20, so clusters running it cannot upgrade to OpenShift 4\.21 \(clusters on foo\.v1\.0\.0, which declare no such limit, can/,
    );
    // A limit at 4.21 does not hold clusters back from 4.21.
    const late = [...base().slice(0, 3), withProps('1.1.0', [maxOcp('4.21')])];
    expect((await findings({ 'v4.20': late, 'v4.21': [] })).map((d) => d.rule)).toEqual([
      'OCP-PACKAGE-DROPPED',
    ]);
  });

  it('a bundle whose own max stops clusters before the next version needs no way forward there', async () => {
    const capped = [pkg(), channel(['foo.v1.0.0']), withProps('1.0.0', [maxOcp('4.20')])];
    const next = [pkg(), channel(['foo.v2.0.0']), bundle('2.0.0')];
    expect(await findings({ 'v4.20': capped, 'v4.21': next })).toEqual([]);
    const uncapped = [pkg(), channel(['foo.v1.0.0']), bundle('1.0.0')];
    expect((await findings({ 'v4.20': uncapped, 'v4.21': next })).map((d) => d.rule)).toEqual([
      'OCP-NO-WAY-FORWARD',
    ]);
  });

  it('fails: a channel renamed between versions', async () => {
    const renamed = [
      pkg('foo', { defaultChannel: 'stable-v1' }),
      channel(['foo.v1.0.0', { name: 'foo.v1.1.0', replaces: 'foo.v1.0.0' }], { name: 'stable-v1' }),
      bundle('1.0.0'),
      bundle('1.1.0'),
    ];
    const result = await findings({ 'v4.20': base(), 'v4.21': renamed });
    expect(result.map((d) => [d.rule, d.level, d.file])).toEqual([
      ['OCP-CHANNEL-DROPPED', 'error', 'catalogs/v4.20/foo/catalog.yaml'],
    ]);
    expect(result[0]!.message).toMatch(
      /channel "stable" of package "foo" is in v4\.20 \(with foo\.v1\.0\.0, foo\.v1\.1\.0\) but not in v4\.21, which has a new channel "stable-v1" holding its head foo\.v1\.1\.0 instead \(renamed\?\)/,
    );
    expect(result[0]!.hint).toMatch(/Keep channel "stable" in v4\.21/);
    // Keeping the old channel beside the new one passes.
    const both = [...renamed, channel(['foo.v1.0.0', { name: 'foo.v1.1.0', replaces: 'foo.v1.0.0' }])];
    expect(await findings({ 'v4.20': base(), 'v4.21': both })).toEqual([]);
  });

  it('a channel of 2,500 entries stays fast (classic answers only past MAX_V1_ENTRIES)', async () => {
    const n = 2500;
    const names = Array.from({ length: n }, (_, i) => `1.0.${i}`);
    const big = [
      pkg(),
      channel(
        names.map((v, i) =>
          i === 0 ? `foo.v${v}` : { name: `foo.v${v}`, replaces: `foo.v${names[i - 1]}` },
        ),
      ),
      ...names.map((v) => bundle(v)),
    ];
    const cats = await catalogs({ 'v4.20': big, 'v4.21': [pkg(), channel(['foo.v2.0.0']), bundle('2.0.0')] });
    const started = performance.now();
    const result = ocpContinuityFindings({ catalogs: cats });
    expect(performance.now() - started).toBeLessThan(2000);
    expect(result.map((d) => [d.rule, d.level])).toEqual([['OCP-NO-WAY-FORWARD', 'error']]);
    expect(result[0]!.message).toMatch(
      /^catalog v4\.20 -> v4\.21: bundles \(2500\) .* classic OLM and OLM v1 leave them without updates$/,
    );
  });

  it('only the packages a change touches, and only OpenShift catalogs', async () => {
    const cats = await catalogs({ 'v4.20': base(), 'v4.21': [], dev: [] });
    expect(ocpContinuityFindings({ catalogs: cats, packages: new Set(['bar']) })).toEqual([]);
    expect(ocpContinuityFindings({ catalogs: cats, packages: new Set(['foo']) })).toHaveLength(1);
  });
});

describe('per-version rules', () => {
  const objectProp = {
    type: 'olm.bundle.object',
    value: { data: Buffer.from('{"kind":"ConfigMap"}').toString('base64') },
  };
  const withObject = (): Obj[] => [pkg(), channel(['foo.v1.0.0']), withProps('1.0.0', [objectProp])];

  it('olm.bundle.object: refused from v4.17 on, fine before, configurable', async () => {
    expect(await findings({ 'v4.16': withObject() })).toEqual([]);
    const at17 = await findings({ 'v4.17': withObject() });
    expect(at17.map((d) => [d.rule, d.level, d.file])).toEqual([
      ['OCP-BUNDLE-OBJECT', 'error', 'catalogs/v4.17/foo/catalog.yaml'],
    ]);
    expect(at17[0]!.message).toBe(
      'catalog v4.17: bundle foo.v1.0.0 of package "foo" carries olm.bundle.object, which catalogs from v4.17 on must not (they carry olm.csv.metadata)',
    );
    const later = { ...DEFAULT_OCP_CONFIG, bundleObjectForbiddenFrom: 'v4.18' };
    expect(await findings({ 'v4.17': withObject() }, later)).toEqual([]);
    expect(
      await findings({ 'v4.18': withObject() }, { ...DEFAULT_OCP_CONFIG, bundleObjectForbiddenFrom: null }),
    ).toEqual([]);
    const migrated = [pkg(), channel(['foo.v1.0.0']), withProps('1.0.0', [csvMetadata()])];
    expect(await findings({ 'v4.17': migrated })).toEqual([]);
  });

  it('check_bundle_images_in_fbc: a bundle image outside config.yaml allowed_bundle_registries is an error, a prefix match as upstream', async () => {
    const two = [
      pkg(),
      channel(['foo.v1.0.0', { name: 'foo.v1.1.0', replaces: 'foo.v1.0.0' }]),
      bundle('1.0.0', { image: 'quay.io/org-foo/registry/bundle@sha256:123' }),
      bundle('1.1.0', { image: 'quay.io/org-bar/registry/bundle@sha256:123' }),
    ];
    const run = async (allowed?: string[]) =>
      ocpContinuityFindings({
        catalogs: await catalogs({ 'v4.14': two }),
        ...(allowed ? { allowedBundleRegistries: allowed } : {}),
      });
    // operator-pipelines' own cases: config not set, all allowed, one registry not allowed.
    expect(await run()).toEqual([]);
    expect(await run(['quay.io/org-foo/', 'quay.io/org-bar/'])).toEqual([]);
    const refused = await run(['quay.io/org-foo/']);
    expect(refused.map((d) => [d.rule, d.level, d.file])).toEqual([
      ['OCP-BUNDLE-REGISTRY', 'error', 'catalogs/v4.14/foo/catalog.yaml'],
    ]);
    expect(refused[0]!.message).toContain('foo.v1.1.0');
    expect(refused[0]!.message).toContain('quay.io/org-bar/registry/bundle@sha256:123');
    // A prefix, not a host: quay.io/org-foo-evil/ does not start with quay.io/org-foo/.
    const lookalike = [pkg(), channel(['foo.v1.0.0']), bundle('1.0.0', { image: 'quay.io/org-fooevil/b:1' })];
    expect(
      (
        await ocpContinuityFindings({
          catalogs: await catalogs({ 'v4.14': lookalike }),
          allowedBundleRegistries: ['quay.io/org-foo/'],
        })
      ).map((d) => d.rule),
    ).toEqual(['OCP-BUNDLE-REGISTRY']);
    expect(allowedBundleRegistriesOf({ allowed_bundle_registries: ['quay.io/a/', 7, null] })).toEqual([
      'quay.io/a/',
    ]);
    expect(allowedBundleRegistriesOf({ allowed_bundle_registries: 'quay.io/a/' })).toEqual([]);
  });

  it('olm.maxOpenShiftVersion below the catalog version, or malformed', async () => {
    const one = (value: unknown): Obj[] => [
      pkg(),
      channel(['foo.v1.0.0']),
      withProps('1.0.0', [maxOcp(value)]),
    ];
    expect(await findings({ 'v4.20': one('4.20') })).toEqual([]);
    expect(await findings({ 'v4.20': one('4.21') })).toEqual([]);
    const below = await findings({ 'v4.20': one('4.19') });
    expect(below.map((d) => [d.rule, d.level])).toEqual([['OCP-MAX-OPENSHIFT-BELOW', 'error']]);
    expect(below[0]!.message).toMatch(
      /declares olm\.maxOpenShiftVersion 4\.19, below the OpenShift 4\.20 this catalog serves/,
    );
    for (const bad of [4.1, 'v4.20', '4.20.1']) {
      const r = await findings({ 'v4.20': one(bad) });
      expect(r.map((d) => [d.rule, d.level])).toEqual([['OCP-MAX-OPENSHIFT-MALFORMED', 'error']]);
    }
    const twice = [pkg(), channel(['foo.v1.0.0']), withProps('1.0.0', [maxOcp('4.21'), maxOcp('4.22')])];
    expect((await findings({ 'v4.20': twice }))[0]!.message).toMatch(
      /declares olm\.maxOpenShiftVersion 2 times/,
    );
  });

  it("minKubeVersion above the Kubernetes version of the catalog's OpenShift", async () => {
    const kube = (min: string): Obj[] => [
      pkg(),
      channel(['foo.v1.0.0']),
      withProps('1.0.0', [csvMetadata({ minKubeVersion: min })]),
    ];
    // OpenShift 4.20 runs Kubernetes 1.33.
    expect(await findings({ 'v4.20': kube('1.33.4') })).toEqual([]);
    const above = await findings({ 'v4.20': kube('1.34.0') });
    expect(above.map((d) => [d.rule, d.level, d.file])).toEqual([
      ['OCP-MIN-KUBE-ABOVE', 'error', 'catalogs/v4.20/foo/catalog.yaml'],
    ]);
    expect(above[0]!.message).toMatch(
      /needs Kubernetes 1\.34\.0 \(minKubeVersion\), but OpenShift 4\.20 runs Kubernetes 1\.33/,
    );
    const configured = {
      ...DEFAULT_OCP_CONFIG,
      kubernetesVersions: [{ openshift: 'v4.20', kubernetes: '1.34' }],
    };
    expect(await findings({ 'v4.20': kube('1.34.0') }, configured)).toEqual([]);
    // A CSV kept whole (olm.bundle.object) is read too.
    const csv = { kind: 'ClusterServiceVersion', spec: { minKubeVersion: '1.30.0' } };
    const objects = [
      pkg(),
      channel(['foo.v1.0.0']),
      withProps('1.0.0', [
        { type: 'olm.bundle.object', value: { data: Buffer.from(JSON.stringify(csv)).toString('base64') } },
      ]),
    ];
    expect((await findings({ 'v4.16': objects })).map((d) => d.rule)).toEqual(['OCP-MIN-KUBE-ABOVE']);
    expect(
      await findings({ 'v4.17': objects }, { ...DEFAULT_OCP_CONFIG, bundleObjectForbiddenFrom: null }),
    ).toEqual([]);
  });
});

describe.skipIf(!haveRealRepo)('the six real community-operators packages, v4.12 to v4.22', () => {
  it('finds exactly the real problems', async () => {
    const cats: OcpCatalog[] = [];
    for (const name of readdirSync(join(REAL_REPO, 'catalogs')).sort()) {
      const report = await validateCatalog(new DirectorySource(join(REAL_REPO, 'catalogs', name)), {
        keepBundleObjects: true,
      });
      cats.push({ name, root: `catalogs/${name}`, model: report.model });
    }
    expect(cats).toHaveLength(11);
    const result = ocpContinuityFindings({ catalogs: cats });
    expect(result.map((d) => [d.rule, d.level, d.package, `${d.file}:${d.line}`])).toEqual([
      // v4.12-v4.15 render deprecated.yaml (channels v0.3, v0.4); from v4.16 basic.yaml has only alpha.
      [
        'OCP-CHANNEL-DROPPED',
        'error',
        'ecr-secret-operator',
        'catalogs/v4.15/ecr-secret-operator/catalog.yaml:9',
      ],
      [
        'OCP-CHANNEL-DROPPED',
        'error',
        'ecr-secret-operator',
        'catalogs/v4.15/ecr-secret-operator/catalog.yaml:15',
      ],
      // never promoted to v4.22 (no version_promotion_strategy), and no olm.maxOpenShiftVersion.
      [
        'OCP-PACKAGE-DROPPED',
        'error',
        'visionone-containersecurity',
        'catalogs/v4.21/visionone-containersecurity/catalog.yaml:2',
      ],
    ]);
    expect(result[0]!.message).toMatch(
      /^catalog v4\.15 -> v4\.16: channel "v0\.3" .*holding its head ecr-secret-operator\.v0\.3\.2/,
    );
    expect(result[1]!.message).toMatch(
      /^catalog v4\.15 -> v4\.16: channel "v0\.4" .*holding its head ecr-secret-operator\.v0\.4\.1/,
    );
    expect(result[2]!.message).toMatch(/^catalog v4\.21 -> v4\.22: package "visionone-containersecurity"/);
  });
});

describe('the ocp key of .github/catalog-bot.yml', () => {
  it('defaults, a valid setting, and bad values named with their line', async () => {
    const { parseRepoConfig } = await import('../src/checks/config.js');
    expect(parseRepoConfig(undefined).config.ocp).toEqual({
      bundleObjectForbiddenFrom: 'v4.17',
      kubernetesVersions: [],
    });
    const good = parseRepoConfig(
      'ocp:\n  bundleObjectForbiddenFrom: never\n  kubernetesVersions:\n    - {openshift: v5.0, kubernetes: "1.36"}\n',
    );
    expect(good.problems).toEqual([]);
    expect(good.config.ocp).toEqual({
      bundleObjectForbiddenFrom: 'never',
      kubernetesVersions: [{ openshift: 'v5.0', kubernetes: '1.36' }],
    });
    // `never` switches the olm.bundle.object rule off.
    const objectProp = {
      type: 'olm.bundle.object',
      value: { data: Buffer.from('{"kind":"ConfigMap"}').toString('base64') },
    };
    const cats = await catalogs({
      'v4.18': [pkg(), channel(['foo.v1.0.0']), withProps('1.0.0', [objectProp])],
    });
    expect(ocpContinuityFindings({ catalogs: cats, config: good.config.ocp })).toEqual([]);
    expect(
      ocpContinuityFindings({ catalogs: cats, config: parseRepoConfig(undefined).config.ocp }),
    ).toHaveLength(1);
    const bad = parseRepoConfig(
      'ocp:\n  bundleObjectForbiddenFrom: 4.17\n  kubernetesVersions:\n    - {openshift: "4.20", kubernetes: "1.33"}\n',
    );
    expect(bad.problems.map((p) => [p.key, p.line])).toEqual([
      ['ocp.bundleObjectForbiddenFrom', 2],
      ['ocp.kubernetesVersions[0].openshift', 4],
    ]);
  });
});

describe('in the pull-request checks (catalog-bot check)', () => {
  /** main: foo in v4.20, v4.21 and v4.22 (or as `baseSpec` says); pr: `edit` applied. */
  function repo(
    edit: (dir: string) => void,
    baseSpec = ['v4.20', 'v4.21', 'v4.22'],
    baseFiles: Record<string, string> = {},
  ): string {
    const files: Record<string, string> = { ...baseFiles };
    for (const v of baseSpec) files[`catalogs/${v}/foo/catalog.yaml`] = yamlStream(...base());
    files['catalogs/v4.22/bar/catalog.yaml'] = yamlStream(
      pkg('bar'),
      channel(['bar.v1.0.0'], { package: 'bar' }),
      bundle('1.0.0', {}, 'bar'),
    );
    const dir = writeTree(files);
    dirs.push(dir);
    return commitBaseAndPr(dir, edit);
  }
  const ocpCheck = async (dir: string) =>
    (await runPrChecksInProcess({ repo: dir, base: 'main', head: 'pr' })).checks.find(
      (c) => c.name === 'catalog-bot/ocp-continuity',
    );

  it('fails a change that drops a package from v4.22, reading the untouched v4.21 too', async () => {
    const dir = repo((d) => rmSync(join(d, 'catalogs/v4.22/foo'), { recursive: true }));
    const check = await ocpCheck(dir);
    expect(check?.conclusion).toBe('failure');
    expect(check?.findings.map((d) => [d.rule, d.level, d.file])).toEqual([
      ['OCP-PACKAGE-DROPPED', 'error', 'catalogs/v4.21/foo/catalog.yaml'],
    ]);
    // The summary shows the touched package across the catalogs read (bar is not touched).
    expect(check?.summary).toContain('| package | v4.21 | v4.22 |\n|---|---|---|\n| foo | 1.1.0 ✗ | - |\n');
  });

  it('a loss the base already had is a warning; a change that touches no OpenShift catalog has no such check', async () => {
    const dir = repo(
      (d) => {
        writeFileSync(join(d, 'catalogs/v4.21/foo/catalog.yaml'), yamlStream(...grown()));
      },
      ['v4.20', 'v4.21'],
    );
    // foo is in v4.21 but not v4.22 already on main; the pull request only edits v4.21.
    const check = await ocpCheck(dir);
    expect(check?.conclusion).toBe('success');
    expect(check?.findings.map((d) => [d.rule, d.level])).toEqual([['OCP-PACKAGE-DROPPED', 'warning']]);
    expect(check?.findings[0]!.message).toMatch(/\(already so before this change\)$/);
    const other = repo((d) => writeFileSync(join(d, 'README.md'), 'hello\n'));
    expect(await ocpCheck(other)).toBeUndefined();
  });

  it("a bundle image outside the base config.yaml's allowed_bundle_registries fails, even when the pull request allows it", async () => {
    const dir = repo(
      (d) => {
        const grown = [
          ...base().filter((o) => o.schema !== 'olm.channel'),
          channel([
            'foo.v1.0.0',
            { name: 'foo.v1.1.0', replaces: 'foo.v1.0.0' },
            { name: 'foo.v1.2.0', replaces: 'foo.v1.1.0' },
          ]),
          bundle('1.2.0', { image: 'docker.io/someone/foo-bundle:v1.2.0' }),
        ];
        writeFileSync(join(d, 'catalogs/v4.22/foo/catalog.yaml'), yamlStream(...grown));
        // The attack: the same pull request adds its registry to config.yaml.
        writeFileSync(
          join(d, 'config.yaml'),
          'allowed_bundle_registries: ["quay.io/example/", "docker.io/"]\n',
        );
      },
      undefined,
      {
        'config.yaml':
          'organization: community-operators\nallowed_bundle_registries:\n  - quay.io/example/\n',
      },
    );
    const check = await ocpCheck(dir);
    expect(check?.conclusion).toBe('failure');
    expect(check?.findings.map((d) => [d.rule, d.level, d.file])).toEqual([
      ['OCP-BUNDLE-REGISTRY', 'error', 'catalogs/v4.22/foo/catalog.yaml'],
    ]);
    expect(check?.findings[0]!.message).toContain('docker.io/someone/foo-bundle:v1.2.0');
  });
});

describe.skipIf(!haveRealRepo)('check_bundle_images_in_fbc on the real catalogs', () => {
  /** Every catalog of the snapshot, and its olm.bundle images read straight from the files. */
  async function realCatalogs(): Promise<{ catalogs: OcpCatalog[]; images: Map<string, string[]> }> {
    const catalogs: OcpCatalog[] = [];
    const images = new Map<string, string[]>();
    for (const name of readdirSync(join(REAL_REPO, 'catalogs')).sort()) {
      const root = join(REAL_REPO, 'catalogs', name);
      const report = await validateCatalog(new DirectorySource(root));
      catalogs.push({ name, root: `catalogs/${name}`, model: report.model });
      const found: string[] = [];
      for (const pkgDir of readdirSync(root))
        for (const file of readdirSync(join(root, pkgDir)))
          for (const doc of parseAllDocuments(readFileSync(join(root, pkgDir, file), 'utf8'))) {
            const o = doc.toJS() as { schema?: string; image?: string } | null;
            if (o?.schema === 'olm.bundle' && o.image) found.push(o.image);
          }
      images.set(name, found);
    }
    return { catalogs, images };
  }

  it("community-operators-prod's config.yaml allows every bundle image; one prefix less flags exactly the images under it", async () => {
    const config = parse(readFileSync(join(REAL_REPO, 'config.yaml'), 'utf8')) as unknown;
    const allowed = allowedBundleRegistriesOf(config);
    expect(allowed.length).toBeGreaterThan(1);
    const { catalogs: real, images } = await realCatalogs();
    const registry = (allowedBundleRegistries: string[]) =>
      ocpContinuityFindings({ catalogs: real, allowedBundleRegistries }).filter(
        (d) => d.rule === 'OCP-BUNDLE-REGISTRY',
      );
    expect(registry(allowed)).toEqual([]);
    // What operator-pipelines would say with the first prefix alone: every image not under it.
    const [first] = allowed;
    const outside = [...images].flatMap(([name, list]) =>
      list.filter((i) => !i.startsWith(first!)).map((i) => `${name} ${i}`),
    );
    expect(outside.length).toBeGreaterThan(0);
    const flagged = registry([first!]).map(
      (d) => `${/^catalog (\S+):/.exec(d.message)![1]} ${/the image (\S+),/.exec(d.message)![1]}`,
    );
    expect(flagged.sort()).toEqual(outside.sort());
  }, 60_000);
});

describe.skipIf(!haveRealRepo)('catalog-bot ocp-matrix', () => {
  async function matrix(...args: string[]): Promise<{ code: number; output: string }> {
    const { code, out } = await runCommand('ocp-matrix', args);
    return { code, output: out };
  }

  it('the real packages: heads per version, gaps, and the findings marked', async () => {
    const { code, output } = await matrix('--repo', REAL_REPO, '--format', 'json');
    expect(code).toBe(1);
    const m = JSON.parse(output) as OcpMatrix;
    expect(m.catalogs).toEqual(ocpCatalogs(12, 22));
    const row = (p: string) => m.packages.find((x) => x.package === p)!.cells;
    expect(row('ecr-secret-operator')['v4.15']).toEqual({
      defaultChannel: 'v0.4',
      head: 'ecr-secret-operator.v0.4.1',
      version: '0.4.1',
      level: 'error',
    });
    expect(row('ecr-secret-operator')['v4.16']).toMatchObject({
      defaultChannel: 'alpha',
      version: '0.5.0',
      level: null,
    });
    expect(row('visionone-containersecurity')['v4.21']).toMatchObject({ level: 'error' });
    expect(row('visionone-containersecurity')['v4.22']).toBeNull();
    expect(row('clusterpulse')['v4.16']).toBeNull();
    expect(row('clusterpulse')['v4.17']).toMatchObject({
      defaultChannel: 'fast-v1',
      head: 'clusterpulse.v1.0.2',
    });
    expect(m.findings).toHaveLength(3);
  });

  it('markdown and text, one package, and usage errors', async () => {
    const md = await matrix('--repo', REAL_REPO, '--format', 'markdown', '--package', 'dotvirt-operator');
    expect(md.code).toBe(0);
    expect(md.output).toBe(
      [
        '| package | v4.12 | v4.13 | v4.14 | v4.15 | v4.16 | v4.17 | v4.18 | v4.19 | v4.20 | v4.21 | v4.22 |',
        '|---|---|---|---|---|---|---|---|---|---|---|---|',
        '| dotvirt-operator | - | - | - | - | - | - | 0.0.32 | 0.0.32 | 0.0.32 | 0.0.32 | 0.0.32 |',
        '',
      ].join('\n'),
    );
    const text = await matrix('--repo', REAL_REPO, '--package', 'visionone-containersecurity');
    expect(text.output).toMatch(
      /^package +v4\.12 .*\nvisionone-containersecurity +0\.0\.5 .* 0\.0\.5 ✗ +-\n/,
    );
    expect(text.output).toMatch(/error OCP-PACKAGE-DROPPED: catalog v4\.21 -> v4\.22/);
    expect((await matrix('--format', 'xml')).code).toBe(2);
    expect((await matrix('--repo', join(REAL_REPO, 'nope'))).code).toBe(2);
  });
});
