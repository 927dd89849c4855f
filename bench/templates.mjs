// Template rendering with bundles from a registry, warm: the largest real template
// (by file size) rendered again and again by one bundle renderer whose cache already holds
// every bundle, as the templates check does for the outputs of one template. The bundle
// images are rebuilt from the committed output (its olm.bundle.object manifests) and
// served from memory, so no network is involved. Run: node bench/templates.mjs [runs]
// (after `npx tsc -p tsconfig.build.json`); prints JSON.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { decodeFile } from '../dist/catalog/fbc/decode.js';
import { changedLines } from '../dist/catalog/edits/promote-diff.js';
import { renderTemplateText } from '../dist/catalog/templates/index.js';
import { bundleRenderer } from '../dist/publish/bundle-render.js';
import { createTar, gzipFixed } from '../dist/publish/tar.js';
import { OCI_CONFIG, OCI_LAYER_GZIP, OCI_MANIFEST, sha256 } from '../dist/publish/oci.js';

const here = fileURLToPath(new URL('.', import.meta.url));
const data = join(here, '..', '..', 'shared', 'data', 'real-templates');

/** Every template with an output that holds bundle manifests (olm.bundle.object). */
function pairs() {
  const out = [];
  const walk = (dir) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (/^catalog-template\.(ya?ml|json)$/.test(name)) {
        const catalog = join(dir, 'catalog');
        for (const pkg of readdirSync(catalog))
          out.push({ template: path, output: join(catalog, pkg, 'catalog.json') });
      }
    }
  };
  walk(data);
  return out.filter((p) => readFileSync(p.output, 'utf8').includes('"olm.bundle.object"'));
}

/** An in-memory registry serving one bundle image per reference. */
async function memoryRegistry(outputText) {
  const manifests = new Map();
  const blobs = new Map();
  const put = (bytes) => {
    const digest = sha256(bytes);
    blobs.set(digest, bytes);
    return { digest, size: bytes.length };
  };
  for (const { value: b } of decodeFile(Buffer.from(outputText)).values) {
    if (b?.schema !== 'olm.bundle') continue;
    const pkg = b.properties.find((p) => p.type === 'olm.package').value.packageName;
    const entries = [
      { path: 'manifests', type: 'dir' },
      { path: 'metadata', type: 'dir' },
      {
        path: 'metadata/annotations.yaml',
        type: 'file',
        data: Buffer.from(`annotations:\n  operators.operatorframework.io.bundle.package.v1: ${pkg}\n`),
      },
      ...b.properties
        .filter((p) => p.type === 'olm.bundle.object')
        .map((p, i) => ({
          path: `manifests/object-${i}.json`,
          type: 'file',
          data: Buffer.from(p.value.data, 'base64'),
        })),
    ];
    const tar = createTar(entries);
    const layer = put(await gzipFixed(tar));
    const config = put(
      Buffer.from(
        JSON.stringify({
          architecture: 'amd64',
          os: 'linux',
          config: { Labels: { 'operators.operatorframework.io.bundle.package.v1': pkg } },
          rootfs: { type: 'layers', diff_ids: [sha256(tar)] },
        }),
      ),
    );
    const manifest = Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: OCI_MANIFEST,
        config: { mediaType: OCI_CONFIG, ...config },
        layers: [{ mediaType: OCI_LAYER_GZIP, ...layer }],
      }),
    );
    manifests.set(b.image, manifest);
  }
  let requests = 0;
  const source = {
    async getManifest(ref, reference) {
      requests++;
      const at = reference.startsWith('sha256:') ? '@' : ':';
      const data = manifests.get(`${ref.registry}/${ref.repository}${at}${reference}`);
      if (!data) throw new Error(`manifest unknown: ${ref.repository}${at}${reference}`);
      // a registry answers a digest reference with the bytes of that digest
      return {
        mediaType: OCI_MANIFEST,
        digest: reference.startsWith('sha256:') ? reference : sha256(data),
        data,
      };
    },
    async getBlob(_ref, digest) {
      requests++;
      return blobs.get(digest);
    },
  };
  return { source, requests: () => requests };
}

export async function benchTemplates({ runs = 20 } = {}) {
  const largest = pairs().sort((a, b) => statSync(b.template).size - statSync(a.template).size)[0];
  const template = readFileSync(largest.template);
  const committed = readFileSync(largest.output, 'utf8');
  const registry = await memoryRegistry(committed);
  const renderer = bundleRenderer(registry.source);
  const render = () => renderTemplateText(template, 'json', { resolveBundle: renderer.resolver });
  // The first render pulls every bundle; it must give the committed bytes (but for the
  // order of relatedImages opm did not write: see test/templates-roundtrip.test.ts).
  const moved = changedLines(committed, await render());
  if (moved.some((l) => !/^[-+]\s+("name": |"image": |\{$|\},?$)/.test(l)))
    throw new Error(`${largest.template} does not render to ${largest.output}`);
  const pulled = registry.requests();
  const ms = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    await render();
    ms.push(performance.now() - t);
  }
  if (registry.requests() !== pulled) throw new Error('a cached render went to the registry');
  return { ms, template: largest.template.slice(data.length + 1), bundles: renderer.cached };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const result = await benchTemplates({ runs: Number(process.argv[2] ?? 20) });
  const sorted = [...result.ms].sort((a, b) => a - b);
  console.log(
    JSON.stringify({
      template: result.template,
      bundles: result.bundles,
      runs: result.ms.length,
      medianMs: Number(sorted[Math.floor(sorted.length / 2)].toFixed(1)),
      maxMs: Number(sorted.at(-1).toFixed(1)),
    }),
  );
}
