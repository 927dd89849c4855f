// Does an image exist in its registry? For the `catalog-bot/images` check: one HEAD per
// reference, a bounded number at a time, digest-pinned answers remembered.
import { isRegistryDown, parseRefSafe, registryAllowed, type ImageCheck } from '../checks/registry-policy.js';
import { mapLimit } from '../catalog/map-limit.js';
import {
  formatRef,
  parseRef,
  referenceOf,
  RegistryError,
  type ImageRef,
  type RegistryClient,
} from './registry.js';

// The checks declare the answers and the registry policy (src/checks/registry-policy.ts);
// this module implements the lookups. The policy is found here too, for publishing's callers.
export {
  bundlesWithPolicy,
  registryAllowed,
  registryListed,
  registryPolicy,
  type ImageCheck,
  type ImageStatus,
  type PolicyBundles,
  type RegistryPolicy,
} from '../checks/registry-policy.js';

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
    if (result.status === 'unreachable' && isRegistryDown(result.kind))
      down.set(parsed.registry, result.reason);
    cache.set(key, result);
    return result;
  });
  return new Map(unique.map((ref, i) => [ref, results[i] as ImageCheck]));
}
