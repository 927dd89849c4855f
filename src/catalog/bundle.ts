// A bundle (its `manifests/` and `metadata/` files) -> the `olm.bundle` blob opm renders
// for it, exactly as operator-registry does (pkg/registry parse.go, registry_to_model.go,
// alpha/action/render.go). Pure: the files come from a `BundleFiles` (a bundle image's
// file system, or a bundle directory of a repository read into memory), and the image
// reference is given. docs/bundles.md says where each field comes from.
import { decodeFile, READ_REFUSALS, type DecodedFile } from './fbc/decode.js';
import { goStringCompare } from './go/gostrings.js';
import { TemplateError } from './templates/semver.js';
import { migrateBundleObjectToCsvMetadata } from './templates/migrate.js';
import { goJsonEncode, RawJson } from './go/gojsonencode.js';
import { goJsonCompact, goRawField, jsonRawElements } from './go/gojsonraw.js';
import type { JsonObject } from './templates/write.js';
import {
  CSV_PROPERTIES_ANNOTATION,
  PROPERTY_BUNDLE_OBJECT,
  PROPERTY_CSV_METADATA,
  PROPERTY_GVK,
  PROPERTY_GVK_REQUIRED,
  PROPERTY_PACKAGE,
  PROPERTY_PACKAGE_REQUIRED,
  SCHEMA_BUNDLE,
} from './property.js';

/** Why a bundle cannot be parsed (opm's own words where it has them). */
export class BundleError extends TemplateError {
  constructor(message: string) {
    super(message);
    this.name = 'BundleError';
  }
}

/** What bundle parsing reads: a directory listing and a file's bytes, slash paths. */
export interface BundleFiles {
  /** Names directly inside a directory, sorted as Go's fs.ReadDir sorts them; undefined when absent. */
  readDir(path: string): { name: string; isDir: boolean }[] | undefined;
  readFile(path: string): Buffer | undefined;
}

/**
 * json.Marshal of a decoded manifest (a map[string]any): keys sorted, HTML escaped, as
 * opm encodes each object of a bundle for olm.bundle.object.
 */
export function goMarshal(v: unknown): string {
  return goJsonEncode(v, { sortKeys: true, escapeHtml: true });
}

/**
 * A property value opm builds from a Go struct (property.Build), in the struct's field
 * order; the values are strings, which it does not HTML-escape.
 */
function structJson(v: JsonObject): string {
  return goJsonEncode(v, { sortKeys: false, escapeHtml: false });
}

/**
 * encoding/json's struct field lookup: every member whose key matches the name without regard
 * to case sets the field, so the last one in the object wins (`{"type": a, "TYPE": b}` is b).
 */
function field(o: unknown, name: string): unknown {
  if (typeof o !== 'object' || o === null || Array.isArray(o)) return undefined;
  const rec = o as JsonObject;
  const lower = name.toLowerCase();
  let found: string | undefined;
  for (const k of Object.keys(rec)) if (k === name || k.toLowerCase() === lower) found = k;
  return found === undefined ? undefined : rec[found];
}

/** A Go map lookup (exact key), as opm reads the CSV spec through map[string]RawMessage. */
function key(o: unknown, name: string): unknown {
  return typeof o === 'object' && o !== null && !Array.isArray(o) ? (o as JsonObject)[name] : undefined;
}

const asString = (v: unknown): string => (typeof v === 'string' ? v : '');
const asList = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

// ---- bundle parsing (pkg/registry) ----------------------------------------------------

export interface Prop {
  type: string;
  /** The value as written out. */
  value: unknown;
  /** The value's JSON bytes as opm holds them (for sorting and de-duplication). */
  raw: string;
}

const prop = (type: string, value: JsonObject): Prop => ({ type, value, raw: structJson(value) });

/**
 * A property as opm keeps it (json.RawMessage). From YAML, the value as Go marshals it; from
 * JSON, the value's text as written in `element` (the property's own text), compacted, so
 * 4.10 stays 4.10; re-encoded only when that text is not at hand.
 */
function rawProp(type: string, value: unknown, fromYaml: boolean, element?: string): Prop {
  const written = fromYaml || element === undefined ? undefined : goRawField(element, 'value');
  let raw: string;
  if (fromYaml) raw = goMarshal(value);
  else if (written !== undefined) raw = goJsonCompact(written);
  else raw = JSON.stringify(value ?? null);
  return { type, value: new RawJson(raw), raw };
}

/** The elements of the list a JSON file's object holds under `name`, each as written. */
function writtenList(json: string | undefined, name: string, length: number): string[] | undefined {
  const list = json === undefined ? undefined : goRawField(json, name);
  const elements = list === undefined ? undefined : jsonRawElements(list);
  return elements?.length === length ? elements : undefined;
}

/**
 * Bundle files decoded, by their bytes: a check run decodes each manifest once, for the bundle
 * check and for the release that renders it (docs/security.md, "Checks are bounded work, off
 * the event loop"). Weak: an entry lives as long as whoever read the file holds it.
 */
const decodedBundleFiles = new WeakMap<Buffer, DecodedFile>();

/** decodeFile of a bundle file, once for the same Buffer. */
export function decodeBundleFile(data: Buffer): DecodedFile {
  let decoded = decodedBundleFiles.get(data);
  if (!decoded) decodedBundleFiles.set(data, (decoded = decodeFile(data)));
  return decoded;
}

/**
 * The first document of a file, decoded as apimachinery's YAMLOrJSONDecoder does. A file opm
 * cannot read is skipped, as opm skips it; one that opm could read differently from us is
 * refused for the whole bundle, never skipped (docs/security.md).
 */
function decodeFirst(
  data: Buffer,
  path: string,
): { value: unknown; yaml: boolean; json?: string } | undefined {
  const decoded = decodeBundleFile(data);
  const first = decoded.values[0];
  const refused = decoded.problems.find((p) => p.rule in READ_REFUSALS);
  if (refused) throw new BundleError(`${path}:${refused.line}: ${refused.rule}: ${refused.message}`);
  const problem = decoded.problems[0];
  if (!first || (problem && problem.line <= first.line)) return undefined;
  const text = data.toString('utf8').trimStart();
  if (!text.startsWith('{')) return { value: first.value, yaml: true };
  // The text as written, for values opm keeps as written (a file of one JSON object).
  return {
    value: first.value,
    yaml: false,
    json: decoded.values.length === 1 && isJson(text) ? text : undefined,
  };
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

export interface ParsedBundle {
  name: string;
  package: string;
  csv: JsonObject;
  /** The file the CSV came from, like `manifests/<name>`. */
  csvPath: string;
  /** Sorted properties, bundle objects last (render.go). */
  properties: Prop[];
  /** relatedImages from the CSV plus operator images; the bundle image is added per reference. */
  csvRelated: { name: string; image: string }[];
  operatorImages: string[];
}

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

interface ApiKey {
  group: string;
  version: string;
  kind: string;
  plural: string;
}
const apiKey = (k: ApiKey): string => JSON.stringify([k.group, k.version, k.kind, k.plural]);

function providedApis(objects: JsonObject[], csv: JsonObject): Map<string, ApiKey> {
  const provided = new Map<string, ApiKey>();
  const add = (k: ApiKey): void => void provided.set(apiKey(k), k);
  // v1 CRDs first, then v1beta1 (Bundle.CustomResourceDefinitions)
  for (const version of ['v1', 'v1beta1']) {
    for (const o of objects) {
      if (o.kind !== 'CustomResourceDefinition') continue;
      const apiVersion = asString(o.apiVersion);
      if (apiVersion.slice(apiVersion.indexOf('/') + 1) !== version) continue;
      const spec = isObject(o.spec) ? o.spec : {};
      const names = isObject(spec.names) ? spec.names : {};
      const base = {
        group: asString(spec.group),
        kind: asString(names.kind),
        plural: asString(names.plural),
      };
      for (const v of asList(spec.versions)) add({ ...base, version: asString(field(v, 'name')) });
      if (version === 'v1beta1' && asString(spec.version) !== '')
        add({ ...base, version: asString(spec.version) });
    }
  }
  const apis = key(key(csv, 'spec'), 'apiservicedefinitions');
  for (const a of asList(field(apis, 'owned'))) {
    add({
      group: asString(field(a, 'group')),
      version: asString(field(a, 'version')),
      kind: asString(field(a, 'kind')),
      plural: asString(field(a, 'name')),
    });
  }
  return provided;
}

/** CSV crdDescriptions as API keys; `bad` when the name is not `<plural>.<group>`. */
function definitionKeys(list: unknown): (ApiKey & { bad: boolean })[] {
  return asList(list).map((d) => {
    const name = asString(field(d, 'name'));
    const dot = name.indexOf('.');
    return {
      group: dot < 0 ? '' : name.slice(dot + 1),
      version: asString(field(d, 'version')),
      kind: asString(field(d, 'kind')),
      plural: dot < 0 ? name : name.slice(0, dot),
      bad: dot < 0,
    };
  });
}

/** parse.go Parse plus registry_to_model.go ObjectsAndPropertiesFromBundle. */
export function parseBundle(fs: BundleFiles): ParsedBundle {
  // ---- manifests/
  const manifestEntries = fs.readDir('manifests');
  if (!manifestEntries) throw new BundleError('error opening manifests directory: no such directory');
  const objects: JsonObject[] = [];
  let csv: JsonObject | undefined;
  let csvPath = '';
  for (const entry of manifestEntries) {
    if (entry.isDir || entry.name.startsWith('.')) continue;
    const data = fs.readFile(`manifests/${entry.name}`);
    if (!data) continue;
    const decoded = decodeFirst(data, `manifests/${entry.name}`);
    if (!decoded || !isObject(decoded.value)) continue;
    const obj = decoded.value;
    if (typeof obj.kind !== 'string' || obj.kind === '') continue;
    if (obj.kind === 'ClusterServiceVersion') {
      if (csv) continue;
      csv = obj;
      csvPath = `manifests/${entry.name}`;
    }
    objects.push(obj);
  }
  if (objects.length === 0) throw new BundleError('no bundle objects found');
  if (!csv) throw new BundleError('no csv in bundle');
  const name = asString(key(csv.metadata, 'name'));
  const spec = key(csv, 'spec');
  const provided = providedApis(objects, csv);
  const crds = key(spec, 'customresourcedefinitions');
  for (const k of definitionKeys(field(crds, 'owned'))) {
    if (k.bad)
      throw new BundleError(
        `error checking provided apis in bundle ${name}: couldn't parse plural.group from crd name: ${k.plural}`,
      );
    if (!provided.has(apiKey({ group: k.group, version: k.version, kind: k.kind, plural: k.plural })))
      throw new BundleError(
        `error checking provided apis in bundle ${name}: couldn't find ${k.group}/${k.version}, Kind=${k.kind} (${k.plural}) in bundle`,
      );
  }

  // ---- metadata/
  const metaEntries = fs.readDir('metadata');
  if (!metaEntries) throw new BundleError('error opening metadata directory: no such directory');
  let annotations: { package: string; channels: string; defaultChannel: string } | undefined;
  let dependencies: { type: string; value: unknown; yaml: boolean; written?: string }[] | undefined;
  let fileProps: Prop[] | undefined;
  for (const entry of metaEntries) {
    const data = fs.readFile(`metadata/${entry.name}`);
    if (!data) continue;
    const decoded = decodeFirst(data, `metadata/${entry.name}`);
    if (!decoded || !isObject(decoded.value)) continue;
    const doc = decoded.value;
    const ann = field(doc, 'annotations');
    if (!annotations && isObject(ann)) {
      const a = {
        package: field(ann, 'operators.operatorframework.io.bundle.package.v1'),
        channels: field(ann, 'operators.operatorframework.io.bundle.channels.v1'),
        defaultChannel: field(ann, 'operators.operatorframework.io.bundle.channel.default.v1'),
      };
      const typed = [a.package, a.channels, a.defaultChannel].every(
        (x) => x === undefined || typeof x === 'string',
      );
      if (typed && (a.package || a.channels || a.defaultChannel))
        annotations = {
          package: asString(a.package),
          channels: asString(a.channels),
          defaultChannel: asString(a.defaultChannel),
        };
    }
    const deps = field(doc, 'dependencies');
    if (!dependencies && Array.isArray(deps) && deps.length > 0 && deps.every(isObject)) {
      const written = writtenList(decoded.json, 'dependencies', deps.length);
      dependencies = deps.map((d, i) => ({
        type: asString(field(d, 'type')),
        value: field(d, 'value'),
        yaml: decoded.yaml,
        written: written?.[i],
      }));
    }
    const props = field(doc, 'properties');
    if (!fileProps && Array.isArray(props) && props.length > 0 && props.every(isObject)) {
      const written = writtenList(decoded.json, 'properties', props.length);
      fileProps = props.map((p, i) =>
        rawProp(asString(field(p, 'type')), field(p, 'value'), decoded.yaml, written?.[i]),
      );
    }
  }
  if (!annotations) throw new BundleError('Could not find annotations file');

  // ---- derived properties (parse.go derivedProperties)
  const version = key(spec, 'version');
  if (version !== undefined && version !== null && typeof version !== 'string')
    throw new BundleError(
      `get version: json: cannot unmarshal ${typeof version} into Go value of type string`,
    );
  const releaseRaw = key(spec, 'release');
  const release =
    typeof releaseRaw === 'string' ? releaseRaw : typeof releaseRaw === 'number' ? String(releaseRaw) : '';
  const derived: Prop[] = [];
  const csvAnnotations = field(csv.metadata, 'annotations');
  const fromCsv = isObject(csvAnnotations) ? csvAnnotations[CSV_PROPERTIES_ANNOTATION] : undefined;
  if (typeof fromCsv === 'string') {
    try {
      const list = JSON.parse(fromCsv) as unknown;
      if (Array.isArray(list)) {
        const written = jsonRawElements(fromCsv);
        list.forEach((p, i) =>
          derived.push(rawProp(asString(field(p, 'type')), field(p, 'value'), false, written?.[i])),
        );
      }
    } catch {
      // opm logs a warning and goes on
    }
  }
  const packageValue = (pkg: string, v: string, r: string): JsonObject => ({
    packageName: pkg,
    version: v,
    ...(r ? { release: r } : {}),
  });
  if (annotations.package !== '')
    derived.unshift(prop(PROPERTY_PACKAGE, packageValue(annotations.package, asString(version), release)));
  for (const k of provided.values())
    derived.push(prop(PROPERTY_GVK, { group: k.group, kind: k.kind, version: k.version }));
  const all = dedupe([...(fileProps ?? []), ...dedupe(derived)]);

  // ---- ObjectsAndPropertiesFromBundle
  const gvks = new Map<string, Prop>();
  const gvksRequired = new Map<string, Prop>();
  let packageProp: Prop | undefined;
  const others: Prop[] = [];
  const gvkProp = (type: string, v: unknown): Prop =>
    prop(type, {
      group: asString(field(v, 'group')),
      kind: asString(field(v, 'kind')),
      version: asString(field(v, 'version')),
    });
  for (const p of all) {
    const value = p.value instanceof RawJson ? (JSON.parse(p.value.text) as unknown) : p.value;
    if (p.type === PROPERTY_GVK) {
      const g = gvkProp(PROPERTY_GVK, value);
      gvks.set(g.raw, g);
    } else if (p.type === PROPERTY_PACKAGE) {
      packageProp = prop(
        PROPERTY_PACKAGE,
        packageValue(
          asString(field(value, 'packageName')),
          asString(field(value, 'version')),
          asString(field(value, 'release')),
        ),
      );
    } else others.push(p);
  }
  const packageRequired: Prop[] = [];
  for (const d of dependencies ?? []) {
    if (d.type === PROPERTY_GVK) {
      const g = gvkProp(PROPERTY_GVK_REQUIRED, d.value);
      gvksRequired.set(g.raw, g);
    } else if (d.type === PROPERTY_PACKAGE) {
      packageRequired.push(
        prop(PROPERTY_PACKAGE_REQUIRED, {
          packageName: asString(field(d.value, 'packageName')),
          versionRange: asString(field(d.value, 'version')),
        }),
      );
    } else others.push(rawProp(d.type, d.value, d.yaml, d.written));
  }
  for (const k of provided.values()) {
    const g = gvkProp(PROPERTY_GVK, k);
    if (!gvks.has(g.raw)) gvks.set(g.raw, g);
  }
  const required: ApiKey[] = [];
  for (const k of definitionKeys(field(crds, 'required'))) {
    if (k.bad)
      throw new BundleError(`get required apis: couldn't parse plural.group from crd name: ${k.plural}`);
    required.push(k);
  }
  required.push(
    ...asList(field(key(spec, 'apiservicedefinitions'), 'required')).map((a) => ({
      group: asString(field(a, 'group')),
      version: asString(field(a, 'version')),
      kind: asString(field(a, 'kind')),
      plural: asString(field(a, 'name')),
    })),
  );
  for (const k of required) {
    const g = gvkProp(PROPERTY_GVK_REQUIRED, k);
    if (!gvksRequired.has(g.raw)) gvksRequired.set(g.raw, g);
  }
  const props: Prop[] = objects.map((o) =>
    prop(PROPERTY_BUNDLE_OBJECT, { data: Buffer.from(goMarshal(o)).toString('base64') }),
  );
  props.push(
    packageProp ?? prop(PROPERTY_PACKAGE, packageValue(annotations.package, asString(version), release)),
  );
  props.push(...gvks.values(), ...gvksRequired.values(), ...packageRequired, ...others);
  props.sort((a, b) => (a.type !== b.type ? goStringCompare(a.type, b.type) : goStringCompare(a.raw, b.raw)));
  // render.go moveBundleObjectsToEndOfPropertySlices
  const heavy = (p: Prop): boolean => p.type === PROPERTY_BUNDLE_OBJECT || p.type === PROPERTY_CSV_METADATA;
  const ordered = [...props.filter((p) => !heavy(p)), ...props.filter(heavy)];

  // ---- related images (render.go getRelatedImages)
  const csvRelated = asList(key(spec, 'relatedImages')).map((r) => ({
    name: asString(field(r, 'name')),
    image: asString(field(r, 'image')),
  }));
  const operatorImages: string[] = [];
  const install = field(spec, 'install');
  if (field(install, 'strategy') === 'deployment') {
    for (const d of asList(field(field(install, 'spec'), 'deployments'))) {
      const podSpec = field(field(field(d, 'spec'), 'template'), 'spec');
      for (const list of ['containers', 'initContainers'])
        for (const c of asList(field(podSpec, list))) operatorImages.push(asString(field(c, 'image')));
    }
  }
  return {
    name,
    package: annotations.package,
    csv,
    csvPath,
    properties: ordered,
    csvRelated,
    operatorImages,
  };
}

function dedupe(list: Prop[]): Prop[] {
  const seen = new Set<string>();
  return list.filter((p) => {
    const k = `${p.type}\0${p.raw}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

/** The `olm.bundle` blob of a parsed bundle pulled as `image` (bundleToDeclcfg + Run). */
export function bundleBlob(parsed: ParsedBundle, image: string): JsonObject {
  const related = [...parsed.csvRelated];
  const seen = new Set(related.map((r) => r.image));
  if (image !== '' && !seen.has(image)) related.push({ name: '', image });
  for (const img of parsed.operatorImages) {
    if (!seen.has(img)) related.push({ name: '', image: img });
    seen.add(img);
  }
  // Operator images come from a Go map, so their order before this sort is random.
  related.sort((a, b) => goStringCompare(a.image, b.image));
  return {
    schema: SCHEMA_BUNDLE,
    name: parsed.name,
    package: parsed.package,
    image,
    properties: parsed.properties.map((p) => ({ type: p.type, value: p.value })),
    relatedImages: related,
  };
}

export type MigrateLevel = 'bundle-object-to-csv-metadata';

/** A bundle's `olm.bundle` blob as `opm render` writes it for `image`, and its CSV. */
export function renderParsedBundle(
  parsed: ParsedBundle,
  image: string,
  migrateLevel?: MigrateLevel,
): { blob: JsonObject; csv: JsonObject } {
  let blob = bundleBlob(parsed, image);
  if (migrateLevel === 'bundle-object-to-csv-metadata') blob = migrateBundleObjectToCsvMetadata(blob);
  return { blob, csv: parsed.csv };
}

// ---- bundle directories ----------------------------------------------------------------

/**
 * A bundle directory read into memory (paths relative to it, `/`-separated) as the files
 * bundle parsing reads. Directories exist through the paths under them.
 */
export function bundleFilesFromMap(files: ReadonlyMap<string, Buffer>): BundleFiles {
  return {
    readDir(path) {
      const prefix = path === '' ? '' : `${path.replace(/\/+$/, '')}/`;
      const names = new Map<string, boolean>();
      for (const p of files.keys()) {
        if (!p.startsWith(prefix)) continue;
        const rest = p.slice(prefix.length);
        const slash = rest.indexOf('/');
        const name = slash < 0 ? rest : rest.slice(0, slash);
        if (name !== '') names.set(name, (names.get(name) ?? false) || slash >= 0);
      }
      if (names.size === 0) return undefined;
      return [...names].sort(([a], [b]) => goStringCompare(a, b)).map(([name, isDir]) => ({ name, isDir }));
    },
    readFile: (path) => files.get(path),
  };
}

/** The default of `bundles.imageTemplate` (community-operators-prod's pipeline). */
export const DEFAULT_BUNDLE_IMAGE_TEMPLATE = 'quay.io/community-operator-pipeline-prod/{package}:{version}';

/**
 * The image reference of a bundle: `{package}` and `{version}` of the template replaced.
 * `version` is the bundle directory's name, which is the image tag (docs/bundles.md).
 */
export function bundleImageReference(template: string, pkg: string, version: string): string {
  return template.replaceAll('{package}', pkg).replaceAll('{version}', version);
}

export interface LoadedBundle {
  /** The `olm.bundle` blob, property order and values as opm writes them. */
  blob: JsonObject;
  csv: JsonObject;
  name: string;
  package: string;
}

/**
 * A bundle directory (`manifests/`, `metadata/annotations.yaml`, optional
 * `metadata/dependencies.yaml` and `properties.yaml`) -> the `olm.bundle` blob `opm render`
 * gives for the image built from it, with no image pull. Throws BundleError with opm's
 * reason when opm would refuse the bundle.
 */
export function loadBundleDirectory(
  files: ReadonlyMap<string, Buffer>,
  options: { image: string; migrateLevel?: MigrateLevel },
): LoadedBundle {
  const parsed = parseBundle(bundleFilesFromMap(files));
  const { blob, csv } = renderParsedBundle(parsed, options.image, options.migrateLevel);
  return { blob, csv, name: parsed.name, package: parsed.package };
}
