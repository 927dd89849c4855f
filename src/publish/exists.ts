// Does an image exist in its registry? For the `catalog-bot/images` check: one HEAD per
// reference, a bounded number at a time, digest-pinned answers remembered.
import type { BundleResolver } from '../catalog/templates/index.js';
import type { RepoConfig } from '../checks/config.js';
import { BundleRenderError } from './bundle-render.js';
import { mapLimit } from './publish.js';
import {
  credentialHostsOf,
  formatRef,
  parseRef,
  referenceOf,
  RegistryError,
  type ImageRef,
  type RegistryErrorKind,
  type RegistryClient,
} from './registry.js';

export type ImageStatus = 'exists' | 'missing' | 'unreachable' | 'disallowed' | 'invalid';

export interface ImageCheck {
  ref: string;
  status: ImageStatus;
  /** Why, in words for a person (empty when it exists). */
  reason: string;
  /** For `unreachable`: what went wrong (RegistryError kind). */
  kind?: RegistryErrorKind;
}

/** Digest-pinned references never change: an answer of "exists" holds for good. */
export class ImageExistenceCache {
  private readonly known = new Map<string, ImageCheck>();
  constructor(private readonly limit = 50_000) {}
  get(ref: string): ImageCheck | undefined {
    return this.known.get(ref);
  }
  set(ref: string, check: ImageCheck): void {
    if (check.status !== 'exists' || !parseRefSafe(check.ref)?.digest) return;
    if (this.known.size >= this.limit) this.known.delete(this.known.keys().next().value as string);
    this.known.set(ref, check);
  }
  get size(): number {
    return this.known.size;
  }
}

const defaultCache = new ImageExistenceCache();

function parseRefSafe(ref: string): ImageRef | undefined {
  try {
    return parseRef(ref);
  } catch {
    return undefined;
  }
}

/** One reference: HEAD its manifest (by digest when pinned, else by tag). */
export async function imageExists(ref: string, client: RegistryClient): Promise<ImageCheck> {
  let parsed: ImageRef;
  try {
    parsed = parseRef(ref);
  } catch (err) {
    return { ref, status: 'invalid', reason: (err as Error).message };
  }
  try {
    const found = await client.headManifest(parsed, referenceOf(parsed));
    if (found) return { ref, status: 'exists', reason: '' };
    return {
      ref,
      status: 'missing',
      reason: `${formatRef(parsed)} is not in registry ${parsed.registry} (manifest unknown)`,
    };
  } catch (err) {
    if (err instanceof RegistryError && err.status === 404)
      return {
        ref,
        status: 'missing',
        reason: `repository ${parsed.repository} is not in registry ${parsed.registry}`,
      };
    // Refused access is not proof of absence: a private image looks the same. Whether that
    // may pass is the images check's decision (images.unverifiableRegistries).
    return {
      ref,
      status: 'unreachable',
      reason: (err as Error).message,
      ...(err instanceof RegistryError ? { kind: err.kind } : {}),
    };
  }
}

/** `quay.io`, `quay.io/org` (a repository prefix) or `*.example.com`. */
export function registryAllowed(ref: ImageRef, allowed: string[] | undefined): boolean {
  if (!allowed || allowed.length === 0) return true;
  const full = `${ref.registry}/${ref.repository}`;
  return allowed.some((pattern) => {
    const p = pattern.replace(/\/+$/, '');
    if (p.startsWith('*.')) return ref.registry.endsWith(p.slice(1));
    return ref.registry === p || full.startsWith(`${p}/`);
  });
}

/**
 * What a repository's base-branch config says about registries: where images may come
 * from, which may go unverified, and which hosts may get REGISTRY_USERNAME/REGISTRY_PASSWORD
 * (docs/security.md, "Credentials stay home").
 */
export interface RegistryPolicy {
  allowedRegistries: string[];
  unverifiableRegistries: string[];
  credentialHosts: string[];
}

export function registryPolicy(config: RepoConfig): RegistryPolicy {
  return {
    allowedRegistries: config.images.allowedRegistries,
    unverifiableRegistries: config.images.unverifiableRegistries,
    // The hosts the repository publishes to and builds from; none when it publishes nothing
    // (the default base image's quay.io is then no reason to send credentials anywhere).
    // `bundles.imageTemplate` joins them when the config has that key.
    credentialHosts:
      config.publish.images.length === 0
        ? []
        : credentialHostsOf([...config.publish.images, config.publish.baseImage]),
  };
}

/** `registryAllowed` for a list that means nothing when empty. */
export function registryListed(ref: ImageRef, list: string[] | undefined): boolean {
  return (list ?? []).length > 0 && registryAllowed(ref, list);
}

export interface CheckImagesOptions {
  client: RegistryClient;
  /** Parallel HEADs (default 8). */
  concurrency?: number;
  /** Registries images may come from; empty or absent: any. */
  allowedRegistries?: string[];
  cache?: ImageExistenceCache;
}

/** Check many references; a registry that cannot be reached is asked only once per call. */
export async function checkImages(
  refs: string[],
  options: CheckImagesOptions,
): Promise<Map<string, ImageCheck>> {
  const cache = options.cache ?? defaultCache;
  const unique = [...new Set(refs)];
  const down = new Map<string, string>();
  const results = await mapLimit(unique, options.concurrency ?? 8, async (ref): Promise<ImageCheck> => {
    const parsed = parseRefSafe(ref);
    if (!parsed) return imageExists(ref, options.client);
    if (!registryAllowed(parsed, options.allowedRegistries))
      return {
        ref,
        status: 'disallowed',
        reason: `registry ${parsed.registry} is not among the allowed registries (${(options.allowedRegistries ?? []).join(', ')})`,
      };
    // Answers are remembered per credential scope: an image only credentials could see
    // stays unseen by a repository without them.
    const key = `${options.client.credentialScope}\0${ref}`;
    const hit = cache.get(key);
    if (hit) return hit;
    const downReason = down.get(parsed.registry);
    if (downReason !== undefined) return { ref, status: 'unreachable', reason: downReason };
    const result = await imageExists(ref, options.client);
    // A registry that cannot be reached, or hits a size or time limit, is not asked again.
    if (
      result.status === 'unreachable' &&
      result.kind !== undefined &&
      ['unreachable', 'limit', 'internal'].includes(result.kind)
    )
      down.set(parsed.registry, result.reason);
    cache.set(key, result);
    return result;
  });
  return new Map(unique.map((ref, i) => [ref, results[i] as ImageCheck]));
}

// ---- bundle pulls of a repository's checks --------------------------------------------

/** A bundle renderer that pulls with a repository's policy (its credential hosts). */
export interface PolicyBundles {
  resolveBundle: (image: string, policy?: RegistryPolicy) => ReturnType<BundleResolver>;
  manifests: (image: string, policy?: RegistryPolicy) => Promise<string[] | undefined>;
}

/** Why a bundle image must not be pulled for this repository, or undefined. */
function bundleRefused(image: string, policy: RegistryPolicy): string | undefined {
  const ref = parseRefSafe(image);
  if (!ref || registryAllowed(ref, policy.allowedRegistries)) return undefined;
  return `registry ${ref.registry} is not among the allowed registries (images.allowedRegistries: ${policy.allowedRegistries.join(', ')}); the image was not pulled`;
}

/**
 * `resolveBundle` and `manifests` as a repository's checks may use them: images from
 * registries outside `images.allowedRegistries` are never pulled (a pull request must not
 * make the bot contact any host it names), and pulls carry the repository's policy.
 */
export function bundlesWithPolicy(
  bundles: Partial<PolicyBundles>,
  policy: RegistryPolicy,
): Partial<PolicyBundles> {
  const { resolveBundle, manifests } = bundles;
  return {
    ...(resolveBundle
      ? {
          resolveBundle: async (image: string) => {
            const refused = bundleRefused(image, policy);
            if (refused) throw new BundleRenderError(`render reference "${image}": ${refused}`);
            return resolveBundle(image, policy);
          },
        }
      : {}),
    ...(manifests
      ? {
          manifests: async (image: string) =>
            bundleRefused(image, policy) ? undefined : manifests(image, policy),
        }
      : {}),
  };
}
