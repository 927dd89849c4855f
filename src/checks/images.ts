// The `catalog-bot/images` check: every bundle and related image a change adds exists in
// its registry. Pure: the existence answers are given (declared in registry-policy.ts,
// looked up by src/publish/exists.ts).
import type { DeclarativeConfig } from '../catalog/fbc/declcfg.js';
import type { Diagnostic } from '../catalog/diagnostics.js';
import { parseRef } from '../catalog/image-ref.js';
import { registryListed, type ImageCheck } from './registry-policy.js';
import { cell, toAnnotations, type CheckResult } from './check.js';

export const IMAGES_CHECK = 'catalog-bot/images';

export interface ImageUse {
  image: string;
  kind: 'bundle' | 'related';
  bundle: string;
  package: string;
  /** The related image's name, when it has one. */
  name?: string;
  /** Where the bundle is declared (path relative to the repository when a prefix was given). */
  file?: string;
  line?: number;
}

/** Every bundle image and related image of a catalog, with where its bundle is. */
export function imageUses(config: DeclarativeConfig, prefix = ''): ImageUse[] {
  const uses: ImageUse[] = [];
  for (const b of config.bundles) {
    const where = { file: prefix ? `${prefix}/${b.pos.file}` : b.pos.file, line: b.pos.line };
    if (b.image) uses.push({ image: b.image, kind: 'bundle', bundle: b.name, package: b.package, ...where });
    for (const r of b.relatedImages) {
      // opm lists the bundle image among the related images too; once is enough.
      if (!r.image || r.image === b.image) continue;
      uses.push({
        image: r.image,
        kind: 'related',
        bundle: b.name,
        package: b.package,
        ...(r.name ? { name: r.name } : {}),
        ...where,
      });
    }
  }
  return uses;
}

/** The uses of `head` whose image the `base` catalog did not reference: what a change adds. */
export function addedImageUses(
  base: DeclarativeConfig | undefined,
  head: DeclarativeConfig,
  prefix = '',
): ImageUse[] {
  const before = new Set(base ? imageUses(base).map((u) => u.image) : []);
  return imageUses(head, prefix).filter((u) => !before.has(u.image));
}

function describe(u: ImageUse): string {
  return u.kind === 'bundle'
    ? `bundle image of ${u.bundle}`
    : `related image ${u.name ? `"${u.name}" ` : ''}of ${u.bundle}`;
}

/** Is the image on a registry of `images.unverifiableRegistries`? */
function unverifiable(image: string, registries: string[] | undefined): boolean {
  try {
    return registryListed(parseRef(image), registries);
  } catch {
    return false;
  }
}

export interface ImagesCheckOptions {
  /**
   * `images.unverifiableRegistries`: an image there that cannot be asked about makes the
   * check neutral; anywhere else it fails it (an unasked image must not let a merge go).
   */
  unverifiableRegistries?: string[];
}

export function imagesCheck(
  uses: ImageUse[],
  results: Map<string, ImageCheck>,
  options: ImagesCheckOptions = {},
): CheckResult {
  const findings: Diagnostic[] = [];
  const counts = { exists: 0, missing: 0, unreachable: 0, disallowed: 0, invalid: 0, unchecked: 0 };
  for (const u of uses) {
    const r = results.get(u.image);
    const where = {
      ...(u.file !== undefined ? { file: u.file } : {}),
      ...(u.line !== undefined ? { line: u.line } : {}),
      package: u.package,
    };
    if (!r) {
      counts.unchecked++;
      continue;
    }
    counts[r.status]++;
    if (r.status === 'missing') {
      findings.push({
        rule: 'IMG-MISSING',
        level: 'error',
        message: `${describe(u)} ${u.image} does not exist: ${r.reason}`,
        hint: 'Push the image first, or fix the reference (registry, repository, tag or digest).',
        ...where,
      });
    } else if (r.status === 'disallowed') {
      findings.push({
        rule: 'IMG-DISALLOWED-REGISTRY',
        level: 'error',
        message: `${describe(u)} ${u.image}: ${r.reason}`,
        hint: 'Mirror the image to an allowed registry and reference it there.',
        ...where,
      });
    } else if (r.status === 'invalid') {
      findings.push({
        rule: 'IMG-INVALID',
        level: 'error',
        message: `${describe(u)}: ${r.reason}`,
        hint: 'Write a valid pull spec such as quay.io/org/name@sha256:<digest>.',
        ...where,
      });
    } else if (r.status === 'unreachable') {
      const excused = unverifiable(u.image, options.unverifiableRegistries);
      findings.push({
        rule: 'IMG-UNREACHABLE',
        level: excused ? 'warning' : 'error',
        message: `${describe(u)} ${u.image} could not be checked: ${r.reason}${excused ? ' (its registry is listed in images.unverifiableRegistries)' : ''}`,
        hint: excused
          ? 'Re-run the check when the registry answers; a private image needs registry credentials.'
          : 'An image catalog-bot cannot ask about fails this check. Re-run it (/retest) when the registry answers; for a private registry give catalog-bot credentials for it, or list it under images.unverifiableRegistries in .github/catalog-bot.yml to accept such images unchecked.',
        ...where,
      });
    }
  }
  const errors = findings.filter((d) => d.level === 'error').length;
  const unreachable = findings.filter((d) => d.rule === 'IMG-UNREACHABLE').length;
  const conclusion = errors > 0 ? 'failure' : unreachable > 0 ? 'neutral' : 'success';
  const images = new Set(uses.map((u) => u.image)).size;
  const title =
    uses.length === 0
      ? 'No new images'
      : errors > 0
        ? `${errors} image problem${errors === 1 ? '' : 's'}`
        : unreachable > 0
          ? `${unreachable} image reference${unreachable === 1 ? '' : 's'} could not be checked`
          : `${images} image${images === 1 ? '' : 's'} exist`;
  const lines = [
    uses.length === 0
      ? 'This change adds no bundle or related image.'
      : `Checked ${images} distinct image${images === 1 ? '' : 's'} (${uses.length} references): ` +
        `${counts.exists} exist, ${counts.missing} missing, ${counts.disallowed} from disallowed registries, ` +
        `${counts.invalid} invalid, ${counts.unreachable} unreachable.`,
  ];
  if (findings.length > 0) {
    lines.push('', '| where | image | problem |', '|---|---|---|');
    for (const d of findings)
      lines.push(
        `| ${cell(d.file ? `${d.file}${d.line ? `:${d.line}` : ''}` : '')} | ${d.rule} | ${cell(d.message)} |`,
      );
  }
  if (findings.some((d) => d.rule === 'IMG-UNREACHABLE' && d.level === 'error'))
    lines.push(
      '',
      'An image catalog-bot cannot ask about fails this check: nothing shows it exists. Re-run the check (`/retest`) when the registry answers; for a private registry, give catalog-bot credentials for it, or list the registry under `images.unverifiableRegistries` in `.github/catalog-bot.yml` (base branch) to accept its images unchecked.',
    );
  return {
    name: IMAGES_CHECK,
    conclusion,
    title,
    summary: lines.join('\n'),
    findings,
    annotations: toAnnotations(findings),
  };
}
