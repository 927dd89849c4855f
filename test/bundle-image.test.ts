// The bundle image catalog-bot builds from a bundle directory (docs/bundles.md, "The bundle
// image"), checked with independent tools: tar lists the layer, docker-registry stores it,
// skopeo pulls it back, umoci unpacks it, and the real `opm render` of the pushed image gives
// the very `olm.bundle` blob the bundle loader derives from the directory alone.
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadBundleDirectory } from '../src/catalog/bundle.js';
import { GitTreeSource } from '../src/catalog/fbc/source.js';
import { bundleObject } from '../src/catalog/templates/index.js';
import { emptyOutput, writeConfig } from '../src/catalog/templates/write.js';
import {
  buildBundleImage,
  BundleImageError,
  bundleImageLabels,
  bundlePushTarget,
  pushBundleImage,
  readBundleImageFiles,
} from '../src/publish/bundle-image.js';
import { commitTime } from '../src/publish/publish.js';
import { RegistryClient } from '../src/publish/registry.js';
import { haveOpm, OPM, SHARED_DATA } from './helpers/oracle.js';
import { fileTree } from './helpers/file-tree.js';
import {
  haveRegistryTools,
  pullAndUnpack,
  run,
  startProxy,
  startRegistry,
  blobUploads,
  type RunningProxy,
  type RunningRegistry,
} from './helpers/registry.js';

const OPERATORS = join(SHARED_DATA, 'real-repo/community-operators-prod/operators');
// jumpstarter 0.9.0 also holds tests/ and release-config.yaml (not in the image); the
// rabbitmq bundle has metadata/dependencies.yaml.
const BUNDLES = [
  { pkg: 'jumpstarter-operator', version: '0.9.0' },
  { pkg: 'rabbitmq-messaging-topology-operator', version: '1.19.3' },
];
const COMMIT_DATE = '2025-03-04T05:06:07Z';

/** The files of a bundle directory that belong in its image: manifests/ and metadata/. */
function imageFiles(bundleDir: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  for (const d of ['manifests', 'metadata'])
    for (const [path, data] of fileTree(join(bundleDir, d))) out.set(`${d}/${path}`, data);
  return out;
}

/** The `operators.operatorframework.io.*` annotations, read independently of the product. */
function operatorAnnotations(bundleDir: string): Record<string, string> {
  const doc = parse(readFileSync(join(bundleDir, 'metadata/annotations.yaml'), 'utf8')) as {
    annotations: Record<string, string>;
  };
  return Object.fromEntries(
    Object.entries(doc.annotations).filter(([k]) => k.startsWith('operators.operatorframework.io.')),
  );
}

let repo: string;
let sha: string;

/** A git repository holding the real bundle directories, committed at a fixed time. */
function makeRepo(): void {
  repo = mkdtempSync(join(tmpdir(), 'catalog-bot-bundle-image-'));
  for (const b of BUNDLES)
    cpSync(join(OPERATORS, b.pkg, b.version), join(repo, 'operators', b.pkg, b.version), { recursive: true });
  const env = { ...process.env, GIT_COMMITTER_DATE: COMMIT_DATE, GIT_AUTHOR_DATE: COMMIT_DATE };
  const git = (...args: string[]) =>
    execFileSync('git', ['-C', repo, '-c', 'user.name=t', '-c', 'user.email=t@e', ...args], {
      encoding: 'utf8',
      env,
    }).trim();
  git('init', '-q');
  git('add', '.');
  git('commit', '-qm', 'bundles');
  sha = git('rev-parse', 'HEAD');
}

async function built(b: (typeof BUNDLES)[number], created?: string) {
  const dir = `operators/${b.pkg}/${b.version}`;
  const files = await readBundleImageFiles(new GitTreeSource(repo, sha, dir));
  return buildBundleImage(files, {
    created: created ?? (await commitTime(repo, sha)),
    bundleDir: dir,
    commit: sha,
  });
}

beforeAll(makeRepo);
afterAll(() => rmSync(repo, { recursive: true, force: true }));

describe('the bundle image, built', () => {
  it('holds manifests/ and metadata/ as in git, sorted, uid/gid 0, the commit time as mtime', async () => {
    const b = BUNDLES[0]!;
    const image = await built(b);
    const listing = spawnSync('tar', ['-tvz', '--numeric-owner', '--full-time'], {
      input: image.layer.data,
      encoding: 'utf8',
    });
    expect(listing.status).toBe(0);
    const lines = listing.stdout.trim().split('\n');
    const names = lines.map((l) => l.split(/\s+/).pop()!);
    const expected = [...imageFiles(join(OPERATORS, b.pkg, b.version)).keys()];
    expect(names.filter((n) => !n.endsWith('/')).sort()).toEqual(expected.sort());
    expect(names.filter((n) => n.endsWith('/'))).toEqual(['manifests/', 'metadata/']);
    expect(names).toEqual([...names].sort()); // byte order: a directory right before its files
    expect(names.some((n) => n.startsWith('tests/') || n === 'release-config.yaml')).toBe(false);
    for (const l of lines) {
      expect(l).toMatch(/ 0\/0 /);
      expect(l).toContain('2025-03-04 05:06:07');
    }
    const config = JSON.parse(image.config.data.toString()) as {
      created: string;
      config: { Labels: Record<string, string> };
      history: { created_by: string }[];
    };
    expect(config.created).toBe(COMMIT_DATE);
    expect(config.config.Labels).toEqual(operatorAnnotations(join(OPERATORS, b.pkg, b.version)));
    expect(config.history[0]!.created_by).not.toContain(repo); // no machine paths
    expect(image.manifest.data.toString()).not.toContain(tmpdir());
  });

  it('gives the same digest on a rebuild, and another one for another commit time', async () => {
    const b = BUNDLES[1]!;
    const [one, two] = [await built(b), await built(b)];
    expect(two.manifest.descriptor.digest).toBe(one.manifest.descriptor.digest);
    expect(two.layer.data.equals(one.layer.data)).toBe(true);
    const later = await built(b, '2025-03-05T00:00:00Z');
    expect(later.manifest.descriptor.digest).not.toBe(one.manifest.descriptor.digest);
    expect(later.layer.descriptor.digest).not.toBe(one.layer.descriptor.digest); // mtimes moved
  });

  it('labels every operators.operatorframework.io.* annotation as written, and refuses what is no bundle', () => {
    expect(
      bundleImageLabels(
        Buffer.from(
          'annotations:\n  operators.operatorframework.io.bundle.package.v1: p\n  operators.operatorframework.io.x: 1.0\n  com.redhat.openshift.versions: v4.18\n',
        ),
      ),
    ).toEqual({
      'operators.operatorframework.io.bundle.package.v1': 'p',
      'operators.operatorframework.io.x': '1.0',
    });
    expect(() => bundleImageLabels(undefined)).toThrow(/annotations.yaml is missing/);
    expect(() => bundleImageLabels(Buffer.from('annotations: [a]\n'))).toThrow(/no `annotations` mapping/);
    expect(() =>
      bundleImageLabels(
        Buffer.from('annotations:\n  operators.operatorframework.io.bundle.package.v1: {a: 1}\n'),
      ),
    ).toThrow(/is not a string/);
    expect(() => bundleImageLabels(Buffer.from('annotations:\n  other: x\n'))).toThrow(/no operators/);
    return expect(
      buildBundleImage(new Map([['metadata/annotations.yaml', Buffer.from('annotations: {}\n')]])),
    ).rejects.toThrow(BundleImageError);
  });

  it('pushes only to the registry bundles.imageTemplate names', () => {
    expect(bundlePushTarget('quay.io/org/{package}:{version}', 'p', '1.2.3')).toBe('quay.io/org/p:1.2.3');
    // A directory name must not choose the host the credentials go to.
    expect(() => bundlePushTarget('{package}.example.com/b:{version}', 'evil', '1.0.0')).toThrow(
      /does not name one registry/,
    );
    expect(() => bundlePushTarget('quay.io/org/b:{version}', 'p', '1.0.0@sha256')).toThrow(BundleImageError);
    expect(() => bundlePushTarget('quay.io/org/{package}:{version}', 'Upper/../x', '1.0.0')).toThrow(
      BundleImageError,
    );
  });
});

describe.skipIf(!haveRegistryTools)('the bundle image on docker-registry', () => {
  let registry: RunningRegistry;
  let proxy: RunningProxy;
  let client: RegistryClient;
  let work: string;
  const refOf = (b: (typeof BUNDLES)[number]) => `${proxy.host}/bundles/${b.pkg}:${b.version}`;

  beforeAll(async () => {
    registry = await startRegistry();
    // The proxy counts uploads (a re-run must upload nothing).
    proxy = await startProxy(registry.port);
    client = new RegistryClient({ insecureHosts: [proxy.host] });
    work = mkdtempSync(join(tmpdir(), 'catalog-bot-bundle-image-work-'));
    for (const b of BUNDLES) {
      const result = await pushBundleImage(client, await built(b), refOf(b));
      expect(result.status).toBe('pushed');
    }
  }, 60_000);
  afterAll(async () => {
    client?.close();
    await proxy?.stop();
    await registry?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('skopeo and umoci get back exactly the bundle directory and its annotations as labels', async () => {
    for (const b of BUNDLES) {
      const dir = join(OPERATORS, b.pkg, b.version);
      const rootfs = await pullAndUnpack(refOf(b), 'amd64', join(work, b.pkg));
      const got = fileTree(rootfs);
      const want = imageFiles(dir);
      expect([...got.keys()].sort()).toEqual([...want.keys()].sort());
      for (const [path, bytes] of want) expect(got.get(path)?.equals(bytes), path).toBe(true);
      const config = JSON.parse(
        await run('skopeo', ['inspect', '--tls-verify=false', '--config', `docker://${refOf(b)}`]),
      ) as { config: { Labels: Record<string, string> } };
      expect(config.config.Labels).toEqual(operatorAnnotations(dir));
    }
  }, 60_000);

  it('a rebuild is already there (nothing uploaded); another image at the tag is never overwritten', async () => {
    const b = BUNDLES[0]!;
    const before = blobUploads(proxy.log).length;
    const again = await pushBundleImage(client, await built(b), refOf(b));
    expect(again.status).toBe('present');
    expect(blobUploads(proxy.log).length).toBe(before);

    const pushed = await client.headManifest(
      { registry: proxy.host, repository: `bundles/${b.pkg}` },
      b.version,
    );
    const other = await built(b, '2026-01-01T00:00:00Z');
    const conflict = await pushBundleImage(client, other, refOf(b));
    expect(conflict).toMatchObject({ status: 'conflict', existing: pushed!.digest });
    expect(conflict.digest).toBe(other.manifest.descriptor.digest);
    const after = await client.headManifest(
      { registry: proxy.host, repository: `bundles/${b.pkg}` },
      b.version,
    );
    expect(after!.digest).toBe(pushed!.digest);
  });

  it.skipIf(!haveOpm)(
    'opm render of the pushed images gives the blobs the bundle loader derives from the directories',
    async () => {
      const refs = BUNDLES.map(refOf);
      // Asynchronously: the proxy opm talks to lives in this process.
      const opm = await run(OPM, ['render', ...refs, '-o', 'json', '--use-http'], {
        ...process.env,
        HOME: process.env.HOME ?? '/tmp',
      });
      const cfg = emptyOutput();
      for (const [i, b] of BUNDLES.entries()) {
        const loaded = loadBundleDirectory(imageFiles(join(OPERATORS, b.pkg, b.version)), {
          image: refs[i]!,
        });
        cfg.bundles.push(bundleObject(loaded.blob));
      }
      expect(writeConfig(cfg, 'json')).toBe(opm);
      expect(opm).toContain('"olm.package.required"'); // the rabbitmq bundle's dependencies.yaml
    },
  );
});
