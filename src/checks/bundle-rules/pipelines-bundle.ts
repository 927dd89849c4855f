// operator-pipelines' static tests on one bundle (operatorcert/static_tests/common/bundle.py,
// community/bundle.py, isv/bundle.py), with the verdicts they give (docs/bundle-rules.md).
// Tests marked skip_fbc there run only for packages whose ci.yaml has no `fbc.enabled: true`.
import {
  at,
  COMMON_SUITES,
  csvKeyLine,
  isMap,
  list,
  map,
  str,
  type BundleContext,
  type BundleRule,
  type JsonMap,
} from './context.js';
import { CAPABILITIES, ICON_MEDIATYPES } from './operatorhub.js';
import { OCP_TO_K8S, parseMinor } from './removed-apis.js';
import { parseDocument } from 'yaml';

const PIPELINES = 'operator-pipelines:';

/** Whether the package is released from templates (ci.yaml `fbc.enabled`): skip_fbc tests stay silent. */
export const fbcEnabled = (ctx: BundleContext): boolean => map(ctx.ciYaml?.fbc).enabled === true;

// ---- check_required_fields (community/bundle.py, community/validations.py) -------------

/** operator-pipelines' own category list (community/validations.py). */
const PIPELINES_CATEGORIES = [
  'AI/Machine Learning',
  'Application Runtime',
  'Big Data',
  'Cloud Provider',
  'Developer Tools',
  'Database',
  'Drivers and plugins',
  'Integration & Delivery',
  'Logging & Tracing',
  'Modernization & Migration',
  'Monitoring',
  'Networking',
  'OpenShift Optional',
  'Security',
  'Storage',
  'Streaming & Messaging',
];

/** Python's re.match: anchored at the start only; `.` stops at a line break unless dotAll. */
const starts = (pattern: string, dotAll = false): ((v: unknown) => boolean) => {
  const re = new RegExp(`^(?:${pattern})`, dotAll ? 's' : '');
  return (v) => re.test(pyStr(v));
};

/** Python's str() of a YAML value, for the regex tests. */
function pyStr(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v === true) return 'True';
  if (v === false) return 'False';
  if (v === null) return 'None';
  if (v instanceof Date) return v.toISOString();
  return typeof v === 'object' ? JSON.stringify(v) : String(v);
}

/** dateutil's isoparse, for the forms CSVs use: a date, optionally a time and a zone. */
const ISO_TIMESTAMP =
  /^\d{4}(-?\d{2}(-?\d{2}([T ]\d{2}(:?\d{2}(:?\d{2}([.,]\d+)?)?)?\s*(Z|[+-]\d{2}(:?\d{2})?)?)?)?)?$/;

/** python-semver Version.parse: strict semantic version. */
const SEMVER =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/;

/** A list of maps, each with these string fields (more fields are fine). */
const listOfMaps =
  (...fields: string[]) =>
  (v: unknown): v is JsonMap[] =>
    Array.isArray(v) && v.every((i) => isMap(i) && fields.every((f) => typeof i[f] === 'string'));

/** Python's b64decode(validate=True) of the data with all whitespace removed. */
function isBase64(data: string): boolean {
  const s = data.replace(/\s+/g, '');
  return s.length >= 4 && s.length % 4 === 0 && /^[A-Za-z0-9+/]*={0,2}$/.test(s);
}

const REQUIRED_FIELDS: [string, (v: unknown) => boolean, boolean][] = [
  ['metadata.annotations.capabilities', (v) => typeof v === 'string' && CAPABILITIES.includes(v), false],
  [
    'metadata.annotations.categories',
    (v) =>
      pyStr(v)
        .split(',')
        .every((c) => PIPELINES_CATEGORIES.includes(c.trim())),
    false,
  ],
  ['metadata.annotations.containerImage', starts('([^/]+/){1,}[^/:]+:.+'), false],
  ['metadata.annotations.createdAt', (v) => v instanceof Date || ISO_TIMESTAMP.test(pyStr(v).trim()), false],
  ['metadata.annotations.repository', starts('https?://.+'), false],
  ['metadata.annotations.support', starts('.{3,}', true), false],
  ['metadata.annotations.description', starts('.{10,}', true), false],
  ['spec.displayName', starts('.{3,50}'), true],
  ['spec.description', starts('.{20,}', true), true],
  [
    'spec.icon',
    (v) =>
      listOfMaps('base64data', 'mediatype')(v) &&
      v.length > 0 &&
      v.every((i) => isBase64(i.base64data as string) && ICON_MEDIATYPES.includes(i.mediatype as string)),
    true,
  ],
  ['spec.version', (v) => typeof v === 'string' && SEMVER.test(v), true],
  ['spec.maintainers', (v) => listOfMaps('name', 'email')(v) && v.length > 0, true],
  ['spec.provider.name', starts('.{3,}'), true],
  ['spec.links', (v) => listOfMaps('name', 'url')(v) && v.length > 0, true],
  ['spec.keywords', (v) => Array.isArray(v) && v.length > 0 && v.every((k) => typeof k === 'string'), false],
];

const requiredFieldsRule: BundleRule = {
  id: 'B-REQUIRED-FIELDS',
  upstream: [`${PIPELINES}check_required_fields`],
  suites: ['community'],
  run(ctx, report) {
    for (const [field, valid, fatal] of REQUIRED_FIELDS) {
      const value = at(ctx.csv, field);
      const key = field.split('.').pop()!;
      if (value === undefined || value === null)
        report({
          level: fatal ? 'error' : 'warning',
          message: `the CSV does not define ${field}`,
          line: csvKeyLine(
            ctx,
            field.startsWith('metadata.annotations') ? 'annotations' : field.split('.')[1]!,
          ),
        });
      else if (!valid(value))
        report({
          level: fatal ? 'error' : 'warning',
          message: `the CSV has an invalid value for ${field}`,
          line: csvKeyLine(ctx, key),
        });
    }
  },
};

// ---- check_api_version_constraints (community/bundle.py, skip_fbc) -----------------------

const minorText = (v: [number, number]): string => `${v[0]}.${v[1]}`;

const apiVersionConstraintsRule: BundleRule = {
  id: 'B-OCP-KUBE-CONSTRAINTS',
  upstream: [`${PIPELINES}check_api_version_constraints`],
  suites: ['community'],
  run(ctx, report) {
    if (fbcEnabled(ctx)) return;
    const minKube = at(ctx.csv, 'spec.minKubeVersion');
    if (minKube === undefined || minKube === null || minKube === '') return;
    const k8sMin =
      typeof minKube === 'string' ? parseMinor(minKube.trim().split('-')[0]!.split('+')[0]!) : undefined;
    const line = csvKeyLine(ctx, 'minKubeVersion');
    if (!k8sMin) {
      report({ level: 'error', message: `minKubeVersion "${pyStr(minKube)}" is not a version`, line });
      return;
    }
    const selector = ctx.annotations['com.redhat.openshift.versions'];
    const annotationsFile = `${ctx.dir}/metadata/annotations.yaml`;
    if (typeof selector !== 'string' || selector.trim() === '') {
      report({
        level: 'error',
        message: `minKubeVersion is ${minKube} but com.redhat.openshift.versions is not set, so the bundle would go to OpenShift versions older than that Kubernetes`,
        line,
      });
      return;
    }
    const known = OCP_TO_K8S.map(([o, k]) => ({ ocp: parseMinor(o)!, k8s: parseMinor(k)! }));
    const cmp = (a: [number, number], b: [number, number]): number => a[0] - b[0] || a[1] - b[1];
    const s = selector.trim();
    let selected: typeof known | undefined;
    if (s.includes('-')) {
      const [a, b] = s.split('-', 2).map(parseMinor);
      if (a && b) selected = known.filter((x) => cmp(x.ocp, a) >= 0 && cmp(x.ocp, b) <= 0);
    } else if (s.includes(',')) {
      const versions = s.split(',').map(parseMinor);
      if (versions.every((v) => v)) {
        const sorted = (versions as [number, number][]).sort(cmp);
        const set = new Set(sorted.map(minorText));
        if (!(set.size === 2 && set.has('4.5') && set.has('4.6')))
          report({
            level: 'warning',
            message:
              'a comma-separated list in com.redhat.openshift.versions is only meant for v4.5,v4.6; write a range like v4.12-v4.15 or v4.12',
            file: annotationsFile,
          });
        selected = known.filter((x) => cmp(x.ocp, sorted[0]!) >= 0);
      }
    } else if (s.startsWith('=')) {
      const v = parseMinor(s.slice(1));
      if (v) {
        const below = known.filter((x) => cmp(x.ocp, v) <= 0);
        selected = [below.length > 0 ? below[below.length - 1]! : known[0]!];
      }
    } else {
      const v = parseMinor(s);
      if (v) selected = known.filter((x) => cmp(x.ocp, v) >= 0);
    }
    if (!selected) {
      report({
        level: 'error',
        message: `com.redhat.openshift.versions "${s}" is not a version range`,
        file: annotationsFile,
      });
      return;
    }
    const conflicting = selected.filter((x) => cmp(x.k8s, k8sMin) < 0).map((x) => minorText(x.ocp));
    if (conflicting.length > 0)
      report({
        level: 'error',
        message: `OpenShift ${conflicting.join(',')} (in com.redhat.openshift.versions "${s}") run a Kubernetes older than minKubeVersion ${minKube}`,
        file: annotationsFile,
      });
  },
};

// ---- check_network_policy_presence (common/bundle.py) ------------------------------------

const networkPolicyRule: BundleRule = {
  id: 'B-NETWORK-POLICY',
  upstream: [`${PIPELINES}check_network_policy_presence`],
  suites: COMMON_SUITES,
  run(ctx, report) {
    const seen = new Set<string>();
    for (const { value: o, path, line } of ctx.objects) {
      // The pipeline reads one document per .yaml/.yml file.
      if (seen.has(path) || !/\.ya?ml$/.test(path)) continue;
      seen.add(path);
      if (o.kind === 'NetworkPolicy' && str(o.apiVersion).startsWith('networking.k8s.io/'))
        report({
          level: 'error',
          message: `${path} is a NetworkPolicy: OLM cannot install or manage network policies, so the bundle would be rejected`,
          file: `${ctx.dir}/${path}`,
          line,
        });
    }
  },
};

// ---- release-config.yaml (common/bundle.py) ----------------------------------------------

function releaseConfig(ctx: BundleContext): { value: unknown; file: string } | undefined {
  const data = ctx.files.get('release-config.yaml');
  if (!data) return undefined;
  const doc = parseDocument(data.toString('utf8'));
  return { value: doc.errors.length > 0 ? undefined : doc.toJS(), file: `${ctx.dir}/release-config.yaml` };
}

const SEMVER_CHANNELS = ['Fast', 'Candidate', 'Stable'];

const releaseConfigRule: BundleRule = {
  id: 'B-RELEASE-CONFIG-CI',
  upstream: [`${PIPELINES}check_bundle_release_config`],
  suites: COMMON_SUITES,
  run(ctx, report) {
    const config = releaseConfig(ctx);
    if (!config || !config.value) return;
    const file = config.file;
    if (!fbcEnabled(ctx)) {
      report({
        level: 'error',
        message:
          "the bundle has a release-config.yaml but the package's ci.yaml does not enable FBC (fbc.enabled): nothing would release it",
        file,
      });
      return;
    }
    const mapping = new Map(
      list(map(ctx.ciYaml?.fbc).catalog_mapping).map((m) => [str(map(m).template_name), map(m)] as const),
    );
    for (const t of list(map(config.value).catalog_templates)) {
      const name = str(map(t).template_name);
      const entry = mapping.get(name);
      if (!entry)
        report({
          level: 'error',
          message: `release-config.yaml names the catalog template "${name}", which ci.yaml fbc.catalog_mapping does not map to any catalog`,
          file,
        });
      else if (entry.type === 'olm.semver') {
        const channels = list(map(t).channels);
        if (!channels.every((c) => SEMVER_CHANNELS.includes(c as string)))
          report({
            level: 'error',
            message: `release-config.yaml puts the bundle in channels ${JSON.stringify(channels)} of the semver template "${name}", which has only ${SEMVER_CHANNELS.join(', ')}`,
            file,
          });
      }
    }
  },
};

/** What release-config-schema.json allows, checked field by field. */
export function releaseConfigSchemaProblems(value: unknown): string[] {
  const out: string[] = [];
  if (!isMap(value)) return ['it is not a mapping'];
  for (const key of Object.keys(value))
    if (key !== 'merge' && key !== 'catalog_templates') out.push(`unknown field "${key}"`);
  if ('merge' in value && typeof value.merge !== 'boolean') out.push('merge must be true or false');
  const templates = value.catalog_templates;
  if (templates === undefined) {
    out.push('catalog_templates is required');
    return out;
  }
  if (!Array.isArray(templates)) return [...out, 'catalog_templates must be a list'];
  if (templates.length === 0) out.push('catalog_templates must have at least one entry');
  if (new Set(templates.map((t) => JSON.stringify(t))).size !== templates.length)
    out.push('catalog_templates has the same entry twice');
  for (const [i, t] of templates.entries()) {
    const where = `catalog_templates[${i}]`;
    if (!isMap(t)) {
      out.push(`${where} must be a mapping`);
      continue;
    }
    for (const f of ['template_name', 'channels']) if (!(f in t)) out.push(`${where}.${f} is required`);
    for (const f of ['template_name', 'defaultChannel', 'replaces', 'skipRange'])
      if (f in t && typeof t[f] !== 'string') out.push(`${where}.${f} must be a string`);
    for (const f of ['channels', 'skips']) {
      if (!(f in t)) continue;
      const v = t[f];
      if (!Array.isArray(v) || !v.every((x) => typeof x === 'string'))
        out.push(`${where}.${f} must be a list of strings`);
      else if (v.length === 0) out.push(`${where}.${f} must not be empty`);
      else if (new Set(v).size !== v.length) out.push(`${where}.${f} has the same value twice`);
    }
  }
  return out;
}

const releaseConfigSchemaRule: BundleRule = {
  id: 'B-RELEASE-CONFIG-SCHEMA',
  upstream: [`${PIPELINES}check_validate_schema_bundle_release_config`],
  suites: COMMON_SUITES,
  run(ctx, report) {
    const data = ctx.files.get('release-config.yaml');
    if (!data) return;
    const file = `${ctx.dir}/release-config.yaml`;
    const doc = parseDocument(data.toString('utf8'));
    if (doc.errors.length > 0) {
      report({
        level: 'error',
        message: `release-config.yaml is not YAML: ${doc.errors[0]!.message.split('\n')[0]}`,
        file,
      });
      return;
    }
    const value: unknown = doc.toJS();
    if (value === null || value === undefined) return; // an empty file counts as none
    for (const p of releaseConfigSchemaProblems(value))
      report({ level: 'error', message: `release-config.yaml does not follow its schema: ${p}`, file });
  },
};

// ---- check_using_fbc (community/bundle.py, skip_fbc) --------------------------------------

const usingFbcRule: BundleRule = {
  id: 'B-USING-FBC',
  upstream: [`${PIPELINES}check_using_fbc`],
  suites: ['community'],
  run(ctx, report) {
    if (fbcEnabled(ctx)) return;
    const others = (ctx.packageBundles ?? []).filter((b) => b.version !== ctx.version);
    report({
      level: 'warning',
      message:
        others.length > 0
          ? `${ctx.package} is not released from catalog templates (ci.yaml fbc.enabled): consider migrating to file-based catalogs`
          : `${ctx.package} is a new package not released from catalog templates: new operators should start with file-based catalogs (ci.yaml fbc.enabled)`,
      file: ctx.dir,
    });
  },
};

// ---- isv/bundle.py -------------------------------------------------------------------------

const prunedGraphRule: BundleRule = {
  id: 'B-PRUNED-GRAPH',
  upstream: [`${PIPELINES}check_pruned_graph`],
  suites: ['isv'],
  run(ctx, report) {
    if (fbcEnabled(ctx)) return;
    const replaces = at(ctx.csv, 'spec.replaces');
    const skipRange = map(at(ctx.csv, 'metadata.annotations'))['olm.skipRange'];
    if (!skipRange || replaces) return;
    const channels = str(ctx.annotations['operators.operatorframework.io.bundle.channels.v1'])
      .split(',')
      .map((c) => c.trim());
    for (const channel of new Set(channels)) {
      const inChannel = (ctx.packageBundles ?? []).filter((b) =>
        str(b.annotations['operators.operatorframework.io.bundle.channels.v1'])
          .split(',')
          .map((c) => c.trim())
          .includes(channel),
      );
      if (inChannel.length !== 1)
        report({
          level: 'warning',
          message: `the CSV has olm.skipRange but no spec.replaces: adding it to channel ${channel} can prune the update graph`,
          line: csvKeyLine(ctx, 'olm.skipRange'),
        });
    }
  },
};

const marketplaceRule: BundleRule = {
  id: 'B-MARKETPLACE',
  upstream: [`${PIPELINES}check_marketplace_annotation`],
  suites: ['isv'],
  run(ctx, report) {
    if (ctx.organization !== 'redhat-marketplace') return;
    const pkg = str(ctx.annotations['operators.operatorframework.io.bundle.package.v1']);
    const annotations = map(at(ctx.csv, 'metadata.annotations'));
    for (const [key, page] of [
      ['marketplace.openshift.io/remote-workflow', 'pricing'],
      ['marketplace.openshift.io/support-workflow', 'support'],
    ] as const) {
      const expected = `https://marketplace.redhat.com/en-us/operators/${pkg}/${page}?utm_source=openshift_console`;
      if (annotations[key] !== expected)
        report({
          level: 'error',
          message: `the CSV annotation ${key} is ${JSON.stringify(annotations[key] ?? null)}, but it must be ${expected}`,
          line: csvKeyLine(ctx, key),
        });
    }
  },
};

export const PIPELINES_BUNDLE_RULES: BundleRule[] = [
  requiredFieldsRule,
  apiVersionConstraintsRule,
  networkPolicyRule,
  releaseConfigRule,
  releaseConfigSchemaRule,
  usingFbcRule,
  prunedGraphRule,
  marketplaceRule,
];
