// `catalog-bot crd-diff <old-bundle> <new-bundle> [--root <root>] [--repo <dir>]`: the CRD
// upgrade verdict for one edge. The manifests come from the catalog (only the files holding
// the two bundles are read with them) or, for a bundle the catalog carries only
// olm.csv.metadata for (or with no catalog given), from its bundle directory in the
// repository (docs/validation-rules.md, "CRDs from bundle directories").
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { bundleCrds, diffBundleCrds, type CrdChange } from '../catalog/olm/crd-diff.js';
import type { Bundle } from '../catalog/fbc/declcfg.js';
import { DirectorySource, validateCatalog } from '../catalog/index.js';
import { pathPattern } from '../catalog/edits/release.js';
import { readSourceDirectory } from '../checks/bundle-pr.js';
import { MAX_BUNDLE_BYTES } from '../checks/bundle.js';
import { CONFIG_PATH, parseRepoConfig } from '../checks/config.js';
import { bundleDirectoryManifests, directoryObjectLoader, upgradeEdges } from '../checks/crd-upgrade.js';
import {
  manifestsOfDirectory,
  MAX_BUNDLE_DIRECTORIES_BYTES,
  type DirectoryManifests,
} from '../checks/crd-upgrade-objects.js';
import type { DirectoryFiles } from '../checks/bundle-pr.js';
import { defineCliCommand, EXIT_FAIL, EXIT_OK, isDirectory } from './command.js';
import { writeJson } from './output.js';
import { openWorkingTree } from './working-tree.js';

const CRD_DIFF_USAGE = `  crd-diff <old-bundle> <new-bundle> [--root <root>] [--repo <dir>]
                       Compare the CRDs of two bundles as OLM does on an upgrade: from the
                       catalog, or from the bundle directories of the repository when the
                       catalog has no manifests (or no --root is given)
                       (exit 0 safe, 1 unsafe, 2 usage/IO or no manifests)
      --repo <dir>                the repository holding the bundle directories (bundles.path
                                  of its .github/catalog-bot.yml; default: .)
      --format text|json          output format (default: text)
`;

interface Verdict {
  safe: boolean;
  old: string;
  new: string;
  /** Where each bundle's manifests were read: `catalog`, or its bundle directory. */
  sources: { old: string; new: string };
  /** Which OLM offers this upgrade in the catalog (empty: none does, or no catalog given). */
  edge: { classic: string[]; v1: boolean };
  compared: string[];
  unsafe: CrdChange[];
  safeChanges: CrdChange[];
}

function describe(c: CrdChange): string {
  return [c.crd, c.version, c.path].filter(Boolean).join(' ') + `: ${c.message}`;
}

export const command = defineCliCommand({
  usage: `Usage:\n${CRD_DIFF_USAGE}`,
  options: {
    root: { type: 'string' },
    repo: { type: 'string', default: '.' },
    format: { type: 'string', default: 'text' },
  },
  formats: ['text', 'json'],
  positionals: { min: 2, message: 'crd-diff needs an old and a new bundle name' },
  async run({ values, positionals }, { out }) {
    const root = values.root;
    if (root !== undefined && !(await isDirectory(root))) throw new Error(`${root}: not a directory`);
    const repo = values.repo;
    const [oldName, newName] = positionals as [string, string];
    if (!(await isDirectory(repo))) throw new Error(`${repo}: not a directory`);
    // The whole root without manifests (to find the bundles and the edge), then two files with them.
    const report = root !== undefined ? await validateCatalog(new DirectorySource(root)) : undefined;
    const manifestsOf = await bundleManifestReader(repo, root, report, [oldName, newName]);
    const oldManifests = await manifestsOf(oldName);
    const newManifests = await manifestsOf(newName);
    const diff = diffBundleCrds(bundleCrds(oldManifests.objects).crds, bundleCrds(newManifests.objects).crds);
    const newBlob = report?.config.bundles.find((b) => b.name === newName);
    const edge =
      report && newBlob
        ? upgradeEdges(report.model, newBlob.package).find((e) => e.from === oldName && e.to === newName)
        : undefined;
    const verdict: Verdict = {
      safe: diff.changes.every((c) => c.safe),
      old: oldName,
      new: newName,
      sources: { old: oldManifests.source, new: newManifests.source },
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
    } else writeVerdictText(out, verdict, root !== undefined);
    return verdict.safe ? EXIT_OK : EXIT_FAIL;
  },
});

/**
 * A bundle's manifests by name: from the catalog at `root` when it carries them, otherwise
 * from its bundle directory in the repository's working tree (found by bundles.path).
 */
async function bundleManifestReader(
  repo: string,
  root: string | undefined,
  report: Awaited<ReturnType<typeof validateCatalog>> | undefined,
  names: string[],
): Promise<(name: string) => Promise<{ objects: string[]; source: string }>> {
  const configFile = join(repo, CONFIG_PATH);
  const bundlesPath = parseRepoConfig(existsSync(configFile) ? readFileSync(configFile, 'utf8') : undefined)
    .config.bundles.path;
  const readDir = async (dir: string, maxBytes: number): Promise<DirectoryFiles> =>
    (await isDirectory(join(repo, dir)))
      ? readSourceDirectory(new DirectorySource(join(repo, dir)), maxBytes)
      : { files: new Map<string, Buffer>(), bytes: 0, unreadable: [] };
  const fromDirectory = bundleDirectoryManifests(bundlesPath, (_side, dir, maxBytes) =>
    readDir(dir, maxBytes),
  );
  const blobs = new Map<string, Bundle>();
  for (const name of names) {
    const found = report?.config.bundles.find((b) => b.name === name);
    if (found) blobs.set(name, found);
  }
  const loaded =
    root !== undefined && blobs.size > 0
      ? await directoryObjectLoader()(root, 'head', [...new Set([...blobs.values()].map((b) => b.pos.file))])
      : [];
  return async (name) => {
    const blob = blobs.get(name);
    const objects = blob && loaded.find((x) => x.name === blob.name && x.package === blob.package)?.objects;
    if (objects && objects.length > 0) return { objects, source: 'catalog' };
    const found = blob
      ? await fromDirectory(blob)
      : await findDirectory(name, openWorkingTree(repo).list(), bundlesPath, readDir);
    if ('objects' in found) return { objects: found.objects, source: found.dir };
    if (root !== undefined && !blob)
      throw new Error(`bundle ${JSON.stringify(name)} is not in ${root}, and ${found.problem}`);
    throw new Error(
      blob
        ? `bundle ${name} carries no manifests in the catalog (only olm.csv.metadata), and ${found.problem} in ${repo}: its CRDs are in the bundle image ${blob.image || '(none)'}`
        : `bundle ${name}: ${found.problem} in ${repo} (give --root <catalog root> to read it from a catalog)`,
    );
  };
}

/** The verdict as text: the counts, the edge, each change OLM refuses, the safe ones (descriptions counted). */
function writeVerdictText(out: NodeJS.WritableStream, verdict: Verdict, withCatalog: boolean): void {
  const olms = [
    ...(verdict.edge.classic.length > 0 ? [`classic OLM (${verdict.edge.classic.join(', ')})`] : []),
    ...(verdict.edge.v1 ? ['OLM v1'] : []),
  ];
  out.write(
    `${verdict.safe ? 'safe' : 'unsafe'}: ${verdict.old} -> ${verdict.new}: ${verdict.unsafe.length} change${verdict.unsafe.length === 1 ? '' : 's'} OLM refuses, ` +
      `${verdict.safeChanges.length} safe; ${verdict.compared.length} CRD${verdict.compared.length === 1 ? '' : 's'} compared\n`,
  );
  out.write(
    olms.length > 0
      ? `upgrade edge taken by ${olms.join(' and ')}\n`
      : !withCatalog
        ? 'note: no catalog given (--root), so the upgrade edge is not looked up\n'
        : 'note: the catalog offers no upgrade edge from the old bundle to the new one\n',
  );
  if (verdict.sources.old !== 'catalog' || verdict.sources.new !== 'catalog')
    out.write(`manifests from ${verdict.sources.old} and ${verdict.sources.new}\n`);
  if (verdict.compared.length > 0) out.write(`CRDs compared: ${verdict.compared.join(', ')}\n`);
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

/**
 * The bundle directory of a bundle no catalog names: among the directories `bundles.path`
 * matches whose package is a prefix of the name (`<package>.v<version>` first), the first
 * whose CSV is named `name` and whose annotations name that package (manifestsOfDirectory).
 */
async function findDirectory(
  name: string,
  files: string[],
  bundlesPath: string,
  readDir: (dir: string, maxBytes: number) => Promise<DirectoryFiles>,
): Promise<DirectoryManifests> {
  const pattern = pathPattern(bundlesPath);
  const depth = bundlesPath.split('/').length;
  const candidates = new Map<string, { pkg: string; exact: boolean }>();
  for (const f of files) {
    const dir = f.split('/').slice(0, depth).join('/');
    const m = candidates.has(dir) ? undefined : pattern.exec(dir);
    if (!m?.groups) continue;
    const pkg = m.groups.package ?? '';
    if (!name.startsWith(`${pkg}.`)) continue;
    candidates.set(dir, { pkg, exact: name === `${pkg}.v${m.groups.version}` });
  }
  const ordered = [...candidates].sort(
    ([a, x], [b, y]) => Number(y.exact) - Number(x.exact) || (a < b ? -1 : 1),
  );
  let budget = MAX_BUNDLE_DIRECTORIES_BYTES;
  let last: DirectoryManifests = { problem: `no bundle directory under ${bundlesPath} is ${name}'s` };
  for (const [dir, { pkg }] of ordered) {
    const read = await readDir(dir, Math.min(MAX_BUNDLE_BYTES, budget));
    budget -= read.bytes;
    const found = manifestsOfDirectory(dir, read, { name, package: pkg });
    if ('objects' in found) return found;
    // A directory with the bundle's own name that cannot be read says more than "none".
    if (candidates.get(dir)?.exact) last = found;
    if (budget <= 0) break;
  }
  return last;
}
