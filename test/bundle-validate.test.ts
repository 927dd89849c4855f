// `catalog-bot bundle validate` (the built CLI) on every bundle directory of the six real
// community-operators-prod packages in one run, with the findings operator-pipelines would
// give, reasoned from its code (docs/bundle-rules.md), and on bad input: a CSV of wrong types,
// alm-examples that is not JSON, a 20 MB manifest, bytes that are not UTF-8, a symbolic link
// out of the bundle. Run `npm run build` first.
/* eslint-disable @typescript-eslint/no-explicit-any -- the tests read fields of real CSVs as they are */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { REAL_REPO as REPO } from './helpers/ocp-history.js';
import { tempTrees } from './helpers/oracle.js';
import { cleanBundle, writeBundles, type BundleParts } from './helpers/bundle-fixture.js';

const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));

interface Finding {
  level: string;
  rule: string;
  upstream: string[];
  message: string;
  file: string;
  line: number;
}
interface Report {
  bundles: { dir: string; package: string; name: string | null; findings: Finding[] }[];
}

function validate(
  args: string[],
  cwd: string,
): { status: number | null; report: Report; stderr: string; ms: number } {
  const started = Date.now();
  const r = spawnSync(process.execPath, [CLI, 'bundle', 'validate', ...args, '--format', 'json'], {
    cwd,
    encoding: 'utf8',
    maxBuffer: 64 * 2 ** 20,
    timeout: 60_000,
  });
  return {
    status: r.status,
    report: JSON.parse(r.stdout) as Report,
    stderr: r.stderr,
    ms: Date.now() - started,
  };
}

/** operators/<package>/<version> directories that hold a bundle. */
const bundleDirs = readdirSync(join(REPO, 'operators'))
  .sort()
  .flatMap((pkg) =>
    readdirSync(join(REPO, 'operators', pkg))
      .sort()
      .filter((v) => existsSync(join(REPO, 'operators', pkg, v, 'manifests')))
      .map((v) => `operators/${pkg}/${v}`),
  );

const csvs = new Map<string, Record<string, any>>();
const csvOf = (dir: string): Record<string, any> => {
  if (!csvs.has(dir)) {
    const name = readdirSync(join(REPO, dir, 'manifests')).find((n) =>
      n.endsWith('.clusterserviceversion.yaml'),
    )!;
    csvs.set(dir, parse(readFileSync(join(REPO, dir, 'manifests', name), 'utf8')) as Record<string, any>);
  }
  return csvs.get(dir)!;
};
const annotationsOf = (dir: string): Record<string, string> =>
  (
    parse(readFileSync(join(REPO, dir, 'metadata', 'annotations.yaml'), 'utf8')) as {
      annotations: Record<string, string>;
    }
  ).annotations;

describe('bundle validate on the 52 real bundles', () => {
  const run = validate(bundleDirs, REPO);
  const all = run.report.bundles.flatMap((b) =>
    b.findings.map((f) => ({ ...f, bundle: b.dir.slice('operators/'.length) })),
  );
  const where = (rule: string, level: string): string[] =>
    [...new Set(all.filter((f) => f.rule === rule && f.level === level).map((f) => f.bundle))].sort();
  const count = (rule: string): number => all.filter((f) => f.rule === rule).length;

  it('reads every bundle directory, in one run', () => {
    expect(bundleDirs).toHaveLength(52);
    expect(run.report.bundles.map((b) => b.dir)).toEqual(bundleDirs);
    for (const b of run.report.bundles) {
      expect(b.package).toBe(b.dir.split('/')[1]);
      expect(b.name).toBe(csvOf(b.dir).metadata.name);
    }
    expect(run.stderr).toBe('');
    // Two bundles have an error (below): exit 1.
    expect(run.status).toBe(1);
    console.log(
      `52 bundles validated in ${run.ms} ms; findings by rule:`,
      Object.fromEntries([...new Set(all.map((f) => f.rule))].sort().map((r) => [r, count(r)])),
    );
  });

  it('every package releases from templates, so the tests operator-pipelines skips for FBC say nothing', () => {
    for (const pkg of new Set(bundleDirs.map((d) => d.split('/')[1])))
      expect(
        (
          parse(readFileSync(join(REPO, 'operators', pkg!, 'ci.yaml'), 'utf8')) as {
            fbc: { enabled: boolean };
          }
        ).fbc.enabled,
      ).toBe(true);
    for (const rule of [
      'B-DANGLING-BUNDLES',
      'B-UPGRADE-GRAPH-LOOP',
      'B-OPERATOR-NAME-UNIQUE',
      'B-CI-UPDATE-GRAPH',
      'B-USING-FBC',
      'B-OCP-KUBE-CONSTRAINTS',
      'B-REPLACES-AVAILABILITY',
    ])
      expect(count(rule), rule).toBe(0);
  });

  it('warns of a missing minKubeVersion exactly where the CSV has none (operator-sdk CSV validator)', () => {
    const without = bundleDirs
      .filter((d) => csvOf(d).spec.minKubeVersion === undefined)
      .map((d) => d.slice('operators/'.length));
    expect(without.length).toBeGreaterThan(0);
    expect(where('B-MIN-KUBE-VERSION', 'warning')).toEqual(without.sort());
  });

  it('warns of channel names outside candidate/fast/stable exactly where annotations.yaml has them (good practices)', () => {
    const odd = bundleDirs
      .filter((d) => {
        const a = annotationsOf(d);
        const names = [
          ...a['operators.operatorframework.io.bundle.channels.v1']!.split(','),
          a['operators.operatorframework.io.bundle.channel.default.v1'] ?? '',
        ];
        return names.some((c) => c.trim() !== '' && !/^(candidate|stable|fast)/.test(c.trim()));
      })
      .map((d) => d.slice('operators/'.length));
    expect(where('B-CHANNEL-NAMING', 'warning')).toEqual(odd.sort());
  });

  it('check_required_fields: the annotations and keywords operator-pipelines warns about', () => {
    // containerImage without a tag (quay.io/clusterpulse/operator) fails `([^/]+/){1,}[^/:]+:.+`.
    const untagged = bundleDirs
      .filter(
        (d) =>
          d.includes('clusterpulse') &&
          !/:.+/.test(String(csvOf(d).metadata.annotations.containerImage).split('/').pop() ?? ''),
      )
      .map((d) => d.slice('operators/'.length));
    expect(untagged).toHaveLength(7);
    // `keywords: []` is not a non-empty list; `createdAt: 05/16/2024` is no ISO 8601 time;
    // the older ecr-secret-operator CSVs have no description (and 0.3.2 no createdAt) annotation.
    const emptyKeywords = bundleDirs.filter(
      (d) => Array.isArray(csvOf(d).spec.keywords) && csvOf(d).spec.keywords.length === 0,
    );
    const usDates = bundleDirs.filter((d) =>
      /^\d\d\/\d\d\/\d{4}$/.test(String(csvOf(d).metadata.annotations.createdAt)),
    );
    const noDescription = bundleDirs.filter((d) => csvOf(d).metadata.annotations.description === undefined);
    expect([emptyKeywords.length, usDates.length, noDescription.length]).toEqual([10, 2, 3]);
    const expected = [
      ...untagged,
      ...[...emptyKeywords, ...usDates, ...noDescription].map((d) => d.slice('operators/'.length)),
    ];
    expect(where('B-REQUIRED-FIELDS', 'warning')).toEqual([...new Set(expected)].sort());
    expect(count('B-REQUIRED-FIELDS')).toBe(7 + 10 + 2 + 3 + 1);
    expect(where('B-REQUIRED-FIELDS', 'error')).toEqual([]);
  });

  it('clusterpulse 1.0.x provide MetricSource without an example or a description (operator-sdk warnings)', () => {
    const late = ['clusterpulse/1.0.0', 'clusterpulse/1.0.1', 'clusterpulse/1.0.2'];
    expect(where('B-ALM-EXAMPLES', 'warning')).toEqual(late);
    expect(where('B-CRD-DESCRIPTION', 'warning')).toEqual(late);
    for (const d of late) {
      const csv = csvOf(`operators/${d}`);
      const owned = csv.spec.customresourcedefinitions.owned.find(
        (o: { kind: string }) => o.kind === 'MetricSource',
      );
      expect(owned.description ?? '').toBe('');
      expect(csv.metadata.annotations['alm-examples']).not.toContain('"MetricSource"');
    }
  });

  it('the two errors: a template ci.yaml does not map, a default channel outside the channels', () => {
    // clusterpulse 0.1.0 releases to basic.yaml; ci.yaml maps only semver.yaml (check_bundle_release_config).
    expect(readFileSync(join(REPO, 'operators/clusterpulse/0.1.0/release-config.yaml'), 'utf8')).toContain(
      'template_name: basic.yaml',
    );
    expect(where('B-RELEASE-CONFIG-CI', 'error')).toEqual(['clusterpulse/0.1.0']);
    expect(where('B-ANNOTATIONS', 'error')).toEqual(['ecr-secret-operator/0.3.2']);
    expect(
      all
        .filter((f) => f.level === 'error')
        .map((f) => f.rule)
        .sort(),
    ).toEqual(['B-ANNOTATIONS', 'B-RELEASE-CONFIG-CI']);
    const releaseCi = all.find((f) => f.rule === 'B-RELEASE-CONFIG-CI')!;
    expect(releaseCi.upstream).toEqual(['operator-pipelines:check_bundle_release_config']);
    expect(releaseCi.file).toBe('operators/clusterpulse/0.1.0/release-config.yaml');
  });

  it('nothing else: no removed API, NetworkPolicy, icon, maintainer or install-mode problem in these bundles', () => {
    const rules = new Set(all.map((f) => f.rule));
    expect([...rules].sort()).toEqual([
      'B-ALM-EXAMPLES',
      'B-ANNOTATIONS',
      'B-CHANNEL-NAMING',
      'B-CRD-DESCRIPTION',
      'B-MIN-KUBE-VERSION',
      'B-RELEASE-CONFIG',
      'B-RELEASE-CONFIG-CI',
      'B-REQUIRED-FIELDS',
    ]);
    // catalog-bot's own B-RELEASE-CONFIG (no upstream) where a template package's bundle has none.
    const without = bundleDirs
      .filter((d) => !existsSync(join(REPO, d, 'release-config.yaml')))
      .map((d) => d.slice('operators/'.length));
    expect(where('B-RELEASE-CONFIG', 'warning')).toEqual(without.sort());
    for (const f of all)
      if (f.rule !== 'B-RELEASE-CONFIG') expect(f.upstream.length, f.rule).toBeGreaterThan(0);
  });
});

describe('bundle validate on bad input: findings, no crash', () => {
  const scratch = tempTrees().dir();
  let n = 0;
  /** A repository with one changed demo bundle; its directory, relative to the repository. */
  const repoWith = (edit: (b: BundleParts) => void, after?: (dir: string) => void): string => {
    const root = join(scratch, `repo-${n++}`);
    const b = cleanBundle();
    edit(b);
    const [dir] = writeBundles(root, [b]);
    after?.(dir!);
    return root;
  };
  const dir = 'operators/demo-operator/1.0.0';

  it('a clean bundle: exit 0, no finding', () => {
    const r = validate(
      [dir],
      repoWith(() => undefined),
    );
    expect(r.status).toBe(0);
    expect(r.report.bundles[0]!.findings).toEqual([]);
  });

  it('a CSV with wrong types everywhere', () => {
    const r = validate(
      [dir],
      repoWith((b) => {
        Object.assign(b.csv.spec, {
          displayName: 5,
          keywords: 'demo',
          maintainers: 'team',
          links: { a: 1 },
          icon: 'png',
          installModes: 7,
          install: 'deployment',
          customresourcedefinitions: ['widgets'],
          provider: 'Demo',
          minKubeVersion: 1.27,
        });
        b.csv.metadata.annotations.capabilities = 3;
        b.csv.metadata.annotations['alm-examples'] = { kind: 'Widget' };
      }),
    );
    expect(r.status).toBe(1);
    expect(r.stderr).toBe('');
    const typed = r.report.bundles[0]!.findings.filter((f) => f.rule === 'B-CSV-TYPES').map(
      (f) => /the CSV's (\S+) is/.exec(f.message)![1],
    );
    expect(typed.sort()).toEqual(
      [
        'metadata.annotations',
        'spec.displayName',
        'spec.minKubeVersion',
        'spec.keywords',
        'spec.maintainers',
        'spec.links',
        'spec.icon',
        'spec.installModes',
        'spec.provider',
        'spec.install',
        'spec.customresourcedefinitions',
      ].sort(),
    );
  });

  it('alm-examples that is not JSON: one error at the annotation', () => {
    const r = validate(
      [dir],
      repoWith(
        (b) =>
          (b.csv.metadata.annotations['alm-examples'] =
            '[{"apiVersion": "demo.example.com/v1", "kind": "Widget"'),
      ),
    );
    expect(r.status).toBe(1);
    const f = r.report.bundles[0]!.findings;
    expect(f.map((x) => `${x.rule}:${x.level}`)).toEqual(['B-ALM-EXAMPLES:error']);
    expect(f[0]!.message).toMatch(/not valid JSON/);
    expect(f[0]!.line).toBeGreaterThan(1);
    expect(f[0]!.upstream).toContain('operator-sdk:ClusterServiceVersionValidator');
  });

  it('a 20 MB manifest: the bundle is reported too large, not read', () => {
    const root = repoWith(
      () => undefined,
      (d) => writeFileSync(join(d, 'manifests', 'huge.yaml'), `data: "${'x'.repeat(20 * 2 ** 20)}"\n`),
    );
    const r = validate([dir], root);
    expect(r.status).toBe(1);
    expect(r.report.bundles[0]!.findings.map((f) => f.rule)).toEqual(['B-SIZE']);
    expect(r.ms).toBeLessThan(15_000);
  });

  it('bytes that are not UTF-8 in the CSV, and a binary file in manifests/', () => {
    const root = repoWith(
      () => undefined,
      (d) => {
        const csvPath = join(d, 'manifests', 'demo-operator.clusterserviceversion.yaml');
        const text = readFileSync(csvPath, 'utf8').replace(
          'Keeps widgets in shape.',
          'Keeps widgets in shape \u0000.',
        );
        writeFileSync(csvPath, Buffer.concat([Buffer.from(text), Buffer.from([0xff, 0xfe, 0xe9, 0x0a])]));
        writeFileSync(
          join(d, 'manifests', 'logo.png'),
          Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0xff]),
        );
      },
    );
    const r = validate([dir], root);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(1);
    // The CSV cannot be decoded: one error at the line of the bad bytes; the PNG is not a manifest.
    const f = r.report.bundles[0]!.findings;
    expect(f.map((x) => x.rule)).toEqual(['B-MANIFEST-SYNTAX']);
    expect(f[0]!.message).toMatch(/UTF-8/);
    expect(f[0]!.line).toBeGreaterThan(1);
    for (const f of r.report.bundles[0]!.findings)
      expect(f.file).toMatch(/^operators\/demo-operator\/1\.0\.0/);
  });

  it('a symbolic link in the bundle is not followed', () => {
    const secret = join(scratch, 'secret.yaml');
    writeFileSync(
      secret,
      stringify({
        apiVersion: 'networking.k8s.io/v1',
        kind: 'NetworkPolicy',
        metadata: { name: 'outside-secret' },
      }),
    );
    const r = validate(
      [dir],
      repoWith(
        () => undefined,
        (d) => symlinkSync(secret, join(d, 'manifests', 'linked.yaml')),
      ),
    );
    expect(r.status).toBe(0);
    expect(JSON.stringify(r.report)).not.toContain('outside-secret');
  });

  it("the repository's config.yaml waivers: the finding is reported as waived, and no error is left", () => {
    const root = repoWith((b) => (b.csv.spec.displayName = 'DO'));
    expect(validate([dir], root).status).toBe(1);
    writeFileSync(
      join(root, 'config.yaml'),
      stringify({ tests: [{ name: 'check_required_fields', ignore_operators: ['^demo-'] }] }),
    );
    const r = validate([dir], root);
    expect(r.status).toBe(0);
    const f = r.report.bundles[0]!.findings as (Finding & { waived?: unknown })[];
    expect(f.map((x) => [x.rule, x.level, x.waived])).toEqual([
      ['B-REQUIRED-FIELDS', 'warning', { test: 'check_required_fields', pattern: '^demo-' }],
    ]);
  });

  it('a bundle alone, outside a repository, is judged as its own package', () => {
    const root = repoWith(() => undefined);
    rmSync(join(root, 'operators', 'demo-operator', 'ci.yaml'));
    const r = validate([join(root, dir)], scratch);
    expect(r.report.bundles[0]!.package).toBe('demo-operator');
    // No ci.yaml reads as FBC off, as operator_repo reads it: a release-config.yaml then
    // releases nothing (check_bundle_release_config), and check_using_fbc suggests templates.
    expect(r.report.bundles[0]!.findings.map((f) => f.rule)).toEqual(['B-RELEASE-CONFIG-CI', 'B-USING-FBC']);
  });
});
