// `catalog-bot deps <root> <package>`: what a fresh install of the package pulls in from
// the catalog, with the provider classic OLM prefers for each requirement and why.
import { stat } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import type { GVK } from '../catalog/olm/dependencies.js';
import { depsMermaid, depsText, depsTree } from '../catalog/olm/deps-tree.js';
import { DirectorySource, validateCatalog } from '../catalog/index.js';

export const DEPS_USAGE = `catalog-bot deps <root> <package> [--channel <name>] [--format text|json|mermaid]
                 [--external-gvk <group>/<version>/<kind>]... [--external-package <name>]...
  What a fresh install of the package pulls in: the bundle classic OLM installs and, for
  every requirement, the provider it prefers (exit 0 all met, 1 a requirement cannot be
  met, 2 usage or I/O error). --external-* name providers outside the catalog (the
  cluster's own APIs, other catalogs), which count as met.
`;

export async function depsCommand(
  args: string[],
  out: NodeJS.WritableStream,
  err: NodeJS.WritableStream = process.stderr,
): Promise<number> {
  let values;
  let positionals;
  let gvks: GVK[];
  try {
    ({ values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: {
        format: { type: 'string', default: 'text' },
        channel: { type: 'string' },
        'external-gvk': { type: 'string', multiple: true, default: [] },
        'external-package': { type: 'string', multiple: true, default: [] },
      },
    }));
    if (positionals.length !== 2) throw new Error('deps needs a catalog root and a package name');
    if (!['text', 'json', 'mermaid'].includes(values.format))
      throw new Error(`unknown format "${values.format}"`);
    gvks = values['external-gvk'].map((spec) => {
      const parts = spec.split('/');
      // The core group is empty: `/v1/Pod` or `v1/Pod`.
      if (parts.length === 2) parts.unshift('');
      if (parts.length !== 3 || !parts[1] || !parts[2])
        throw new Error(`--external-gvk takes <group>/<version>/<kind>, not "${spec}"`);
      return { group: parts[0]!, version: parts[1], kind: parts[2] };
    });
    const info = await stat(positionals[0] as string).catch(() => undefined);
    if (!info?.isDirectory()) throw new Error(`${positionals[0]}: not a directory`);
  } catch (problem) {
    err.write(`catalog-bot deps: ${(problem as Error).message}\n\n${DEPS_USAGE}`);
    return 2;
  }
  const [root, packageName] = positionals as [string, string];
  let report;
  try {
    report = await validateCatalog(new DirectorySource(root));
  } catch (problem) {
    err.write(`catalog-bot deps: ${root}: ${(problem as Error).message}\n`);
    return 2;
  }
  const tree = depsTree(report.model, packageName, {
    channel: values.channel,
    externalProviders: { gvks, packages: values['external-package'] },
  });
  if (tree.root === null && tree.unsatisfied === 0) {
    err.write(`catalog-bot deps: ${tree.error}\n`);
    return 2;
  }
  if (values.format === 'json') {
    out.write(JSON.stringify({ ...tree, valid: report.valid }, null, 2) + '\n');
  } else if (values.format === 'mermaid') {
    out.write(depsMermaid(tree));
  } else {
    out.write(depsText(tree));
    if (!report.valid) out.write('note: the catalog fails validation; classic OLM cannot serve it at all\n');
  }
  return tree.unsatisfied > 0 ? 1 : 0;
}
