// `catalog-bot deps <root> <package>`: what a fresh install of the package pulls in from
// the catalog, with the provider classic OLM prefers for each requirement and why.
import { depsMermaid, depsText, depsTree } from '../catalog/olm/deps-tree.js';
import { DirectorySource, validateCatalog } from '../catalog/index.js';
import { CommandFailure, defineCliCommand, isDirectory, UsageError } from './command.js';
import { writeJson } from './output.js';

const USAGE = `catalog-bot deps <root> <package> [--channel <name>] [--format text|json|mermaid]
                 [--external-gvk <group>/<version>/<kind>]... [--external-package <name>]...
  What a fresh install of the package pulls in: the bundle classic OLM installs and, for
  every requirement, the provider it prefers (exit 0 all met, 1 a requirement cannot be
  met, 2 usage or I/O error). --external-* name providers outside the catalog (the
  cluster's own APIs, other catalogs), which count as met.
`;

export const command = defineCliCommand({
  usage: USAGE,
  options: {
    format: { type: 'string', default: 'text' },
    channel: { type: 'string' },
    'external-gvk': { type: 'string', multiple: true, default: [] },
    'external-package': { type: 'string', multiple: true, default: [] },
  },
  positionals: { min: 2, message: 'deps needs a catalog root and a package name' },
  formats: ['text', 'json', 'mermaid'],
  async run({ values, positionals }, { out }) {
    const [root, packageName] = positionals as [string, string];
    const gvks = values['external-gvk'].map((spec) => {
      const parts = spec.split('/');
      // The core group is empty: `/v1/Pod` or `v1/Pod`.
      if (parts.length === 2) parts.unshift('');
      if (parts.length !== 3 || !parts[1] || !parts[2])
        throw new UsageError(`--external-gvk takes <group>/<version>/<kind>, not "${spec}"`);
      return { group: parts[0]!, version: parts[1], kind: parts[2] };
    });
    if (!(await isDirectory(root))) throw new UsageError(`${root}: not a directory`);
    const report = await validateCatalog(new DirectorySource(root)).catch((problem: Error) => {
      throw new CommandFailure(`${root}: ${problem.message}`, 2);
    });
    const tree = depsTree(report.model, packageName, {
      channel: values.channel,
      externalProviders: { gvks, packages: values['external-package'] },
    });
    if (tree.root === null && tree.unsatisfied === 0) throw new CommandFailure(String(tree.error), 2);
    if (values.format === 'json') {
      writeJson(out, { ...tree, valid: report.valid });
    } else if (values.format === 'mermaid') {
      out.write(depsMermaid(tree));
    } else {
      out.write(depsText(tree));
      if (!report.valid)
        out.write('note: the catalog fails validation; classic OLM cannot serve it at all\n');
    }
    return tree.unsatisfied > 0 ? 1 : 0;
  },
});
