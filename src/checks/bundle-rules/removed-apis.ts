// Kubernetes APIs a bundle uses that Kubernetes removed (operator-framework/api
// pkg/validation/internal/removed_apis.go: AlphaDeprecatedAPIsValidator, also run inside the
// OperatorHub validators), judged for the Kubernetes version the bundle's OpenShift range
// implies, as operator-pipelines passes it (`--optional-values=k8s-version=`, from the newest
// OpenShift index the range selects). docs/bundle-rules.md says how the range is read.
import {
  at,
  DEFAULT_VALIDATOR_SUITES,
  list,
  map,
  OSDK_FRAMEWORK,
  OSDK_OPERATORHUB,
  str,
  type BundleContext,
  type BundleRule,
} from './context.js';
import { gvkOf, STRICT_SEMVER } from './csv.js';

/**
 * OpenShift minor -> Kubernetes minor, the table operator-pipelines keeps
 * (static_tests/community/bundle.py OCP_TO_K8S): a newer OpenShift than the table knows maps
 * to the newest entry, as there.
 */
export const OCP_TO_K8S: [string, string][] = [
  ['4.1', '1.13'],
  ['4.2', '1.14'],
  ['4.3', '1.16'],
  ['4.4', '1.17'],
  ['4.5', '1.18'],
  ['4.6', '1.19'],
  ['4.7', '1.20'],
  ['4.8', '1.21'],
  ['4.9', '1.22'],
  ['4.10', '1.23'],
  ['4.11', '1.24'],
  ['4.12', '1.25'],
  ['4.13', '1.26'],
  ['4.14', '1.27'],
  ['4.15', '1.28'],
  ['4.16', '1.29'],
  ['4.17', '1.30'],
];

type Minor = [number, number];

/** `v4.12`, `4.12`, `4.12.3` -> [4, 12]; undefined when it is not a version. */
export function parseMinor(s: string): Minor | undefined {
  const m = /^\s*v?(\d+)(?:\.(\d+))?(?:\.\d+)?\s*$/.exec(s);
  return m ? [Number(m[1]), Number(m[2] ?? 0)] : undefined;
}

const cmp = (a: Minor, b: Minor): number => a[0] - b[0] || a[1] - b[1];

/** The Kubernetes minor of an OpenShift minor (the closest known one at or below it). */
export function ocpToK8s(ocp: string): string {
  const v = parseMinor(ocp);
  if (!v) return OCP_TO_K8S[OCP_TO_K8S.length - 1]![1];
  let best = OCP_TO_K8S[0]!;
  for (const row of OCP_TO_K8S) if (cmp(parseMinor(row[0])!, v) <= 0) best = row;
  return best[1];
}

/**
 * The indexes a `com.redhat.openshift.versions` value selects, as the certification API reads
 * it: `v4.12` (that and later), `v4.12-v4.15` (a closed range), `=v4.12` (that one), `v4.5,v4.6`
 * (the old list form: the lowest and later). Absent: every index. Undefined when unreadable.
 */
export function selectedIndexes(range: unknown, indexes: readonly string[]): string[] | undefined {
  if (range === undefined || range === null || range === '') return [...indexes];
  if (typeof range !== 'string') return undefined;
  const known = indexes.map((i) => ({ i, v: parseMinor(i)! })).filter((x) => x.v);
  const s = range.trim();
  if (s.startsWith('=')) {
    const v = parseMinor(s.slice(1));
    return v ? known.filter((x) => cmp(x.v, v) === 0).map((x) => x.i) : undefined;
  }
  if (s.includes('-')) {
    const [a, b] = s.split('-', 2).map(parseMinor);
    return a && b ? known.filter((x) => cmp(x.v, a) >= 0 && cmp(x.v, b) <= 0).map((x) => x.i) : undefined;
  }
  const parts = s.split(',').map(parseMinor);
  if (parts.some((p) => !p)) return undefined;
  const low = (parts as Minor[]).reduce((a, b) => (cmp(a, b) <= 0 ? a : b));
  return known.filter((x) => cmp(x.v, low) >= 0).map((x) => x.i);
}

/** The Kubernetes version the bundle is validated for: that of the newest index its range selects. */
export function k8sVersionFor(ctx: BundleContext): string | undefined {
  const selected = selectedIndexes(ctx.annotations['com.redhat.openshift.versions'], ctx.ocpIndexes);
  if (!selected || selected.length === 0) return undefined;
  const newest = selected.reduce((a, b) => (cmp(parseMinor(a)!, parseMinor(b)!) >= 0 ? a : b));
  return ocpToK8s(newest);
}

interface Removal {
  /** The Kubernetes minor that removed them. */
  removedIn: string;
  found: Map<string, string[]>;
  /** Only ever a warning (RBAC rules naming a resource that no longer exists at all). */
  warnOnly?: boolean;
  /** The manifest of the first one found. */
  path?: string;
}

const REMOVED_1_22: Record<string, string[]> = {
  'scheduling.k8s.io/v1beta1': ['PriorityClass'],
  'rbac.authorization.k8s.io/v1beta1': ['Role', 'ClusterRoleBinding', 'RoleBinding', 'ClusterRole'],
  'apiregistration.k8s.io/v1beta1': ['APIService'],
  'authentication.k8s.io/v1beta1': ['TokenReview'],
  'authorization.k8s.io/v1beta1': [
    'LocalSubjectAccessReview',
    'SelfSubjectAccessReview',
    'SubjectAccessReview',
  ],
  'admissionregistration.k8s.io/v1beta1': ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration'],
  'coordination.k8s.io/v1beta1': ['Lease'],
  'extensions/v1beta1': ['Ingress'],
  'networking.k8s.io/v1beta1': ['Ingress', 'IngressClass'],
  'storage.k8s.io/v1beta1': ['CSIDriver', 'CSINode', 'StorageClass', 'VolumeAttachment'],
  'certificates.k8s.io/v1beta1': ['CertificateSigningRequest'],
};

const REMOVED_1_25: Record<string, string[]> = {
  'batch/v1beta1': ['CronJob'],
  'discovery.k8s.io/v1beta1': ['EndpointSlice'],
  'events.k8s.io/v1beta1': ['Event'],
  'autoscaling/v2beta1': ['HorizontalPodAutoscaler'],
  'policy/v1beta1': ['PodDisruptionBudget', 'PodSecurityPolicy'],
  'node.k8s.io/v1beta1': ['RuntimeClass'],
};

const REMOVED_1_26: Record<string, string[]> = { 'autoscaling/v2beta2': ['HorizontalPodAutoscaler'] };

const firstPath = new WeakMap<Map<string, string[]>, string>();
const add = (m: Map<string, string[]>, kind: string, name: string, path: string): void => {
  m.set(kind, [...(m.get(kind) ?? []), name]);
  if (!firstPath.has(m)) firstPath.set(m, path);
};

/** What the bundle uses that each Kubernetes version removed. */
export function removedApis(ctx: BundleContext): Removal[] {
  const r122 = new Map<string, string[]>();
  const r125 = new Map<string, string[]>();
  const r125warn = new Map<string, string[]>();
  const r126 = new Map<string, string[]>();
  for (const { value: o, path } of ctx.objects) {
    const apiVersion = str(o.apiVersion);
    const kind = str(o.kind);
    const name = str(map(o.metadata).name);
    if (kind === 'CustomResourceDefinition' && apiVersion === 'apiextensions.k8s.io/v1beta1')
      add(r122, 'CRD', name, path);
    if (REMOVED_1_22[apiVersion]?.includes(kind)) add(r122, kind, name, path);
    if (REMOVED_1_26[apiVersion]?.includes(kind)) add(r126, kind, name, path);
    if (apiVersion === 'operators.coreos.com/v1alpha1' && kind === 'ClusterServiceVersion') {
      // The CSV's CRD descriptions name the kinds of the resources they create.
      const inCsv = new Set<string>();
      for (const field of ['owned', 'required'] as const)
        for (const [i, d] of list(at(o, `spec.customresourcedefinitions.${field}`)).entries())
          for (const [j, res] of list(map(d).resources).entries()) {
            const resKind = str(map(res).kind);
            inCsv.add(`${resKind.toLowerCase()}s`);
            const g = gvkOf({ apiVersion: map(res).version, kind: resKind });
            if (REMOVED_1_25[g.group === '' ? g.version : `${g.group}/${g.version}`]?.includes(resKind))
              add(
                r125,
                resKind,
                `ClusterServiceVersion.Spec.CustomResourceDefinitions.${field === 'owned' ? 'Owned' : 'Required'}[${i}].Resource[${j}]`,
                path,
              );
          }
      for (const [field, label] of [
        ['clusterPermissions', 'ClusterPermissions'],
        ['permissions', 'Permissions'],
      ] as const)
        for (const [i, perm] of list(at(o, `spec.install.spec.${field}`)).entries())
          for (const [j, rule] of list(map(perm).rules).entries())
            for (const group of list(map(rule).apiGroups))
              for (const res of list(map(rule).resources))
                if (group === 'policy' && res === 'podsecuritypolicies' && !inCsv.has(res))
                  add(
                    r125warn,
                    res,
                    `ClusterServiceVersion.Spec.InstallStrategy.StrategySpec.${label}[${i}].Rules[${j}]`,
                    path,
                  );
    } else if (REMOVED_1_25[apiVersion]?.includes(kind)) add(r125, kind, name, path);
  }
  return [
    { removedIn: '1.22', found: r122, path: firstPath.get(r122) },
    { removedIn: '1.25', found: r125, path: firstPath.get(r125) },
    { removedIn: '1.25', found: r125warn, warnOnly: true, path: firstPath.get(r125warn) },
    { removedIn: '1.26', found: r126, path: firstPath.get(r126) },
  ];
}

const geMinor = (a: string | undefined, b: string): boolean => {
  const x =
    a === undefined
      ? undefined
      : parseMinor(a.replace(/^v/, '').split('-')[0]!.split('.').slice(0, 2).join('.'));
  return x !== undefined && cmp(x, parseMinor(b)!) >= 0;
};

const removedApisRule: BundleRule = {
  id: 'B-REMOVED-API',
  upstream: [
    OSDK_OPERATORHUB,
    OSDK_FRAMEWORK,
    'operator-sdk:AlphaDeprecatedAPIsValidator',
    'operator-sdk:OperatorHubValidator',
    'operator-sdk:OperatorHubV2Validator',
  ],
  suites: DEFAULT_VALIDATOR_SUITES,
  run(ctx, report) {
    const k8s = k8sVersionFor(ctx);
    const minKube = str(at(ctx.csv, 'spec.minKubeVersion'));
    const minKubeUsable = STRICT_SEMVER.test(minKube.replace(/^v/, '')) ? minKube : undefined;
    for (const r of removedApis(ctx)) {
      if (r.found.size === 0) continue;
      const list = [...r.found.keys()]
        .sort()
        .map(
          (k) =>
            `${k}: ${r.found
              .get(k)!
              .map((n) => JSON.stringify(n))
              .join(', ')}`,
        )
        .join('; ');
      // An error only where the bundle claims to run on that Kubernetes version or later.
      const claims = geMinor(k8s, r.removedIn) || geMinor(minKubeUsable, r.removedIn);
      report({
        level: claims && !r.warnOnly ? 'error' : 'warning',
        message: `the bundle uses APIs that Kubernetes ${r.removedIn} removed (${list})${k8s ? `; its OpenShift range reaches Kubernetes ${k8s}` : ''}: migrate them (https://kubernetes.io/docs/reference/using-api/deprecation-guide/#v${r.removedIn.replace('.', '-')})`,
        ...(r.path ? { file: `${ctx.dir}/${r.path}` } : {}),
      });
    }
  },
};

export const REMOVED_API_RULES: BundleRule[] = [removedApisRule];
