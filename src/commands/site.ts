// `catalog-bot site <root>... -o <dir>`: the static catalog pages (docs/site.md). Loads and
// validates each root, builds the pages (src/site, pure) and writes them under <dir>.
import { mkdir, writeFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { DirectorySource, validateCatalog } from '../catalog/index.js';
import { buildSite, type SiteCatalog } from '../site/site.js';
import { defineCliCommand, EXIT_OK, requireDirectory, UsageError } from './command.js';

const SITE_USAGE = `catalog-bot site <root>... -o <dir>
  Write static pages for the catalog roots into <dir>: an index with search, a page per
  catalog, per package (every channel's upgrade graph as SVG) and per bundle, and the
  package x OpenShift-version matrix when two or more roots are named like v4.21. A
  catalog that fails validation gets pages that say so. Open <dir>/index.html or serve
  <dir> with any web server (docs/site.md). Exit 0 written, 2 usage/IO.
`;

// A catalog's findings are listed on its pages; a broken catalog must not make pages of a
// million lines (docs/security.md, bounded work).
const MAX_FINDINGS = 1000;

export const command = defineCliCommand({
  usage: SITE_USAGE,
  options: {
    output: { type: 'string', short: 'o' },
  },
  positionals: { min: 1, max: Infinity, message: 'site needs at least one catalog root' },
  async run({ values, positionals }, { out }) {
    if (!values.output) throw new UsageError('site needs -o <dir>, the directory to write the pages into');
    const names = new Map<string, string>();
    for (const root of positionals) {
      const name = basename(resolve(root));
      const other = names.get(name);
      if (other !== undefined)
        throw new UsageError(`"${other}" and "${root}" are both named ${name}: a site shows each name once`);
      names.set(name, root);
    }
    const catalogs: SiteCatalog[] = [];
    for (const [name, root] of names) {
      await requireDirectory(root);
      const report = await validateCatalog(new DirectorySource(root), { maxDiagnostics: MAX_FINDINGS });
      catalogs.push({
        name,
        valid: report.valid,
        diagnostics: report.diagnostics,
        ...(report.omitted ? { omitted: report.omitted } : {}),
        model: report.model,
        packages: report.config.packages,
      });
    }
    const files = buildSite(catalogs);
    for (const [path, content] of files) {
      const file = join(values.output, path);
      await mkdir(dirname(file), { recursive: true });
      await writeFile(file, content);
    }
    const invalid = catalogs.filter((c) => !c.valid).map((c) => c.name);
    out.write(
      `wrote ${files.size} files to ${values.output} (open ${join(values.output, 'index.html')})` +
        (invalid.length > 0 ? `; failing validation, with pages saying so: ${invalid.join(', ')}` : '') +
        '\n',
    );
    return EXIT_OK;
  },
});
