// operator-sdk's CustomResourceDefinitionValidator (operator-framework/api
// pkg/validation/internal/crd.go), which every `operator-sdk bundle validate` runs: each CRD of
// the bundle, converted to apiextensions' internal form with the API's defaults, goes through
// apiextensions' ValidateCustomResourceDefinition, and every error whose field is not under
// `openAPIV3Schema` or `status` is reported. This file holds the parts of that validation a
// bundle's CRD can break (docs/bundle-rules.md), plus two that upstream drops and the API
// server does not: a v1 CRD needs a schema for every version, and a structural one.
import {
  DEFAULT_VALIDATOR_SUITES,
  isMap,
  list,
  map,
  OSDK_FRAMEWORK,
  OSDK_OPERATORHUB,
  str,
  type BundleRule,
  type JsonMap,
} from './context.js';

const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;

const isSubdomain = (s: string): boolean => s.length <= 253 && DNS1123_SUBDOMAIN.test(s);
const isLabel1035 = (s: string): boolean => s.length <= 63 && DNS1035_LABEL.test(s);

/** apiextensions' printer column types and formats. */
const COLUMN_TYPES = ['integer', 'number', 'string', 'boolean', 'date'];
const COLUMN_FORMATS = ['int32', 'int64', 'float', 'double', 'byte', 'date', 'date-time', 'password'];
const OPENAPI_TYPES = ['array', 'boolean', 'integer', 'number', 'object', 'string'];
const CONVERSION_REVIEW_VERSIONS = ['v1', 'v1beta1'];
const API_APPROVAL = 'api-approved.kubernetes.io';

interface CrdVersion {
  name: string;
  served: boolean;
  storage: boolean;
  schema: unknown;
  subresources: unknown;
  columns: unknown[];
  deprecated: boolean;
  deprecationWarning: unknown;
}

/** A CRD as apiextensions validates it: v1 or v1beta1 converted, with the API's defaults. */
interface InternalCrd {
  apiVersion: 'v1' | 'v1beta1';
  name: string;
  annotations: JsonMap;
  group: string;
  scope: string;
  names: JsonMap;
  /** v1beta1's spec.version (v1 has none). */
  version: string;
  versions: CrdVersion[];
  topSchema: unknown;
  topSubresources: unknown;
  topColumns: unknown[];
  preserveUnknownFields: boolean;
  conversion: { strategy: string; clientConfig: unknown; reviewVersions: unknown[] } | undefined;
}

function internalCrd(o: JsonMap): InternalCrd | undefined {
  const apiVersion =
    o.apiVersion === 'apiextensions.k8s.io/v1'
      ? 'v1'
      : o.apiVersion === 'apiextensions.k8s.io/v1beta1'
        ? 'v1beta1'
        : undefined;
  if (!apiVersion) return undefined;
  const spec = map(o.spec);
  const names = { ...map(spec.names) };
  // SetDefaults_CustomResourceDefinitionSpec (both versions).
  if (str(names.singular) === '' && str(names.kind) !== '') names.singular = str(names.kind).toLowerCase();
  if (str(names.listKind) === '' && str(names.kind) !== '') names.listKind = `${str(names.kind)}List`;
  const columnKey = apiVersion === 'v1' ? 'jsonPath' : 'JSONPath';
  const column = (c: unknown): JsonMap => ({ ...map(c), JSONPath: map(c)[columnKey] });
  const versions: CrdVersion[] = list(spec.versions).map((v) => {
    const m = map(v);
    return {
      name: str(m.name),
      served: m.served === true,
      storage: m.storage === true,
      schema: map(m.schema).openAPIV3Schema,
      subresources: m.subresources,
      columns: list(m.additionalPrinterColumns).map(column),
      deprecated: m.deprecated === true,
      deprecationWarning: m.deprecationWarning,
    };
  });
  let version = '';
  if (apiVersion === 'v1beta1') {
    version = str(spec.version);
    // v1beta1 defaults: spec.version alone is the one served, stored version.
    if (versions.length === 0 && version !== '')
      versions.push({
        name: version,
        served: true,
        storage: true,
        schema: undefined,
        subresources: undefined,
        columns: [],
        deprecated: false,
        deprecationWarning: undefined,
      });
    if (version === '' && versions.length > 0) version = versions[0]!.name;
  }
  const conversionIn = spec.conversion === undefined ? undefined : map(spec.conversion);
  let conversion: InternalCrd['conversion'];
  if (conversionIn) {
    const strategy = str(conversionIn.strategy) || 'None';
    if (apiVersion === 'v1') {
      const webhook = conversionIn.webhook === undefined ? undefined : map(conversionIn.webhook);
      conversion = {
        strategy,
        clientConfig: webhook?.clientConfig,
        reviewVersions: list(webhook?.conversionReviewVersions),
      };
    } else {
      const reviewVersions = list(conversionIn.conversionReviewVersions);
      conversion = {
        strategy,
        clientConfig: conversionIn.webhookClientConfig,
        // v1beta1 defaults a webhook's review versions to its own.
        reviewVersions: reviewVersions.length === 0 && strategy === 'Webhook' ? ['v1beta1'] : reviewVersions,
      };
    }
  }
  return {
    apiVersion,
    name: str(map(o.metadata).name),
    annotations: map(map(o.metadata).annotations),
    group: str(spec.group),
    scope: str(spec.scope),
    names,
    version,
    versions,
    topSchema: apiVersion === 'v1beta1' ? map(spec.validation).openAPIV3Schema : undefined,
    topSubresources: apiVersion === 'v1beta1' ? spec.subresources : undefined,
    topColumns: apiVersion === 'v1beta1' ? list(spec.additionalPrinterColumns).map(column) : [],
    // v1beta1 defaults preserveUnknownFields to true; v1's is false unless set.
    preserveUnknownFields:
      apiVersion === 'v1beta1' ? spec.preserveUnknownFields !== false : spec.preserveUnknownFields === true,
    conversion,
  };
}

/** apiextensions' checks of names (ValidateCustomResourceDefinitionNames and the required ones). */
function namesProblems(names: JsonMap): string[] {
  const out: string[] = [];
  for (const key of ['plural', 'singular', 'kind', 'listKind'])
    if (str(names[key]) === '') out.push(`spec.names.${key}: Required value`);
  const plural = str(names.plural);
  const singular = str(names.singular);
  const kind = str(names.kind);
  const listKind = str(names.listKind);
  if (plural !== '' && !isLabel1035(plural))
    out.push(`spec.names.plural: Invalid value "${plural}": not a lowercase RFC 1035 label`);
  if (singular !== '' && !isLabel1035(singular))
    out.push(`spec.names.singular: Invalid value "${singular}": not a lowercase RFC 1035 label`);
  if (kind !== '' && !isLabel1035(kind.toLowerCase()))
    out.push(
      `spec.names.kind: Invalid value "${kind}": may have mixed case, but should otherwise be an RFC 1035 label`,
    );
  if (listKind !== '' && !isLabel1035(listKind.toLowerCase()))
    out.push(
      `spec.names.listKind: Invalid value "${listKind}": may have mixed case, but should otherwise be an RFC 1035 label`,
    );
  if (kind !== '' && kind === listKind)
    out.push('spec.names.listKind: kind and listKind may not be the same');
  for (const key of ['shortNames', 'categories'])
    for (const [i, n] of list(names[key]).entries())
      if (typeof n !== 'string' || !isLabel1035(n))
        out.push(
          `spec.names.${key}[${i}]: Invalid value ${JSON.stringify(n)}: not a lowercase RFC 1035 label`,
        );
  return out;
}

function conversionProblems(crd: InternalCrd): string[] {
  const c = crd.conversion;
  if (!c) return [];
  const out: string[] = [];
  const where = crd.apiVersion === 'v1' ? 'spec.conversion.webhook' : 'spec.conversion';
  if (c.strategy !== 'None' && crd.preserveUnknownFields)
    out.push(
      `spec.conversion.strategy: Invalid value "${c.strategy}": must be None if spec.preserveUnknownFields is true`,
    );
  if (c.strategy !== 'None' && c.strategy !== 'Webhook') {
    out.push(
      `spec.conversion.strategy: Unsupported value "${c.strategy}": supported values: "None", "Webhook"`,
    );
    return out;
  }
  if (c.strategy === 'Webhook') {
    const clientConfig = crd.apiVersion === 'v1' ? `${where}.clientConfig` : `${where}.webhookClientConfig`;
    if (c.clientConfig === undefined || c.clientConfig === null)
      out.push(`${clientConfig}: Required value: required when strategy is set to Webhook`);
    else if ((map(c.clientConfig).url === undefined) === (map(c.clientConfig).service === undefined))
      out.push(`${clientConfig}: Required value: exactly one of url or service is required`);
    const reviewPath = `${where}.conversionReviewVersions`;
    if (c.reviewVersions.length === 0) out.push(`${reviewPath}: Required value`);
    else {
      const seen = new Set<unknown>();
      for (const [i, v] of c.reviewVersions.entries()) {
        if (seen.has(v))
          out.push(`${reviewPath}[${i}]: Invalid value ${JSON.stringify(v)}: duplicate version`);
        else if (typeof v !== 'string' || !isLabel1035(v))
          out.push(`${reviewPath}[${i}]: Invalid value ${JSON.stringify(v)}: not a lowercase RFC 1035 label`);
        seen.add(v);
      }
      if (!c.reviewVersions.some((v) => CONVERSION_REVIEW_VERSIONS.includes(str(v))))
        out.push(`${reviewPath}: Invalid value: must include at least one of v1, v1beta1`);
    }
  } else {
    if (c.clientConfig !== undefined && c.clientConfig !== null)
      out.push(`${where}: Forbidden: should not be set when strategy is not set to Webhook`);
    else if (c.reviewVersions.length > 0)
      out.push(
        `${where}.conversionReviewVersions: Forbidden: should not be set when strategy is not set to Webhook`,
      );
  }
  return out;
}

function subresourceProblems(subresources: unknown, path: string): string[] {
  const scale = map(subresources).scale;
  if (!isMap(scale)) return [];
  const out: string[] = [];
  const simple = (p: string): boolean => /^\.[^.[\]]/.test(p) && !p.endsWith('.');
  const spec = str(scale.specReplicasPath);
  const status = str(scale.statusReplicasPath);
  if (spec === '') out.push(`${path}.scale.specReplicasPath: Required value`);
  else if (!simple(spec) || !spec.startsWith('.spec.'))
    out.push(`${path}.scale.specReplicasPath: Invalid value "${spec}": should be a json path under .spec`);
  if (status === '') out.push(`${path}.scale.statusReplicasPath: Required value`);
  else if (!simple(status) || !status.startsWith('.status.'))
    out.push(
      `${path}.scale.statusReplicasPath: Invalid value "${status}": should be a json path under .status`,
    );
  const selector = str(scale.labelSelectorPath);
  if (selector !== '' && (!simple(selector) || !/^\.(spec|status)\./.test(selector)))
    out.push(
      `${path}.scale.labelSelectorPath: Invalid value "${selector}": should be a json path under either .spec or .status`,
    );
  return out;
}

function columnProblems(columns: unknown[], path: string): string[] {
  const out: string[] = [];
  for (const [i, col] of columns.entries()) {
    const c = map(col);
    const at = `${path}[${i}]`;
    if (str(c.name) === '') out.push(`${at}.name: Required value`);
    if (str(c.type) === '') out.push(`${at}.type: Required value: must be one of ${COLUMN_TYPES.join(',')}`);
    else if (!COLUMN_TYPES.includes(str(c.type)))
      out.push(`${at}.type: Invalid value "${str(c.type)}": must be one of ${COLUMN_TYPES.join(',')}`);
    if (str(c.format) !== '' && !COLUMN_FORMATS.includes(str(c.format)))
      out.push(`${at}.format: Invalid value "${str(c.format)}": must be one of ${COLUMN_FORMATS.join(',')}`);
    if (str(c.JSONPath) === '') out.push(`${at}.jsonPath: Required value`);
  }
  return out;
}

/** Most schema nodes a structural walk visits: a bound on a hostile schema's cost. */
const MAX_SCHEMA_NODES = 200_000;

/**
 * The basics of a structural schema (what the API server requires of a v1 CRD): an object at
 * the root, a known type on every node under properties, additionalProperties and items
 * (except int-or-string and preserve-unknown-fields nodes), and items for every array.
 */
export function structuralProblems(schema: unknown, path: string): string[] {
  const out: string[] = [];
  if (!isMap(schema)) return [`${path}: Required value: a v1 CRD needs a schema`];
  if (schema.type !== 'object') out.push(`${path}.type: must be object at the root`);
  // Each node with where it hangs; its path is spelt out only when it has a problem.
  interface Step {
    node: unknown;
    parent: Step | undefined;
    /** A property name, or the path piece itself when `property` is false. */
    key: string;
    property: boolean;
  }
  const pathOf = (s: Step): string => {
    const keys: string[] = [];
    for (let x: Step | undefined = s; x; x = x.parent)
      keys.push(x.property ? `.properties[${x.key}]` : x.key);
    return keys.reverse().join('');
  };
  const stack: Step[] = [{ node: schema, parent: undefined, key: path, property: false }];
  let budget = MAX_SCHEMA_NODES;
  while (stack.length > 0 && out.length < 20) {
    const step = stack.pop()!;
    const node = step.node;
    if (!isMap(node)) continue;
    const type = node.type;
    const exempt =
      node['x-kubernetes-int-or-string'] === true || node['x-kubernetes-preserve-unknown-fields'] === true;
    if (type === undefined || type === '') {
      if (!exempt) out.push(`${pathOf(step)}.type: Required value: must not be empty for specified fields`);
    } else if (typeof type !== 'string' || !OPENAPI_TYPES.includes(type))
      out.push(
        `${pathOf(step)}.type: Unsupported value ${JSON.stringify(type)}: supported values: ${OPENAPI_TYPES.join(', ')}`,
      );
    if (type === 'array' && node.items === undefined)
      out.push(`${pathOf(step)}.items: Required value: must be specified`);
    // for...in, not Object.entries: no array of every key of a huge map before the budget stops it.
    if (isMap(node.properties))
      for (const k in node.properties) {
        if (budget-- <= 0) break;
        stack.push({ node: node.properties[k], parent: step, key: k, property: true });
      }
    if (isMap(node.additionalProperties) && budget-- > 0)
      stack.push({
        node: node.additionalProperties,
        parent: step,
        key: '.additionalProperties',
        property: false,
      });
    if (isMap(node.items) && budget-- > 0)
      stack.push({ node: node.items, parent: step, key: '.items', property: false });
  }
  return out;
}

/** apiextensions' verdicts on one CRD, as `field: problem` lines. */
export function crdProblems(o: JsonMap): string[] {
  const crd = internalCrd(o);
  if (!crd) return [];
  const out: string[] = [];
  const required = `${str(crd.names.plural)}.${crd.group}`;
  if (crd.name === '') out.push('metadata.name: Required value: name or generateName is required');
  else {
    if (!isSubdomain(crd.name))
      out.push(`metadata.name: Invalid value "${crd.name}": not a lowercase RFC 1123 subdomain`);
    if (crd.name !== required)
      out.push(
        `metadata.name: Invalid value "${crd.name}": must be spec.names.plural+"."+spec.group ("${required}")`,
      );
  }
  if (crd.group === '') out.push('spec.group: Required value');
  else if (!isSubdomain(crd.group))
    out.push(`spec.group: Invalid value "${crd.group}": not a lowercase RFC 1123 subdomain`);
  else if (!crd.group.includes('.'))
    out.push(`spec.group: Invalid value "${crd.group}": should be a domain with at least one dot`);
  if (crd.scope === '') out.push('spec.scope: Required value');
  else if (crd.scope !== 'Cluster' && crd.scope !== 'Namespaced')
    out.push(`spec.scope: Unsupported value "${crd.scope}": supported values: "Cluster", "Namespaced"`);
  if (crd.preserveUnknownFields)
    out.push(
      'spec.preserveUnknownFields: Invalid value: true: cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead' +
        (crd.apiVersion === 'v1beta1' ? ' (v1beta1 defaults it to true: set it to false)' : ''),
    );

  const names = new Set<string>();
  let duplicate = false;
  for (const [i, v] of crd.versions.entries()) {
    if (names.has(v.name)) duplicate = true;
    names.add(v.name);
    if (!isLabel1035(v.name))
      out.push(`spec.versions[${i}].name: Invalid value "${v.name}": not a lowercase RFC 1035 label`);
    if (v.deprecationWarning !== undefined && v.deprecationWarning !== null && !v.deprecated)
      out.push(
        `spec.versions[${i}].deprecationWarning: Invalid value: can only be set for deprecated versions`,
      );
    out.push(...subresourceProblems(v.subresources, `spec.versions[${i}].subresources`));
    out.push(...columnProblems(v.columns, `spec.versions[${i}].additionalPrinterColumns`));
  }
  if (duplicate) out.push('spec.versions: Invalid value: must contain unique version names');
  if (crd.versions.filter((v) => v.storage).length !== 1)
    out.push(
      `spec.versions: Invalid value: must have exactly one version marked as storage version${crd.versions.length === 0 ? ' (it has no version)' : ''}`,
    );
  if (crd.apiVersion === 'v1beta1' && crd.version !== '') {
    if (!isLabel1035(crd.version))
      out.push(`spec.version: Invalid value "${crd.version}": not a lowercase RFC 1035 label`);
    if (crd.versions.length > 0 && crd.versions[0]!.name !== crd.version)
      out.push(`spec.version: Invalid value "${crd.version}": must match the first version in spec.versions`);
  }
  if (crd.topSchema !== undefined && crd.versions.some((v) => v.schema !== undefined))
    out.push('spec.validation: Forbidden: top-level and per-version schemas are mutually exclusive');
  if (crd.topSubresources !== undefined && crd.versions.some((v) => v.subresources !== undefined))
    out.push('spec.subresources: Forbidden: top-level and per-version subresources are mutually exclusive');
  if (crd.topColumns.length > 0 && crd.versions.some((v) => v.columns.length > 0))
    out.push(
      'spec.additionalPrinterColumns: Forbidden: top-level and per-version additionalPrinterColumns are mutually exclusive',
    );
  out.push(...subresourceProblems(crd.topSubresources, 'spec.subresources'));
  out.push(...columnProblems(crd.topColumns, 'spec.additionalPrinterColumns'));
  out.push(...namesProblems(crd.names));
  out.push(...conversionProblems(crd));

  const group = crd.group;
  if (
    (group === 'k8s.io' ||
      group === 'kubernetes.io' ||
      group.endsWith('.k8s.io') ||
      group.endsWith('.kubernetes.io')) &&
    str(crd.annotations[API_APPROVAL]) === ''
  )
    out.push(
      `metadata.annotations[${API_APPROVAL}]: Required value: protected groups must have approval annotation "${API_APPROVAL}", see https://github.com/kubernetes/enhancements/pull/1111`,
    );

  // Stricter than operator-sdk, which drops every error under openAPIV3Schema: the API server
  // refuses a v1 CRD without a schema or with a non-structural one, so OLM cannot install it.
  if (crd.apiVersion === 'v1')
    for (const [i, v] of crd.versions.entries())
      out.push(...structuralProblems(v.schema, `spec.versions[${i}].schema.openAPIV3Schema`));
  return out;
}

/** The upstream checks B-CRD-DEFINITION's findings stand for. */
const CRD_UPSTREAM = [OSDK_OPERATORHUB, OSDK_FRAMEWORK, 'operator-sdk:CustomResourceDefinitionValidator'];

const crdDefinitionRule: BundleRule = {
  id: 'B-CRD-DEFINITION',
  upstream: CRD_UPSTREAM,
  suites: DEFAULT_VALIDATOR_SUITES,
  run(ctx, report) {
    for (const { value: o, path, line } of ctx.objects) {
      if (o.kind !== 'CustomResourceDefinition') continue;
      const name = str(map(o.metadata).name) || '(no name)';
      for (const problem of crdProblems(o))
        report({
          level: 'error',
          message: `${path}: CRD ${name}: ${problem}`,
          file: `${ctx.dir}/${path}`,
          line,
        });
    }
  },
};

export const CRD_RULES: BundleRule[] = [crdDefinitionRule];
