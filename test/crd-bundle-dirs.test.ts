// CRD safety from bundle directories (issue 30, item 2; docs/validation-rules.md, "CRDs from
// bundle directories"): catalogs from v4.17 on carry only olm.csv.metadata, so catalog-bot
// reads the bundles' manifests from their directories under bundles.path. On the real
// clusterpulse 1.0.2 release of community-operators-prod: its bundle pull request (the
// release computed by the bundle check), the release pull request, `crd-diff` on the
// repository, and directories that must not be used (another package's, a refused YAML file).
import { cpSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, sep } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDocument, isMap, isSeq, type YAMLMap } from 'yaml';
import { BUNDLE_CHECK } from '../src/checks/bundle.js';
import { bundleDirectoryManifests, CRD_UPGRADE_CHECK } from '../src/checks/crd-upgrade.js';
import type { DirectoryFiles } from '../src/checks/bundle-pr.js';
import type { Bundle } from '../src/catalog/fbc/declcfg.js';
import { runPrChecksInProcess } from '../src/checks/pr.js';
import type { CheckResult } from '../src/checks/check.js';
import { captureStream as capture, cliCommand } from './helpers/cli.js';
import { haveRealRepo, makeCopRepo, type CopRepo } from './helpers/cop-repo.js';
import { REAL_REPO } from './helpers/ocp-history.js';

const crdDiff = cliCommand('crd-diff');
const check = cliCommand('check');
const CRD = 'clusterconnections.clusterpulse.io';
const CRD_FILE = 'manifests/clusterpulse.io_clusterconnections.yaml';
const CSV_FILE = 'manifests/clusterpulse.clusterserviceversion.yaml';
/** The five CRDs clusterpulse 1.0.1 and 1.0.2 own. */
const CRDS = [
  'clusterconnections.clusterpulse.io',
  'clusterpulses.charts.clusterpulse.io',
  'metricsources.clusterpulse.io',
  'monitoraccesspolicies.clusterpulse.io',
  'registryconnections.clusterpulse.io',
];

/** Edit a YAML file in place with the document API (comments and layout kept). */
/** A finding of `rule` whose message contains `message` (a string) or matches it (a RegExp). */
const findingSaying = (rule: string, message: string | RegExp, more: Record<string, unknown> = {}) =>
  expect.objectContaining({
    rule,
    ...more,
    message: typeof message === 'string' ? expect.stringContaining(message) : expect.stringMatching(message),
  });

function editYaml(path: string, edit: (doc: ReturnType<typeof parseDocument>) => void): void {
  const doc = parseDocument(readFileSync(path, 'utf8'));
  edit(doc);
  writeFileSync(path, doc.toString());
}

describe.skipIf(!haveRealRepo)('CRDs from bundle directories: clusterpulse 1.0.2', () => {
  let cop: CopRepo;
  const dir = (...p: string[]): string => join(cop.repo, cop.bundleDir, ...p);
  /**
   * crd-upgrade (and the bundle check, which computes the release) on main..head, on one
   * catalog root to keep the file fast (the v4.17-v4.22 catalogs are alike; the CLI test
   * below runs on all).
   */
  const crdCheck = async (head: string, checkRelease: boolean): Promise<CheckResult> => {
    const result = await runPrChecksInProcess({
      repo: cop.repo,
      base: 'main',
      head,
      checkRelease,
      only: [BUNDLE_CHECK, CRD_UPGRADE_CHECK],
      globs: ['catalogs/v4.20'],
    });
    const found = result.checks.find((c) => c.name === CRD_UPGRADE_CHECK);
    expect(found, result.checks.map((c) => `${c.name}: ${c.title}`).join('\n')).toBeDefined();
    return found!;
  };
  /** crd-upgrade on main..head without the release: neutral, with a finding of `rule` saying `message`. */
  const neutralCheckWith = async (head: string, rule: string, message: string | RegExp, more = {}) => {
    const check = await crdCheck(head, false);
    expect(check.conclusion).toBe('neutral');
    expect(check.findings).toContainEqual(findingSaying(rule, message, more));
    return check;
  };

  beforeAll(() => {
    cop = makeCopRepo('clusterpulse/1.0.2');
  });
  afterAll(() => cop?.cleanup());

  it('the bundle pull request: the release it computes is checked, comparing the CRDs of 1.0.1 and 1.0.2 from their directories', async () => {
    const check = await crdCheck(cop.branch('bundle-pr'), true);
    expect(check.title).toMatch(/^With the bundle's catalog update: Every CRD upgrade is safe/);
    expect(check.conclusion).toBe('success');
    expect(check.findings.filter((f) => f.level === 'error' || f.level === 'notice')).toEqual([]);
    // The edge the release adds, with each CRD compared and where the manifests came from.
    expect(check.summary).toContain(
      `- clusterpulse.v1.0.1 -> clusterpulse.v1.0.2: ${CRDS.map((c) => `\`${c}\``).join(', ')} (manifests from operators/clusterpulse/1.0.1 and operators/clusterpulse/1.0.2)`,
    );
  }, 60_000);

  it("catalog-bot check on the bundle pull request by the package's reviewer (every catalog): permissions pass, and the CRDs are compared along the release, as the App does", async () => {
    const out = capture();
    const code = await check(
      [
        '--repo',
        cop.repo,
        '--base',
        'main',
        '--head',
        'bundle-pr',
        '--author',
        cop.reviewer,
        '--format',
        'json',
      ],
      out.stream,
    );
    const checks = (
      JSON.parse(out.text()) as {
        checks: {
          name: string;
          conclusion: string;
          title: string;
          findings: { rule: string; new: boolean; catalogs: string[] }[];
        }[];
      }
    ).checks;
    expect(checks.find((c) => c.name === 'catalog-bot/permissions')).toMatchObject({
      conclusion: 'success',
      title: 'Approved: 14 changes',
    });
    const crd = checks.find((c) => c.name === CRD_UPGRADE_CHECK);
    expect(crd).toMatchObject({
      conclusion: 'success',
      title: expect.stringMatching(
        /^With the bundle's catalog update: Every CRD upgrade is safe \(\d+ upgrade edges checked\)$/,
      ),
    });
    // The older edges' CRD warnings are the base's, and each is one group over the catalogs
    // the release changes (the change itself changes no catalog).
    expect(crd!.findings.length).toBeGreaterThan(0);
    for (const f of crd!.findings)
      expect({ new: f.new, catalogs: f.catalogs.length }).toEqual({ new: false, catalogs: 5 });
    expect(code).toBe(0);
  }, 120_000);

  it('a 1.0.2 CRD that drops its stored version fails, naming the CRD and the edge', async () => {
    const head = cop.branch('drops-stored-version', () => {
      // v1alpha1 (storage: true) is replaced by v1beta1, now the storage version; the CSV
      // owns the CRD at v1beta1 so that the bundle still renders.
      editYaml(dir(CRD_FILE), (doc) => {
        const versions = doc.getIn(['spec', 'versions']);
        if (!isSeq(versions)) throw new Error('no spec.versions');
        const stored = versions.items.find((v) => isMap(v) && v.get('storage') === true) as YAMLMap;
        expect(stored.get('name')).toBe('v1alpha1');
        stored.set('name', 'v1beta1');
      });
      editYaml(dir(CSV_FILE), (doc) => {
        const owned = doc.getIn(['spec', 'customresourcedefinitions', 'owned']);
        if (!isSeq(owned)) throw new Error('no owned CRDs');
        const mine = owned.items.find((o) => isMap(o) && o.get('name') === CRD) as YAMLMap;
        mine.set('version', 'v1beta1');
      });
    });
    const check = await crdCheck(head, true);
    expect(check.conclusion).toBe('failure');
    const errors = check.findings.filter((f) => f.level === 'error');
    expect(errors.length).toBeGreaterThan(0);
    expect(errors).toContainEqual(
      expect.objectContaining({
        rule: 'CRD-STORED-VERSION-REMOVED',
        message: expect.stringMatching(
          new RegExp(
            `^upgrading .*clusterpulse\\.v1\\.0\\.1.* -> clusterpulse\\.v1\\.0\\.2 .*: CRD ${CRD.replaceAll('.', '\\.')}, version v1alpha1: stored version "v1alpha1" removed$`,
          ),
        ),
      }),
    );
  }, 60_000);

  it('the release pull request (bundle directory and catalogs together) compares the CRDs too', async () => {
    const check = await crdCheck(
      cop.branch('release-pr', () => cop.applyRelease()),
      false,
    );
    expect(check.conclusion).toBe('success');
    expect(check.summary).toContain(
      '- clusterpulse.v1.0.1 -> clusterpulse.v1.0.2: `clusterconnections.clusterpulse.io`',
    );
    expect(check.summary).toContain(
      '(manifests from operators/clusterpulse/1.0.1 and operators/clusterpulse/1.0.2)',
    );
  }, 60_000);

  it("attack: another package's directory whose CSV claims clusterpulse.v1.0.2 is not used as its manifests", async () => {
    const head = cop.branch(
      'impostor',
      () => {
        cop.applyRelease();
        // The real 1.0.2 bundle, under package jumpstarter-operator and annotated so; its
        // CSV still says clusterpulse.v1.0.2.
        const impostor = join(cop.repo, 'operators', 'jumpstarter-operator', '1.0.2');
        cpSync(dir(), impostor, { recursive: true });
        rmSync(dir(), { recursive: true });
        editYaml(join(impostor, 'metadata', 'annotations.yaml'), (doc) =>
          doc.setIn(
            ['annotations', 'operators.operatorframework.io.bundle.package.v1'],
            'jumpstarter-operator',
          ),
        );
      },
      true,
    );
    const check = await neutralCheckWith(
      head,
      'CRD-NEEDS-IMAGE',
      'no bundle directory has them: no bundle directory operators/clusterpulse/1.0.2',
    );
    expect(check.title).toBe('CRDs not checked: no manifests for clusterpulse.v1.0.2');
    expect(check.summary).not.toContain('clusterpulse.v1.0.1 -> clusterpulse.v1.0.2:');
  }, 60_000);

  it("attack: clusterpulse's own 1.0.2 directory annotated as another package is refused, saying why", async () => {
    const head = cop.branch('wrong-package', () => {
      cop.applyRelease();
      editYaml(dir('metadata', 'annotations.yaml'), (doc) =>
        doc.setIn(
          ['annotations', 'operators.operatorframework.io.bundle.package.v1'],
          'jumpstarter-operator',
        ),
      );
    });
    await neutralCheckWith(
      head,
      'CRD-BUNDLE-DIRECTORY',
      'operators/clusterpulse/1.0.2/metadata/annotations.yaml names package jumpstarter-operator, not clusterpulse',
    );
  }, 60_000);

  it('a bundle directory the YAML screen refuses gives a finding naming the file and rule, and crd-diff one line on stderr', async () => {
    const head = cop.branch('refused-yaml', () => {
      cop.applyRelease();
      // A tag opm resolves its own way: the screen refuses the file (docs/security.md).
      const path = dir(CRD_FILE);
      writeFileSync(path, readFileSync(path, 'utf8').replace('    served: true', '    served: !!bool true'));
    });
    await neutralCheckWith(
      head,
      'CRD-BUNDLE-DIRECTORY',
      /operators\/clusterpulse\/1\.0\.2 cannot be read as a bundle: manifests\/clusterpulse\.io_clusterconnections\.yaml:\d+: L-YAML-TAG/,
      { level: 'notice' },
    );
    const out = capture();
    const err = capture();
    const code = await crdDiff(
      ['clusterpulse.v1.0.1', 'clusterpulse.v1.0.2', '--repo', cop.repo],
      out.stream,
      err.stream,
    );
    expect(code).toBe(2);
    expect(out.text()).toBe('');
    expect(err.text().trimEnd().split('\n')).toHaveLength(1);
    expect(err.text()).toMatch(/clusterpulse\.io_clusterconnections\.yaml:\d+: L-YAML-TAG/);
  }, 60_000);

  describe('catalog-bot crd-diff on the repository', () => {
    beforeAll(() => {
      cop.git('checkout', '-q', 'release-pr');
    });

    it('with --root: the edge from the catalog, the manifests from the directories; an unsafe older edge exits 1 with its changes', async () => {
      const out = capture();
      const root = join(cop.repo, 'catalogs', 'v4.20');
      expect(
        await crdDiff(
          ['clusterpulse.v1.0.1', 'clusterpulse.v1.0.2', '--root', root, '--repo', cop.repo],
          out.stream,
        ),
      ).toBe(0);
      expect(out.text()).toContain('upgrade edge taken by classic OLM (fast-v1) and OLM v1\n');
      expect(out.text()).toContain(
        'manifests from operators/clusterpulse/1.0.1 and operators/clusterpulse/1.0.2\n',
      );

      // 0.2.3 -> 0.3.0 changed its schemas in ways OLM v1 refuses (a removed pattern, removed enum values).
      const json = capture();
      expect(
        await crdDiff(
          [
            'clusterpulse.v0.2.3',
            'clusterpulse.v0.3.0',
            '--root',
            root,
            '--repo',
            cop.repo,
            '--format',
            'json',
          ],
          json.stream,
        ),
      ).toBe(1);
      const verdict = JSON.parse(json.text());
      expect(verdict.sources).toEqual({
        old: 'operators/clusterpulse/0.2.3',
        new: 'operators/clusterpulse/0.3.0',
      });
      expect(verdict.unsafe).toContainEqual(
        expect.objectContaining({ rule: 'CRD-PATTERN', crd: CRD, path: '^.spec.endpoint' }),
      );
    });
  });
});

describe.skipIf(!haveRealRepo)('bundleDirectoryManifests: which directory is read, and how much', () => {
  /** The real 1.0.1 and 1.0.2 bundle directories, as a reader that records what was asked. */
  function reader(): {
    read: (side: string, dir: string, maxBytes: number) => Promise<DirectoryFiles>;
    asked: string[];
  } {
    const asked: string[] = [];
    return {
      asked,
      read: async (side, dir, maxBytes) => {
        asked.push(`${side} ${dir}`);
        const m = /^operators\/clusterpulse\/(1\.0\.[12])$/.exec(dir);
        if (!m) return { files: new Map(), bytes: 0, unreadable: [] };
        const root = join(REAL_REPO, 'operators', 'clusterpulse', m[1]!);
        const files = new Map<string, Buffer>();
        for (const f of readdirSync(root, { recursive: true, encoding: 'utf8' }))
          if (statSync(join(root, f)).isFile())
            files.set(f.split(sep).join('/'), readFileSync(join(root, f)));
        const bytes = [...files.values()].reduce((n, b) => n + b.length, 0);
        return bytes > maxBytes
          ? { files: new Map(), bytes, unreadable: [] }
          : { files, bytes, unreadable: [] };
      },
    };
  }
  const blob = (name: string, version: string, pkg = 'clusterpulse'): Bundle =>
    ({
      name,
      package: pkg,
      image: '',
      properties: [{ type: 'olm.package', value: { packageName: pkg, version } }],
      objectCount: 0,
    }) as unknown as Bundle;

  it('a version or package that is not one path segment names no directory, and nothing is read', async () => {
    const r = reader();
    const lookup = bundleDirectoryManifests('operators/{package}/{version}', r.read);
    for (const b of [
      blob('clusterpulse.v1.0.2', '../clusterpulse/1.0.2'),
      blob('clusterpulse.v1.0.2', '1.0.2', '..'),
      blob('x', '..'),
    ])
      expect(await lookup(b)).toEqual({ problem: `${b.name} has no version that names a bundle directory` });
    expect(r.asked).toEqual([]);
  });

  it('reads the base first, then the head; once per bundle; within the budget for all directories', async () => {
    const r = reader();
    const lookup = bundleDirectoryManifests('operators/{package}/{version}', r.read, 200_000);
    const first = await lookup(blob('clusterpulse.v1.0.1', '1.0.1'));
    expect('objects' in first && first.objects.length).toBe(11);
    await lookup(blob('clusterpulse.v1.0.1', '1.0.1'));
    expect(r.asked).toEqual(['base operators/clusterpulse/1.0.1']);
    // The second directory (about 150,000 bytes, as the first) does not fit in what is left of 200,000 bytes.
    expect(await lookup(blob('clusterpulse.v1.0.2', '1.0.2'))).toEqual({
      dir: 'operators/clusterpulse/1.0.2',
      problem: expect.stringMatching(/was not read: the bundle directories of this check hold more than/),
    });
  });
});
