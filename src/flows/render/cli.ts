// `catalog-bot render-template <template> [--migrate-level bundle-object-to-csv-metadata]
// [--bundles-from <rendered catalog>]... [-o yaml|json] [--opm-version <v>] [--output-file <f>
// [--dry-run]]`: what `opm alpha render-template` writes, with bundles taken from already
// rendered catalogs, or else pulled from their registries; to stdout, or to a file replaced
// only on success and only when it changes (an editing command: README "Command line").
import { lstatSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import {
  bundleResolverFromCatalog,
  renderTemplateText,
  semverOptionsForOpm,
  TemplateError,
  type BundleResolver,
} from '../../catalog/templates/index.js';
import { bundleResolverFromRegistry } from '../../publish/bundle-render.js';
import { credentialHostsFromEnv, RegistryClient } from '../../publish/registry.js';
import { diffStat } from '../../catalog/edits/promote-diff.js';
import { CommandFailure, defineCliCommand, NothingToDo, UsageError } from '../../commands/command.js';
import { writeFileAtomic } from '../../commands/working-tree.js';

const RENDER_TEMPLATE_USAGE = `catalog-bot render-template <template> [-o yaml|json] [--bundles-from <file|dir>]...
      [--migrate-level bundle-object-to-csv-metadata] [--opm-version <version>]
      [--output-file <file> [--dry-run]]
  Render an olm.semver or olm.template.basic template (YAML or JSON) exactly as
  opm alpha render-template does. Bundle images are resolved from the FBC files named by
  --bundles-from (rendered catalogs: a file, or every file under a directory; repeatable,
  the first that holds an image gives it); without it they are pulled from their registries
  (credentials: REGISTRY_AUTH_FILE, or REGISTRY_USERNAME/REGISTRY_PASSWORD for the hosts in
  REGISTRY_CREDENTIAL_HOSTS; plain HTTP for the hosts in REGISTRY_INSECURE_HOSTS). --opm-version picks the
  behaviour of an older opm (semver edges changed in v1.57.0 and v1.61.0; package icon
  and description since v1.65.0); default v1.73.0. --output-file writes the render to
  the file only when it succeeds, replacing it whole (never \`> file\`: the shell empties the
  file before the command runs); a file that is the render already is left untouched
  ("nothing to do" on stderr). --dry-run prints the lines the file would gain and lose and
  writes nothing. Exit 0 (also nothing to do), 1 if it cannot render, 2 usage or I/O.
`;

function filesUnder(dir: string): string[] {
  if (!statSync(dir).isDirectory()) return [dir];
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const abs = join(dir, name);
    const info = statSync(abs);
    if (info.isDirectory()) out.push(...filesUnder(abs));
    else if (info.isFile()) out.push(abs);
  }
  return out;
}

/** The template's bytes; a missing path, a directory or a binary file is an I/O error (exit 2). */
function readTemplateFile(path: string): Buffer {
  const info = statSync(path, { throwIfNoEntry: false });
  if (info === undefined) throw new Error(`${path}: no such file or directory`);
  if (info.isDirectory()) throw new Error(`${path} is a directory, not a template file`);
  const text = readFileSync(path);
  if (text.includes(0)) throw new Error(`${path} is a binary file, not a YAML or JSON template`);
  return text;
}

/**
 * The output file's text, for the comparison: undefined when there is none, or when the path
 * is a symbolic link or not a file (it is then replaced, never read or written through).
 */
function currentText(path: string): string | undefined {
  try {
    const info = lstatSync(path, { throwIfNoEntry: false });
    if (info?.isDirectory()) throw new Error(`${path} is a directory`);
    return info?.isFile() ? readFileSync(path, 'utf8') : undefined;
  } catch (problem) {
    throw new CommandFailure(`reading ${path} failed: ${(problem as Error).message}`, 2);
  }
}

export const command = defineCliCommand({
  usage: RENDER_TEMPLATE_USAGE,
  options: {
    output: { type: 'string', short: 'o', default: 'json' },
    'bundles-from': { type: 'string', multiple: true },
    'output-file': { type: 'string' },
    'migrate-level': { type: 'string' },
    'opm-version': { type: 'string', default: 'v1.73.0' },
    'dry-run': { type: 'boolean', default: false },
  },
  positionals: { min: 1, message: 'render-template needs exactly one template file' },
  async run({ values, positionals }, { out, env }) {
    if (values['dry-run'] && values['output-file'] === undefined)
      throw new UsageError('--dry-run needs --output-file (without it nothing is written anyway)');
    if (values.output !== 'yaml' && values.output !== 'json')
      throw new UsageError(`invalid --output value "${values.output}", expected (json|yaml)`);
    const level = values['migrate-level'];
    if (level !== undefined && level !== 'bundle-object-to-csv-metadata' && level !== 'none')
      throw new UsageError(`unknown migration level "${level}"`);
    try {
      semverOptionsForOpm(values['opm-version']);
    } catch (problem) {
      throw new UsageError((problem as Error).message);
    }
    let text: Buffer;
    let resolveBundle: BundleResolver;
    let client: RegistryClient | undefined;
    try {
      text = readTemplateFile(positionals[0]!);
      if (values['bundles-from'] !== undefined) {
        resolveBundle = bundleResolverFromCatalog(
          values['bundles-from'].flatMap(filesUnder).map((f) => readFileSync(f)),
        );
      } else {
        // REGISTRY_USERNAME/REGISTRY_PASSWORD only for REGISTRY_CREDENTIAL_HOSTS (docs/security.md).
        client = RegistryClient.fromEnv(env, { credentialHosts: credentialHostsFromEnv(env) });
        // the template engine migrates (--migrate-level) what the registry renders
        resolveBundle = bundleResolverFromRegistry(client);
      }
    } catch (problem) {
      throw new CommandFailure((problem as Error).message, 2);
    }
    try {
      const rendered = await renderTemplateText(text, values.output as 'yaml' | 'json', {
        resolveBundle,
        ...semverOptionsForOpm(values['opm-version']),
        ...(values['migrate-level'] === 'bundle-object-to-csv-metadata'
          ? { migrateLevel: 'bundle-object-to-csv-metadata' as const }
          : {}),
      });
      const file = values['output-file'];
      if (file === undefined) {
        out.write(rendered);
        return 0;
      }
      const before = currentText(file);
      if (before === rendered) throw new NothingToDo(`${file} is the render already`);
      if (values['dry-run']) {
        const { added, removed } = diffStat(before ?? '', rendered);
        out.write(
          `would ${before === undefined ? 'create' : 'write'} ${file} (+${added} -${removed})\n(dry run: nothing written)\n`,
        );
        return 0;
      }
      try {
        writeFileAtomic(file, rendered);
      } catch (problem) {
        throw new CommandFailure(`writing ${file} failed: ${(problem as Error).message}`, 2);
      }
      return 0;
    } catch (problem) {
      if (problem instanceof TemplateError) throw new CommandFailure(problem.message, 1);
      throw problem;
    } finally {
      client?.close();
    }
  },
});
