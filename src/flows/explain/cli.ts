// `catalog-bot explain <bundle>`: whether and how clusters get a bundle, under classic OLM
// and OLM v1, in plain words (docs/explain.md).
import { explainBundle, explainMermaid, explainText, findBundle } from '../../catalog/olm/explain.js';
import { DirectorySource, validateCatalog } from '../../catalog/index.js';
import { formatVersion, tryParseVersion } from '../../catalog/versions/semver.js';
import { CommandFailure, defineCliCommand, isDirectory, UsageError } from '../../commands/command.js';
import { writeJson } from '../../commands/output.js';

const USAGE = `catalog-bot explain <bundle> [--from <version>] [--catalog <root>] [--format text|json|mermaid]
  Whether a new install can get the bundle (which channel, default or not), which installed
  versions reach it and by what path under classic OLM and OLM v1, and where not, why.
  --catalog: the catalog root (default: the current directory). --from: explain from this
  installed version only (it may be absent from the catalog). Exit 0 answered, 2 usage,
  I/O error, or an unknown bundle.
`;

export const command = defineCliCommand({
  usage: USAGE,
  options: {
    format: { type: 'string', default: 'text' },
    from: { type: 'string' },
    catalog: { type: 'string', default: '.' },
  },
  positionals: { min: 1, message: 'explain needs exactly one bundle name' },
  formats: ['text', 'json', 'mermaid'],
  async run({ values, positionals }, { out }) {
    let from;
    if (values.from !== undefined) {
      // `v1.2.3` is what people type; OLM versions have no `v`.
      const parsed = tryParseVersion(values.from.replace(/^v(?=\d)/, ''));
      if (!parsed.ok) throw new UsageError(`--from ${values.from}: ${parsed.error}`);
      from = parsed.version;
    }
    if (!(await isDirectory(values.catalog))) throw new UsageError(`${values.catalog}: not a directory`);
    const report = await validateCatalog(new DirectorySource(values.catalog)).catch((problem: Error) => {
      throw new CommandFailure(`${values.catalog}: ${problem.message}`, 2);
    });
    const bundle = positionals[0]!;
    const found = findBundle(report.model, bundle);
    if ('error' in found) throw new CommandFailure(found.error, 2);
    const explanation = explainBundle(report.model, found.pkg, bundle, { from });
    if (values.format === 'json') {
      writeJson(out, { ...explanation, from: from ? formatVersion(from) : null, valid: report.valid });
    } else if (values.format === 'mermaid') {
      out.write(explainMermaid(explanation));
    } else {
      out.write(explainText(explanation));
      out.write('\n```mermaid\n' + explainMermaid(explanation) + '```\n');
      if (!report.valid)
        out.write('note: the catalog fails validation; classic OLM cannot serve it at all\n');
    }
    return 0;
  },
});
