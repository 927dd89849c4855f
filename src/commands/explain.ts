// `catalog-bot explain <bundle>`: whether and how clusters get a bundle, under classic OLM
// and OLM v1, in plain words (docs/explain.md).
import { stat } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { explainBundle, explainMermaid, explainText, findBundle } from '../catalog/olm/explain.js';
import { DirectorySource, validateCatalog } from '../catalog/index.js';
import { formatVersion, tryParseVersion } from '../catalog/versions/semver.js';

export const EXPLAIN_USAGE = `catalog-bot explain <bundle> [--from <version>] [--catalog <root>] [--format text|json|mermaid]
  Whether a new install can get the bundle (which channel, default or not), which installed
  versions reach it and by what path under classic OLM and OLM v1, and where not, why.
  --catalog: the catalog root (default: the current directory). --from: explain from this
  installed version only (it may be absent from the catalog). Exit 0 answered, 2 usage,
  I/O error, or an unknown bundle.
`;

export async function explainCommand(
  args: string[],
  out: NodeJS.WritableStream,
  err: NodeJS.WritableStream = process.stderr,
): Promise<number> {
  let values;
  let positionals;
  let from;
  try {
    ({ values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: {
        format: { type: 'string', default: 'text' },
        from: { type: 'string' },
        catalog: { type: 'string', default: '.' },
      },
    }));
    if (positionals.length !== 1) throw new Error('explain needs exactly one bundle name');
    if (!['text', 'json', 'mermaid'].includes(values.format))
      throw new Error(`unknown format "${values.format}"`);
    if (values.from !== undefined) {
      // `v1.2.3` is what people type; OLM versions have no `v`.
      const parsed = tryParseVersion(values.from.replace(/^v(?=\d)/, ''));
      if (!parsed.ok) throw new Error(`--from ${values.from}: ${parsed.error}`);
      from = parsed.version;
    }
    const info = await stat(values.catalog).catch(() => undefined);
    if (!info?.isDirectory()) throw new Error(`${values.catalog}: not a directory`);
  } catch (problem) {
    err.write(`catalog-bot explain: ${(problem as Error).message}\n\n${EXPLAIN_USAGE}`);
    return 2;
  }
  let report;
  try {
    report = await validateCatalog(new DirectorySource(values.catalog));
  } catch (problem) {
    err.write(`catalog-bot explain: ${values.catalog}: ${(problem as Error).message}\n`);
    return 2;
  }
  const bundle = positionals[0] as string;
  const found = findBundle(report.model, bundle);
  if ('error' in found) {
    err.write(`catalog-bot explain: ${found.error}\n`);
    return 2;
  }
  const explanation = explainBundle(report.model, found.pkg, bundle, { from });
  if (values.format === 'json') {
    out.write(
      JSON.stringify(
        { ...explanation, from: from ? formatVersion(from) : null, valid: report.valid },
        null,
        2,
      ) + '\n',
    );
  } else if (values.format === 'mermaid') {
    out.write(explainMermaid(explanation));
  } else {
    out.write(explainText(explanation));
    out.write('\n```mermaid\n' + explainMermaid(explanation) + '```\n');
    if (!report.valid) out.write('note: the catalog fails validation; classic OLM cannot serve it at all\n');
  }
  return 0;
}
