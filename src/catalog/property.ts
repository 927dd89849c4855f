// The FBC vocabulary, like operator-registry's `alpha/property` (property types and their
// values) and `alpha/declcfg` (schemas). 'olm.package' and 'olm.channel' are both a schema
// and a property type; the names below keep them apart. docs/validation-rules.md says what
// each is checked for.

// ---- schemas of FBC objects (declcfg.SchemaPackage, ...) and of templates

export const SCHEMA_PACKAGE = 'olm.package';
export const SCHEMA_CHANNEL = 'olm.channel';
export const SCHEMA_BUNDLE = 'olm.bundle';
export const SCHEMA_DEPRECATIONS = 'olm.deprecations';
/** `opm alpha render-template basic`'s input. */
export const SCHEMA_BASIC_TEMPLATE = 'olm.template.basic';
/** `opm alpha render-template semver`'s input. */
export const SCHEMA_SEMVER_TEMPLATE = 'olm.semver';

// ---- property types (property.TypePackage, ...) and the values they carry

/** The bundle's package and version: exactly one per bundle. */
export const PROPERTY_PACKAGE = 'olm.package';
export interface PackageValue {
  packageName: string;
  version: string;
  /** Newer opm only: the release of a version. */
  release?: string;
}

/** A dependency on a package in a version range (blang syntax). */
export const PROPERTY_PACKAGE_REQUIRED = 'olm.package.required';
export interface PackageRequiredValue {
  packageName: string;
  versionRange: string;
}

/** An API (group, version, kind) the bundle provides. */
export const PROPERTY_GVK = 'olm.gvk';
/** An API the bundle requires. */
export const PROPERTY_GVK_REQUIRED = 'olm.gvk.required';
export interface GvkValue {
  group: string;
  kind: string;
  version: string;
}

/** One manifest of the bundle, base64 JSON. */
export const PROPERTY_BUNDLE_OBJECT = 'olm.bundle.object';
export interface BundleObjectValue {
  data: string;
}

/** The CSV's metadata, which replaces the bundle objects after opm's migration. */
export const PROPERTY_CSV_METADATA = 'olm.csv.metadata';
export interface CsvMetadataValue {
  annotations?: Record<string, string>;
  description?: string;
  displayName?: string;
  keywords?: string[];
  [field: string]: unknown;
}

/** A channel membership with a priority (a property of a package or bundle). */
export const PROPERTY_CHANNEL = 'olm.channel';
export interface ChannelValue {
  channelName: string;
  priority: number;
}

/** A label the bundle carries, and a dependency on one. */
export const PROPERTY_LABEL = 'olm.label';
export const PROPERTY_LABEL_REQUIRED = 'olm.label.required';
export interface LabelValue {
  label: string;
}

/** A generic (CEL or compound) dependency. */
export const PROPERTY_CONSTRAINT = 'olm.constraint';
export interface ConstraintValue {
  failureMessage?: string;
  cel?: { rule: string };
  all?: { constraints: ConstraintValue[] };
  any?: { constraints: ConstraintValue[] };
  not?: { constraints: ConstraintValue[] };
  package?: PackageRequiredValue;
  gvk?: GvkValue;
}

/** The newest OpenShift release the bundle may be installed on, e.g. "4.18". */
export const PROPERTY_MAX_OPENSHIFT_VERSION = 'olm.maxOpenShiftVersion';
export type MaxOpenShiftVersionValue = string;

// ---- where properties are declared outside the FBC

/** The CSV annotation holding extra properties as a JSON list. */
export const CSV_PROPERTIES_ANNOTATION = 'olm.properties';

// ---- reading property values: the one place that knows where each value lives

/** What every property has: the FBC's, a CSV annotation's and a rendered bundle's alike. */
export interface PropertyLike {
  type?: unknown;
  value?: unknown;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;

/**
 * The version of the first `olm.package` property, when it is a string. opm allows exactly
 * one such property; a bundle with more is the validate check's finding.
 */
export function packageVersion(properties: readonly PropertyLike[]): string | undefined {
  const value = properties.find((p) => p?.type === PROPERTY_PACKAGE)?.value;
  const version = isRecord(value) ? value.version : undefined;
  return typeof version === 'string' ? version : undefined;
}

/** The packageName of every `olm.package` property that has one. */
export function packageNames(properties: readonly PropertyLike[]): string[] {
  return properties.flatMap((p) =>
    p?.type === PROPERTY_PACKAGE && isRecord(p.value) && typeof p.value.packageName === 'string'
      ? [p.value.packageName]
      : [],
  );
}

/**
 * Where a bundle declares `olm.maxOpenShiftVersion`: its own properties, and the CSV's
 * `olm.properties` annotation (what OLM reads from the installed operator), each value as
 * written. OLM goes by the CSV; catalogs by the property; a broken annotation is the
 * validate check's finding, read here as none.
 */
export function maxOpenShiftVersions<P extends PropertyLike>(
  properties: readonly P[],
): { own: P[]; fromCsv: unknown[] } {
  const own = properties.filter((p) => p.type === PROPERTY_MAX_OPENSHIFT_VERSION);
  const fromCsv: unknown[] = [];
  for (const metadata of parseProperties(properties).csvMetadatas) {
    const annotations: unknown = metadata.annotations;
    const raw = isRecord(annotations) ? annotations[CSV_PROPERTIES_ANNOTATION] : undefined;
    if (typeof raw !== 'string') continue;
    let list: unknown;
    try {
      list = JSON.parse(raw);
    } catch {
      continue;
    }
    if (!Array.isArray(list)) continue;
    for (const item of list)
      if (isRecord(item) && item.type === PROPERTY_MAX_OPENSHIFT_VERSION) fromCsv.push(item.value);
  }
  return { own, fromCsv };
}

// ---- every property at once, typed: operator-registry's alpha/property Parse

/** A bundle's properties sorted into typed lists, like operator-registry's `property.Properties`. */
export interface ParsedProperties {
  packages: PackageValue[];
  packagesRequired: PackageRequiredValue[];
  gvks: GvkValue[];
  gvksRequired: GvkValue[];
  bundleObjects: BundleObjectValue[];
  csvMetadatas: CsvMetadataValue[];
  /** Properties of other types, as written. */
  others: PropertyLike[];
  /**
   * Properties of a type above whose value has not that type's shape, as written, with their
   * place in the list. opm's Parse fails on the first; the validate check reports them with
   * opm's own message (src/catalog/fbc/declcfg.ts), so this reader only sets them aside.
   */
  malformed: { index: number; property: PropertyLike }[];
}

const isObjectValue = (v: unknown): v is Record<string, unknown> => isRecord(v) && !Array.isArray(v);
const stringFields = (v: unknown, fields: readonly string[]): v is Record<string, string> =>
  isObjectValue(v) && fields.every((f) => typeof v[f] === 'string');

/** Each known type's shape check and list; a value that fails it is malformed. */
const TYPED: Record<string, { is: (v: unknown) => boolean; list: keyof ParsedProperties }> = {
  [PROPERTY_PACKAGE]: {
    is: (v) =>
      stringFields(v, ['packageName', 'version']) &&
      (v.release === undefined || typeof v.release === 'string'),
    list: 'packages',
  },
  [PROPERTY_PACKAGE_REQUIRED]: {
    is: (v) => stringFields(v, ['packageName', 'versionRange']),
    list: 'packagesRequired',
  },
  [PROPERTY_GVK]: { is: (v) => stringFields(v, ['group', 'kind', 'version']), list: 'gvks' },
  [PROPERTY_GVK_REQUIRED]: { is: (v) => stringFields(v, ['group', 'kind', 'version']), list: 'gvksRequired' },
  [PROPERTY_BUNDLE_OBJECT]: { is: (v) => stringFields(v, ['data']), list: 'bundleObjects' },
  [PROPERTY_CSV_METADATA]: { is: isObjectValue, list: 'csvMetadatas' },
};

/**
 * The one reader of property values: every property sorted by type into typed lists, in
 * their order (docs/validation-rules.md says what a well-formed value is).
 */
export function parseProperties(properties: readonly PropertyLike[]): ParsedProperties {
  const out: ParsedProperties = {
    packages: [],
    packagesRequired: [],
    gvks: [],
    gvksRequired: [],
    bundleObjects: [],
    csvMetadatas: [],
    others: [],
    malformed: [],
  };
  properties.forEach((property, index) => {
    const typed = typeof property?.type === 'string' ? TYPED[property.type] : undefined;
    if (!typed) out.others.push(property);
    else if (typed.is(property.value)) (out[typed.list] as unknown[]).push(property.value);
    else out.malformed.push({ index, property });
  });
  return out;
}

/** The manifests a bundle carries as `olm.bundle.object` properties, decoded from base64. */
export function bundleObjectTexts(properties: readonly PropertyLike[]): string[] {
  return parseProperties(properties).bundleObjects.map((o) => Buffer.from(o.data, 'base64').toString('utf8'));
}
