// The registry policy of a repository's checks, and the image-existence answers the images
// check is given. The checks declare these; src/publish implements the lookups (registry
// client, existence cache, bundle pulls) and takes the policy from here, so the checks
// never import publishing.
import { parseRef, type ImageRef } from '../catalog/image-ref.js';
import { BundleRenderError, type BundleResolver } from '../catalog/templates/index.js';
import type { RepoConfig } from './config.js';

/** `limit`: an answer over the size cap or past the deadline (docs/security.md, "Bounded work"). */
/** `internal`: a host on the machine's own or a private network, not contacted (docs/security.md). */
export type RegistryErrorKind =
  'auth' | 'denied' | 'unreachable' | 'not-found' | 'insecure' | 'http' | 'limit' | 'internal';

/** Kinds that say the registry cannot be asked now, whatever the image: asked about no other. */
export const isRegistryDown = (kind: RegistryErrorKind | undefined): boolean =>
  kind === 'unreachable' || kind === 'limit' || kind === 'internal';

export type ImageStatus = 'exists' | 'missing' | 'unreachable' | 'disallowed' | 'invalid';

export interface ImageCheck {
  ref: string;
  status: ImageStatus;
  /** Why, in words for a person (empty when it exists). */
  reason: string;
  /** For `unreachable`: what went wrong (RegistryError kind). */
  kind?: RegistryErrorKind;
}

/** A reference parsed, or undefined when it does not parse. */
export function parseRefSafe(ref: string): ImageRef | undefined {
  try {
    return parseRef(ref);
  } catch {
    return undefined;
  }
}

/**
 * The registry hosts of image references or tag patterns (`{root}`/`{sha}` allowed), for
 * RegistryClientOptions.credentialHosts; references that do not parse name no host.
 */
export function credentialHostsOf(refs: Iterable<string>): string[] {
  const hosts = new Set<string>();
  for (const ref of refs) {
    try {
      hosts.add(parseRef(ref.replaceAll('{root}', 'root').replaceAll('{sha}', '0'.repeat(12))).registry);
    } catch {
      // not a reference: no host to trust
    }
  }
  return [...hosts];
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
