// The pure FBC core: load a catalog root, validate it like opm, render it.
import { sortDiagnostics, type Diagnostic } from './diagnostics.js';
import { loadCatalog, type LoadOptions, type LoadStats } from './fbc/load.js';
import type { DeclarativeConfig } from './fbc/declcfg.js';
import type { Model } from './fbc/model.js';
import type { CatalogSource } from './fbc/source.js';
import { validateConfig } from './fbc/validate.js';
import { noteValidation } from './validation-log.js';

export interface CatalogReport {
  /** True exactly when `opm validate` would pass. */
  valid: boolean;
  diagnostics: Diagnostic[];
  /** Findings left out of `diagnostics` by `maxDiagnostics` (counted, not kept). */
  omitted?: { total: number; errors: number };
  config: DeclarativeConfig;
  model: Model;
  stats: LoadStats;
}

export interface ValidateOptions extends LoadOptions {
  /**
   * Keep at most this many findings (errors first), counting the rest: a file of a hundred
   * thousand bad entries must not hold a hundred thousand findings in memory
   * (docs/security.md, bounded work). Default: keep all (`catalog-bot validate`).
   */
  maxDiagnostics?: number;
}

export async function validateCatalog(
  source: CatalogSource,
  options: ValidateOptions = {},
): Promise<CatalogReport> {
  const { maxDiagnostics, ...loadOptions } = options;
  noteValidation(source);
  const loaded = await loadCatalog(source, loadOptions);
  const { model, diagnostics } = validateConfig(loaded.config);
  let all = sortDiagnostics([
    ...loaded.diagnostics,
    ...withoutKnockOns(loaded.config, loaded.diagnostics, diagnostics),
  ]);
  const valid = !all.some((d) => d.level === 'error');
  let omitted: CatalogReport['omitted'];
  if (maxDiagnostics !== undefined && all.length > maxDiagnostics) {
    const errors = all.filter((d) => d.level === 'error');
    const kept = [...errors, ...all.filter((d) => d.level !== 'error')].slice(0, maxDiagnostics);
    omitted = { total: all.length - kept.length, errors: Math.max(0, errors.length - kept.length) };
    all = sortDiagnostics(kept);
  }
  return {
    valid,
    diagnostics: all,
    ...(omitted ? { omitted } : {}),
    config: loaded.config,
    model,
    stats: loaded.stats,
  };
}

/**
 * A file that failed to load leaves holes (a channel whose bundles now look strayed, a
 * default channel that looks missing). Model findings about packages defined in such a
 * file are left out, with one notice per file: they are noise until the file loads.
 */
function withoutKnockOns(
  config: DeclarativeConfig,
  loadFindings: Diagnostic[],
  modelFindings: Diagnostic[],
): Diagnostic[] {
  const broken = new Set(
    loadFindings.filter((d) => d.level === 'error' && d.file !== undefined).map((d) => d.file),
  );
  if (broken.size === 0) return modelFindings;
  const packages = new Set<string>();
  for (const p of config.packages) if (broken.has(p.pos.file)) packages.add(p.name);
  for (const list of [config.channels, config.bundles, config.deprecations, config.others]) {
    for (const o of list) if (broken.has(o.pos.file)) packages.add(o.package);
  }
  const kept = modelFindings.filter(
    (d) =>
      !(d.file !== undefined && broken.has(d.file)) && !(d.package !== undefined && packages.has(d.package)),
  );
  const notices: Diagnostic[] = [...broken].map((file) => ({
    rule: 'L-INCOMPLETE',
    level: 'notice',
    message: 'this file did not load completely, so the packages it defines were not fully checked',
    file,
    hint: 'Fix the loading errors in this file and validate again to see the remaining findings.',
  }));
  return [...kept, ...notices];
}

export type { Diagnostic, Level } from './diagnostics.js';
export type { DeclarativeConfig } from './fbc/declcfg.js';
export { DirectorySource, GitTreeSource, type CatalogSource } from './fbc/source.js';
export { loadCatalog, DEFAULT_MAX_FILE_SIZE, type LoadOptions } from './fbc/load.js';
export { renderJson } from './fbc/render.js';
