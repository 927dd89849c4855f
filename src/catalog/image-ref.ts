/**
 * Image pull-spec parsing, ported from go.podman.io/image/v5/docker/reference
 * (regexp.go, normalize.go, reference.go) and github.com/opencontainers/go-digest
 * v1.0.0 (digest.go, algorithm.go), which is what opm's validateImagePullSpec
 * calls through reference.ParseNormalizedNamed.
 *
 * Error strings are byte-for-byte the ones those packages return, so callers can
 * print the same messages opm does.
 */

export interface ImageReference {
  /** Registry host (with optional port); docker.io for familiar names. */
  domain: string;
  /** Repository path; official docker images get the `library/` prefix. */
  path: string;
  tag?: string;
  digest?: string;
}

const NAME_TOTAL_LENGTH_MAX = 255;
const DEFAULT_DOMAIN = 'docker.io';
const LEGACY_DEFAULT_DOMAIN = 'index.docker.io';
const OFFICIAL_REPO_NAME = 'library';

const ERR_REFERENCE_INVALID_FORMAT = 'invalid reference format';
const ERR_NAME_CONTAINS_UPPERCASE = 'repository name must be lowercase';
const ERR_NAME_TOO_LONG = `repository name must not be more than ${NAME_TOTAL_LENGTH_MAX} characters`;
const ERR_NORMALIZED_UPPERCASE = `${ERR_REFERENCE_INVALID_FORMAT}: ${ERR_NAME_CONTAINS_UPPERCASE}`;
const ERR_DIGEST_INVALID_FORMAT = 'invalid checksum digest format';
const ERR_DIGEST_INVALID_LENGTH = 'invalid checksum digest length';
const ERR_DIGEST_UNSUPPORTED = 'unsupported digest algorithm';

// --- grammar (regexp.go) ----------------------------------------------------
//
// Upstream's separator is `(?:[._]|__|[-]*)`; its empty alternative adds nothing
// to the language (two adjacent alphanumeric runs are one run) but turns
// `(?:sep[a-z0-9]+)*` into a nested quantifier that backtracking JS engines
// explore exponentially. Requiring at least one dash keeps the language identical
// and matching linear. The same goes for domainComponent's alternation.
const alphaNumeric = '[a-z0-9]+';
const separator = '(?:[._]|__|-+)';
const domainComponent = '[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?';
const tag = '[\\w][\\w.-]{0,127}';
const digestPat = '[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9A-Fa-f]{32,}';
const identifier = '[a-f0-9]{64}';

const nameComponent = `${alphaNumeric}(?:${separator}${alphaNumeric})*`;
const domain = `${domainComponent}(?:\\.${domainComponent})*(?::[0-9]+)?`;
const namePat = `(?:${domain}/)?${nameComponent}(?:/${nameComponent})*`;

/** Groups: 1 name, 2 tag, 3 digest. */
const REFERENCE_RE = new RegExp(`^(${namePat})(?::(${tag}))?(?:@(${digestPat}))?$`);
/** Groups: 1 domain, 2 path. Prefers a domain when the first component can be one, like Go. */
const ANCHORED_NAME_RE = new RegExp(`^(?:(${domain})/)?(${nameComponent}(?:/${nameComponent})*)$`);
const ANCHORED_IDENTIFIER_RE = new RegExp(`^${identifier}$`);

// --- go-digest v1.0.0 -------------------------------------------------------

/** Hex length per algorithm registered by go-digest (sha256, sha384, sha512). */
const DIGEST_HEX_LENGTH: ReadonlyMap<string, number> = new Map([
  ['sha256', 64],
  ['sha384', 96],
  ['sha512', 128],
]);
const LOWER_HEX_RE = /^[a-f0-9]+$/;
const GO_DIGEST_ANCHORED_RE = /^[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[a-zA-Z0-9=_-]+$/;

/** digest.Digest.Validate: returns the error text or null. */
function validateDigest(d: string): string | null {
  const i = d.indexOf(':');
  if (i <= 0 || i + 1 === d.length) return ERR_DIGEST_INVALID_FORMAT;
  const hexLength = DIGEST_HEX_LENGTH.get(d.slice(0, i));
  if (hexLength === undefined) {
    // Unknown algorithms only count as "unsupported" when they are well-formed.
    return GO_DIGEST_ANCHORED_RE.test(d) ? ERR_DIGEST_UNSUPPORTED : ERR_DIGEST_INVALID_FORMAT;
  }
  const encoded = d.slice(i + 1);
  if (encoded.length !== hexLength) return ERR_DIGEST_INVALID_LENGTH;
  return LOWER_HEX_RE.test(encoded) ? null : ERR_DIGEST_INVALID_FORMAT;
}

// --- reference.go / normalize.go --------------------------------------------

type ParseResult = { ok: true; ref: ImageReference } | { ok: false; error: string };

const fail = (error: string): ParseResult => ({ ok: false, error });

/** splitDockerDomain: the first component is a registry only if it looks like a host. */
function splitDockerDomain(name: string): { domain: string; remainder: string } {
  const i = name.indexOf('/');
  const first = i === -1 ? '' : name.slice(0, i);
  const looksLikeHost = first.includes('.') || first.includes(':') || first === 'localhost';
  let domain: string;
  let remainder: string;
  if (!looksLikeHost) {
    domain = DEFAULT_DOMAIN;
    remainder = name;
  } else {
    domain = name.slice(0, i);
    remainder = name.slice(i + 1);
  }
  if (domain === LEGACY_DEFAULT_DOMAIN) domain = DEFAULT_DOMAIN;
  if (domain === DEFAULT_DOMAIN && !remainder.includes('/')) {
    remainder = `${OFFICIAL_REPO_NAME}/${remainder}`;
  }
  return { domain, remainder };
}

/** reference.Parse, restricted to the named results ParseNormalizedNamed can produce. */
function parse(s: string): ParseResult {
  const m = REFERENCE_RE.exec(s);
  if (m === null) {
    // Go lower-cases with Unicode rules too (e.g. the Kelvin sign becomes "k").
    return fail(
      REFERENCE_RE.test(s.toLowerCase()) ? ERR_NAME_CONTAINS_UPPERCASE : ERR_REFERENCE_INVALID_FORMAT,
    );
  }
  const [, name = '', tagPart = '', digestPart = ''] = m;
  if (name.length > NAME_TOTAL_LENGTH_MAX) return fail(ERR_NAME_TOO_LONG);
  const digestError = digestPart === '' ? null : validateDigest(digestPart);
  if (digestError !== null) return fail(digestError);

  // A first component that is not a valid host (e.g. "a_b.c") stays part of the path.
  const nm = ANCHORED_NAME_RE.exec(name);
  const ref: ImageReference = nm ? { domain: nm[1] ?? '', path: nm[2] ?? '' } : { domain: '', path: name };
  if (tagPart !== '') ref.tag = tagPart;
  if (digestPart !== '') ref.digest = digestPart;
  return { ok: true, ref };
}

/** reference.ParseNormalizedNamed. */
function parseNormalizedNamed(s: string): ParseResult {
  if (ANCHORED_IDENTIFIER_RE.test(s)) {
    return fail(`invalid repository name (${s}), cannot specify 64-byte hexadecimal strings`);
  }
  const { domain: host, remainder } = splitDockerDomain(s);
  // Go cuts at the first ':' of the remainder, so a digest's algorithm counts too.
  const tagSep = remainder.indexOf(':');
  const remoteName = tagSep > -1 ? remainder.slice(0, tagSep) : remainder;
  if (remoteName.toLowerCase() !== remoteName) return fail(ERR_NORMALIZED_UPPERCASE);
  return parse(`${host}/${remainder}`);
}

// A catalog names the same images again and again (related images shared by versions).
// The check worker outlives a pull request, so what is remembered is bounded in count and
// in length (a valid pull spec is a few hundred characters; longer ones are parsed each time).
const checkedPullSpecs = new Map<string, string | null>();
const CHECKED_PULL_SPECS_MAX = 10_000;
const CHECKED_PULL_SPEC_LENGTH_MAX = 600;

/**
 * Returns null when opm accepts `ref` as a bundle image / relatedImages image,
 * otherwise the error text opm appends after `invalid image pull spec "<ref>": `.
 * The empty string is accepted because opm skips it here (a missing bundle image
 * is reported separately as "bundle image must be set").
 */
export function validatePullSpec(ref: string): string | null {
  if (ref === '') return null;
  const known = checkedPullSpecs.get(ref);
  if (known !== undefined) return known;
  const result = parseNormalizedNamed(ref);
  const error = result.ok ? null : result.error;
  if (ref.length > CHECKED_PULL_SPEC_LENGTH_MAX) return error;
  if (checkedPullSpecs.size >= CHECKED_PULL_SPECS_MAX) checkedPullSpecs.clear();
  checkedPullSpecs.set(ref, error);
  return error;
}

/** Parses a pull spec with docker normalization; null when opm would reject it or it is empty. */
export function parseImageReference(ref: string): ImageReference | null {
  if (ref === '') return null;
  const result = parseNormalizedNamed(ref);
  return result.ok ? result.ref : null;
}

// ---- references as the registry client and the registry policy use them

export interface RepoRef {
  /** Registry host as written in references (`docker.io` for Docker Hub), with port. */
  registry: string;
  /** Repository path, normalised (`library/busybox`). */
  repository: string;
}

export interface ImageRef extends RepoRef {
  tag?: string;
  digest?: string;
}

/** Parse a reference with docker's normalisation (`busybox` is `docker.io/library/busybox`). */
export function parseRef(ref: string): ImageRef {
  const parsed = parseImageReference(ref);
  if (!parsed) throw new Error(`invalid image reference "${ref}": ${validatePullSpec(ref) ?? 'empty'}`);
  const out: ImageRef = { registry: parsed.domain, repository: parsed.path };
  if (parsed.tag !== undefined) out.tag = parsed.tag;
  if (parsed.digest !== undefined) out.digest = parsed.digest;
  return out;
}
