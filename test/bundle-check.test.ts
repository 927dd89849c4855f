// The pure `catalog-bot/bundle` findings: on every real bundle directory of the six
// community-operators-prod packages (the known oddities found, the released ones clean),
// and on a real bundle broken one way at a time.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bundleNames, checkBundle, type BundleCheckInput } from '../src/checks/bundle.js';
import type { DirectoryFiles } from '../src/checks/bundle-pr.js';
import { metadataNamesOnly } from '../src/checks/package-files.js';
import { readTree, SHARED_DATA } from './helpers/oracle.js';

const REPO = join(SHARED_DATA, 'real-repo', 'community-operators-prod');
const PACKAGE_KEY = 'operators.operatorframework.io.bundle.package.v1';

const catalogCache = new Map<string, NonNullable<BundleCheckInput['catalogs']>>();

/** The package's catalogs, their bundle names decoded once for all its bundles. */
function catalogsOf(pkg: string): NonNullable<BundleCheckInput['catalogs']> {
  let got = catalogCache.get(pkg);
  if (got) return got;
  got = readdirSync(join(REPO, 'catalogs')).flatMap((v) => {
    const path = `catalogs/${v}/${pkg}/catalog.yaml`;
    try {
      const text = readFileSync(join(REPO, path), 'utf8');
      return [{ path, text, names: bundleNames(text) }];
    } catch {
      return [];
    }
  });
  catalogCache.set(pkg, got);
  return got;
}

function realInput(pkg: string, version: string): BundleCheckInput {
  return {
    dir: `operators/${pkg}/${version}`,
    package: pkg,
    version,
    files: readTree(join(REPO, 'operators', pkg, version)),
    baseCiYaml: readFileSync(join(REPO, 'operators', pkg, 'ci.yaml'), 'utf8'),
    catalogs: catalogsOf(pkg),
  };
}

describe('catalog-bot/bundle on the real bundle directories', () => {
  it('finds the known oddities and nothing else', () => {
    const errors: Record<string, string[]> = {};
    let checked = 0;
    for (const pkg of readdirSync(join(REPO, 'operators')).sort()) {
      for (const v of readdirSync(join(REPO, 'operators', pkg)).filter((x) => /^\d/.test(x))) {
        checked++;
        const found = checkBundle(realInput(pkg, v)).filter((d) => d.level === 'error');
        if (found.length > 0) errors[`${pkg}/${v}`] = found.map((d) => d.rule);
      }
    }
    expect(checked).toBe(55);
    const oldReplaces = ['1.9.0', '1.10.0', '1.10.1', '1.10.2', '1.10.3', '1.11.0', '1.12.0', '1.12.1'];
    expect(errors).toEqual({
      // The default channel annotation names a channel the bundle is not in.
      'ecr-secret-operator/0.3.2': ['B-ANNOTATIONS'],
      // The bundle under <version>/bundle/: it never reached the catalogs.
      'rabbitmq-messaging-topology-operator/1.18.3': ['B-LAYOUT'],
      'rabbitmq-messaging-topology-operator/1.19.0': ['B-LAYOUT'],
      'rabbitmq-messaging-topology-operator/1.19.1': ['B-LAYOUT'],
      // Bundles from before the FBC catalogs, whose CSV replaces a version the catalogs
      // (which start at 1.12.1) never held.
      ...Object.fromEntries(
        oldReplaces.map((v) => [`rabbitmq-messaging-topology-operator/${v}`, ['B-REPLACES-MISSING']]),
      ),
    });
  });

  it('says how to move a misplaced layout', () => {
    const [d] = checkBundle(realInput('rabbitmq-messaging-topology-operator', '1.19.1'));
    expect(d).toMatchObject({
      rule: 'B-LAYOUT',
      file: 'operators/rabbitmq-messaging-topology-operator/1.19.1/bundle',
      hint: 'Move them up: git mv operators/rabbitmq-messaging-topology-operator/1.19.1/bundle/manifests operators/rabbitmq-messaging-topology-operator/1.19.1/bundle/metadata operators/rabbitmq-messaging-topology-operator/1.19.1/',
    });
  });
});

describe('catalog-bot/bundle on a broken bundle', () => {
  const PKG = 'jumpstarter-operator';
  const CSV = 'manifests/jumpstarter-operator.clusterserviceversion.yaml';
  const good = realInput(PKG, '0.9.0');
  const edit = (path: string, from: string | RegExp, to: string): BundleCheckInput => {
    const files = new Map(good.files);
    const text = files.get(path)!.toString('utf8');
    const changed = text.replace(from, to);
    expect(changed).not.toBe(text);
    files.set(path, Buffer.from(changed));
    return { ...good, files };
  };
  const rules = (input: BundleCheckInput): string[] => checkBundle(input).map((d) => `${d.level} ${d.rule}`);
  /** The bundle's metadata/ as the permissions decision reads it from git. */
  const metadataOf = (input: BundleCheckInput): DirectoryFiles => {
    const files = [...input.files].filter(([p]) => p.startsWith('metadata/'));
    return {
      files: new Map(files.map(([p, data]) => [p.slice('metadata/'.length), data])),
      bytes: files.reduce((n, [, data]) => n + data.length, 0),
      unreadable: [],
    };
  };

  it('a directory far larger than a bundle is reported, not read', () => {
    const files = new Map(good.files);
    files.set('manifests/huge.yaml', Buffer.alloc(65 * 2 ** 20, 0x20));
    expect(rules({ ...good, files })).toEqual(['error B-SIZE']);
  });

  it('a manifest opm could read differently is refused at its line, not skipped', () => {
    // For opm the comment ends at U+2028 and a ConfigMap follows; a YAML 1.2 reader sees a comment.
    const files = new Map(good.files);
    files.set(
      'manifests/notes.yaml',
      Buffer.from('# notes\u2028apiVersion: v1\u2028kind: ConfigMap\u2028metadata: {name: x}\nnotes: hi\n'),
    );
    const found = checkBundle({ ...good, files });
    expect(found).toEqual([
      expect.objectContaining({
        rule: 'L-YAML-LINE-BREAK',
        level: 'error',
        file: `operators/${PKG}/0.9.0/manifests/notes.yaml`,
        line: 1,
      }),
    ]);
  });

  it('a release-config.yaml over 64 KiB is refused unread, naming the file', () => {
    const files = new Map(good.files);
    const config = files.get('release-config.yaml')!.toString('utf8');
    files.set('release-config.yaml', Buffer.from(config + '#' + ' padding'.repeat(10_000) + '\n'));
    const found = checkBundle({ ...good, files });
    expect(found.map((d) => [d.rule, d.file])).toEqual([
      ['B-SIZE', `operators/${PKG}/0.9.0/release-config.yaml`],
    ]);
    expect(found[0]?.message).toMatch(/over the 64 KiB a release-config.yaml may hold/);
  });

  it('a good bundle has no findings', () => {
    expect(checkBundle(good)).toEqual([]);
  });

  it('a released bundle edited in place: one error per changed file', () => {
    const changed = edit(CSV, 'minKubeVersion: 1.28.0', 'minKubeVersion: 1.29.0');
    const found = checkBundle({ ...changed, baseFiles: good.files });
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({
      rule: 'B-RELEASED-EDITED',
      file: `operators/${PKG}/0.9.0/${CSV}`,
    });
    expect(checkBundle({ ...good, baseFiles: good.files })).toEqual([]);
  });

  it('CSV name, version and directory name', () => {
    expect(checkBundle(edit(CSV, 'name: jumpstarter-operator.v0.9.0', 'name: jumpstarter.v0.9.0'))).toEqual([
      expect.objectContaining({
        rule: 'B-CSV-NAME',
        line: 104,
        hint: 'Set metadata.name to jumpstarter-operator.v0.9.0.',
      }),
    ]);
    expect(rules(edit(CSV, /^ {2}version: 0\.9\.0$/m, '  version: v0.9.0'))).toEqual(['error B-CSV-VERSION']);
    expect(checkBundle({ ...good, version: '0.9.1', dir: `operators/${PKG}/0.9.1` })).toEqual([
      expect.objectContaining({ rule: 'B-DIRECTORY-VERSION', line: 524 }),
    ]);
  });

  it('an owned CRD missing from manifests/', () => {
    const files = new Map(good.files);
    files.delete('manifests/jumpstarter.dev_leases.yaml');
    const [d] = checkBundle({ ...good, files });
    expect(d?.rule).toBe('B-CRD-MISSING');
    expect(d?.message).toContain('the CSV owns Lease (leases.jumpstarter.dev');
  });

  it('annotations: missing, wrong media type, foreign package', () => {
    const path = 'metadata/annotations.yaml';
    expect(
      rules(edit(path, /^ {2}operators\.operatorframework\.io\.bundle\.channels\.v1: alpha\n/m, '')),
    ).toEqual(['error B-ANNOTATIONS']);
    expect(checkBundle(edit(path, 'mediatype.v1: registry+v1', 'mediatype.v1: plain+v0'))[0]).toMatchObject({
      rule: 'B-ANNOTATIONS',
      line: 3,
      hint: 'Set it to registry+v1.',
    });
    expect(
      checkBundle(edit(path, 'package.v1: jumpstarter-operator', 'package.v1: other'))[0]?.message,
    ).toContain('names package "other"');
  });

  it('another metadata file naming another package: opm reads it first, so the check fails naming it', () => {
    const annotations = good.files.get('metadata/annotations.yaml')!.toString('utf8');
    const foreign = annotations.replace('package.v1: jumpstarter-operator', 'package.v1: clusterpulse');
    const withFile = (path: string, text: string): BundleCheckInput => ({
      ...good,
      files: new Map([...good.files, [path, Buffer.from(text)]]),
    });
    for (const [path, text] of [
      ['metadata/0.yaml', foreign],
      ['metadata/zz.json', JSON.stringify({ annotations: { [PACKAGE_KEY]: 'clusterpulse' } })],
      // a second YAML document of annotations.yaml
      ['metadata/annotations.yaml', `${annotations}---\n${foreign}`],
    ] as const) {
      const found = checkBundle(withFile(path, text)).filter((d) => d.level === 'error');
      expect(found, path).toHaveLength(1);
      expect(found[0]).toMatchObject({ rule: 'B-ANNOTATIONS', file: `${good.dir}/${path}` });
      expect(found[0]!.message).toContain('names package "clusterpulse"');
      expect(found[0]!.message).toContain('first file in metadata/');
      // The permissions decision reads metadata/ the same way: not the package's own bundle.
      expect(metadataNamesOnly(metadataOf(withFile(path, text)), PKG), path).toBe(false);
    }
    // The same package in another file is what opm reads too: nothing to report.
    expect(rules(withFile('metadata/0.yaml', annotations))).toEqual([]);
    expect(metadataNamesOnly(metadataOf(withFile('metadata/0.yaml', annotations)), PKG)).toBe(true);
  });

  it('minKubeVersion and olm.maxOpenShiftVersion well formed', () => {
    expect(rules(edit(CSV, 'minKubeVersion: 1.28.0', 'minKubeVersion: latest'))).toEqual([
      'error B-MIN-KUBE-VERSION',
    ]);
    const withMax = edit(
      CSV,
      /^ {2}annotations:\n/m,
      `  annotations:\n    olm.properties: '[{"type": "olm.maxOpenShiftVersion", "value": "4.18.1"}]'\n`,
    );
    expect(rules(withMax)).toEqual(['error B-MAX-OPENSHIFT-VERSION']);
  });

  it('replaces and skips targets the mapped catalogs lack', () => {
    const found = checkBundle(
      edit(
        'release-config.yaml',
        'replaces: jumpstarter-operator.v0.9.0-rc.2',
        'replaces: jumpstarter-operator.v0.8.9\n    skips: [jumpstarter-operator.v0.1.0]',
      ),
    );
    expect(found.map((d) => `${d.level} ${d.rule} ${d.file}:${d.line}`)).toEqual([
      `error B-REPLACES-MISSING operators/${PKG}/0.9.0/release-config.yaml:3`,
      `warning B-SKIPS-MISSING operators/${PKG}/0.9.0/release-config.yaml:3`,
    ]);
    expect(found[0]?.message).toContain('catalogs/v4.18/jumpstarter-operator/catalog.yaml');
  });
});
