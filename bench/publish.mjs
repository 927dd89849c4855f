// Publishing benchmark: build the v4.16 catalog image natively and push it to a local
// docker-registry (plain HTTP on 127.0.0.1) onto a small two-platform base image.
//   cold:      fresh registry storage each run, no cached layer, new client
//   unchanged: the same content again to the same tag (what a re-run after a no-op merge costs)
// Imports ../dist: run `npx tsc -p tsconfig.build.json` first. `node bench/publish.mjs [runs]`.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DirectorySource } from '../dist/catalog/fbc/source.js';
import { clearLayerCache } from '../dist/publish/layer.js';
import { createTar, gzipFixed } from '../dist/publish/tar.js';
import { blob, OCI_CONFIG, OCI_INDEX, OCI_LAYER_GZIP, OCI_MANIFEST, sha256 } from '../dist/publish/oci.js';
import { publishCatalog } from '../dist/publish/publish.js';
import { RegistryClient } from '../dist/publish/registry.js';
import { startRegistry } from './registry.mjs';

const here = fileURLToPath(new URL('.', import.meta.url));
export const V416 = join(
  here,
  '..',
  '..',
  'shared',
  'data',
  'real-catalogs',
  'community-operators-prod',
  'catalogs',
  'v4.16',
);

/** A small base: an OCI index of linux/amd64 and linux/arm64, each one ~1 MiB layer. */
async function pushBase(client, ref) {
  const manifests = [];
  for (const architecture of ['amd64', 'arm64']) {
    const tar = createTar([
      { path: 'bin', type: 'dir' },
      { path: 'bin/opm', type: 'file', data: Buffer.alloc(1 << 20, architecture), mode: 0o755 },
    ]);
    const layer = blob(OCI_LAYER_GZIP, await gzipFixed(tar));
    const config = blob(
      OCI_CONFIG,
      Buffer.from(
        JSON.stringify({
          architecture,
          os: 'linux',
          config: {},
          rootfs: { type: 'layers', diff_ids: [sha256(tar)] },
        }),
      ),
    );
    for (const b of [layer, config]) await client.ensureBlob(ref, b.descriptor.digest, b.data);
    const manifest = blob(
      OCI_MANIFEST,
      Buffer.from(
        JSON.stringify({
          schemaVersion: 2,
          mediaType: OCI_MANIFEST,
          config: config.descriptor,
          layers: [layer.descriptor],
        }),
      ),
    );
    await client.putManifest(ref, manifest.descriptor.digest, OCI_MANIFEST, manifest.data);
    manifests.push({ ...manifest.descriptor, platform: { architecture, os: 'linux' } });
  }
  const index = Buffer.from(JSON.stringify({ schemaVersion: 2, mediaType: OCI_INDEX, manifests }));
  await client.putManifest(ref, ref.tag, OCI_INDEX, index);
}

const newClient = (host) => new RegistryClient({ insecureHosts: [host] });
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function sizeOf(dir) {
  let bytes = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    bytes += e.isDirectory() ? sizeOf(p) : statSync(p).size;
  }
  return bytes;
}

/** Median-able timings in ms: `runs` cold publishes and `runs` unchanged re-publishes. */
export async function benchPublish({ runs = 5, root = V416 } = {}) {
  const coldMs = [];
  const unchangedMs = [];
  const unchangedUncachedMs = [];
  const publish = async (host) => {
    const client = newClient(host);
    const started = performance.now();
    const [result] = await publishCatalog({
      source: new DirectorySource(root),
      root: 'catalogs/v4.16',
      tags: [`${host}/catalogs/community:{root}`],
      baseImage: `${host}/base/opm:v1`,
      repoUrl: 'https://github.com/redhat-openshift-ecosystem/community-operators-prod',
      commit: '0'.repeat(40),
      client,
    });
    const ms = performance.now() - started;
    client.close();
    return { ms, digest: result.digest };
  };
  let digest;
  for (let i = 0; i < runs; i++) {
    const registry = await startRegistry();
    try {
      const setup = newClient(registry.host);
      await pushBase(setup, { registry: registry.host, repository: 'base/opm', tag: 'v1' });
      setup.close();
      clearLayerCache();
      const cold = await publish(registry.host);
      coldMs.push(cold.ms);
      const again = await publish(registry.host);
      unchangedMs.push(again.ms);
      // as a fresh process would: the layer is tarred and gzipped again, then found present
      clearLayerCache();
      unchangedUncachedMs.push((await publish(registry.host)).ms);
      // same content, same image (across registries the base name, with its port, differs)
      if (again.digest !== cold.digest) throw new Error('digest changed on re-publish');
      digest = cold.digest;
    } finally {
      await registry.stop();
    }
  }
  return { coldMs, unchangedMs, unchangedUncachedMs, digest, bytes: sizeOf(root) };
}

export function publishMarkdown(r) {
  const mb = (r.bytes / 1e6).toFixed(1);
  return (
    `| publish community-operators-prod v4.16 (${mb} MB) to a local registry, two-platform base: ` +
    `cold ${Math.round(median(r.coldMs))} ms, unchanged ${Math.round(median(r.unchangedMs))} ms ` +
    `(${Math.round(median(r.unchangedUncachedMs))} ms without the in-process layer cache) ` +
    `(median of ${r.coldMs.length}) |`
  );
}

/**
 * The same job with `buildah bud` (vfs storage, chroot isolation): FROM the same base in a
 * fresh local registry, ADD the root at /configs, push. Skipped when buildah is absent.
 */
export async function benchBuildah({ runs = 3, root = V416 } = {}) {
  if (spawnSync('sh', ['-c', 'command -v buildah']).status !== 0)
    return { skipped: 'buildah is not installed' };
  const work = mkdtempSync(join(tmpdir(), 'catalog-bot-bench-buildah-'));
  const ms = [];
  try {
    spawnSync('cp', ['-r', root, join(work, 'configs')]);
    for (let i = 0; i < runs; i++) {
      const registry = await startRegistry();
      try {
        const setup = newClient(registry.host);
        await pushBase(setup, { registry: registry.host, repository: 'base/opm', tag: 'v1' });
        setup.close();
        writeFileSync(
          join(work, 'Containerfile'),
          `FROM ${registry.host}/base/opm:v1\nADD configs /configs\n` +
            'LABEL operators.operatorframework.io.index.configs.v1=/configs\nENTRYPOINT ["/bin/opm"]\n' +
            'CMD ["serve", "/configs", "--cache-dir=/tmp/cache", "--cache-enforce-integrity=false"]\n',
        );
        const store = [
          '--storage-driver',
          'vfs',
          '--root',
          join(work, `storage-${i}`),
          '--runroot',
          join(work, `run-${i}`),
        ];
        const tag = `${registry.host}/catalogs/community:v4.16`;
        const started = performance.now();
        for (const args of [
          [
            'bud',
            '--isolation',
            'chroot',
            '--tls-verify=false',
            '-q',
            '-t',
            tag,
            '-f',
            join(work, 'Containerfile'),
            work,
          ],
          ['push', '--tls-verify=false', '-q', tag],
        ]) {
          const r = spawnSync('buildah', [...store, ...args], { encoding: 'utf8' });
          if (r.status !== 0)
            return {
              skipped: `buildah ${args[0]} failed: ${(r.stderr || r.error?.message || '').trim().split('\n').pop()}`,
            };
        }
        ms.push(performance.now() - started);
        spawnSync('buildah', [...store, 'rm', '--all']);
      } finally {
        await registry.stop();
      }
    }
    return { ms };
  } finally {
    spawnSync('rm', ['-rf', work]);
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const runs = Number(process.argv[2] ?? process.env.BENCH_RUNS ?? 5);
  const r = await benchPublish({ runs });
  console.log(`cold ms: ${r.coldMs.map((x) => x.toFixed(0)).join(', ')}`);
  console.log(`unchanged ms: ${r.unchangedMs.map((x) => x.toFixed(0)).join(', ')}`);
  console.log(publishMarkdown(r));
  console.log(
    `unchanged without layer cache ms: ${r.unchangedUncachedMs.map((x) => x.toFixed(0)).join(', ')}`,
  );
  const b = await benchBuildah({ runs: Math.min(runs, 3) });
  console.log(
    b.ms
      ? `buildah bud + push (vfs, chroot), cold, ms: ${b.ms.map((x) => x.toFixed(0)).join(', ')}; median ${Math.round(median(b.ms))}`
      : `buildah: ${b.skipped}`,
  );
}
