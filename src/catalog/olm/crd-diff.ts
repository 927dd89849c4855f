/**
 * CustomResourceDefinition upgrade safety: compare a CRD as an old bundle ships it with the
 * same CRD in a newer bundle, the way OLM decides whether it may apply the new one.
 *
 * Ported rule by rule from what OLM v1 runs (operator-controller
 * `internal/operator-controller/rukpak/preflights/crdupgradesafety`, which delegates to
 * kubernetes-sigs/crdify with: description changes ignored, enum additions allowed, changes
 * no validation handles are errors, served-version checks skipped with a conversion webhook):
 *
 * - CRD-wide (`crdify/pkg/validations/crd`): `scope` unchanged; no stored version removed
 *   (`storedVersionRemoval`; the cluster's `status.storedVersions`, which from a catalog is
 *   at least the old bundle's storage version); no field of a version both CRDs have removed
 *   (`existingFieldRemoval`).
 * - Same version (`validators/version/same`): every schema node of a version both have is
 *   compared with its children dropped: `type`, `default`, `enum`, the eight min/max limits,
 *   `required`, `pattern`, `nullable`, `oneOf`; anything else that differs is "unhandled".
 * - Served versions (`validators/version/served`): in the new CRD, every pair of served
 *   versions (kube-aware order, lower -> higher) is compared with the same rules, minus the
 *   issues the old CRD already had; skipped when the CRD converts with a webhook.
 *
 * Classic OLM (operator-lifecycle-manager `pkg/controller/operators/catalog/step.go`,
 * `validateV1CRDCompatibility`, `pkg/lib/crd/storage.go` SafeStorageVersionUpgrade) compares no
 * schemas: it lists the existing custom resources of every version served by both CRDs and
 * validates them against the new schema ("updated validation is too restrictive"; only a
 * warning with a conversion webhook), and refuses to drop a version listed in the old CRD's
 * `status.storedVersions` ("risk of data loss"). Its documented rule
 * (doc/design/dependency-resolution.md) is that a served version is never removed in one
 * step: it must first be marked `served: false`. That rule is CRD-VERSION-REMOVED here.
 *
 * Pure: JSON in, a list of changes out. Paths are crdify's "simple locations" (`^.spec.foo`,
 * `^.spec.list.items`, `^.x.allOf[0]`), which is what OLM v1 prints.
 */
import { sortedJson } from '../fbc/load.js';

export type CrdRule =
  | 'CRD-SCOPE-CHANGED'
  | 'CRD-VERSION-REMOVED'
  | 'CRD-STORED-VERSION-REMOVED'
  | 'CRD-REMOVED'
  | 'CRD-FIELD-REMOVED'
  | 'CRD-REQUIRED-ADDED'
  | 'CRD-ENUM'
  | 'CRD-LIMIT-TIGHTENED'
  | 'CRD-DEFAULT-CHANGED'
  | 'CRD-TYPE-CHANGED'
  | 'CRD-PATTERN'
  | 'CRD-NULLABLE'
  | 'CRD-ONEOF'
  | 'CRD-UNHANDLED'
  | 'CRD-SERVED-INCOMPATIBLE'
  // Safe changes, listed so that `crd-diff` can show everything that changed.
  | 'CRD-ADDED'
  | 'CRD-VERSION-ADDED'
  | 'CRD-FIELD-ADDED'
  | 'CRD-REQUIRED-REMOVED'
  | 'CRD-LIMIT-LOOSENED'
  | 'CRD-DESCRIPTION-CHANGED';

export interface CrdChange {
  rule: CrdRule;
  /** false: OLM refuses (or, for CRD-UNHANDLED, OLM v1 refuses). */
  safe: boolean;
  /** The CRD's `metadata.name`. */
  crd: string;
  /** The CRD version; for CRD-SERVED-INCOMPATIBLE the pair, `v1alpha1 -> v1`. */
  version?: string;
  /** crdify's simple location of the schema node (`^` is the version's openAPIV3Schema). */
  path?: string;
  /** What changed, without the bundle names (the caller knows them). */
  message: string;
  /** What to do instead. */
  hint?: string;
  /** Identity of the finding for comparisons between catalogs (rule, version, path, detail). */
  key: string;
}

type Obj = Record<string, unknown>;

export interface CrdVersion {
  name: string;
  served: boolean;
  storage: boolean;
  /** `schema.openAPIV3Schema` (v1beta1: per-version schema, else the top-level `validation`). */
  schema?: Obj;
}

export interface Crd {
  name: string;
  group: string;
  kind: string;
  scope: string;
  versions: CrdVersion[];
  /** `status.storedVersions` as the manifest has it (usually empty in a bundle). */
  statusStoredVersions: string[];
  /** `spec.conversion.strategy: Webhook`, or a CSV ConversionWebhook naming this CRD. */
  webhookConversion: boolean;
  /** The manifest text it was read from, when known: equal texts need no comparison. */
  source?: string;
}

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** A CRD manifest (apiextensions.k8s.io v1 or v1beta1) as the fields that matter here; undefined if it is not one. */
export function parseCrd(object: unknown): Crd | undefined {
  if (!isObj(object) || object.kind !== 'CustomResourceDefinition') return undefined;
  if (!str(object.apiVersion).startsWith('apiextensions.k8s.io/')) return undefined;
  const metadata = isObj(object.metadata) ? object.metadata : {};
  const spec = isObj(object.spec) ? object.spec : {};
  const status = isObj(object.status) ? object.status : {};
  const names = isObj(spec.names) ? spec.names : {};
  // v1beta1: one schema for all versions in `validation`, and `version` when `versions` is absent.
  const globalSchema = isObj(spec.validation) ? spec.validation.openAPIV3Schema : undefined;
  const rawVersions = Array.isArray(spec.versions) ? spec.versions : [];
  const versions: CrdVersion[] = rawVersions.filter(isObj).map((v) => {
    const schema = isObj(v.schema) ? v.schema.openAPIV3Schema : globalSchema;
    return {
      name: str(v.name),
      served: v.served === true,
      storage: v.storage === true,
      ...(isObj(schema) ? { schema } : {}),
    };
  });
  if (versions.length === 0 && str(spec.version) !== '') {
    versions.push({
      name: str(spec.version),
      served: true,
      storage: true,
      ...(isObj(globalSchema) ? { schema: globalSchema } : {}),
    });
  }
  const conversion = isObj(spec.conversion) ? spec.conversion : {};
  return {
    name: str(metadata.name),
    group: str(spec.group),
    kind: str(names.kind),
    // v1beta1 defaults the scope to Namespaced; v1 requires it.
    scope: str(spec.scope) || 'Namespaced',
    versions,
    statusStoredVersions: Array.isArray(status.storedVersions) ? status.storedVersions.map(str) : [],
    webhookConversion: conversion.strategy === 'Webhook',
  };
}

export interface BundleCrds {
  crds: Map<string, Crd>;
  /** Objects that are not JSON (should not happen: the loader checked them). */
  problems: string[];
}

const CRD_KIND = /"kind"\s*:\s*"CustomResourceDefinition"/;
const CSV_KIND = /"kind"\s*:\s*"ClusterServiceVersion"/;

/**
 * The CRDs among a bundle's `olm.bundle.object` texts. A CSV `webhookdefinitions` entry of
 * type ConversionWebhook makes OLM (classic and v1) put a webhook conversion on the CRDs it
 * names (operator-controller `render/registryv1/generators` sets `spec.conversion` before the
 * preflight sees the CRD), so those count as converting with a webhook.
 */
export function bundleCrds(objects: readonly string[]): BundleCrds {
  const crds = new Map<string, Crd>();
  const problems: string[] = [];
  const converted = new Set<string>();
  for (const text of objects) {
    const isCrd = CRD_KIND.test(text);
    if (!isCrd && !CSV_KIND.test(text)) continue;
    let object: unknown;
    try {
      object = JSON.parse(text);
    } catch (err) {
      problems.push((err as Error).message);
      continue;
    }
    if (isCrd) {
      const crd = parseCrd(object);
      if (crd && crd.name !== '') crds.set(crd.name, { ...crd, source: text });
    } else if (isObj(object) && object.kind === 'ClusterServiceVersion' && isObj(object.spec)) {
      const hooks = Array.isArray(object.spec.webhookdefinitions) ? object.spec.webhookdefinitions : [];
      for (const hook of hooks) {
        if (!isObj(hook) || hook.type !== 'ConversionWebhook') continue;
        for (const name of Array.isArray(hook.conversionCRDs) ? hook.conversionCRDs : []) {
          converted.add(str(name));
        }
      }
    }
  }
  for (const name of converted) {
    const crd = crds.get(name);
    if (crd) crd.webhookConversion = true;
  }
  return { crds, problems };
}

// ---- The schema walker (crdify validations.SchemaHas + FlattenCRDVersion) ----

// Parsed manifests are not changed after parsing: walks and served-pair results are cached.
const flattened = new WeakMap<Obj, Map<string, Obj>>();
const servedIssues = new WeakMap<Crd, ReturnType<typeof servedPairIssuesUncached>>();

/** Every schema node by simple location, in crdify's walk order. */
export function flattenSchema(schema: Obj | undefined): Map<string, Obj> {
  if (schema === undefined) return new Map();
  let out = flattened.get(schema);
  if (out) return out;
  out = new Map<string, Obj>();
  flattened.set(schema, out);
  const into = out;
  const walk = (s: Obj, at: string): void => {
    into.set(at, s);
    const items = s.items;
    if (isObj(items)) walk(items, `${at}.items`);
    else if (Array.isArray(items)) items.forEach((x, i) => isObj(x) && walk(x, `${at}.items[${i}]`));
    for (const key of ['allOf', 'anyOf', 'oneOf'] as const) {
      const list = s[key];
      if (Array.isArray(list)) list.forEach((x, i) => isObj(x) && walk(x, `${at}.${key}[${i}]`));
    }
    if (isObj(s.not)) walk(s.not, `${at}.not`);
    if (isObj(s.properties)) {
      for (const [name, x] of Object.entries(s.properties)) if (isObj(x)) walk(x, `${at}.${name}`);
    }
    if (isObj(s.additionalProperties)) walk(s.additionalProperties, `${at}.additionalProperties`);
    if (isObj(s.patternProperties)) {
      for (const [name, x] of Object.entries(s.patternProperties))
        if (isObj(x)) walk(x, `${at}.patternProperties[${name}]`);
    }
    if (isObj(s.additionalItems)) walk(s.additionalItems, `${at}.additionalItems`);
    if (isObj(s.definitions)) {
      for (const [name, x] of Object.entries(s.definitions))
        if (isObj(x)) walk(x, `${at}.definitions[${name}]`);
    }
    if (isObj(s.dependencies)) {
      // A dependency is a schema or a list of property names; only schemas are walked.
      for (const [name, x] of Object.entries(s.dependencies))
        if (isObj(x)) walk(x, `${at}.dependencies[${name}]`);
    }
  };
  walk(schema, '^');
  return out;
}

// ---- Comparing one schema node (children dropped), as crdify's property comparators do ----

const LIMITS = [
  ['maximum', 'max'],
  ['maxItems', 'max'],
  ['maxLength', 'max'],
  ['maxProperties', 'max'],
  ['minimum', 'min'],
  ['minItems', 'min'],
  ['minLength', 'min'],
  ['minProperties', 'min'],
] as const;

/** Keys a comparator handles, plus the children (compared at their own location). */
const HANDLED = new Set<string>([
  'properties',
  'items',
  'description',
  'default',
  'enum',
  'required',
  'type',
  'pattern',
  'nullable',
  'oneOf',
  ...LIMITS.map(([k]) => k),
]);

/** Fields Go holds as pointers: `additionalProperties: false` differs from no additionalProperties. */
const POINTERS = new Set([
  'additionalProperties',
  'additionalItems',
  'not',
  'externalDocs',
  'example',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-list-type',
  'x-kubernetes-map-type',
]);

const isSet = (v: unknown): boolean => v !== undefined && v !== null;

/** Go zero values: an absent field and false, "", [], {} or null decode to the same struct. */
function isZero(v: unknown): boolean {
  return (
    v === undefined ||
    v === null ||
    v === false ||
    v === '' ||
    (Array.isArray(v) && v.length === 0) ||
    (isObj(v) && Object.keys(v).length === 0)
  );
}

function canonical(v: unknown): string {
  return isZero(v) ? '' : sortedJson(v);
}

/** Semantic deep equality of two JSON values (key order ignored, zero values equal absence). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (isZero(a) || isZero(b)) return isZero(a) && isZero(b);
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => jsonEqual(x, b[i]));
  }
  if (isObj(a) || isObj(b)) {
    if (!isObj(a) || !isObj(b)) return false;
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const k of keys) if (!jsonEqual(a[k], b[k])) return false;
    return true;
  }
  return a === b;
}

const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const quote = (v: unknown): string => JSON.stringify(v);

const fieldName = (path: string): string => (path === '^' ? 'the schema root' : `\`${path}\``);

/** One incompatibility (or safe change) of a schema node, before it is placed in a CRD/version. */
interface NodeIssue {
  rule: CrdRule;
  safe: boolean;
  /** Deterministic text: what changed. */
  detail: string;
  hint: string;
}

/** crdify's oneOf normalizeSchema: top-level description/title/example/externalDocs do not count. */
function oneOfKey(s: unknown): string {
  if (!isObj(s)) return sortedJson(s);
  const copy: Obj = { ...s };
  delete copy.description;
  delete copy.title;
  delete copy.example;
  delete copy.externalDocs;
  return sortedJson(copy);
}

function setOf(values: unknown[], key: (v: unknown) => string): Set<string> {
  return new Set(values.map(key));
}

function minus(a: Set<string>, b: Set<string>): string[] {
  return [...a].filter((x) => !b.has(x)).sort();
}

/** Equal apart from the children (which are compared at their own locations). */
function sameNode(a: Obj, b: Obj): boolean {
  for (const k in a) if (!keySame(a, b, k)) return false;
  for (const k in b) if (!(k in a) && !keySame(a, b, k)) return false;
  return true;
}

function keySame(a: Obj, b: Obj, k: string): boolean {
  if (k === 'properties' || k === 'items') return true;
  return jsonEqual(a[k], b[k]) && !(POINTERS.has(k) && isSet(a[k]) !== isSet(b[k]));
}

/** Compare one node pair (children dropped), in crdify's comparator order. */
export function compareNode(a: Obj, b: Obj, path: string): NodeIssue[] {
  // Most nodes are unchanged: one pass over the keys decides that without building sets.
  if (sameNode(a, b)) return [];
  const field = fieldName(path);
  const out: NodeIssue[] = [];
  const push = (rule: CrdRule, safe: boolean, detail: string, hint: string): void => {
    out.push({ rule, safe, detail, hint });
  };

  // default
  const da = canonical(a.default);
  const db = canonical(b.default);
  if (da !== db) {
    const detail =
      da === ''
        ? `default added when there was none previously: ${db}`
        : db === ''
          ? `default value removed: ${da}`
          : `default value changed: ${da} -> ${db}`;
    push(
      'CRD-DEFAULT-CHANGED',
      false,
      detail,
      da === ''
        ? `Do not add a default to the existing field ${field}: set the value in the controller when it is unset, or default it only in a new CRD version.`
        : `Keep the default of ${field} at ${da}: a changed default silently changes existing objects; change it only in a new CRD version.`,
    );
  }

  // enum (OLM v1 allows adding values)
  const ea = setOf(list(a.enum), (v) => sortedJson(v));
  const eb = setOf(list(b.enum), (v) => sortedJson(v));
  const removedEnum = minus(ea, eb);
  const addedEnum = minus(eb, ea);
  if (ea.size === 0 && eb.size > 0) {
    push(
      'CRD-ENUM',
      false,
      `enum constraint added when there was none previously: [${[...eb].sort().join(', ')}]`,
      `Do not add an enum to the existing field ${field}: stored objects may hold other values. Validate in the controller, or add the enum in a new CRD version.`,
    );
  } else if (removedEnum.length > 0) {
    push(
      'CRD-ENUM',
      false,
      `allowed enum values removed: [${removedEnum.join(', ')}]`,
      `Keep the enum values ${removedEnum.join(', ')} of ${field}: values can be added, never removed (stored objects may use them).`,
    );
  } else if (addedEnum.length > 0) {
    push('CRD-ENUM', true, `allowed enum values added: [${addedEnum.join(', ')}]`, '');
  }

  // minimum/maximum and the length, items and properties limits
  for (const [key, kind] of LIMITS) {
    const oa = num(a[key]);
    const ob = num(b[key]);
    if (oa === ob) continue;
    const tighter =
      (oa === undefined && ob !== undefined) ||
      (oa !== undefined && ob !== undefined && (kind === 'max' ? ob < oa : ob > oa));
    if (tighter) {
      push(
        'CRD-LIMIT-TIGHTENED',
        false,
        oa === undefined
          ? `${key} constraint added when there was none previously: ${ob}`
          : `${key} ${kind === 'max' ? 'decreased' : 'increased'}: ${oa} -> ${ob}`,
        `Keep ${key} of ${field} ${oa === undefined ? 'unset' : `at ${oa}`}: limits may only be loosened in an existing version (stored objects may exceed the new one); tighten it in a new CRD version.`,
      );
    } else {
      push(
        'CRD-LIMIT-LOOSENED',
        true,
        ob === undefined ? `${key} constraint removed: ${oa}` : `${key} loosened: ${oa} -> ${ob}`,
        '',
      );
    }
  }

  // required
  const ra = new Set(list(a.required).map(String));
  const rb = new Set(list(b.required).map(String));
  const newRequired = minus(rb, ra);
  const noLongerRequired = minus(ra, rb);
  if (newRequired.length > 0) {
    push(
      'CRD-REQUIRED-ADDED',
      false,
      `new required fields: [${newRequired.join(', ')}]`,
      `Leave ${newRequired.map((r) => fieldName(`${path}.${r}`)).join(', ')} optional (handle its absence in the controller, or give it a default), or require it only in a new CRD version: existing objects do not have it.`,
    );
  }
  if (noLongerRequired.length > 0) {
    push('CRD-REQUIRED-REMOVED', true, `fields no longer required: [${noLongerRequired.join(', ')}]`, '');
  }

  // type
  const ta = str(a.type);
  const tb = str(b.type);
  if (ta !== tb) {
    push(
      'CRD-TYPE-CHANGED',
      false,
      `type changed: ${quote(ta)} -> ${quote(tb)}`,
      `Keep ${field} of type ${quote(ta)}: add a new field with the new type (and deprecate this one), or change it in a new CRD version with a conversion webhook.`,
    );
  }

  // description: OLM v1 does not enforce it
  if (str(a.description) !== str(b.description))
    push('CRD-DESCRIPTION-CHANGED', true, 'description changed', '');

  // pattern
  const pa = str(a.pattern);
  const pb = str(b.pattern);
  if (pa !== pb) {
    push(
      'CRD-PATTERN',
      false,
      pa === ''
        ? `pattern added: ${quote(pb)}`
        : pb === ''
          ? `pattern removed: ${quote(pa)}`
          : `pattern changed: ${quote(pa)} -> ${quote(pb)}`,
      `Keep the pattern of ${field} ${pa === '' ? 'unset' : `as ${quote(pa)}`}: OLM v1 refuses any pattern change in an existing version; make it in a new CRD version.`,
    );
  }

  // nullable
  const na = a.nullable === true;
  const nb = b.nullable === true;
  if (na !== nb) {
    push(
      'CRD-NULLABLE',
      false,
      nb ? 'nullable added: false -> true' : 'nullable removed: true -> false',
      `Keep \`nullable: ${na}\` on ${field}: OLM v1 refuses changing it in an existing version.`,
    );
  }

  // oneOf
  const oa = setOf(list(a.oneOf), oneOfKey);
  const ob = setOf(list(b.oneOf), oneOfKey);
  if (oa.size === 0 && ob.size > 0) {
    push(
      'CRD-ONEOF',
      false,
      `oneOf constraint added when there was none previously (${ob.size} schemas)`,
      `Do not add a oneOf to the existing field ${field}; validate in the controller or use a new CRD version.`,
    );
  } else if (minus(oa, ob).length > 0) {
    push(
      'CRD-ONEOF',
      false,
      `allowed oneOf schemas removed (${minus(oa, ob).length})`,
      `Keep every oneOf schema of ${field}.`,
    );
  } else if (minus(ob, oa).length > 0) {
    push(
      'CRD-ONEOF',
      false,
      `allowed oneOf schemas added (${minus(ob, oa).length})`,
      `Keep the oneOf of ${field} as it was; OLM v1 refuses adding schemas to it.`,
    );
  }

  // anything else: crdify's "unhandled" check, which fails closed
  const changed = [...new Set([...Object.keys(a), ...Object.keys(b)])]
    .filter(
      (k) => !HANDLED.has(k) && (!jsonEqual(a[k], b[k]) || (POINTERS.has(k) && isSet(a[k]) !== isSet(b[k]))),
    )
    .sort();
  if (changed.length > 0) {
    const shown = changed.map((k) => {
      const before = a[k];
      const after = b[k];
      const simple = (v: unknown) => isZero(v) || typeof v !== 'object';
      return simple(before) && simple(after)
        ? `${k} ${isZero(before) ? '<empty>' : quote(before)} -> ${isZero(after) ? '<empty>' : quote(after)}`
        : `${k} changed`;
    });
    push(
      'CRD-UNHANDLED',
      false,
      `unhandled changes found (${shown.join('; ')})`,
      `OLM v1 refuses schema changes it has no rule for: keep ${changed.join(', ')} of ${field} as it was in this version, or make the change in a new CRD version.`,
    );
  }
  return out;
}

// ---- Versions ----

/** k8s.io/apimachinery version.CompareKubeAwareVersionStrings. */
export function compareKubeAwareVersions(v1: string, v2: string): number {
  if (v1 === v2) return 0;
  const parse = (v: string) => {
    const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
    if (!m) return undefined;
    const type = m[2] === 'alpha' ? 0 : m[2] === 'beta' ? 1 : 2;
    return { major: Number(m[1]), type, minor: m[3] === undefined ? 0 : Number(m[3]) };
  };
  const a = parse(v1);
  const b = parse(v2);
  if (!a && !b) return v2 < v1 ? -1 : v2 > v1 ? 1 : 0;
  if (!a) return -1;
  if (!b) return 1;
  return a.type - b.type || a.major - b.major || a.minor - b.minor;
}

/** Top-most paths only: a removed object's subfields are not listed one by one. */
function topMost(paths: string[]): { path: string; nested: number }[] {
  const sorted = [...paths].sort();
  const out: { path: string; nested: number }[] = [];
  for (const p of sorted) {
    const parent = out[out.length - 1];
    if (parent && (p.startsWith(parent.path + '.') || p.startsWith(parent.path + '['))) parent.nested++;
    else out.push({ path: p, nested: 0 });
  }
  return out;
}

/** Incompatibilities between two served versions of one CRD (crdify served validator), unsafe only. */
function servedPairIssues(crd: Crd): Map<string, { pair: string; path: string; issue: NodeIssue }> {
  let issues = servedIssues.get(crd);
  if (!issues) {
    issues = servedPairIssuesUncached(crd);
    servedIssues.set(crd, issues);
  }
  return issues;
}

function servedPairIssuesUncached(crd: Crd): Map<string, { pair: string; path: string; issue: NodeIssue }> {
  const out = new Map<string, { pair: string; path: string; issue: NodeIssue }>();
  const served = crd.versions
    .filter((v) => v.served)
    .sort((a, b) => compareKubeAwareVersions(a.name, b.name));
  const flat = new Map(served.map((v) => [v.name, flattenSchema(v.schema)]));
  for (let i = 0; i < served.length - 1; i++) {
    for (let j = i + 1; j < served.length; j++) {
      const lo = served[i] as CrdVersion;
      const hi = served[j] as CrdVersion;
      const pair = `${lo.name} -> ${hi.name}`;
      const a = flat.get(lo.name) as Map<string, Obj>;
      const b = flat.get(hi.name) as Map<string, Obj>;
      const missing: string[] = [];
      for (const [path, node] of a) {
        const other = b.get(path);
        if (other === undefined) {
          missing.push(path);
          continue;
        }
        for (const issue of compareNode(node, other, path)) {
          if (!issue.safe) out.set(`${pair}\0${path}\0${issue.rule}\0${issue.detail}`, { pair, path, issue });
        }
      }
      for (const { path, nested } of topMost(missing)) {
        const detail = `field missing in ${hi.name}${nested > 0 ? ` (with ${nested} nested fields)` : ''}`;
        out.set(`${pair}\0${path}\0CRD-FIELD-REMOVED\0${detail}`, {
          pair,
          path,
          issue: { rule: 'CRD-FIELD-REMOVED', safe: false, detail, hint: '' },
        });
      }
    }
  }
  return out;
}

export interface CrdDiffOptions {
  /** Skip the served-versions comparison (crdify with conversion policy None runs it even with webhooks). */
  servedVersions?: boolean;
}

const schemaText = new WeakMap<Obj, string>();

/** Same JSON text (a fast path: key order as written, so different text may still be equal). */
function sameText(a: Obj | undefined, b: Obj | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  const text = (o: Obj): string => {
    let t = schemaText.get(o);
    if (t === undefined) {
      t = JSON.stringify(o);
      schemaText.set(o, t);
    }
    return t;
  };
  return text(a) === text(b);
}

/** Every change from `old` to `next` (the same CRD name), unsafe and safe. */
export function diffCrd(old: Crd, next: Crd, options: CrdDiffOptions = {}): CrdChange[] {
  // The same manifest text: nothing changed (most upgrades keep most CRDs as they were).
  if (old.source !== undefined && old.source === next.source) return [];
  const changes: CrdChange[] = [];
  const crd = old.name;
  const add = (c: Omit<CrdChange, 'crd' | 'key'> & { detail?: string }): void => {
    const { detail, ...rest } = c;
    changes.push({
      ...rest,
      crd,
      key: [c.rule, c.version ?? '', c.path ?? '', detail ?? c.message].join('\0'),
    });
  };

  if (old.scope !== next.scope) {
    add({
      rule: 'CRD-SCOPE-CHANGED',
      safe: false,
      message: `scope changed from ${quote(old.scope)} to ${quote(next.scope)}`,
      hint: `Keep \`scope: ${old.scope}\`. A CRD's scope cannot change in place: ship a new CRD (another group or plural) for ${next.scope} objects.`,
    });
  }

  const nextVersions = new Map(next.versions.map((v) => [v.name, v]));
  const oldVersions = new Map(old.versions.map((v) => [v.name, v]));
  // What the cluster stores at least: the old storage version and the manifest's own list.
  const stored = new Set([
    ...old.statusStoredVersions,
    ...old.versions.filter((v) => v.storage).map((v) => v.name),
  ]);
  for (const name of [...stored].sort()) {
    if (nextVersions.has(name)) continue;
    add({
      rule: 'CRD-STORED-VERSION-REMOVED',
      safe: false,
      version: name,
      message: `stored version ${quote(name)} removed`,
      hint: `Keep version ${name} in spec.versions (\`served: false, storage: false\` is fine) until every cluster has migrated its stored objects to the new storage version and dropped ${name} from status.storedVersions; remove it in a later bundle.`,
    });
  }
  for (const v of old.versions) {
    if (!v.served || nextVersions.has(v.name) || stored.has(v.name)) continue;
    add({
      rule: 'CRD-VERSION-REMOVED',
      safe: false,
      version: v.name,
      message: `served version ${quote(v.name)} removed`,
      hint: `Keep version ${v.name} with \`served: false\` in this bundle and remove it in a later one: OLM never removes a served version in one step (clients and stored objects may still use it).`,
    });
  }
  for (const v of next.versions) {
    if (!oldVersions.has(v.name))
      add({
        rule: 'CRD-VERSION-ADDED',
        safe: true,
        version: v.name,
        message: `version ${quote(v.name)} added`,
      });
  }

  // Same version: removed fields, then every node both versions have.
  for (const ov of old.versions) {
    const nv = nextVersions.get(ov.name);
    if (nv === undefined || sameText(ov.schema, nv.schema)) continue;
    const a = flattenSchema(ov.schema);
    const b = flattenSchema(nv.schema);
    const removed: string[] = [];
    for (const [path, node] of a) {
      const other = b.get(path);
      if (other === undefined) {
        removed.push(path);
        continue;
      }
      for (const issue of compareNode(node, other, path)) {
        add({
          rule: issue.rule,
          safe: issue.safe,
          version: ov.name,
          path,
          message: issue.detail,
          ...(issue.hint ? { hint: issue.hint } : {}),
        });
      }
    }
    for (const { path, nested } of topMost(removed)) {
      add({
        rule: 'CRD-FIELD-REMOVED',
        safe: false,
        version: ov.name,
        path,
        message: `field removed${nested > 0 ? ` (with ${nested} nested fields)` : ''}`,
        hint: `Keep ${fieldName(path)} in version ${ov.name} (say in its description that it is deprecated, and ignore it in the controller); drop it only in a new CRD version.`,
      });
    }
    for (const { path } of topMost([...b.keys()].filter((p) => !a.has(p)))) {
      add({ rule: 'CRD-FIELD-ADDED', safe: true, version: ov.name, path, message: 'field added' });
    }
  }

  // Served versions of the new CRD must stay compatible with each other, unless a webhook converts.
  if (options.servedVersions !== false && !next.webhookConversion) {
    const before = servedPairIssues(old);
    for (const [key, { pair, path, issue }] of servedPairIssues(next)) {
      if (before.has(key)) continue;
      const [lo, hi] = pair.split(' -> ');
      add({
        rule: 'CRD-SERVED-INCOMPATIBLE',
        safe: false,
        version: pair,
        path,
        message: `served versions ${lo} and ${hi} disagree (${issue.rule}: ${issue.detail}), and no conversion webhook converts between them`,
        detail: `${issue.rule}\0${issue.detail}`,
        hint: `Make ${hi} accept everything ${lo} accepts at ${fieldName(path)}, or convert between them with a conversion webhook (spec.conversion.strategy: Webhook, or a ConversionWebhook in the CSV's webhookdefinitions).`,
      });
    }
  }
  return changes;
}

export interface BundleCrdDiff {
  /** CRD names present in both bundles (compared). */
  compared: string[];
  changes: CrdChange[];
}

/** Every CRD of the old bundle against the same CRD in the new one; a CRD that disappears is CRD-REMOVED. */
export function diffBundleCrds(
  old: Map<string, Crd>,
  next: Map<string, Crd>,
  options: CrdDiffOptions = {},
): BundleCrdDiff {
  const compared: string[] = [];
  const changes: CrdChange[] = [];
  for (const [name, crd] of [...old].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const other = next.get(name);
    if (other === undefined) {
      changes.push({
        rule: 'CRD-REMOVED',
        safe: false,
        crd: name,
        message: `CRD ${name} (${crd.kind || 'unknown kind'}) removed`,
        hint: `Keep shipping ${name} in the new bundle (deprecate its versions instead): a CRD that disappears is left behind without an owner by classic OLM, and OLM v1 may remove it with its release, and every object of it.`,
        key: `CRD-REMOVED\0${name}`,
      });
      continue;
    }
    compared.push(name);
    changes.push(...diffCrd(crd, other, options));
  }
  for (const name of [...next.keys()].sort()) {
    if (!old.has(name))
      changes.push({
        rule: 'CRD-ADDED',
        safe: true,
        crd: name,
        message: `CRD ${name} added`,
        key: `CRD-ADDED\0${name}`,
      });
  }
  return { compared, changes };
}
