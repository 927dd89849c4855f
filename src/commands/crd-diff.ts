// `catalog-bot crd-diff <old-bundle> <new-bundle> --root <root>`: the CRD upgrade verdict
// for one edge, read from a catalog directory (only the files holding the two bundles are
// read with their manifests).
import { bundleCrds, diffBundleCrds, type CrdChange } from '../catalog/olm/crd-diff.js';
import type { Bundle } from '../catalog/fbc/declcfg.js';
import { DirectorySource, validateCatalog } from '../catalog/index.js';
import { directoryObjectLoader, upgradeEdges } from '../checks/crd-upgrade.js';
import { defineCommand, EXIT_FAIL, EXIT_OK, isDirectory, UsageError } from './command.js';
import { writeJson } from './output.js';

const CRD_DIFF_USAGE = `  crd-diff <old-bundle> <new-bundle> --root <root>
                       Compare the CRDs of two bundles of a catalog as OLM does on an
                       upgrade (exit 0 safe, 1 unsafe, 2 usage/IO or no manifests)
      --format text|json          output format (default: text)
`;

interface Verdict {
  safe: boolean;
  old: string;
  new: string;
  /** Which OLM offers this upgrade in the catalog (empty: none does). */
  edge: { classic: string[]; v1: boolean };
  compared: string[];
  unsafe: CrdChange[];
  safeChanges: CrdChange[];
}

function describe(c: CrdChange): string {
  return [c.crd, c.version, c.path].filter(Boolean).join(' ') + `: ${c.message}`;
}

export const command = defineCommand({
  usage: `Usage:\n${CRD_DIFF_USAGE}`,
  options: { root: { type: 'string' }, format: { type: 'string', default: 'text' } },
  formats: ['text', 'json'],
  positionals: { min: 2, message: 'crd-diff needs an old and a new bundle name' },
  async run({ values, positionals }, { out }) {
    const root = values.root;
    if (root === undefined) throw new UsageError('crd-diff needs --root <catalog root>');
    if (!(await isDirectory(root))) throw new Error(`${root}: not a directory`);
    const [oldName, newName] = positionals as [string, string];

    // The whole root without manifests (to find the bundles and the edge), then two files with them.
    const report = await validateCatalog(new DirectorySource(root));
    const find = (name: string): Bundle => {
      const found = report.config.bundles.find((b) => b.name === name);
      if (!found) throw new Error(`bundle ${JSON.stringify(name)} is not in ${root}`);
      return found;
    };
    const oldBlob = find(oldName);
    const newBlob = find(newName);
    const loaded = await directoryObjectLoader()(root, 'head', [
      ...new Set([oldBlob.pos.file, newBlob.pos.file]),
    ]);
    const objectsOf = (b: Bundle): string[] => {
      const objects = loaded.find((x) => x.name === b.name && x.package === b.package)?.objects;
      if (!objects || objects.length === 0)
        throw new Error(
          `bundle ${b.name} carries no manifests in the catalog (only olm.csv.metadata): its CRDs are in the bundle image ${b.image || '(none)'}`,
        );
      return objects;
    };
    const diff = diffBundleCrds(bundleCrds(objectsOf(oldBlob)).crds, bundleCrds(objectsOf(newBlob)).crds);
    const edge = upgradeEdges(report.model, newBlob.package).find(
      (e) => e.from === oldName && e.to === newName,
    );
    const verdict: Verdict = {
      safe: diff.changes.every((c) => c.safe),
      old: oldName,
      new: newName,
      edge: { classic: edge?.classic ?? [], v1: edge?.v1 ?? false },
      compared: diff.compared,
      unsafe: diff.changes.filter((c) => !c.safe),
      safeChanges: diff.changes.filter((c) => c.safe),
    };

    if (values.format === 'json') {
      const strip = ({ key: _key, ...c }: CrdChange) => c;
      writeJson(out, {
        ...verdict,
        unsafe: verdict.unsafe.map(strip),
        safeChanges: verdict.safeChanges.map(strip),
      });
    } else {
      const olms = [
        ...(verdict.edge.classic.length > 0 ? [`classic OLM (${verdict.edge.classic.join(', ')})`] : []),
        ...(verdict.edge.v1 ? ['OLM v1'] : []),
      ];
      out.write(
        `${verdict.safe ? 'safe' : 'unsafe'}: ${oldName} -> ${newName}: ${verdict.unsafe.length} change${verdict.unsafe.length === 1 ? '' : 's'} OLM refuses, ` +
          `${verdict.safeChanges.length} safe; ${diff.compared.length} CRD${diff.compared.length === 1 ? '' : 's'} compared\n`,
      );
      out.write(
        olms.length > 0
          ? `upgrade edge taken by ${olms.join(' and ')}\n`
          : 'note: the catalog offers no upgrade edge from the old bundle to the new one\n',
      );
      for (const c of verdict.unsafe)
        out.write(`✗ ${c.rule} ${describe(c)}\n${c.hint ? `    hint: ${c.hint}\n` : ''}`);
      // Description edits are many and never matter: counted, not listed.
      const descriptions = verdict.safeChanges.filter((c) => c.rule === 'CRD-DESCRIPTION-CHANGED').length;
      for (const c of verdict.safeChanges)
        if (c.rule !== 'CRD-DESCRIPTION-CHANGED') out.write(`✓ ${c.rule} ${describe(c)}\n`);
      if (descriptions > 0)
        out.write(
          `✓ CRD-DESCRIPTION-CHANGED ${descriptions} field description${descriptions === 1 ? '' : 's'} changed\n`,
        );
    }
    return verdict.safe ? EXIT_OK : EXIT_FAIL;
  },
});
