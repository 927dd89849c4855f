// Build a catalog image once and push it to every tag.
import { commitSeconds } from '../git/read.js';
import type { CatalogSource } from '../catalog/fbc/source.js';
import {
  buildCacheLayer,
  cacheKey,
  extractOpm,
  findPushedCache,
  NoCacheError,
  rememberCache,
  rememberedCache,
  runnablePlatform,
  type CacheBuildOptions,
} from './cache.js';
import {
  buildImage,
  fetchBase,
  type BaseImage,
  type BuildOptions,
  type BuiltImage,
  type CacheChoice,
  type CacheLayer,
} from './image.js';
import { layerFromFiles, readCatalogFiles, type CatalogLayer } from './layer.js';
import type { Blob } from './oci.js';
import { formatRef, parseRef, type ImageRef, type RegistryClient } from './registry.js';
import { mapLimit } from '../catalog/map-limit.js';

export interface PublishResult {
  tag: string;
  digest: string;
  /** What the image lacks (no pre-built opm cache, and why). */
  warnings?: string[];
}

/**
 * `{root}` is the root's directory name, `{sha}` the first 12 hex digits of the commit
 * (README "Repository configuration", `publish.images`).
 */
export function expandTags(patterns: string[], root: string, sha: string): string[] {
  if (sha === '' && patterns.some((p) => p.includes('{sha}')))
    throw new Error(
      `tag pattern ${patterns.find((p) => p.includes('{sha}'))} uses {sha}, but no commit was given`,
    );
  const name = root.replace(/\/+$/, '').split('/').pop() ?? root;
  const short = sha.slice(0, 12);
  return [...new Set(patterns.map((p) => p.replaceAll('{root}', name).replaceAll('{sha}', short)))];
}

/** A tag to push to: it must name a tag (or none, meaning `latest`), never a digest. */
export function parseTarget(tag: string): ImageRef & { tag: string } {
  const ref = parseRef(tag);
  if (ref.digest) throw new Error(`cannot push to "${tag}": a digest cannot be a push target, name a tag`);
  return { ...ref, tag: ref.tag ?? 'latest' };
}

export interface BuildCatalogOptions extends BuildOptions {
  source: CatalogSource;
  baseImage: string;
  client: RegistryClient;
  /** Pre-build opm's serve cache with the base's opm (default on); `false` builds today's cache-less image. */
  opmCache?: boolean | CacheBuildOptions;
  /** Images (the tags about to be written) whose cache layer may be reused when its key matches. */
  reuseCacheFrom?: string[];
}

/**
 * The cache layer for this catalog and base: one built earlier in this process or pushed
 * before under the same key (opm's cache is not byte-reproducible, so reusing it is what
 * keeps "same content, same digest"), else a new one from the base's own opm.
 */
async function chooseCache(
  options: BuildCatalogOptions,
  base: BaseImage,
  layer: CatalogLayer,
  files: Map<string, Buffer>,
): Promise<CacheChoice> {
  // CATALOG_BOT_OPM_CACHE=off: never run the base's opm on this machine (docs/publishing.md).
  if (options.opmCache === false || process.env.CATALOG_BOT_OPM_CACHE === 'off') return {};
  // Whoever can move a tag would choose the binary this machine runs: only a base pinned by
  // digest is run, unless the operator trusts the tag (CATALOG_BOT_OPM_CACHE=on).
  if (!base.ref.digest && process.env.CATALOG_BOT_OPM_CACHE !== 'on')
    return {
      warnings: [
        `no pre-built opm cache: the base image ${formatRef(base.ref)} is not pinned by digest, and catalog-bot runs the base's opm only from a pinned base (name it as <image>@sha256:<digest>, or set CATALOG_BOT_OPM_CACHE=on); the image builds its cache at every start (--cache-enforce-integrity=false)`,
      ],
    };
  const key = cacheKey(layer.digest, base.digest);
  let cache: CacheLayer | undefined =
    rememberedCache(key) ??
    (await findPushedCache(
      options.client,
      (options.reuseCacheFrom ?? []).flatMap((t) => {
        try {
          return [parseRef(t)];
        } catch {
          return [];
        }
      }),
      key,
    ));
  try {
    if (!cache) {
      const opm = await extractOpm(options.client, base, runnablePlatform(base));
      cache = await buildCacheLayer(
        opm,
        files,
        key,
        typeof options.opmCache === 'object' ? options.opmCache : {},
      );
    }
    rememberCache(cache);
    return { cache };
  } catch (error) {
    if (!(error instanceof NoCacheError)) throw error;
    return {
      warnings: [
        `no pre-built opm cache: ${error.message}; the image builds its cache at every start (--cache-enforce-integrity=false)`,
      ],
    };
  }
}

/** Read the root, pull the base's manifests and configs, and assemble the image (nothing pushed). */
export async function buildCatalogImage(options: BuildCatalogOptions): Promise<BuiltImage> {
  const [files, base] = await Promise.all([
    readCatalogFiles(options.source),
    fetchBase(options.client, parseRef(options.baseImage)),
  ]);
  const layer = await layerFromFiles(files);
  const choice = await chooseCache(options, base, layer, files);
  return buildImage(base, layer, options, choice);
}

/** A commit's committer time as RFC 3339 UTC, for the image's `created` (same commit, same digest). */
export async function commitTime(repoDir: string, rev: string): Promise<string> {
  const seconds = await commitSeconds(repoDir, rev);
  if (!Number.isInteger(seconds)) throw new Error(`cannot read the commit time of ${rev}`);
  return new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

const BLOB_CONCURRENCY = 4;

/** A tag that does not read back as the image just pushed (docs/publishing.md, "Proof of publication"). */
export class TagMismatchError extends Error {}

/**
 * Read every tag back after a push and check it names the pushed image: the manifest is
 * fetched (GET, not HEAD: the digest is computed from the bytes served, not taken from a
 * header), so a registry that dropped, rewrote or raced a tag fails the publish, by name.
 */
export async function verifyTags(
  client: RegistryClient,
  targets: (ImageRef & { tag: string })[],
  digest: string,
): Promise<void> {
  const problems: string[] = [];
  for (const t of targets) {
    const shown = `${t.registry}/${t.repository}:${t.tag}`;
    let read: string | undefined;
    try {
      read = (await client.getManifest(t, t.tag)).digest;
    } catch (error) {
      problems.push(
        `${shown} cannot be read back (${error instanceof Error ? error.message : String(error)})`,
      );
      continue;
    }
    if (read !== digest) problems.push(`${shown} reads back as ${read}, not the pushed ${digest}`);
  }
  if (problems.length > 0)
    throw new TagMismatchError(`the registry does not serve what was pushed: ${problems.join('; ')}`);
}

/** Push a built image to every tag: blobs once per repository (HEAD first), then manifests. */
export async function pushImage(
  client: RegistryClient,
  image: BuiltImage,
  tags: string[],
): Promise<PublishResult[]> {
  const targets = tags.map(parseTarget);
  const byRepo = new Map<string, (ImageRef & { tag: string })[]>();
  for (const t of targets) {
    const key = `${t.registry}/${t.repository}`;
    byRepo.set(key, [...(byRepo.get(key) ?? []), t]);
  }
  const topDigest = image.top.descriptor.digest;
  for (const repoTargets of byRepo.values()) {
    const repo = repoTargets[0]!;
    // Tags already at this digest need nothing: an index or manifest is only stored with its blobs.
    const current = await Promise.all(repoTargets.map((t) => client.headManifest(t, t.tag, true)));
    const stale = repoTargets.filter((_, i) => current[i]?.digest !== topDigest);
    if (stale.length === 0) continue;
    if (stale.length < repoTargets.length) {
      // Another tag of this repository has the image: only the tags need writing.
      for (const t of stale)
        await client.putManifest(t, t.tag, image.top.descriptor.mediaType, image.top.data);
      continue;
    }

    const base = image.base.ref;
    const sameRegistry = base.registry === repo.registry;
    const blobs = new Map<string, { data: Buffer | (() => Promise<Buffer>); mountFrom?: string }>();
    for (const p of image.platforms) {
      for (const l of p.baseLayers)
        blobs.set(l.digest, {
          data: () => client.getBlob(base, l.digest),
          ...(sameRegistry ? { mountFrom: base.repository } : {}),
        });
      blobs.set(p.config.descriptor.digest, { data: p.config.data });
    }
    blobs.set(image.layer.digest, { data: image.layer.data });
    if (image.cache) blobs.set(image.cache.digest, { data: image.cache.data });
    await mapLimit([...blobs], BLOB_CONCURRENCY, ([digest, b]) =>
      client.ensureBlob(repo, digest, b.data, b.mountFrom ? { mountFrom: b.mountFrom } : {}),
    );
    const children: Blob[] = image.platforms.map((p) => p.manifest).filter((m) => m !== image.top);
    await mapLimit(children, BLOB_CONCURRENCY, (m) =>
      client.putManifest(repo, m.descriptor.digest, m.descriptor.mediaType, m.data),
    );
    for (const t of stale) await client.putManifest(t, t.tag, image.top.descriptor.mediaType, image.top.data);
  }
  await verifyTags(client, targets, topDigest);
  return tags.map((tag) => ({
    tag,
    digest: topDigest,
    ...(image.warnings.length > 0 ? { warnings: image.warnings } : {}),
  }));
}

export interface PublishOptions {
  source: CatalogSource;
  /** The catalog root's path in the repository (`catalogs/v4.16`); `{root}` is its last segment. */
  root: string;
  /** Tags to push (full references; `{root}` and `{sha}` are expanded). */
  tags: string[];
  baseImage: string;
  repoUrl?: string;
  commit?: string;
  client: RegistryClient;
  created?: string;
  opmCache?: boolean | CacheBuildOptions;
}

/** Build once, push to every tag; the digest is what each tag now points at. */
export async function publishCatalog(options: PublishOptions): Promise<PublishResult[]> {
  const tags = expandTags(options.tags, options.root, options.commit ?? '');
  for (const t of tags) parseTarget(t); // bad tags fail before any work
  const image = await buildCatalogImage({
    source: options.source,
    baseImage: options.baseImage,
    client: options.client,
    root: options.root,
    ...(options.repoUrl ? { repoUrl: options.repoUrl } : {}),
    ...(options.commit ? { commit: options.commit } : {}),
    ...(options.created ? { created: options.created } : {}),
    ...(options.opmCache !== undefined ? { opmCache: options.opmCache } : {}),
    reuseCacheFrom: tags,
  });
  return pushImage(options.client, image, tags);
}
