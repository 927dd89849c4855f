// Bundle images for tests: build one from files (a single layer with `manifests/` and
// `metadata/`, the bundle labels in its config), push it with RegistryClient, and rebuild
// the bundle images of a rendered catalog from its `olm.bundle` blobs.
import { csvMetadata } from '../../src/catalog/templates/migrate.js';
import type { JsonObject } from '../../src/catalog/templates/write.js';
import { goMarshal } from '../../src/publish/bundle-render.js';
import { createTar, gzipFixed, type TarEntry } from '../../src/publish/tar.js';
import { blob, OCI_CONFIG, OCI_LAYER_GZIP, sha256, type Blob } from '../../src/publish/oci.js';
import type { RegistryClient, RepoRef } from '../../src/publish/registry.js';
import { indexBlob, jsonBlob, manifestBlob } from './registry.js';

export type Files = Record<string, string | Buffer>;

/** Tar entries for files, with their parent directories. */
function entries(files: Files): TarEntry[] {
  const dirs = new Set<string>();
  const out: TarEntry[] = [];
  for (const path of Object.keys(files).sort()) {
    const parts = path.split('/');
    for (let i = 1; i < parts.length; i++) {
      const d = parts.slice(0, i).join('/');
      if (!dirs.has(d)) {
        dirs.add(d);
        out.push({ path: d, type: 'dir' });
      }
    }
    const data = files[path]!;
    out.push({ path, type: 'file', data: typeof data === 'string' ? Buffer.from(data) : data });
  }
  return out;
}

export interface ImageSpec {
  /** One layer per entry, applied in order. */
  layers: Files[];
  labels?: Record<string, string>;
  architecture?: string;
}

async function imageBlobs(spec: ImageSpec): Promise<{ blobs: Blob[]; manifest: Blob }> {
  const tars = spec.layers.map((files) => createTar(entries(files)));
  const layers = await Promise.all(tars.map(async (t) => blob(OCI_LAYER_GZIP, await gzipFixed(t))));
  const config = jsonBlob(OCI_CONFIG, {
    architecture: spec.architecture ?? 'amd64',
    os: 'linux',
    config: { Labels: spec.labels ?? {} },
    rootfs: { type: 'layers', diff_ids: tars.map((t) => sha256(t)) },
  });
  const manifest = manifestBlob(
    config.descriptor,
    layers.map((l) => l.descriptor),
  );
  return { blobs: [...layers, config], manifest };
}

/** The labels a bundle image carries (bundle.Dockerfile of operator-sdk). */
export function bundleLabels(pkg: string, channels = 'stable'): Record<string, string> {
  return {
    'operators.operatorframework.io.bundle.mediatype.v1': 'registry+v1',
    'operators.operatorframework.io.bundle.manifests.v1': 'manifests/',
    'operators.operatorframework.io.bundle.metadata.v1': 'metadata/',
    'operators.operatorframework.io.bundle.package.v1': pkg,
    'operators.operatorframework.io.bundle.channels.v1': channels,
  };
}

/**
 * Push an image (or, with several specs, an OCI index of them, one per architecture) and
 * tag it. Returns the digest of what the tag names.
 */
export async function pushImage(
  client: RegistryClient,
  ref: RepoRef & { tag: string },
  specs: ImageSpec[],
): Promise<string> {
  const built = await Promise.all(specs.map(imageBlobs));
  for (const img of built) {
    for (const b of img.blobs) await client.ensureBlob(ref, b.descriptor.digest, b.data);
  }
  if (built.length === 1) {
    const m = built[0]!.manifest;
    return client.putManifest(ref, ref.tag, m.descriptor.mediaType, m.data);
  }
  for (const img of built)
    await client.putManifest(
      ref,
      img.manifest.descriptor.digest,
      img.manifest.descriptor.mediaType,
      img.manifest.data,
    );
  const index = indexBlob(
    built.map((img, i) => ({ manifest: img.manifest, architecture: specs[i]!.architecture ?? 'amd64' })),
  );
  return client.putManifest(ref, ref.tag, index.descriptor.mediaType, index.data);
}

/** Push a bundle image holding these files (paths under manifests/ and metadata/). */
export function pushBundle(
  client: RegistryClient,
  ref: RepoRef & { tag: string },
  pkg: string,
  files: Files,
): Promise<string> {
  return pushImage(client, ref, [{ layers: [files], labels: bundleLabels(pkg) }]);
}

// ---- rebuilding bundle images from rendered FBC

// The fields of olm.csv.metadata a CSV's spec holds under the same name, in the CSV's order;
// the text ones are kept when defined (an empty description too), the others when set.
const SAME_NAME_SPEC_FIELDS =
  'description displayName installModes keywords links maintainers maturity minKubeVersion nativeAPIs provider'.split(
    ' ',
  );
const TEXT_SPEC_FIELDS = new Set(['description', 'displayName', 'maturity', 'minKubeVersion']);

const STANDARD = new Set([
  'olm.package',
  'olm.gvk',
  'olm.gvk.required',
  'olm.package.required',
  'olm.bundle.object',
  'olm.csv.metadata',
]);

type Prop = { type: string; value: JsonObject };

const props = (b: JsonObject): Prop[] => (Array.isArray(b.properties) ? (b.properties as Prop[]) : []);

/**
 * The files of a bundle image that `opm render` turns into this blob again:
 * `olm.bundle.object` manifests as written (their JSON, one file each), or for an
 * `olm.csv.metadata` bundle a CSV built from the metadata plus a minimal CRD for every
 * `olm.gvk` (so opm derives the same properties); the package from `olm.package`;
 * required packages in dependencies.yaml; other properties in properties.json. `icon`
 * (the package's) goes into a rebuilt CSV: olm.csv.metadata has none, and semver
 * templates copy the head CSV's icon into the package.
 */
export function bundleFilesFromBlob(b: JsonObject, icon?: JsonObject): Files {
  const list = props(b);
  const pkg = list.find((p) => p.type === 'olm.package')?.value ?? {};
  const files: Files = {
    'metadata/annotations.yaml': [
      'annotations:',
      `  operators.operatorframework.io.bundle.package.v1: ${JSON.stringify(pkg.packageName ?? '')}`,
      '  operators.operatorframework.io.bundle.channels.v1: stable',
      '',
    ].join('\n'),
  };
  const deps = [
    ...list
      .filter((p) => p.type === 'olm.package.required')
      .map((p) => ({
        type: 'olm.package',
        value: { packageName: p.value.packageName, version: p.value.versionRange },
      })),
    // required APIs the CSV also derives are de-duplicated by opm
    ...list.filter((p) => p.type === 'olm.gvk.required').map((p) => ({ type: 'olm.gvk', value: p.value })),
  ];
  if (deps.length > 0) files['metadata/dependencies.json'] = JSON.stringify({ dependencies: deps });
  const others = list.filter((p) => !STANDARD.has(p.type));
  if (others.length > 0) files['metadata/properties.json'] = JSON.stringify({ properties: others });

  const objects = list.filter((p) => p.type === 'olm.bundle.object');
  if (objects.length > 0) {
    objects.forEach((p, i) => {
      files[`manifests/object-${String(i).padStart(3, '0')}.json`] = Buffer.from(
        String(p.value.data),
        'base64',
      );
    });
    return files;
  }
  const meta = list.find((p) => p.type === 'olm.csv.metadata')?.value;
  if (!meta) throw new Error(`bundle ${String(b.name)} has neither olm.bundle.object nor olm.csv.metadata`);
  const related = (
    Array.isArray(b.relatedImages) ? (b.relatedImages as { name?: string; image: string }[]) : []
  )
    // opm adds the bundle image itself (unnamed) when the CSV does not list it
    .filter((r) => !(r.image === b.image && !r.name))
    .map((r) => ({ name: r.name ?? '', image: r.image }));
  const crdOwned = ((meta.crdDescriptions as JsonObject | undefined)?.owned ?? []) as JsonObject[];
  const apiOwned = ((meta.apiServiceDefinitions as JsonObject | undefined)?.owned ?? []) as JsonObject[];
  const csv: JsonObject = {
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'ClusterServiceVersion',
    metadata: {
      name: b.name,
      ...(meta.annotations ? { annotations: meta.annotations } : {}),
      ...(meta.labels ? { labels: meta.labels } : {}),
    },
    spec: {
      version: pkg.version,
      ...(pkg.release ? { release: pkg.release } : {}),
      ...(meta.apiServiceDefinitions ? { apiservicedefinitions: meta.apiServiceDefinitions } : {}),
      ...(meta.crdDescriptions ? { customresourcedefinitions: meta.crdDescriptions } : {}),
      ...Object.fromEntries(
        SAME_NAME_SPEC_FIELDS.filter((f) => (TEXT_SPEC_FIELDS.has(f) ? meta[f] !== undefined : meta[f])).map(
          (f) => [f, meta[f]],
        ),
      ),
      ...(related.length > 0 ? { relatedImages: related } : {}),
      ...(icon ? { icon: [icon] } : {}),
    },
  };
  // The CSV must give back exactly this metadata, or the rebuild is not equivalent.
  // (compared with sorted keys: a YAML output lists fields sorted, Go structs do not)
  if (goMarshal(csvMetadata(csv)) !== goMarshal(meta))
    throw new Error(`bundle ${String(b.name)}: a CSV with this olm.csv.metadata cannot be rebuilt exactly`);
  files['manifests/csv.json'] = JSON.stringify(csv);
  // One CRD per group and kind, with every version the bundle provides; the plural of an
  // owned crdDescription must match its name (opm checks owned CRDs are in the bundle).
  const apiKinds = new Set(apiOwned.map((a) => `${String(a.group)}/${String(a.version)}/${String(a.kind)}`));
  const crds = new Map<string, { group: string; kind: string; plural: string; versions: string[] }>();
  for (const p of list.filter((x) => x.type === 'olm.gvk')) {
    const { group, version, kind } = p.value as { group: string; version: string; kind: string };
    if (apiKinds.has(`${group}/${version}/${kind}`)) continue;
    const owned = crdOwned.find((d) => d.kind === kind && String(d.name).endsWith(`.${group}`));
    const plural = owned
      ? String(owned.name).slice(0, String(owned.name).length - group.length - 1)
      : `${kind.toLowerCase()}s`;
    const key = `${group}/${kind}/${plural}`;
    const crd = crds.get(key) ?? { group, kind, plural, versions: [] };
    crd.versions.push(version);
    crds.set(key, crd);
  }
  [...crds.values()].forEach((c, i) => {
    files[`manifests/crd-${String(i).padStart(3, '0')}.json`] = JSON.stringify({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `${c.plural}.${c.group}` },
      spec: {
        group: c.group,
        names: { kind: c.kind, plural: c.plural },
        scope: 'Namespaced',
        versions: c.versions.map((v, j) => ({ name: v, served: true, storage: j === 0 })),
      },
    });
  });
  return files;
}
