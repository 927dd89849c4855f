// opm catalog templates: read a template (YAML or JSON), render it to FBC objects with
// bundles from a resolver, and write the result as `opm alpha render-template` does.
import { decodeFile } from '../fbc/decode.js';
import { loadCatalog } from '../fbc/load.js';
import { goJsonEncode } from '../go/gojsonencode.js';
import type { CatalogSource, SourceEntry } from '../fbc/source.js';
import { readBasicTemplate, isBundleTemplate, renderBasic } from './basic.js';
import { bundleObject, csvOfBundle, fieldOf, str } from './bundle-object.js';
import { migrateBundleObjectToCsvMetadata } from './migrate.js';
import {
  readSemverTemplate,
  renderSemver,
  TemplateError,
  ARCHETYPES,
  type RenderedBundle,
  type SemverOptions,
} from './semver.js';
import {
  writeConfig,
  type FbcObject,
  type JsonObject,
  type OutputConfig,
  type OutputFormat,
} from './write.js';
import {
  PROPERTY_CSV_METADATA,
  SCHEMA_BASIC_TEMPLATE,
  SCHEMA_BUNDLE,
  SCHEMA_PACKAGE,
  SCHEMA_SEMVER_TEMPLATE,
} from '../property.js';

export type TemplateKind = typeof SCHEMA_SEMVER_TEMPLATE | typeof SCHEMA_BASIC_TEMPLATE;
export const TEMPLATE_KINDS: readonly TemplateKind[] = [SCHEMA_SEMVER_TEMPLATE, SCHEMA_BASIC_TEMPLATE];

/** A bundle blob, optionally with its CSV (which FBC with `olm.csv.metadata` lacks). */
export interface ResolvedBundle {
  blob: JsonObject;
  csv?: JsonObject;
}

/** Renders a bundle image: its `olm.bundle` blob, or undefined when it cannot be had. */
export type BundleResolver = (image: string) => Promise<JsonObject | ResolvedBundle | undefined>;

/** Why a bundle image could not be rendered; `cause` is the RegistryError when the registry failed. */
export class BundleRenderError extends TemplateError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message);
    this.name = 'BundleRenderError';
    if (options?.cause !== undefined) this.cause = options.cause;
  }
}

export interface TemplateRenderOptions extends SemverOptions {
  resolveBundle: BundleResolver;
  /** opm --migrate-level: turn `olm.bundle.object` bundles into `olm.csv.metadata` ones. */
  migrateLevel?: 'bundle-object-to-csv-metadata';
}

/** The first document of a template file, as opm's YAML-or-JSON decoder reads it. */
export function parseTemplate(text: string | Uint8Array): unknown {
  const decoded = decodeFile(typeof text === 'string' ? Buffer.from(text) : text);
  const first = decoded.values[0];
  const problem = decoded.problems[0];
  if (problem && (!first || problem.line <= first.line)) {
    throw new TemplateError(`decoding template input: line ${problem.line}: ${problem.message}`);
  }
  if (!first) throw new TemplateError('decoding template input: EOF');
  return first.value;
}

/** template/schema.go detectSchema: the `schema` field (matched in any case). */
export function templateKind(doc: unknown): TemplateKind {
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) {
    throw new TemplateError('unmarshalling template schema: the template is not an object');
  }
  const o = doc as JsonObject;
  const key = 'schema' in o ? 'schema' : Object.keys(o).find((k) => k.toLowerCase() === 'schema');
  const schema = key === undefined ? '' : o[key];
  if (schema === '' || typeof schema !== 'string') {
    throw new TemplateError("template input missing required 'schema' field");
  }
  if (!(TEMPLATE_KINDS as readonly string[]).includes(schema)) {
    throw new TemplateError(`auto-detecting template type: unknown template schema: ${schema}`);
  }
  return schema as TemplateKind;
}

async function resolve(options: TemplateRenderOptions, image: string): Promise<RenderedBundle> {
  const got = await options.resolveBundle(image);
  if (!got) {
    throw new TemplateError(
      `rendering template: bundle image ${JSON.stringify(image)} could not be rendered`,
    );
  }
  // A blob has a schema; a ResolvedBundle wraps one.
  const resolved: ResolvedBundle =
    'blob' in got && typeof got.blob === 'object' && !('schema' in got)
      ? (got as ResolvedBundle)
      : { blob: got as JsonObject };
  const csv = resolved.csv ?? csvOfBundle(resolved.blob);
  const blob =
    options.migrateLevel === 'bundle-object-to-csv-metadata'
      ? migrateBundleObjectToCsvMetadata(resolved.blob)
      : resolved.blob;
  return { object: bundleObject(blob), ...(csv ? { csv } : {}) };
}

/** A one-file catalog source holding the basic template's entries. */
function entriesSource(entries: unknown[]): CatalogSource {
  // Each entry as Go holds it (JSON.stringify would lose the sign of -0).
  const text = Buffer.from(
    entries.map((e) => goJsonEncode(e, { sortKeys: false, escapeHtml: false })).join('\n'),
  );
  const path = 'template-entries.json';
  return {
    label: 'template',
    list: async (): Promise<SourceEntry[]> => [{ path, kind: 'file', size: text.length }],
    read: async () => new Map([[path, text]]),
  };
}

/** Render a template to FBC objects (opm alpha render-template without the writer). */
export async function renderTemplate(
  text: string | Uint8Array,
  options: TemplateRenderOptions,
): Promise<{ kind: TemplateKind; config: OutputConfig }> {
  const doc = parseTemplate(text);
  const kind = templateKind(doc);
  if (kind === SCHEMA_SEMVER_TEMPLATE) {
    const decoded = decodeFile(typeof text === 'string' ? Buffer.from(text) : text);
    const dup = decoded.notes.find((n) => n.rule === 'QUIRK-DUPLICATE-KEY-LAST-WINS');
    if (dup) throw new TemplateError(`render: unable to read file: line ${dup.line}: ${dup.message}`);
    const template = readSemverTemplate(doc);
    const rendered = new Map<string, RenderedBundle>();
    for (const arch of ARCHETYPES) {
      for (const image of template.bundles[arch]) {
        if (!rendered.has(image)) rendered.set(image, await resolve(options, image));
      }
    }
    return { kind, config: renderSemver(template, rendered, options) };
  }
  const entries = readBasicTemplate(doc);
  const loaded = await loadCatalog(entriesSource(entries), { keepBundleObjects: true });
  const error = loaded.diagnostics.find((d) => d.level === 'error');
  if (error) throw new TemplateError(error.message);
  const bundles: FbcObject[] = [];
  for (const b of loaded.config.bundles) {
    if (!isBundleTemplate(b)) throw new TemplateError('unexpected fields present in basic template bundle');
    bundles.push((await resolve(options, b.image)).object);
  }
  return { kind, config: renderBasic(loaded.config, bundles) };
}

/** `opm alpha render-template <file> -o yaml|json`, with bundles from the resolver. */
export async function renderTemplateText(
  text: string | Uint8Array,
  format: OutputFormat,
  options: TemplateRenderOptions,
): Promise<string> {
  return writeConfig((await renderTemplate(text, options)).config, format);
}

/**
 * Resolve bundle images from catalogs already rendered (FBC file texts): the bundle with
 * that `image`. A bundle with `olm.bundle.object` carries its CSV; one with only
 * `olm.csv.metadata` has no CSV icon, so the icon of its package blob in those files
 * (which opm took from a head CSV) stands in for it.
 */
export function bundleResolverFromCatalog(texts: (string | Uint8Array)[]): BundleResolver {
  const byImage = new Map<string, ResolvedBundle>();
  const icons = new Map<string, unknown>();
  const metadataOnly: [JsonObject, string][] = [];
  for (const text of texts) {
    for (const { value } of decodeFile(typeof text === 'string' ? Buffer.from(text) : text).values) {
      if (typeof value !== 'object' || value === null) continue;
      const blob = value as JsonObject;
      const schema = fieldOf(blob, 'schema');
      // The first file that holds a package's icon gives it, as for a bundle.
      if (schema === SCHEMA_PACKAGE && fieldOf(blob, 'icon') && !icons.has(str(fieldOf(blob, 'name'))))
        icons.set(str(fieldOf(blob, 'name')), fieldOf(blob, 'icon'));
      if (schema !== SCHEMA_BUNDLE) continue;
      const image = str(fieldOf(blob, 'image'));
      if (!image || byImage.has(image)) continue;
      const csv = csvOfBundle(blob);
      byImage.set(image, { blob, ...(csv ? { csv } : {}) });
      if (!csv) metadataOnly.push([blob, image]);
    }
  }
  for (const [blob, image] of metadataOnly) {
    const props = fieldOf(blob, 'properties');
    const meta = Array.isArray(props)
      ? (props as JsonObject[]).find((p) => fieldOf(p, 'type') === PROPERTY_CSV_METADATA)
      : undefined;
    if (!meta) continue;
    const value = (fieldOf(meta, 'value') ?? {}) as JsonObject;
    const icon = icons.get(str(fieldOf(blob, 'package')));
    byImage.get(image)!.csv = {
      kind: 'ClusterServiceVersion',
      spec: { description: value.description ?? '', ...(icon ? { icon: [icon] } : {}) },
    };
  }
  return async (image) => byImage.get(image);
}

export { bundleObject, csvOfBundle } from './bundle-object.js';
export { TemplateError, semverOptionsForOpm, type SemverEdgeRule, type SemverOptions } from './semver.js';
export {
  writeConfig,
  encodeJson,
  encodeYaml,
  goYamlMarshal,
  type OutputConfig,
  type OutputFormat,
} from './write.js';
