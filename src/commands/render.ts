// `catalog-bot render <root>`: the catalog as a normalised JSON stream, like `opm render`.
import { join } from 'node:path';
import { DirectorySource, loadCatalog, renderJson } from '../catalog/index.js';
import { defineCliCommand, EXIT_FAIL, EXIT_OK, requireDirectory } from './command.js';
import { writeFindings } from './output.js';

export const command = defineCliCommand({
  options: {},
  positionals: { min: 1, message: 'render needs exactly one catalog root' },
  async run({ positionals }, { out, err }) {
    const root = positionals[0]!;
    await requireDirectory(root);
    const loaded = await loadCatalog(new DirectorySource(root), { keepBundleObjects: true });
    const errors = loaded.diagnostics.filter((d) => d.level === 'error');
    if (errors.length > 0) {
      writeFindings(
        err,
        errors.map((d) => ({ ...d, file: d.file && join(root, d.file) })),
        'text',
      );
      return EXIT_FAIL;
    }
    for (const chunk of renderJson(loaded.config)) {
      if (!out.write(chunk)) await new Promise((r) => out.once('drain', r));
    }
    return EXIT_OK;
  },
});
