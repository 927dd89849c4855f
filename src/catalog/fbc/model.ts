// The validated graph (operator-registry `model`): packages own channels, channels own
// bundle entries with their edges. Built from a DeclarativeConfig by `validate.ts`.
import type { Bundle, ChannelEntry, Position, Property, RelatedImage } from './declcfg.js';
import { goQuote } from '../go/gostrings.js';
import { parsePrereleaseIdentifier, type PrereleasePart, type Version } from '../versions/semver.js';

export interface Deprecation {
  message: string;
}

/** One bundle as it appears in one channel: blob data plus that channel's edges. */
export interface ModelBundle {
  name: string;
  package: string;
  channel: string;
  replaces: string;
  skips: string[];
  skipRange: string;
  /** The `olm.bundle` blob, absent when a channel lists a bundle that has none. */
  blob?: Bundle;
  entry: ChannelEntry;
  image: string;
  properties: Property[];
  relatedImages: RelatedImage[];
  /** Parsed `olm.package` version, when the blob has a valid one. */
  version?: Version;
  release: PrereleasePart[];
  deprecation?: Deprecation;
}

export interface ModelChannel {
  name: string;
  package: string;
  bundles: Map<string, ModelBundle>;
  deprecation?: Deprecation;
  /** Where the `olm.channel` blob is; absent for a default channel that exists only by name. */
  pos?: Position;
}

export interface ModelPackage {
  name: string;
  description: string;
  defaultChannel?: ModelChannel;
  channels: Map<string, ModelChannel>;
  deprecation?: Deprecation;
  pos: Position;
}

export type Model = Map<string, ModelPackage>;

/** opm's VersionString: the version with build metadata, plus `-<release>` if set. */
export function versionString(
  version: Version,
  release: PrereleasePart[],
  format: (v: Version) => string,
): string {
  const v = format(version);
  return release.length > 0 ? `${v}-${release.map(String).join('.')}` : v;
}

const RELEASE_MAX_LENGTH = 20;

/** model.NewRelease: dot-separated prerelease identifiers, at most 20 characters. */
export function parseRelease(
  release: string,
): { ok: true; release: PrereleasePart[] } | { ok: false; error: string } {
  if (release === '') return { ok: true, release: [] };
  if (release.length > RELEASE_MAX_LENGTH) {
    return {
      ok: false,
      error: `invalid release ${goQuote(release)}: exceeds maximum length of ${RELEASE_MAX_LENGTH} characters`,
    };
  }
  const parts: PrereleasePart[] = [];
  const errs: string[] = [];
  release.split('.').forEach((segment, i) => {
    try {
      parts.push(parsePrereleaseIdentifier(segment));
    } catch (err) {
      errs.push(`segment ${i}: ${(err as Error).message}`);
    }
  });
  if (errs.length > 0) return { ok: false, error: `invalid release ${goQuote(release)}: ${errs.join('\n')}` };
  return { ok: true, release: parts };
}
