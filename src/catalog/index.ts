// The pure FBC core: load a catalog root, validate it like opm, render it.
import { sortDiagnostics, type Diagnostic } from './diagnostics.js';
import { loadCatalog, type LoadOptions, type LoadStats } from './load.js';
import type { DeclarativeConfig } from './declcfg.js';
import type { Model } from './model.js';
import type { CatalogSource } from './source.js';
import { validateConfig } from './validate.js';

export interface CatalogReport {
  /** True exactly when `opm validate` would pass. */
  valid: boolean;
  diagnostics: Diagnostic[];
  config: DeclarativeConfig;
  model: Model;
  stats: LoadStats;
}

export async function validateCatalog(
  source: CatalogSource,
  options: LoadOptions = {},
): Promise<CatalogReport> {
  const loaded = await loadCatalog(source, options);
  const { model, diagnostics } = validateConfig(loaded.config);
  const all = sortDiagnostics([...loaded.diagnostics, ...diagnostics]);
  return {
    valid: !all.some((d) => d.level === 'error'),
    diagnostics: all,
    config: loaded.config,
    model,
    stats: loaded.stats,
  };
}

export type { Diagnostic, Level } from './diagnostics.js';
export type { DeclarativeConfig } from './declcfg.js';
export { DirectorySource, GitTreeSource, type CatalogSource } from './source.js';
export { loadCatalog, DEFAULT_MAX_FILE_SIZE, type LoadOptions } from './load.js';
export { renderJson } from './render.js';
