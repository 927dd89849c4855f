// catalog-bot/dependencies: each rule with a catalog that breaks it and one that does not,
// the OLM docs' two dependency scenarios, CEL and compound constraints. Catalogs are
// written to disk and loaded with the real loader, like the upgrade-graph tests.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  compileCel,
  celMatches,
  dependencyIndex,
  parseDependency,
  type CatalogBundle,
} from '../src/catalog/olm/dependencies.js';
import type { Diagnostic } from '../src/catalog/diagnostics.js';
import { DirectorySource, validateCatalog, type CatalogReport } from '../src/catalog/index.js';
import { dependenciesCheck, dependencyFindings, DEPENDENCIES_CHECK } from '../src/checks/dependencies.js';
import type { CheckedRoot } from '../src/checks/checked-root.js';
import { bundle, channel, olmPackageProp, pkg, yamlStream, type Obj } from './helpers/catalogs.js';
import { tempTrees } from './helpers/oracle.js';

const trees = tempTrees();

// ---- Builders: packages with a replaces chain, bundles with provided and required APIs.

const gvk = (kind: string, version = 'v1', group = 'example.com'): Obj => ({
  type: 'olm.gvk',
  value: { group, version, kind },
});
const gvkReq = (kind: string, version = 'v1', group = 'example.com'): Obj => ({
  type: 'olm.gvk.required',
  value: { group, version, kind },
});
const pkgReq = (packageName: string, versionRange: string): Obj => ({
  type: 'olm.package.required',
  value: { packageName, versionRange },
});
const constraint = (value: Obj): Obj => ({ type: 'olm.constraint', value });

/** A bundle `<name>.v<version>` of package `name` with extra properties. */
const b = (name: string, version: string, ...props: Obj[]): Obj =>
  bundle(version, { properties: [olmPackageProp(version, name), ...props] }, name);

/** A package whose channel `stable` chains the bundles in order (each replaces the previous). */
function operator(name: string, bundles: Obj[], extra: { channel?: string; skips?: string[][] } = {}): Obj[] {
  const entries = bundles.map((x, i) => {
    const e: Obj = { name: x.name };
    if (i > 0) e.replaces = bundles[i - 1]!.name;
    const skips = extra.skips?.[i];
    if (skips) e.skips = skips;
    return e;
  });
  const ch = extra.channel ?? 'stable';
  return [pkg(name, { defaultChannel: ch }), channel(entries, { package: name, name: ch }), ...bundles];
}

interface Loaded {
  report: CatalogReport;
  dir: string;
}

/** Each package in its own `<name>/catalog.yaml`. */
async function load(...packages: Obj[][]): Promise<Loaded> {
  const files: Record<string, string> = {};
  for (const objs of packages) files[`${objs[0]!.name as string}/catalog.yaml`] = yamlStream(...objs);
  const dir = trees.write(files);
  const report = await validateCatalog(new DirectorySource(dir));
  return { report, dir };
}

/** The 1-based line of the nth line of `<pkg>/catalog.yaml` containing `text`. */
function lineOf(l: Loaded, pkgName: string, text: string, nth = 0): number {
  const lines = readFileSync(join(l.dir, pkgName, 'catalog.yaml'), 'utf8').split('\n');
  const found = lines.flatMap((line, i) => (line.includes(text) ? [i + 1] : []));
  if (found[nth] === undefined) throw new Error(`no ${text} in ${pkgName}`);
  return found[nth];
}

/** The first line of the YAML document holding that line: where a blob's position is. */
function docLineOf(l: Loaded, pkgName: string, text: string, nth = 0): number {
  const lines = readFileSync(join(l.dir, pkgName, 'catalog.yaml'), 'utf8').split('\n');
  let line = lineOf(l, pkgName, text, nth);
  while (line > 1 && lines[line - 2] !== '---') line--;
  return line;
}

/** Findings when `packages` of `after` are new (no old catalog). */
async function findings(packages: string[], ...catalog: Obj[][]): Promise<{ f: Diagnostic[]; l: Loaded }> {
  const l = await load(...catalog);
  return { f: dependencyFindings(l.report.model, { packages: new Set(packages) }), l };
}

async function compare(before: Obj[][], after: Obj[][], changed: string[]) {
  const b0 = await load(...before);
  const a0 = await load(...after);
  const root: CheckedRoot = {
    path: 'catalogs/v4.21',
    base: b0.report,
    head: a0.report,
    packages: new Set(changed),
  };
  return { check: dependenciesCheck([root]), after: a0 };
}

const rules = (list: Diagnostic[]) => list.map((d) => `${d.rule}/${d.level}`).sort();

// etcd as in the OLM docs: 0.9.4 provides EtcdCluster v1beta2.
const ETCD = 'etcd.database.coreos.com';
const etcd = (...bundles: Obj[]) => operator('etcd', bundles);
const etcd094 = () => b('etcd', '0.9.4', gvk('EtcdCluster', 'v1beta2', ETCD));
const app = (...props: Obj[]) => operator('app', [b('app', '1.0.0', ...props)]);

describe('D-UNSATISFIED', () => {
  it('a head requiring an API version nobody provides is an error naming the closest provider', async () => {
    const { f, l } = await findings(['app'], app(gvkReq('EtcdCluster', 'v1', ETCD)), etcd(etcd094()));
    expect(rules(f)).toEqual(['D-UNSATISFIED/error']);
    expect(f[0]).toMatchObject({
      file: 'app/catalog.yaml',
      line: lineOf(l, 'app', 'type: olm.gvk.required'),
      package: 'app',
    });
    expect(f[0]!.message).toContain(
      'bundle app.v1.0.0 (the channel head) requires API EtcdCluster v1 (etcd.database.coreos.com)',
    );
    expect(f[0]!.message).toContain(
      'etcd 0.9.4 provides EtcdCluster v1beta2 (etcd.database.coreos.com), but not EtcdCluster v1',
    );
    expect(f[0]!.hint).toContain('dependencies.externalProviders');
  });

  it('is met when a provider of that exact API is on a chain', async () => {
    const { f } = await findings(['app'], app(gvkReq('EtcdCluster', 'v1beta2', ETCD)), etcd(etcd094()));
    expect(f).toEqual([]);
  });

  it('a package range that excludes every version names the nearest versions', async () => {
    const { f } = await findings(
      ['app'],
      app(pkgReq('etcd', '>=1.0.0')),
      etcd(b('etcd', '0.9.2'), etcd094()),
    );
    expect(rules(f)).toEqual(['D-UNSATISFIED/error']);
    expect(f[0]!.message).toContain('package etcd in range >=1.0.0');
    expect(f[0]!.message).toContain('etcd 0.9.4 (provides EtcdCluster v1beta2 (etcd.database.coreos.com))');
    expect(f[0]!.message).toContain('the range >=1.0.0 excludes them');
  });

  it('a package range that covers a version is met', async () => {
    const { f } = await findings(['app'], app(pkgReq('etcd', '>=0.9.0')), etcd(etcd094()));
    expect(f).toEqual([]);
  });

  it('a provider that is skipped in its channel does not count (classic offers chain entries only)', async () => {
    // etcd 1.0.0 provides v1, but 1.1.0 skips it (and drops v1): classic never offers 1.0.0.
    const catalog = [
      app(gvkReq('EtcdCluster', 'v1', ETCD)),
      etcd(b('etcd', '0.9.0'), b('etcd', '1.0.0', gvk('EtcdCluster', 'v1', ETCD)), b('etcd', '1.1.0')),
    ];
    catalog[1]![1] = channel(
      [
        { name: 'etcd.v0.9.0' },
        { name: 'etcd.v1.0.0', replaces: 'etcd.v0.9.0' },
        { name: 'etcd.v1.1.0', replaces: 'etcd.v1.0.0', skips: ['etcd.v1.0.0'] },
      ],
      { package: 'etcd' },
    );
    const { f } = await findings(['app'], ...catalog);
    expect(rules(f)).toEqual(['D-UNSATISFIED/error']);
    expect(f[0]!.message).toContain('etcd.v1.0.0 would match, but it is skipped or off the replaces chain');
    // Without the skip, 1.0.0 is on the chain and a candidate.
    catalog[1]![1] = channel(
      [
        { name: 'etcd.v0.9.0' },
        { name: 'etcd.v1.0.0', replaces: 'etcd.v0.9.0' },
        { name: 'etcd.v1.1.0', replaces: 'etcd.v1.0.0' },
      ],
      { package: 'etcd' },
    );
    expect((await findings(['app'], ...catalog)).f).toEqual([]);
  });

  it('candidates whose own requirements are unmet do not count (transitively)', async () => {
    const broken = await findings(
      ['app'],
      app(gvkReq('Db')),
      operator('db', [b('db', '1.0.0', gvk('Db'), gvkReq('Storage'))]),
    );
    expect(rules(broken.f)).toEqual(['D-UNSATISFIED/error']);
    expect(broken.f[0]!.message).toContain('its candidates (db.v1.0.0) cannot be installed themselves');
    const fixed = await findings(
      ['app'],
      app(gvkReq('Db')),
      operator('db', [b('db', '1.0.0', gvk('Db'), gvkReq('Storage'))]),
      operator('storage', [b('storage', '1.0.0', gvk('Storage'))]),
    );
    expect(fixed.f).toEqual([]);
  });

  it('requirements of older chain entries count too (users upgrade through them)', async () => {
    const { f } = await findings(
      ['app'],
      operator('app', [b('app', '0.1.0', gvkReq('Gone')), b('app', '1.0.0')]),
    );
    expect(rules(f)).toEqual(['D-UNSATISFIED/error']);
    expect(f[0]!.message).toContain('app.v0.1.0 (on the replaces chain, so users upgrade through it)');
  });

  it('external providers (cluster APIs, other catalogs) count as met', async () => {
    const catalog = [
      app(gvkReq('ServiceMonitor', 'v1', 'monitoring.coreos.com'), pkgReq('cert-manager', '>=1.0.0')),
    ];
    const l = await load(...catalog);
    expect(rules(dependencyFindings(l.report.model))).toEqual(['D-UNSATISFIED/error', 'D-UNSATISFIED/error']);
    const ext = {
      gvks: [{ group: 'monitoring.coreos.com', version: 'v1', kind: 'ServiceMonitor' }],
      packages: ['cert-manager'],
    };
    expect(dependencyFindings(l.report.model, { externalProviders: ext })).toEqual([]);
    // Only the listed ones: another version of the API is still unmet.
    expect(
      rules(
        dependencyFindings(l.report.model, {
          externalProviders: { ...ext, gvks: [{ ...ext.gvks[0]!, version: 'v2' }] },
        }),
      ),
    ).toEqual(['D-UNSATISFIED/error']);
  });

  it('a problem the old catalog already had is a warning, and the check passes', async () => {
    const before = [app(gvkReq('Gone')), etcd(etcd094())];
    const after = [
      operator('app', [b('app', '1.0.0', gvkReq('Gone'))]).map((o) =>
        o.schema === 'olm.package' ? { ...o, description: 'changed' } : o,
      ),
      etcd(etcd094()),
    ];
    const { check } = await compare(before, after, ['app']);
    expect(rules(check.findings)).toEqual(['D-UNSATISFIED/warning']);
    expect(check.findings[0]!.message).toContain('(already so before this change)');
    expect(check.conclusion).toBe('success');
    // A new bundle with the same problem is the change's own doing.
    const { check: again } = await compare(
      before,
      [
        operator('app', [b('app', '1.0.0', gvkReq('Gone')), b('app', '1.1.0', gvkReq('Gone'))]),
        etcd(etcd094()),
      ],
      ['app'],
    );
    expect(rules(again.findings)).toEqual(['D-UNSATISFIED/error', 'D-UNSATISFIED/warning']);
    expect(again.conclusion).toBe('failure');
  });
});

describe('D-PROVIDER-REMOVED: the OLM docs "deprecating dependent APIs" case', () => {
  // A and B are APIs; the provider of A depends on B; the provider of B updates to provide
  // C and deprecates B. B has no provider left, and A stops working: OLM blocks the update.
  const pa = () => operator('pa', [b('pa', '1.0.0', gvk('A'), gvkReq('B'))]);
  const pbOld = () => b('pb', '1.0.0', gvk('B'));

  it('a new head that stops providing a required API is an error naming the dependants', async () => {
    const { check, after } = await compare(
      [pa(), operator('pb', [pbOld()])],
      [pa(), operator('pb', [pbOld(), b('pb', '2.0.0', gvk('C'))])],
      ['pb'],
    );
    expect(rules(check.findings)).toEqual(['D-PROVIDER-REMOVED/error']);
    const [f] = check.findings;
    expect(f).toMatchObject({
      file: 'catalogs/v4.21/pb/catalog.yaml',
      line: docLineOf(after, 'pb', 'name: pb.v2.0.0', 1),
      package: 'pb',
    });
    expect(f!.message).toContain('leaves API B v1 (example.com) without a provider among the channel heads');
    expect(f!.message).toContain('still required by pa.v1.0.0 (pa)');
    expect(f!.message).toContain('OLM would block the upgrade of pb');
    expect(f!.message).toContain('older bundles still provide it');
    expect(check.conclusion).toBe('failure');
    expect(check.annotations[0]).toMatchObject({ path: 'catalogs/v4.21/pb/catalog.yaml', level: 'failure' });
  });

  it('a new head that keeps providing the old API alongside the new one is fine', async () => {
    const { check } = await compare(
      [pa(), operator('pb', [pbOld()])],
      [pa(), operator('pb', [pbOld(), b('pb', '2.0.0', gvk('B'), gvk('C'))])],
      ['pb'],
    );
    expect(check.findings).toEqual([]);
    expect(check.conclusion).toBe('success');
  });

  it('removing the provider package entirely is reported at the dependant, which is then unsatisfied too', async () => {
    const { check } = await compare([pa(), operator('pb', [pbOld()])], [pa()], ['pb']);
    expect(rules(check.findings)).toEqual(['D-PROVIDER-REMOVED/error', 'D-UNSATISFIED/error']);
    const removed = check.findings.find((d) => d.rule === 'D-PROVIDER-REMOVED')!;
    expect(removed.file).toBe('catalogs/v4.21/pa/catalog.yaml');
  });

  it('moving a package head out of a dependant range is a provider change', async () => {
    const dep = () => operator('pa', [b('pa', '1.0.0', pkgReq('pb', '<2.0.0'))]);
    const { check } = await compare(
      [dep(), operator('pb', [pbOld()])],
      [dep(), operator('pb', [pbOld(), b('pb', '2.0.0', gvk('B'))])],
      ['pb'],
    );
    expect(rules(check.findings)).toContain('D-PROVIDER-REMOVED/error');
  });
});

describe('D-DEADLOCK: the OLM docs "version deadlock" case', () => {
  // The provider of A requires B and the provider of B requires A; each updates to
  // provide A2 (B2) and require B2 (A2), dropping A (B). Neither can update alone.
  const before = () => [
    operator('pa', [b('pa', '1.0.0', gvk('A'), gvkReq('B'))]),
    operator('pb', [b('pb', '1.0.0', gvk('B'), gvkReq('A'))]),
  ];

  it('new versions that only work together are a warning on both', async () => {
    const { check } = await compare(
      before(),
      [
        operator('pa', [b('pa', '1.0.0', gvk('A'), gvkReq('B')), b('pa', '2.0.0', gvk('A2'), gvkReq('B2'))]),
        operator('pb', [b('pb', '1.0.0', gvk('B'), gvkReq('A')), b('pb', '2.0.0', gvk('B2'), gvkReq('A2'))]),
      ],
      ['pa', 'pb'],
    );
    expect(rules(check.findings)).toEqual(['D-DEADLOCK/warning', 'D-DEADLOCK/warning']);
    expect(check.findings.map((d) => d.package).sort()).toEqual(['pa', 'pb']);
    expect(check.findings[0]!.message).toContain('none can upgrade alone from pa.v1.0.0, pb.v1.0.0');
    expect(check.conclusion).toBe('success'); // a warning
  });

  it('is found within one catalog too (each head against its predecessor)', async () => {
    const { f } = await findings(
      ['pa'],
      operator('pa', [b('pa', '1.0.0', gvk('A'), gvkReq('B')), b('pa', '2.0.0', gvk('A2'), gvkReq('B2'))]),
      operator('pb', [b('pb', '1.0.0', gvk('B'), gvkReq('A')), b('pb', '2.0.0', gvk('B2'), gvkReq('A2'))]),
    );
    // pb depends on what pa provides, so it is checked with pa.
    expect(rules(f)).toEqual(['D-DEADLOCK/warning', 'D-DEADLOCK/warning']);
    expect(f.map((d) => d.package).sort()).toEqual(['pa', 'pb']);
  });

  it('no deadlock when one side keeps the old API while adding the new one', async () => {
    const { check } = await compare(
      before(),
      [
        operator('pa', [
          b('pa', '1.0.0', gvk('A'), gvkReq('B')),
          b('pa', '2.0.0', gvk('A'), gvk('A2'), gvkReq('B')),
        ]),
        operator('pb', [b('pb', '1.0.0', gvk('B'), gvkReq('A')), b('pb', '2.0.0', gvk('B2'), gvkReq('A2'))]),
      ],
      ['pa', 'pb'],
    );
    // pa can move first (it still provides A and requires only B); then pb follows.
    expect(check.findings.filter((d) => d.rule === 'D-DEADLOCK')).toEqual([]);
  });
});

describe('D-GVK-CONFLICT', () => {
  it('two packages whose heads provide the same API get a warning, once per pair', async () => {
    const { f, l } = await findings(
      ['one', 'two'],
      operator('one', [b('one', '1.0.0', gvk('Widget'), gvk('Gadget'))]),
      operator('two', [b('two', '1.0.0', gvk('Gadget'), gvk('Widget'))]),
    );
    expect(rules(f)).toEqual(['D-GVK-CONFLICT/warning']);
    expect(f[0]).toMatchObject({ package: 'one', line: lineOf(l, 'one', 'type: olm.gvk') });
    expect(f[0]!.message).toContain(
      'channel heads of packages one (one.v1.0.0) and two (two.v1.0.0) both provide',
    );
    expect(f[0]!.message).toContain('Widget v1 (example.com), Gadget v1 (example.com)');
  });

  it('different APIs (or another version of one) do not conflict', async () => {
    const { f } = await findings(
      ['one', 'two'],
      operator('one', [b('one', '1.0.0', gvk('Widget'))]),
      operator('two', [b('two', '1.0.0', gvk('Widget', 'v2'))]),
    );
    expect(f).toEqual([]);
  });
});

describe('D-RANGE-UPPER-BOUND', () => {
  const provider = () => etcd(b('etcd', '1.2.0'));

  it('a range with a maximum is a warning with a minimum-only suggestion', async () => {
    const { f, l } = await findings(['app'], app(pkgReq('etcd', '>=1.0.0 <2.0.0')), provider());
    expect(rules(f)).toEqual(['D-RANGE-UPPER-BOUND/warning']);
    expect(f[0]!.line).toBe(lineOf(l, 'app', 'type: olm.package.required'));
    expect(f[0]!.message).toContain('has a maximum (<2.0.0)');
    expect(f[0]!.hint).toContain("versionRange: '>=1.0.0'");
  });

  it('an exact version or a narrow wildcard window counts, also inside olm.constraint', async () => {
    const exact = await findings(['app'], app(pkgReq('etcd', '1.2.0')), provider());
    expect(rules(exact.f)).toEqual(['D-RANGE-UPPER-BOUND/warning']);
    const window = await findings(
      ['app'],
      app(constraint({ package: { packageName: 'etcd', versionRange: '1.2.x' } })),
      provider(),
    );
    expect(rules(window.f)).toEqual(['D-RANGE-UPPER-BOUND/warning']);
    expect(window.f[0]!.message).toContain('<1.3.0');
  });

  it('a minimum only, or an OR group without a maximum, is fine', async () => {
    expect((await findings(['app'], app(pkgReq('etcd', '>=1.0.0')), provider())).f).toEqual([]);
    expect((await findings(['app'], app(pkgReq('etcd', '<1.0.0 || >=1.1.0')), provider())).f).toEqual([]);
  });
});

describe('D-MIXED-REQUIRED', () => {
  it('olm.package.required and olm.gvk.required for the same provider get a warning', async () => {
    const { f, l } = await findings(
      ['app'],
      app(pkgReq('etcd', '>=0.9.0'), gvkReq('EtcdCluster', 'v1beta2', ETCD)),
      etcd(etcd094()),
    );
    expect(rules(f)).toEqual(['D-MIXED-REQUIRED/warning']);
    expect(f[0]!.line).toBe(lineOf(l, 'app', 'type: olm.gvk.required'));
    expect(f[0]!.message).toContain('no AND across them');
    expect(f[0]!.hint).toContain('all: {constraints:');
  });

  it('one olm.constraint with `all` says it properly', async () => {
    const { f } = await findings(
      ['app'],
      app(
        constraint({
          all: {
            constraints: [
              { package: { packageName: 'etcd', versionRange: '>=0.9.0' } },
              { gvk: { group: ETCD, version: 'v1beta2', kind: 'EtcdCluster' } },
            ],
          },
        }),
      ),
      etcd(etcd094()),
    );
    expect(f).toEqual([]);
  });

  it('unrelated package and API requirements are fine', async () => {
    const { f } = await findings(
      ['app'],
      app(pkgReq('etcd', '>=0.9.0'), gvkReq('Other')),
      etcd(etcd094()),
      operator('other', [b('other', '1.0.0', gvk('Other'))]),
    );
    expect(f).toEqual([]);
  });
});

describe('CEL constraints (olm.constraint cel)', () => {
  const rule = (r: string, failureMessage?: string) => constraint({ failureMessage, cel: { rule: r } });

  it('a valid rule with semver_compare selects providers by their properties', async () => {
    const r =
      'properties.exists(p, p.type == "olm.package" && p.value.packageName == "etcd" && semver_compare(p.value.version, "0.9.0") >= 0)';
    const { f } = await findings(['app'], app(rule(r)), etcd(etcd094()));
    expect(f).toEqual([]);
  });

  it('a rule that never matches is unsatisfied, with its failureMessage', async () => {
    const r = 'properties.exists(p, p.type == "olm.package" && semver_compare(p.value.version, "v2") >= 0)';
    const { f } = await findings(['app'], app(rule(r, 'needs etcd 2')), etcd(etcd094()));
    expect(rules(f)).toEqual(['D-UNSATISFIED/error']);
    expect(f[0]!.message).toContain('("needs etcd 2")');
    expect(f[0]!.message).toContain('no bundle on a channel');
  });

  it('an invalid expression is a clear error at its line, not a crash', async () => {
    const { f, l } = await findings(['app'], app(rule('properties.exists(p, p.type ==')), etcd(etcd094()));
    expect(rules(f)).toEqual(['D-CEL-INVALID/error']);
    expect(f[0]).toMatchObject({ file: 'app/catalog.yaml', line: lineOf(l, 'app', 'type: olm.constraint') });
    expect(f[0]!.message).toContain('does not compile');
    expect(f[0]!.message).toContain('OLM fails every resolution that reaches this bundle');
  });

  it('a rule that is not a bool, or names an unknown variable, is invalid too', async () => {
    for (const r of ['size(properties)', 'bundle.name == "x"']) {
      const { f } = await findings(['app'], app(rule(r)), etcd(etcd094()));
      expect(rules(f)).toEqual(['D-CEL-INVALID/error']);
    }
  });

  it('semver_compare parses tolerantly (v prefix, short versions) and errors mean no match', () => {
    const compiled = compileCel('semver_compare(properties[0].value.version, "v1.2") == 0');
    expect('program' in compiled).toBe(true);
    if (!('program' in compiled)) return;
    const at = (version: unknown): CatalogBundle => ({
      name: 'x',
      package: 'x',
      gvks: [],
      gvkKeys: new Set(),
      packageNames: ['x'],
      dependencies: [],
      properties: [{ type: 'olm.package', value: { packageName: 'x', version } }],
      entries: [],
    });
    expect(celMatches(compiled.program, at('1.2.0'))).toBe(true);
    expect(celMatches(compiled.program, at('1.2.1'))).toBe(false);
    expect(celMatches(compiled.program, at('not-a-version'))).toBe(false);
    // A JSON number prints as Go does (fmt.Sprint of a float64).
    expect(celMatches(compiled.program, at(1.2))).toBe(true);
  });
});

describe('compound constraints (all, any, not)', () => {
  const etcdPkg = (range: string) => ({ package: { packageName: 'etcd', versionRange: range } });
  const cluster = (version: string) => ({ gvk: { group: ETCD, version, kind: 'EtcdCluster' } });
  const twoEtcds = () => etcd(etcd094(), b('etcd', '1.0.0', gvk('EtcdCluster', 'v1', ETCD)));

  it('all: one bundle must meet every part; near misses are named', async () => {
    const { f } = await findings(
      ['app'],
      app(constraint({ all: { constraints: [etcdPkg('>=1.0.0'), cluster('v1beta2')] } })),
      twoEtcds(),
    );
    expect(rules(f)).toEqual(['D-UNSATISFIED/error']);
    expect(f[0]!.message).toContain('no single bundle satisfies every part');
    expect(f[0]!.message).toContain(
      'etcd 1.0.0 (provides EtcdCluster v1 (etcd.database.coreos.com)) matches package etcd in range >=1.0.0 but not API EtcdCluster v1beta2',
    );
    const ok = await findings(
      ['app'],
      app(constraint({ all: { constraints: [etcdPkg('>=1.0.0'), cluster('v1')] } })),
      twoEtcds(),
    );
    expect(ok.f).toEqual([]);
  });

  it('any: one part is enough', async () => {
    const { f } = await findings(
      ['app'],
      app(constraint({ any: { constraints: [etcdPkg('>=5.0.0'), cluster('v1beta2')] } })),
      twoEtcds(),
    );
    expect(f).toEqual([]);
    const none = await findings(
      ['app'],
      app(constraint({ any: { constraints: [etcdPkg('>=5.0.0'), cluster('v9')] } })),
      twoEtcds(),
    );
    expect(rules(none.f)).toEqual(['D-UNSATISFIED/error']);
  });

  it('not inside all excludes providers', async () => {
    const pick = (range: string) =>
      app(
        constraint({
          all: { constraints: [{ gvk: cluster('v1').gvk }, { not: { constraints: [etcdPkg(range)] } }] },
        }),
      );
    expect(rules((await findings(['app'], pick('>=1.0.0'), twoEtcds())).f)).toEqual(['D-UNSATISFIED/error']);
    expect((await findings(['app'], pick('<1.0.0'), twoEtcds())).f).toEqual([]);
  });

  it('an empty all matches everything, an empty any nothing (And/Or over no predicates)', async () => {
    expect((await findings(['app'], app(constraint({ all: { constraints: [] } })), twoEtcds())).f).toEqual(
      [],
    );
    const { f } = await findings(['app'], app(constraint({ any: { constraints: [] } })), twoEtcds());
    expect(rules(f)).toEqual(['D-UNSATISFIED/error']);
    expect(f[0]!.message).toContain('an `any` with no constraints matches nothing');
  });

  it('candidates follow the resolver order: default channels first, then package name, head first', async () => {
    // alpha offers X only in its non-default channel `fast`, so zeta's default channel comes first.
    const alpha = [
      pkg('alpha', { defaultChannel: 'stable' }),
      channel(['alpha.v0.1.0'], { package: 'alpha', name: 'stable' }),
      channel(['alpha.v1.0.0'], { package: 'alpha', name: 'fast' }),
      b('alpha', '0.1.0'),
      b('alpha', '1.0.0', gvk('X')),
    ];
    const l = await load(
      operator('zeta', [b('zeta', '1.0.0', gvk('X')), b('zeta', '2.0.0', gvk('X'))]),
      alpha,
    );
    const index = dependencyIndex(l.report.model);
    const dep = parseDependency({
      type: 'olm.gvk.required',
      value: { group: 'example.com', version: 'v1', kind: 'X' },
    })!;
    expect(index.candidates(dep.constraint!).map((c) => c.bundle.name)).toEqual([
      'zeta.v2.0.0',
      'zeta.v1.0.0',
      'alpha.v1.0.0',
    ]);
  });
});

describe('invalid requirements', () => {
  it('an unparsable versionRange is D-RANGE-INVALID', async () => {
    const { f } = await findings(['app'], app(pkgReq('etcd', '>=1.0, <2')), etcd(etcd094()));
    expect(rules(f)).toEqual(['D-RANGE-INVALID/error']);
    expect(f[0]!.message).toContain('is not a valid blang range');
  });

  it('an empty or unknown olm.constraint is D-CONSTRAINT-INVALID', async () => {
    const empty = await findings(['app'], app(constraint({ failureMessage: 'x' })), etcd(etcd094()));
    expect(rules(empty.f)).toEqual(['D-CONSTRAINT-INVALID/error']);
    expect(empty.f[0]!.message).toContain('constraint is empty');
    const unknown = await findings(['app'], app(constraint({ gvkk: {} })), etcd(etcd094()));
    expect(unknown.f[0]!.message).toContain('json: unknown field "gvkk"');
  });
});

describe('bad input never crashes', () => {
  it('odd olm.constraint values are each one D-CONSTRAINT-INVALID finding', async () => {
    const odd = [
      'text',
      42,
      null,
      [],
      { cel: 'x' },
      { all: { constraints: 'x' } },
      { not: { constraints: [{}] } },
    ];
    const { f } = await findings(
      ['app'],
      app(...odd.map((value) => ({ type: 'olm.constraint', value }))),
      etcd(etcd094()),
    );
    expect(rules(f)).toEqual(odd.map(() => 'D-CONSTRAINT-INVALID/error'));
    expect(f.map((d) => d.message).join('\n')).toContain(
      'json: cannot unmarshal string into Go value of type constraints.Constraint',
    );
  });
});

describe('dependenciesCheck', () => {
  it('reports per root with a per-package table, paths joined with the root', async () => {
    const { check } = await compare([etcd(etcd094())], [etcd(etcd094()), app(gvkReq('Nope'))], ['app']);
    expect(check.name).toBe(DEPENDENCIES_CHECK);
    expect(check.conclusion).toBe('failure');
    expect(check.title).toBe('1 dependency error');
    expect(check.findings[0]!.file).toBe('catalogs/v4.21/app/catalog.yaml');
    expect(check.summary).toContain('| `catalogs/v4.21` | app | 1 | 1 | 0 |');
    expect(check.annotations).toHaveLength(1);
  });

  it('nothing changed: success', () => {
    const check = dependenciesCheck([]);
    expect(check).toMatchObject({ conclusion: 'success', title: 'No package changed', findings: [] });
  });
});
