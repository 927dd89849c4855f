// operator-sdk's ClusterServiceVersionValidator (operator-framework/api
// pkg/validation/internal/csv.go), which every `operator-sdk bundle validate` runs, and the
// CSV decoding it needs first: a CSV field of the wrong type stops operator-sdk before any
// validator runs; here it is one finding per field (docs/bundle-rules.md).
import {
  at,
  csvKeyLine,
  DEFAULT_VALIDATOR_SUITES,
  isMap,
  list,
  map,
  OSDK_FRAMEWORK,
  OSDK_OPERATORHUB,
  str,
  type BundleContext,
  type BundleRule,
  type JsonMap,
} from './context.js';

const CSV_VALIDATOR = 'operator-sdk:ClusterServiceVersionValidator';
const OSDK = [OSDK_OPERATORHUB, OSDK_FRAMEWORK];

type Shape = 'string' | 'boolean' | 'list' | 'map' | 'string-map';

/** What the typed CSV (v1alpha1.ClusterServiceVersion) declares: a path and its JSON type. */
const CSV_SHAPE: [string, Shape][] = [
  ['metadata', 'map'],
  ['metadata.name', 'string'],
  ['metadata.annotations', 'string-map'],
  ['metadata.labels', 'string-map'],
  ['spec', 'map'],
  ['spec.displayName', 'string'],
  ['spec.description', 'string'],
  ['spec.version', 'string'],
  ['spec.minKubeVersion', 'string'],
  ['spec.replaces', 'string'],
  ['spec.maturity', 'string'],
  ['spec.keywords', 'list'],
  ['spec.maintainers', 'list'],
  ['spec.links', 'list'],
  ['spec.icon', 'list'],
  ['spec.installModes', 'list'],
  ['spec.skips', 'list'],
  ['spec.relatedImages', 'list'],
  ['spec.webhookdefinitions', 'list'],
  ['spec.nativeAPIs', 'list'],
  ['spec.provider', 'map'],
  ['spec.provider.name', 'string'],
  ['spec.provider.url', 'string'],
  ['spec.labels', 'string-map'],
  ['spec.install', 'map'],
  ['spec.install.strategy', 'string'],
  ['spec.install.spec', 'map'],
  ['spec.install.spec.deployments', 'list'],
  ['spec.install.spec.permissions', 'list'],
  ['spec.install.spec.clusterPermissions', 'list'],
  ['spec.customresourcedefinitions', 'map'],
  ['spec.customresourcedefinitions.owned', 'list'],
  ['spec.customresourcedefinitions.required', 'list'],
  ['spec.apiservicedefinitions', 'map'],
  ['spec.apiservicedefinitions.owned', 'list'],
  ['spec.apiservicedefinitions.required', 'list'],
];

/** Fields of the list elements, by list path. */
const ELEMENT_SHAPE: Record<string, [string, Shape][]> = {
  'spec.keywords': [['', 'string']],
  'spec.skips': [['', 'string']],
  'spec.maintainers': [
    ['name', 'string'],
    ['email', 'string'],
  ],
  'spec.links': [
    ['name', 'string'],
    ['url', 'string'],
  ],
  'spec.icon': [
    ['base64data', 'string'],
    ['mediatype', 'string'],
  ],
  'spec.installModes': [
    ['type', 'string'],
    ['supported', 'boolean'],
  ],
  'spec.relatedImages': [
    ['name', 'string'],
    ['image', 'string'],
  ],
  'spec.customresourcedefinitions.owned': [
    ['name', 'string'],
    ['version', 'string'],
    ['kind', 'string'],
    ['description', 'string'],
  ],
  'spec.customresourcedefinitions.required': [
    ['name', 'string'],
    ['version', 'string'],
    ['kind', 'string'],
    ['description', 'string'],
  ],
};

function fits(v: unknown, shape: Shape): boolean {
  // encoding/json leaves a field at its zero value for null.
  if (v === null || v === undefined) return true;
  switch (shape) {
    case 'string':
      return typeof v === 'string';
    case 'boolean':
      return typeof v === 'boolean';
    case 'list':
      return Array.isArray(v);
    case 'map':
      return isMap(v);
    case 'string-map':
      return isMap(v) && Object.values(v).every((x) => typeof x === 'string' || x === null);
  }
}

const describe = (v: unknown): string =>
  Array.isArray(v)
    ? 'a list'
    : isMap(v)
      ? 'a mapping'
      : v === null
        ? 'null'
        : `${typeof v} ${JSON.stringify(v)}`;

const typeName: Record<Shape, string> = {
  string: 'a string',
  boolean: 'true or false',
  list: 'a list',
  map: 'a mapping',
  'string-map': 'a mapping of strings to strings',
};

/** The CSV's fields of the wrong type: path, what it should be and what it is. */
export function csvTypeProblems(csv: JsonMap): { path: string; expected: string; got: string }[] {
  const out: { path: string; expected: string; got: string }[] = [];
  const bad = new Set<string>();
  for (const [path, shape] of CSV_SHAPE) {
    // Below a field of the wrong type there is nothing to look at.
    if ([...bad].some((b) => path.startsWith(`${b}.`))) continue;
    const v = at(csv, path);
    if (!fits(v, shape)) {
      bad.add(path);
      out.push({ path, expected: typeName[shape], got: describe(v) });
      continue;
    }
    const elements = ELEMENT_SHAPE[path];
    if (!elements || !Array.isArray(v)) continue;
    v.forEach((item, i) => {
      for (const [field, fieldShape] of elements) {
        const value = field === '' ? item : isMap(item) ? item[field] : undefined;
        if (field !== '' && !isMap(item) && item !== null) {
          out.push({ path: `${path}[${i}]`, expected: 'a mapping', got: describe(item) });
          return;
        }
        if (!fits(value, fieldShape))
          out.push({
            path: field === '' ? `${path}[${i}]` : `${path}[${i}].${field}`,
            expected: typeName[fieldShape],
            got: describe(value),
          });
      }
    });
  }
  return out;
}

// ---- k8s.io/apimachinery name checks ---------------------------------------------------

const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/** What IsDNS1123Subdomain and IsValidLabelValue say of a name; empty when it is fine. */
export function csvNameProblems(name: string): string[] {
  const out: string[] = [];
  if (name.length > 253) out.push('must be no more than 253 characters');
  if (!DNS1123_SUBDOMAIN.test(name))
    out.push(
      "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
    );
  if (name.length > 63) out.push('must be no more than 63 characters');
  if (!LABEL_VALUE.test(name))
    out.push(
      "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
    );
  return out;
}

// ---- alm-examples -----------------------------------------------------------------------

const gvkKey = (group: string, version: string, kind: string): string => `${group}/${version}, Kind=${kind}`;

/** The group, version and kind an example or a manifest object names with apiVersion and kind. */
export function gvkOf(o: JsonMap): { group: string; version: string; kind: string } {
  const apiVersion = str(o.apiVersion);
  const slash = apiVersion.indexOf('/');
  return {
    group: slash < 0 ? '' : apiVersion.slice(0, slash),
    version: slash < 0 ? apiVersion : apiVersion.slice(slash + 1),
    kind: str(o.kind),
  };
}

/** The APIs the CSV says it provides (owned CRDs and owned API services), by GVK key. */
function providedApis(csv: JsonMap): { provided: Set<string>; badNames: string[] } {
  const provided = new Set<string>();
  const badNames: string[] = [];
  for (const owned of list(at(csv, 'spec.customresourcedefinitions.owned'))) {
    const name = str(map(owned).name);
    const dot = name.indexOf('.');
    if (dot < 0) {
      badNames.push(name);
      continue;
    }
    provided.add(gvkKey(name.slice(dot + 1), str(map(owned).version), str(map(owned).kind)));
  }
  for (const api of list(at(csv, 'spec.apiservicedefinitions.owned')))
    provided.add(gvkKey(str(map(api).group), str(map(api).version), str(map(api).kind)));
  return { provided, badNames };
}

/** Where JSON.parse stopped, as encoding/json's offset. */
function jsonProblem(text: string): string | undefined {
  try {
    JSON.parse(text);
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}

const almExamplesRule: BundleRule = {
  id: 'B-ALM-EXAMPLES',
  upstream: [...OSDK, CSV_VALIDATOR],
  suites: DEFAULT_VALIDATOR_SUITES,
  run(ctx, report) {
    const csv = ctx.csv!;
    const annotations = at(csv, 'metadata.annotations');
    const line = csvKeyLine(ctx, 'alm-examples');
    if (!isMap(annotations) || Object.keys(annotations).length === 0) {
      report({
        level: 'warning',
        message:
          'the CSV has no annotations, so no alm-examples: the console shows no example for the APIs it provides',
      });
      return;
    }
    const alm = annotations['alm-examples'];
    const olm = annotations['olm.examples'];
    if (alm === undefined && olm === undefined) {
      report({
        level: 'warning',
        message:
          'the CSV has no alm-examples annotation: the console shows no example for the APIs it provides',
      });
      return;
    }
    if (alm !== undefined && olm !== undefined)
      report({
        level: 'warning',
        message: 'the CSV has both alm-examples and olm.examples; only alm-examples is read',
        line,
      });
    const text = alm !== undefined ? alm : olm;
    if (typeof text !== 'string') return; // a type finding already
    if (text.trim() === '') {
      // operator-sdk reads an empty annotation as no examples: every provided API lacks one.
    } else {
      const problem = jsonProblem(text);
      if (problem !== undefined) {
        report({
          level: 'error',
          message: `the alm-examples annotation is not valid JSON (${problem})`,
          line,
        });
        return;
      }
    }
    const parsed: unknown = text.trim() === '' ? [] : JSON.parse(text);
    if (!Array.isArray(parsed)) {
      report({
        level: 'error',
        message: `the alm-examples annotation is ${describe(parsed)}, not a list of example objects`,
        line,
      });
      return;
    }
    const examples = new Set<string>();
    for (const [i, e] of parsed.entries()) {
      if (!isMap(e) || str(e.kind) === '') {
        report({
          level: 'error',
          message: `alm-examples[${i}] is not an object with a kind, so the examples cannot be decoded`,
          line,
        });
        return;
      }
      const g = gvkOf(e);
      examples.add(gvkKey(g.group, g.version, g.kind));
    }
    const { provided, badNames } = providedApis(csv);
    for (const name of badNames)
      report({
        level: 'error',
        message: `spec.customresourcedefinitions.owned names "${name}", which is not <plural>.<group>`,
        line: csvKeyLine(ctx, 'owned'),
      });
    for (const e of [...examples].sort())
      if (!provided.has(e))
        report({
          level: 'error',
          message: `alm-examples has an example of ${e}, which the CSV does not provide (owned CRDs and API services)`,
          line,
        });
    for (const p of [...provided].sort())
      if (!examples.has(p))
        report({
          level: 'warning',
          message: `the CSV provides ${p} but alm-examples has no example of it`,
          line,
        });
  },
};

const installModesRule: BundleRule = {
  id: 'B-INSTALL-MODES',
  upstream: [...OSDK, CSV_VALIDATOR],
  suites: DEFAULT_VALIDATOR_SUITES,
  run(ctx, report) {
    const modes = list(at(ctx.csv, 'spec.installModes')).map(map);
    const line = csvKeyLine(ctx, 'installModes');
    if (modes.length === 0) {
      report({
        level: 'error',
        message: 'the CSV has no spec.installModes: OLM cannot tell which OperatorGroups it may run in',
      });
      return;
    }
    const conversion = list(at(ctx.csv, 'spec.webhookdefinitions')).some(
      (w) => list(map(w).conversionCRDs).length > 0,
    );
    if (conversion) {
      const onlyAll = modes.every((m) =>
        m.type === 'AllNamespaces' ? m.supported === true : m.supported !== true,
      );
      if (!onlyAll)
        report({
          level: 'error',
          message:
            'the CSV has a conversion webhook (webhookdefinitions conversionCRDs), so AllNamespaces must be its only supported install mode',
          line,
        });
    }
    if (!modes.some((m) => m.supported === true))
      report({
        level: 'error',
        message: "none of the CSV's install modes is supported: OLM can install it nowhere",
        line,
      });
  },
};

const csvNameRule: BundleRule = {
  id: 'B-CSV-NAME-FORMAT',
  upstream: [...OSDK, CSV_VALIDATOR],
  suites: DEFAULT_VALIDATOR_SUITES,
  run(ctx, report) {
    const name = str(at(ctx.csv, 'metadata.name'));
    const nameProblems = csvNameProblems(name);
    if (nameProblems.length > 0)
      report({
        level: 'error',
        message: `metadata.name "${name}" is not a valid Kubernetes name and label value: ${nameProblems.join('; ')}`,
        line: csvKeyLine(ctx, 'name'),
      });
    const replaces = str(at(ctx.csv, 'spec.replaces'));
    const replacesProblems = replaces === '' ? [] : csvNameProblems(replaces);
    if (replacesProblems.length > 0)
      report({
        level: 'error',
        message: `spec.replaces "${replaces}" is not a valid CSV name: ${replacesProblems.join('; ')}`,
        line: csvKeyLine(ctx, 'replaces'),
      });
  },
};

/** blang/semver's strict Parse (no leading v, no missing parts). */
export const STRICT_SEMVER =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*)(?:\.(?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*))*))?(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$/;

const minKubeVersionRule: BundleRule = {
  id: 'B-MIN-KUBE-VERSION',
  upstream: [
    ...OSDK,
    CSV_VALIDATOR,
    'operator-sdk:OperatorHubValidator',
    'operator-sdk:OperatorHubV2Validator',
  ],
  suites: DEFAULT_VALIDATOR_SUITES,
  run(ctx, report) {
    const v = at(ctx.csv, 'spec.minKubeVersion');
    if (typeof v !== 'string' && v !== undefined && v !== null) return; // a type finding already
    const text = typeof v === 'string' ? v : '';
    if (text.trim() === '')
      report({
        level: 'warning',
        message:
          'the CSV has no spec.minKubeVersion: it says it runs on every Kubernetes version, which few operators do',
        line: csvKeyLine(ctx, 'spec'),
      });
    else if (!STRICT_SEMVER.test(text) && /^v?\d+\.\d+\.\d+/.test(text.trim()))
      // What the `catalog-bot/bundle` check's own B-MIN-KUBE-VERSION lets through (a leading v,
      // spaces) and operator-sdk refuses.
      report({
        level: 'error',
        message: `spec.minKubeVersion "${text}" is not a strict semantic version (MAJOR.MINOR.PATCH, no leading v), as operator-sdk requires`,
        line: csvKeyLine(ctx, 'minKubeVersion'),
      });
  },
};

const requiredFieldsRule: BundleRule = {
  id: 'B-CSV-REQUIRED',
  upstream: [...OSDK, CSV_VALIDATOR],
  suites: DEFAULT_VALIDATOR_SUITES,
  run(ctx, report) {
    const csv = ctx.csv!;
    const missing = (field: string, what: string, key: string): void =>
      report({
        level: 'error',
        message: `the CSV lacks ${field}, which is required (${what})`,
        line: csvKeyLine(ctx, key),
      });
    if (str(csv.apiVersion) === '') missing('apiVersion', 'operators.coreos.com/v1alpha1', 'kind');
    if (str(csv.kind) === '') missing('kind', 'ClusterServiceVersion', 'apiVersion');
    if (!isMap(csv.metadata) || Object.keys(csv.metadata).length === 0)
      missing('metadata', 'its name', 'metadata');
    const spec = csv.spec;
    if (!isMap(spec) || Object.keys(spec).length === 0) {
      missing('spec', 'what OLM installs', 'spec');
      return;
    }
    if (str(spec.displayName) === '') missing('spec.displayName', 'the name the console shows', 'spec');
    const install = spec.install;
    if (!isMap(install) || Object.keys(install).length === 0)
      missing('spec.install', 'the deployments OLM creates', 'spec');
    else {
      if (str(install.strategy) === '') missing('spec.install.strategy', 'deployment', 'install');
      const detail = install.spec;
      if (
        isMap(detail) &&
        Object.keys(detail).length > 0 &&
        (detail.deployments === undefined || detail.deployments === null)
      )
        missing('spec.install.spec.deployments', 'the deployments OLM creates', 'install');
    }
    const provider = spec.provider;
    if (
      isMap(provider) &&
      Object.values(provider).some((v) => v !== '' && v !== null && v !== undefined) &&
      str(provider.name) === ''
    )
      missing('spec.provider.name', 'who provides the operator', 'provider');
  },
};

/** Annotations OLM reads by their exact case (operator-framework/api CaseSensitiveAnnotationKeySet). */
const CASE_SENSITIVE_ANNOTATIONS = [
  'olm.operatorGroup',
  'olm.operatorNamespace',
  'olm.targetNamespaces',
  'olm.providedAPIs',
  'olm.skipRange',
];

const annotationNamesRule: BundleRule = {
  id: 'B-ANNOTATION-NAMES',
  upstream: [...OSDK, CSV_VALIDATOR],
  suites: DEFAULT_VALIDATOR_SUITES,
  run(ctx, report) {
    const annotations = map(at(ctx.csv, 'metadata.annotations'));
    for (const key of Object.keys(annotations).sort()) {
      const known = CASE_SENSITIVE_ANNOTATIONS.find((k) => k.toLowerCase() === key.toLowerCase());
      if (known && known !== key)
        report({
          level: 'error',
          message: `the CSV annotation ${key} is written in the wrong case: OLM reads only ${known}`,
          line: csvKeyLine(ctx, key),
        });
      if (key === 'olm.properties')
        report({
          level: 'warning',
          message:
            'the CSV has an olm.properties annotation: operator-sdk asks for the properties in metadata/properties.yaml instead',
          line: csvKeyLine(ctx, key),
        });
    }
  },
};

const csvTypesRule: BundleRule = {
  id: 'B-CSV-TYPES',
  upstream: [...OSDK, CSV_VALIDATOR],
  suites: DEFAULT_VALIDATOR_SUITES,
  run(ctx, report) {
    for (const p of csvTypeProblems(ctx.csv!))
      report({
        level: 'error',
        message: `the CSV's ${p.path} is ${p.got}, but it must be ${p.expected} (operator-sdk cannot read the CSV)`,
        line: csvKeyLine(
          ctx,
          p.path
            .replace(/\[\d+\]/g, '')
            .split('.')
            .pop()!,
        ),
      });
  },
};

export const CSV_RULES: BundleRule[] = [
  csvTypesRule,
  csvNameRule,
  almExamplesRule,
  installModesRule,
  minKubeVersionRule,
  requiredFieldsRule,
  annotationNamesRule,
];

/** Whether the CSV rules can read the context at all. */
export const hasCsv = (ctx: BundleContext): boolean => ctx.csv !== undefined;
