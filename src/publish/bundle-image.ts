// The bundle image of a bundle directory, built natively as operator-sdk's bundle.Dockerfile
// builds it (docs/bundles.md, "The bundle image"): `FROM scratch`, one layer holding
// `manifests/` and `metadata/` at /manifests and /metadata, and every
// `operators.operatorframework.io.*` annotation of `metadata/annotations.yaml` as a label.
// Reproducible: sorted entries, uid/gid 0, the commit's time as every mtime and as `created`,
// so the same commit gives the same digest on any machine. Pushed once: a tag that already
// holds another image is never overwritten (a released bundle never changes).
import { parseDocument } from 'yaml';
import { bundleImageReference } from '../catalog/bundle.js';
import type { CatalogSource } from '../catalog/fbc/source.js';
import { MAX_BUNDLE_BYTES } from '../checks/bundle.js';
import {
  blob,
  OCI_CONFIG,
  OCI_LAYER_GZIP,
  OCI_MANIFEST,
  sha256,
  type Blob,
  type ImageManifest,
} from './oci.js';
import { formatRef, parseRef, type RegistryClient } from './registry.js';
import { createTar, gzipFixed, treeEntries } from './tar.js';
import { DEFAULT_CREATED } from './image.js';
import { parseTarget } from './publish.js';

/** The labels bundle.Dockerfile sets: every annotation under this prefix. */
export const BUNDLE_ANNOTATION_PREFIX = 'operators.operatorframework.io.';
/** The two directories of a bundle that go into its image (bundle.Dockerfile's COPY lines). */
export const BUNDLE_IMAGE_DIRS = ['manifests', 'metadata'] as const;

/** A bundle directory that cannot become an image; the message says why and what to do. */
export class BundleImageError extends Error {}

/**
 * The image labels of a bundle: every `operators.operatorframework.io.*` key of
 * `metadata/annotations.yaml`'s `annotations`, its value as written (operator-registry reads
 * the file into a map of strings, so `1.0` stays `1.0`).
 */
export function bundleImageLabels(annotationsYaml: Buffer | undefined): Record<string, string> {
  if (!annotationsYaml) throw new BundleImageError('metadata/annotations.yaml is missing');
  // failsafe: every scalar stays the text it was written as.
  const doc = parseDocument(annotationsYaml.toString('utf8'), { schema: 'failsafe', uniqueKeys: false });
  if (doc.errors.length > 0)
    throw new BundleImageError(
      `metadata/annotations.yaml is not YAML: ${doc.errors[0]!.message.split('\n')[0]}`,
    );
  const root: unknown = doc.toJS({ maxAliasCount: 100 });
  const annotations = (root as { annotations?: unknown } | null)?.annotations;
  if (annotations === null || typeof annotations !== 'object' || Array.isArray(annotations))
    throw new BundleImageError('metadata/annotations.yaml has no `annotations` mapping');
  const labels: Record<string, string> = {};
  for (const [key, value] of Object.entries(annotations as Record<string, unknown>)) {
    if (!key.startsWith(BUNDLE_ANNOTATION_PREFIX)) continue;
    // An empty value reads as "" into operator-registry's map of strings.
    if (value === null || value === undefined) {
      labels[key] = '';
      continue;
    }
    if (typeof value !== 'string')
      throw new BundleImageError(`metadata/annotations.yaml: annotation ${key} is not a string`);
    labels[key] = value;
  }
  if (Object.keys(labels).length === 0)
    throw new BundleImageError(`metadata/annotations.yaml has no ${BUNDLE_ANNOTATION_PREFIX}* annotation`);
  return labels;
}

/**
 * The files of a bundle directory that go into its image: those under `manifests/` and
 * `metadata/` (paths relative to the bundle directory). A file that cannot be read, or a
 * directory past the bundle size limit, stops the build.
 */
export async function readBundleImageFiles(source: CatalogSource): Promise<Map<string, Buffer>> {
  const inImage = (path: string): boolean => BUNDLE_IMAGE_DIRS.some((d) => path.startsWith(`${d}/`));
  const entries = (await source.list()).filter((e) => inImage(e.path));
  const bad = entries.find((e) => e.kind === 'unreadable' || e.problem !== undefined);
  if (bad) throw new BundleImageError(`${bad.path}: ${bad.problem ?? 'cannot be read'}`);
  const bytes = entries.reduce((n, e) => n + e.size, 0);
  if (bytes > MAX_BUNDLE_BYTES)
    throw new BundleImageError(
      `manifests/ and metadata/ hold ${bytes} bytes, more than the ${MAX_BUNDLE_BYTES / 2 ** 20} MiB a bundle may`,
    );
  const read = await source.read(entries.map((e) => e.path));
  const files = new Map<string, Buffer>();
  for (const e of entries) {
    const data = read.get(e.path);
    if (data instanceof Error) throw new BundleImageError(`${e.path}: ${data.message}`);
    files.set(e.path, data ?? Buffer.alloc(0));
  }
  return files;
}

export interface BundleImageOptions {
  /** RFC 3339 time for `created` and every entry's mtime (the merge commit's; default the epoch). */
  created?: string;
  /** The bundle directory's path in the repository, for the history entry. */
  bundleDir?: string;
  /** Repository URL and commit for `org.opencontainers.image.{source,revision}`. */
  repoUrl?: string;
  commit?: string;
}

export interface BuiltBundleImage {
  /** The gzipped layer. */
  layer: Blob;
  /** sha256 of the uncompressed layer (the config's diff id). */
  diffId: string;
  config: Blob;
  /** What the tag points at. */
  manifest: Blob;
  labels: Record<string, string>;
  /** Files in the layer. */
  files: number;
}

/** Assemble the image in memory: same files and options, same bytes. */
export async function buildBundleImage(
  files: ReadonlyMap<string, Buffer>,
  options: BundleImageOptions = {},
): Promise<BuiltBundleImage> {
  for (const d of BUNDLE_IMAGE_DIRS)
    if (![...files.keys()].some((p) => p.startsWith(`${d}/`)))
      throw new BundleImageError(`the bundle has no ${d}/ directory`);
  const labels = bundleImageLabels(files.get('metadata/annotations.yaml'));
  const created = options.created ?? DEFAULT_CREATED;
  const mtime = Math.floor(Date.parse(created) / 1000);
  if (!Number.isFinite(mtime) || mtime < 0)
    throw new BundleImageError(`created time ${created} is not a time`);
  const tar = createTar(treeEntries(files), { mtime });
  const layer = blob(OCI_LAYER_GZIP, await gzipFixed(tar));
  const diffId = sha256(tar);
  const from = options.bundleDir ?? '.';
  // Keys in a fixed order: JSON.stringify keeps insertion order, so the bytes never move.
  const config = blob(
    OCI_CONFIG,
    Buffer.from(
      JSON.stringify({
        created,
        architecture: 'amd64',
        os: 'linux',
        config: { Labels: sortedLabels(labels) },
        rootfs: { type: 'layers', diff_ids: [diffId] },
        history: [
          {
            created,
            created_by: `catalog-bot: COPY ${from}/manifests /manifests/ ${from}/metadata /metadata/`,
            comment: `bundle ${from}${options.commit ? ` at ${options.commit}` : ''}`,
          },
        ],
      }),
    ),
  );
  const annotations: Record<string, string> = {};
  if (options.repoUrl) annotations['org.opencontainers.image.source'] = options.repoUrl;
  if (options.commit) annotations['org.opencontainers.image.revision'] = options.commit;
  annotations['org.opencontainers.image.created'] = created;
  const manifest: ImageManifest = {
    schemaVersion: 2,
    mediaType: OCI_MANIFEST,
    config: config.descriptor,
    layers: [layer.descriptor],
    annotations,
  };
  return {
    layer,
    diffId,
    config,
    manifest: blob(OCI_MANIFEST, Buffer.from(JSON.stringify(manifest))),
    labels,
    files: files.size,
  };
}

function sortedLabels(labels: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/**
 * The registry `bundles.imageTemplate` pushes to, or undefined when its placeholders reach
 * the host (then a pull request's directory name would choose where credentials go).
 */
export function templateRegistry(template: string): string | undefined {
  try {
    const a = parseRef(bundleImageReference(template, 'a', '0.0.1')).registry;
    const b = parseRef(bundleImageReference(template, 'b', '0.0.2')).registry;
    return a === b ? a : undefined;
  } catch {
    return undefined;
  }
}

/** Where a bundle's image goes: `bundles.imageTemplate` expanded, on the template's own registry. */
export function bundlePushTarget(template: string, pkg: string, version: string): string {
  const registry = templateRegistry(template);
  if (!registry)
    throw new BundleImageError(
      `bundles.imageTemplate ${template} does not name one registry: its {package} or {version} is part of the host`,
    );
  const target = bundleImageReference(template, pkg, version);
  let parsed;
  try {
    parsed = parseTarget(target);
  } catch (error) {
    throw new BundleImageError(
      `the bundle's image reference ${target} cannot be pushed to: ${(error as Error).message}`,
    );
  }
  if (parsed.registry !== registry)
    throw new BundleImageError(`the bundle's image reference ${target} is not on ${registry}`);
  return target;
}

export type BundlePushStatus =
  /** Pushed now; the tag read back gives the built digest. */
  | 'pushed'
  /** The tag already held this very image (a re-run): nothing written. */
  | 'present'
  /** The tag holds another image: left alone, never overwritten. */
  | 'conflict';

export interface BundlePushResult {
  target: string;
  status: BundlePushStatus;
  /** The built image's digest. */
  digest: string;
  /** For a conflict: the digest the tag holds. */
  existing?: string;
}

/**
 * Push a bundle image to its tag unless the tag exists: the same digest is 'present', another
 * is a 'conflict' (released images never change). After the push the tag is read back and
 * must give the built digest.
 */
export async function pushBundleImage(
  client: RegistryClient,
  image: BuiltBundleImage,
  target: string,
): Promise<BundlePushResult> {
  const ref = parseTarget(target);
  const digest = image.manifest.descriptor.digest;
  const current = await client.headManifest(ref, ref.tag, true);
  if (current) {
    return current.digest === digest
      ? { target, status: 'present', digest }
      : { target, status: 'conflict', digest, existing: current.digest };
  }
  await client.ensureBlob(ref, image.layer.descriptor.digest, image.layer.data);
  await client.ensureBlob(ref, image.config.descriptor.digest, image.config.data);
  await client.putManifest(ref, ref.tag, image.manifest.descriptor.mediaType, image.manifest.data);
  // Read the tag back: what a puller gets is what was built.
  const back = await client.getManifest(ref, ref.tag);
  if (back.digest !== digest)
    throw new Error(
      `${formatRef(ref)} reads back as ${back.digest} after the push, not the pushed ${digest}`,
    );
  return { target, status: 'pushed', digest };
}
