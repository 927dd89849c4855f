// `catalog-bot validate <root>...`: validate FBC catalog roots exactly as `opm validate` does.
// The most used command: it loads the catalog core and nothing else (no App, queue, registry
// or template code), so it starts fast.
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { DirectorySource, validateCatalog, type Diagnostic } from '../catalog/index.js';
import type { LoadResult } from '../catalog/fbc/load.js';
import { takeLoadHelper } from '../catalog/fbc/fast/load-threads.js';
import { noteCatalogBytes } from '../catalog/fbc/fast/short-run.js';
import { defineCliCommand, EXIT_FAIL, EXIT_OK, requireDirectory, UsageError } from './command.js';
import { jsonFinding, paint, useColor, writeFindings, writeJson } from './output.js';

export const command = defineCliCommand({
  options: { format: { type: 'string', default: 'text' }, 'max-file-size': { type: 'string' } },
  formats: ['text', 'json', 'github'],
  positionals: { min: 1, max: Infinity, message: 'validate needs at least one catalog root' },
  async run({ values, positionals }, { out }) {
    // A second thread loads half of the files, as opm decodes in parallel (README, "Benchmarks");
    // the command line starts it before loading this module (cli.ts).
    const helper = availableParallelism() > 1 ? takeLoadHelper<LoadResult>() : undefined;
    const maxFileSize = values['max-file-size'] === undefined ? undefined : Number(values['max-file-size']);
    if (maxFileSize !== undefined && !(maxFileSize > 0))
      throw new UsageError('--max-file-size must be a positive number');
    for (const root of positionals) await requireDirectory(root);

    const all: Diagnostic[] = [];
    const summaries: string[] = [];
    let valid = true;
    for (const root of positionals) {
      const started = performance.now();
      const report = await validateCatalog(new DirectorySource(root), {
        maxFileSize,
        validationOnly: true,
        helper,
        onListed: noteCatalogBytes,
      });
      const seconds = (performance.now() - started) / 1000;
      valid &&= report.valid;
      // Paths as the user named them, so editors and CI annotations find the files.
      for (const d of report.diagnostics)
        all.push(d.file === undefined ? d : { ...d, file: join(root, d.file) });
      const errors = report.diagnostics.filter((d) => d.level === 'error').length;
      const warnings = report.diagnostics.length - errors;
      const m = report.model;
      let channels = 0;
      let bundles = 0;
      for (const p of m.values()) {
        channels += p.channels.size;
        for (const c of p.channels.values()) bundles += c.bundles.size;
      }
      summaries.push(
        `${report.valid ? 'valid' : 'invalid'}: ${root}: ${errors} error${errors === 1 ? '' : 's'}, ${warnings} warning${warnings === 1 ? '' : 's'}` +
          ` (${report.stats.files} files, ${m.size} packages, ${channels} channels, ${bundles} channel entries; ${seconds.toFixed(2)} s)`,
      );
    }

    if (values.format === 'json') {
      const errors = all.filter((d) => d.level === 'error');
      const warnings = all.filter((d) => d.level !== 'error');
      writeJson(out, { valid, errors: errors.map(jsonFinding), warnings: warnings.map(jsonFinding) });
    } else if (values.format === 'github') {
      writeFindings(out, all, 'github');
      for (const s of summaries) out.write(s + '\n');
    } else {
      const color = useColor(out);
      writeFindings(out, all, 'text', { color });
      for (const s of summaries) out.write(paint(s, s.startsWith('valid') ? 32 : 31, color) + '\n');
    }
    return valid ? EXIT_OK : EXIT_FAIL;
  },
});
