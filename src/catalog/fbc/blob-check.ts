// The checks opm's conversion makes of each bundle blob on its own (its properties, its
// images, its version), apart from the rest of the catalog: `validate` runs them as each
// blob is read, on whichever thread read it, and validation replays what they found in
// its own order (README, "Benchmarks").
import type { BlobCheck, BlobFinding, Bundle, Position } from './declcfg.js';
import { GO_PROPERTY_VALUES } from './declcfg.js';
import { checkGo, decodeGo } from '../go/gojson.js';
import { goQuote } from '../go/gostrings.js';
import { validatePullSpec } from '../image-ref.js';
import { parseRelease } from './model.js';
import { tryParseVersion } from '../versions/semver.js';
import { PROPERTY_BUNDLE_OBJECT, PROPERTY_PACKAGE } from '../property.js';

interface Recorder {
  error(rule: string, message: string, pos: Partial<Position>, pkg: string): void;
}

/** The per-blob conversion checks of one bundle blob. */
export function checkBundleBlob(b: Bundle): BlobCheck {
  const findings: BlobFinding[] = [];
  const passed = checkedVersion(b, {
    error: (rule, message, pos, pkg) => findings.push({ rule, message, pos, package: pkg }),
  });
  return passed ? { findings, passed } : { findings };
}

function checkedVersion(b: Bundle, r: Recorder): BlobCheck['passed'] {
  const q = goQuote;
  const where = (line?: number): Partial<Position> =>
    line !== undefined ? { file: b.pos.file, line } : b.pos;
  const packages: { packageName?: string; version?: string; release?: string }[] = [];
  for (let i = 0; i < b.properties.length; i++) {
    const prop = b.properties[i]!;
    let error: string | undefined;
    if (prop.value === undefined) error = 'unexpected end of JSON input';
    else if (prop.type !== PROPERTY_BUNDLE_OBJECT) {
      const shape = GO_PROPERTY_VALUES[prop.type];
      if (prop.type === PROPERTY_PACKAGE) {
        const decoded = decodeGo(prop.value, shape!);
        error = decoded.error;
        if (!error) packages.push((decoded.value ?? {}) as (typeof packages)[number]);
      } else if (shape) {
        error = checkGo(prop.value, shape);
      }
    }
    if (error !== undefined) {
      r.error(
        'PR-PARSE',
        `parse properties for bundle ${q(b.name)}: parse property[${i}] of type ${q(prop.type)}: ${error}`,
        where(prop.line),
        b.package,
      );
      return undefined;
    }
  }
  if (packages.length !== 1) {
    r.error(
      'PR-PACKAGE-COUNT',
      `package ${q(b.package)} bundle ${q(b.name)} must have exactly 1 "olm.package" property, found ${packages.length}`,
      b.pos,
      b.package,
    );
    return undefined;
  }
  const pkgProp = packages[0]!;
  const packageName = pkgProp.packageName ?? '';
  if (b.package !== packageName) {
    r.error(
      'PR-PACKAGE-MISMATCH',
      `package ${q(b.package)} does not match "olm.package" property ${q(packageName)}`,
      b.pos,
      b.package,
    );
    return undefined;
  }
  const imageError = b.image === '' ? null : validatePullSpec(b.image);
  if (imageError !== null) {
    r.error(
      'B-IMAGE-PULLSPEC',
      `package ${q(b.package)} bundle ${q(b.name)} image: invalid image pull spec ${q(b.image)}: ${imageError}`,
      b.pos,
      b.package,
    );
  }
  b.relatedImages.forEach((rel, i) => {
    const err = rel.image === '' ? null : validatePullSpec(rel.image);
    if (err !== null) {
      r.error(
        'B-RELATED-IMAGE-PULLSPEC',
        `package ${q(b.package)} bundle ${q(b.name)} relatedImages[${i}].image: invalid image pull spec ${q(rel.image)}: ${err}`,
        b.pos,
        b.package,
      );
    }
  });
  const rawVersion = pkgProp.version ?? '';
  const parsed = tryParseVersion(rawVersion);
  if (!parsed.ok) {
    r.error(
      'PR-VERSION',
      `error parsing bundle ${q(b.name)} version ${q(rawVersion)}: ${parsed.error}`,
      b.pos,
      b.package,
    );
    return undefined;
  }
  const release = parseRelease(pkgProp.release ?? '');
  if (!release.ok) {
    r.error(
      'PR-RELEASE',
      `error parsing bundle ${q(b.name)} release version ${q(pkgProp.release ?? '')}: ${release.error}`,
      b.pos,
      b.package,
    );
    return undefined;
  }
  return { version: parsed.version, release: release.release };
}
