// Re-rendering the catalogs a package's edited templates map to (ci.yaml
// `fbc.catalog_mapping`), as the release bot renders them: the opm behaviour each catalog was
// rendered with, the migrate level from `bundles.renderer.csvMetadataFrom`, and bundles read
// from the committed catalogs first, then from the bundle directories (docs/bundles.md).
// Shared by `release` (a bundle added) and `remove` (a bundle taken out). Pure.
import type { TemplateMapping } from '../templates/ci-yaml.js';
import { OPM_BEHAVIOURS, renderAsCommitted } from '../templates/behaviours.js';
import {
  bundleResolverFromCatalog,
  renderTemplateText,
  semverOptionsForOpm,
  TemplateError,
  type BundleResolver,
  type SemverOptions,
  type TemplateKind,
} from '../templates/index.js';
import { SCHEMA_SEMVER_TEMPLATE } from '../property.js';

/** Read access to a repository's files. */
export interface RenderTree {
  read(path: string): string | undefined;
}

/** A template as committed and as edited, with the catalogs it maps to. */
export interface EditedTemplate {
  before: string;
  after: string;
  kind: TemplateKind;
  mapping: TemplateMapping;
}

export interface RenderSettings {
  /** The opm release whose template behaviour the catalogs were rendered with. */
  opmVersion: string;
  /** The first catalog name rendered with `--migrate-level bundle-object-to-csv-metadata`. */
  csvMetadataFrom?: string;
}

/** A catalog file as it is and as the edited template renders it (before undefined: created). */
export interface OutputEdit {
  path: string;
  before: string | undefined;
  after: string;
}

function catalogOrder(name: string): [number, number] | undefined {
  const m = /^v?(\d+)\.(\d+)$/.exec(name);
  return m ? [Number(m[1]), Number(m[2])] : undefined;
}

/** Whether a catalog is rendered with --migrate-level bundle-object-to-csv-metadata. */
export function migratesCsvMetadata(catalog: string, from: string | undefined): boolean {
  if (from === undefined) return false;
  const a = catalogOrder(catalog);
  const b = catalogOrder(from);
  if (!a || !b) return catalog >= from;
  return a[0] !== b[0] ? a[0] > b[0] : a[1] >= b[1];
}

/** `catalogs/v4.16/<pkg>/catalog.yaml` -> `v4.16`. */
export const catalogNameOf = (output: string): string => output.split('/').at(-3) ?? output;

/**
 * Every catalog the edited templates map to, rendered from the edited text; only those whose
 * text changes are returned. `failure` makes the error thrown when a template cannot be
 * rendered (each command says what it was doing).
 */
export async function renderMappedOutputs(
  tree: RenderTree,
  edited: ReadonlyMap<string, EditedTemplate>,
  settings: RenderSettings,
  fromDirectories: BundleResolver,
  failure: (template: string, output: string, message: string) => Error,
): Promise<{ edits: OutputEdit[]; notes: string[] }> {
  const edits: OutputEdit[] = [];
  const notes: string[] = [];
  for (const [path, e] of edited) {
    const outputs = e.mapping.outputs;
    const committed = new Map(outputs.map((o) => [o, tree.read(o)] as const));
    const fromCatalog = new Map<string, BundleResolver>();
    for (const [o, text] of committed)
      if (text !== undefined) fromCatalog.set(o, bundleResolverFromCatalog([text]));
    // Catalogs that share their committed text, format and migrate level render alike
    // (a template usually serves several byte-identical catalogs): render those once.
    const renders = new Map<string, string>();
    for (const output of outputs) {
      const migrate = migratesCsvMetadata(catalogNameOf(output), settings.csvMetadataFrom);
      const level = migrate ? { migrateLevel: 'bundle-object-to-csv-metadata' as const } : {};
      const format = /\.json$/i.test(output) ? 'json' : 'yaml';
      const before = committed.get(output);
      const key = `${format}\0${migrate}\0${before ?? '\0missing'}`;
      let rendered = renders.get(key);
      if (rendered === undefined) {
        // This catalog's own bundles first, then those of its siblings of the same format,
        // then the bundle directories (for bundles no catalog holds yet).
        const sources = [output, ...outputs.filter((o) => o !== output)]
          .filter(
            (o) =>
              o === output || migratesCsvMetadata(catalogNameOf(o), settings.csvMetadataFrom) === migrate,
          )
          .flatMap((o) => fromCatalog.get(o) ?? []);
        const resolveBundle: BundleResolver = async (img) => {
          for (const source of sources) {
            const got = await source(img);
            if (got) return got;
          }
          return fromDirectories(img);
        };
        const behaviour =
          e.kind === SCHEMA_SEMVER_TEMPLATE
            ? await behaviourOf(e.before, before, format, level, resolveBundle, settings.opmVersion)
            : {};
        try {
          rendered = await renderTemplateText(e.after, format, { resolveBundle, ...behaviour, ...level });
        } catch (err) {
          if (!(err instanceof TemplateError)) throw err;
          throw failure(path, output, err.message);
        }
        renders.set(key, rendered);
      }
      if (rendered !== before) edits.push({ path: output, before, after: rendered });
    }
    notes.push(`re-rendered ${outputs.join(', ')} from ${path}`);
  }
  return { edits, notes };
}

/**
 * The semver behaviour a catalog was rendered with: the configured opm first, then the
 * others, the first whose render of the template before the edit is the committed file.
 */
async function behaviourOf(
  template: string,
  committed: string | undefined,
  format: 'json' | 'yaml',
  level: { migrateLevel?: 'bundle-object-to-csv-metadata' },
  resolveBundle: BundleResolver,
  configured: string,
): Promise<SemverOptions> {
  const order = [configured, ...OPM_BEHAVIOURS.filter((v) => v !== configured)];
  if (committed !== undefined) {
    try {
      const match = await renderAsCommitted(template, format, committed, { resolveBundle, ...level }, order);
      if (match) return semverOptionsForOpm(match.opm);
    } catch (err) {
      if (!(err instanceof TemplateError)) throw err;
    }
  }
  return semverOptionsForOpm(configured);
}
