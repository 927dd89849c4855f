// `catalog-bot onboard <package>`: move a package the old bundle index serves to
// file-based catalogs, from its bundle directories (docs/legacy-index.md). Nothing is
// written unless every file could be computed.
import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CONFIG_PATH, parseRepoConfig } from '../../checks/config.js';
import { onboardPackage, OnboardRefusal, type OnboardResult } from '../../catalog/edits/onboard.js';
import { decodeFile } from '../../catalog/fbc/decode.js';
import type { JsonObject } from '../../catalog/templates/write.js';
import { SCHEMA_PACKAGE } from '../../catalog/property.js';
import { ocpCatalogVersion } from '../../catalog/olm/ocp-continuity.js';
import { onboardSettings } from './settings.js';
import { defineCliCommand, UsageError } from '../../commands/command.js';
import { writeJson } from '../../commands/output.js';
import { catalogRootsOf, openWorkingTree, writeEdits } from '../../commands/working-tree.js';

const ONBOARD_USAGE = `catalog-bot onboard <package> [--repo <dir>] [--catalogs <v>,<v>...] [--bundle-images <file>]
                    [--index <v>=<root>]... [--dry-run] [--format text|json]
  Move a package that the bundle index serves (ci.yaml updateGraph: replaces-mode or
  semver-mode) to file-based catalogs, from its bundle directories alone: for every
  OpenShift catalog of the repository (catalogs/v4.12 ...; or those of --catalogs) the
  graph the index gave it (bundles by com.redhat.openshift.versions and
  olm.maxOpenShiftVersion; replaces-mode: replaces, skips and skipRange as opm's SQLite
  loader built them; semver-mode: each version replaces the next lower one), written as
  basic templates (one per distinct content) under operators/<package>/catalog-templates/,
  the catalogs rendered from them, and ci.yaml switched to fbc.enabled with its comments kept.
  --bundle-images <file>   lines "<bundle-name> <image-ref>": the published references
                           (else ${CONFIG_PATH} bundles.imageTemplate)
  --index <v>=<root>       the package as the published index of <v> serves it (an opm
                           render of the index): the catalog for <v> keeps exactly that,
                           and every difference from the directories is reported
  --dry-run                write nothing, report the same
Exit 0 done, 1 refused (says why; nothing written), 2 usage or I/O error.
`;

const MAX_INDEX_FILE_BYTES = 512 * 2 ** 20;

/** `<bundle-name> <image-ref>` lines; `#` comments and blank lines are skipped. */
export function parseBundleImages(path: string, text: string): Map<string, string> {
  const out = new Map<string, string>();
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const parts = line.split(/\s+/);
    if (parts.length !== 2)
      throw new OnboardRefusal(`${path}:${i + 1}: expected "<bundle-name> <image-ref>", got "${line}"`, path);
    const [name, image] = parts as [string, string];
    const seen = out.get(name);
    if (seen !== undefined && seen !== image)
      throw new OnboardRefusal(`${path}:${i + 1}: ${name} is listed twice with different images`, path);
    out.set(name, image);
  });
  return out;
}

/** The package's blobs in an index render: every YAML/JSON file under the root. */
function readIndexPackage(root: string, pkg: string): JsonObject[] {
  const info = lstatSync(root, { throwIfNoEntry: false });
  if (!info) throw new Error(`${root}: no such file or directory`);
  const files: string[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir).sort()) {
      const p = join(dir, name);
      const st = lstatSync(p);
      if (st.isDirectory()) walk(p);
      else if (st.isFile() && /\.(ya?ml|json)$/i.test(name)) files.push(p);
    }
  };
  if (info.isDirectory()) walk(root);
  else if (info.isFile()) files.push(root);
  else throw new Error(`${root} is neither a file nor a directory`);
  const out: JsonObject[] = [];
  for (const f of files) {
    if (lstatSync(f).size > MAX_INDEX_FILE_BYTES) throw new Error(`${f} is larger than 512 MiB`);
    const decoded = decodeFile(readFileSync(f));
    if (decoded.problems.length > 0)
      throw new Error(`${f}: ${decoded.problems[0]!.message} (line ${decoded.problems[0]!.line ?? '?'})`);
    for (const { value } of decoded.values) {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) continue;
      const blob = value as JsonObject;
      if (blob.schema === SCHEMA_PACKAGE ? blob.name === pkg : blob.package === pkg) out.push(blob);
    }
  }
  return out;
}

function printText(
  result: OnboardResult,
  written: string[],
  dryRun: boolean,
  write: (s: string) => void,
): void {
  write(`${result.package} (${result.mode}):\n`);
  for (const [name, c] of Object.entries(result.catalogs)) {
    const channels = Object.entries(c.channels)
      .map(([ch, entries]) => `${ch} (${entries.length})`)
      .join(', ');
    write(
      `  ${name}: ${c.bundles.length} bundle(s), default channel ${c.defaultChannel}; channels ${channels}${c.source === 'index' ? ' [as the index serves it]' : ''}\n`,
    );
  }
  for (const n of result.notes) write(`note: ${n}\n`);
  if (result.differences.length > 0) {
    write(`${result.differences.length} difference(s) between the index and the bundle directories:\n`);
    for (const d of result.differences) write(`  ${d.message}\n`);
  }
  for (const p of written) write(`${dryRun ? 'would write' : 'wrote'} ${p}\n`);
  write(
    dryRun
      ? `(dry run: nothing written)\n`
      : `onboarded ${result.package}: ${written.length} file(s) written; open a pull request with them\n`,
  );
}

export const command = defineCliCommand({
  usage: ONBOARD_USAGE,
  options: {
    repo: { type: 'string', default: '.' },
    catalogs: { type: 'string' },
    'bundle-images': { type: 'string' },
    index: { type: 'string', multiple: true, default: [] },
    format: { type: 'string', default: 'text' },
    'dry-run': { type: 'boolean', default: false },
  },
  positionals: { min: 1, max: 1, message: 'onboard needs exactly one package name' },
  async run({ values, positionals }, { out, err }) {
    if (values.format !== 'text' && values.format !== 'json')
      throw new UsageError(`invalid --format value "${values.format}", expected text or json`);
    const json = values.format === 'json';
    const pkg = positionals[0]!;
    const fail = (code: number, message: string, file?: string): number => {
      if (json) writeJson(out, { onboarded: false, error: message, file: file ?? null });
      err.write(`catalog-bot onboard: ${code === 1 ? 'refused: ' : ''}${message}\n`);
      return code;
    };
    const index = new Map<string, JsonObject[]>();
    for (const spec of values.index as string[]) {
      const eq = spec.indexOf('=');
      const v = eq < 0 ? '' : spec.slice(0, eq);
      if (eq < 0 || !ocpCatalogVersion(v) || spec.slice(eq + 1) === '')
        throw new UsageError(`--index takes <v>=<root>, like v4.16=./index-v4.16 (got "${spec}")`);
      if (index.has(v)) throw new UsageError(`--index names ${v} twice`);
      try {
        index.set(v, readIndexPackage(spec.slice(eq + 1), pkg));
      } catch (problem) {
        return fail(2, `--index ${v}: ${(problem as Error).message}`);
      }
    }
    let tree;
    let bundleImages: Map<string, string> | undefined;
    try {
      tree = openWorkingTree(values.repo);
      if (values['bundle-images'] !== undefined) {
        const path = values['bundle-images'];
        bundleImages = parseBundleImages(path, readFileSync(path, 'utf8'));
      }
    } catch (problem) {
      if (problem instanceof OnboardRefusal) return fail(1, problem.message, problem.file);
      return fail(2, (problem as Error).message);
    }
    const { config, problems } = parseRepoConfig(tree.read(CONFIG_PATH));
    if (problems.length > 0)
      err.write(
        `warning: ${CONFIG_PATH} has problems, so the defaults apply: ${problems.map((p) => `${p.line}:${p.column} ${p.message}`).join('; ')}\n`,
      );
    const catalogs =
      values.catalogs === undefined
        ? undefined
        : values.catalogs
            .split(',')
            .map((c) => c.trim())
            .filter((c) => c !== '');
    let result: OnboardResult;
    try {
      result = await onboardPackage({
        tree,
        package: pkg,
        catalogRoots: catalogRootsOf(tree),
        ...(catalogs ? { catalogs } : {}),
        ...(bundleImages ? { bundleImages } : {}),
        ...(index.size > 0 ? { index } : {}),
        settings: onboardSettings(config),
      });
    } catch (problem) {
      if (problem instanceof OnboardRefusal) return fail(1, problem.message, problem.file);
      throw problem;
    }
    const dryRun = values['dry-run'];
    try {
      if (!dryRun) writeEdits(values.repo, result.edits);
    } catch (problem) {
      return fail(2, `writing the files failed: ${(problem as Error).message}`);
    }
    const written = result.edits.map((e) => e.path);
    if (json)
      writeJson(out, {
        package: result.package,
        mode: result.mode,
        catalogs: result.catalogs,
        written: dryRun ? [] : written,
        ...(dryRun ? { wouldWrite: written } : {}),
        differences: result.differences,
        notes: result.notes,
        dryRun,
      });
    else printText(result, written, dryRun, (s) => out.write(s));
    return 0;
  },
});
