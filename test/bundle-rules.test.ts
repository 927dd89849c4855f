// Each bundle rule (docs/bundle-rules.md) on a small bundle that trips it and on a clean one,
// through the `catalog-bot/bundle` check with the rules of the suites given: the findings are
// exactly the rules the change trips, at the verdict upstream gives, naming the upstream check.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { checkBundle } from '../src/checks/bundle.js';
import { BUNDLE_RULES, type BundleSuite } from '../src/checks/bundle-rules/index.js';
import { parseWaivers, waiverFor, type Waiver } from '../src/checks/bundle-rules/waivers.js';
import {
  bundleFiles,
  cleanBundle,
  withoutFbc,
  withV1beta1Pdb,
  type BundleParts,
} from './helpers/bundle-fixture.js';

interface Options {
  others?: BundleParts[];
  suites?: BundleSuite[];
  organization?: string;
  /** The bundle's files when a test writes them past what BundleParts holds (default: bundleFiles(parts)). */
  files?: ReturnType<typeof bundleFiles>;
  waivers?: readonly Waiver[];
}

function findings(parts: BundleParts, options: Options = {}) {
  return checkBundle({
    dir: `operators/${parts.package}/${parts.version}`,
    package: parts.package,
    version: parts.version,
    files: options.files ?? bundleFiles(parts),
    baseCiYaml: stringify(parts.ci),
    suites: options.suites ?? ['community'],
    otherBundles: (options.others ?? []).map((b) => ({
      version: b.version,
      csv: b.csv,
      annotations: b.annotations,
    })),
    ...(options.organization ? { organization: options.organization } : {}),
    ...(options.waivers ? { waivers: options.waivers } : {}),
  });
}

/** The distinct `RULE:level` of the findings, sorted. */
const verdicts = (list: { rule: string; level: string }[]): string[] =>
  [...new Set(list.map((f) => `${f.rule}:${f.level}`))].sort();

const change = (
  edit: (b: BundleParts) => void,
  base: () => BundleParts = () => cleanBundle(),
): BundleParts => {
  const b = base();
  edit(b);
  return b;
};

/** The clean bundle with one more manifest, `file` holding `manifest`. */
const withManifest = (file: string, manifest: Record<string, unknown>): BundleParts =>
  change((b) => (b.extra[file] = manifest));

const older = (version: string, edit?: (b: BundleParts) => void, fbc = false): BundleParts => {
  const b = fbc ? cleanBundle(version) : withoutFbc(cleanBundle(version));
  edit?.(b);
  return b;
};

describe('a clean bundle', () => {
  it.each<BundleSuite>(['community', 'isv', 'operatorhub', 'operatorframework'])(
    'has no finding in suite %s',
    (suite) => {
      expect(findings(cleanBundle(), { suites: [suite] })).toEqual([]);
    },
  );

  it('has none in a package released without templates either, but the hint to use them', () => {
    const b = withoutFbc(cleanBundle('1.0.0', 'demo-operator.v0.9.0'));
    expect(verdicts(findings(b, { others: [older('0.9.0')] }))).toEqual(['B-USING-FBC:warning']);
  });
});

interface Case {
  name: string;
  bundle: () => BundleParts;
  options?: Options;
  /** Every `RULE:level` the findings have. */
  expected: string[];
  /** An upstream check the finding of the first expected rule names. */
  upstream: string;
}

const OSDK_HUB = 'operator-pipelines:check_osdk_bundle_validate_operatorhub';
const OSDK_FW = 'operator-pipelines:check_osdk_bundle_validate_operator_framework';

const cases: Case[] = [
  {
    name: 'a CSV field of the wrong type',
    bundle: () => change((b) => (b.csv.spec.keywords = 'demo')),
    // check_required_fields also finds the keywords are not a list of strings.
    expected: ['B-CSV-TYPES:error', 'B-REQUIRED-FIELDS:warning'],
    upstream: 'operator-sdk:ClusterServiceVersionValidator',
  },
  {
    name: 'spec.replaces that is no Kubernetes name',
    bundle: () => change((b) => (b.csv.spec.replaces = 'Demo_Operator.v0.9.0')),
    expected: ['B-CSV-NAME-FORMAT:error'],
    upstream: OSDK_HUB,
  },
  {
    name: 'alm-examples that is not JSON',
    bundle: () => change((b) => (b.csv.metadata.annotations['alm-examples'] = '[{"kind": "Widget",]')),
    expected: ['B-ALM-EXAMPLES:error'],
    upstream: OSDK_FW,
  },
  {
    name: 'an example of an API the CSV does not provide',
    bundle: () =>
      change(
        (b) =>
          (b.csv.metadata.annotations['alm-examples'] = JSON.stringify([
            { apiVersion: 'demo.example.com/v1', kind: 'Widget' },
            { apiVersion: 'other.example.com/v1', kind: 'Gadget' },
          ])),
      ),
    expected: ['B-ALM-EXAMPLES:error'],
    upstream: 'operator-sdk:ClusterServiceVersionValidator',
  },
  {
    name: 'a provided API without an example',
    bundle: () => change((b) => (b.csv.metadata.annotations['alm-examples'] = '[]')),
    expected: ['B-ALM-EXAMPLES:warning'],
    upstream: 'operator-sdk:ClusterServiceVersionValidator',
  },
  {
    name: 'no install mode supported',
    bundle: () =>
      change((b) => b.csv.spec.installModes.forEach((m: { supported: boolean }) => (m.supported = false))),
    expected: ['B-INSTALL-MODES:error'],
    upstream: 'operator-sdk:ClusterServiceVersionValidator',
  },
  {
    name: 'a conversion webhook with namespaced install modes',
    bundle: () =>
      change((b) => {
        b.csv.spec.webhookdefinitions = [
          {
            type: 'ConversionWebhook',
            generateName: 'cwidget.demo.example.com',
            deploymentName: 'demo-operator',
            containerPort: 443,
            conversionCRDs: ['widgets.demo.example.com'],
            sideEffects: 'None',
            admissionReviewVersions: ['v1'],
          },
        ];
      }),
    expected: ['B-INSTALL-MODES:error'],
    upstream: 'operator-sdk:ClusterServiceVersionValidator',
  },
  {
    name: 'no minKubeVersion',
    bundle: () => change((b) => delete b.csv.spec.minKubeVersion),
    expected: ['B-MIN-KUBE-VERSION:warning'],
    upstream: 'operator-sdk:ClusterServiceVersionValidator',
  },
  {
    name: 'a minKubeVersion with a leading v (OLM reads it, operator-sdk does not)',
    bundle: () => change((b) => (b.csv.spec.minKubeVersion = 'v1.27.0')),
    expected: ['B-MIN-KUBE-VERSION:error'],
    upstream: 'operator-sdk:OperatorHubV2Validator',
  },
  {
    name: 'no install strategy',
    bundle: () => change((b) => delete b.csv.spec.install.strategy),
    expected: ['B-CSV-REQUIRED:error'],
    upstream: 'operator-sdk:ClusterServiceVersionValidator',
  },
  {
    name: 'an annotation OLM reads in another case',
    bundle: () => change((b) => (b.csv.metadata.annotations['olm.SkipRange'] = '<1.0.0')),
    expected: ['B-ANNOTATION-NAMES:error'],
    upstream: 'operator-sdk:ClusterServiceVersionValidator',
  },
  {
    name: 'no provider name',
    bundle: () => change((b) => (b.csv.spec.provider = { url: 'https://demo.example.com' })),
    // The typed CSV also needs provider.name once provider is set; check_required_fields wants it too.
    expected: ['B-PROVIDER:error', 'B-CSV-REQUIRED:error', 'B-REQUIRED-FIELDS:error'],
    upstream: 'operator-sdk:OperatorHubValidator',
  },
  {
    name: 'a maintainer email that is no address',
    bundle: () => change((b) => (b.csv.spec.maintainers[0].email = 'team at demo')),
    expected: ['B-MAINTAINERS:error'],
    upstream: 'operator-sdk:OperatorHubV2Validator',
  },
  {
    name: 'a link that is no absolute URL',
    bundle: () => change((b) => (b.csv.spec.links[0].url = 'github.com/demo')),
    expected: ['B-LINKS:error'],
    upstream: 'operator-sdk:OperatorHubValidator',
  },
  {
    name: 'version 0.0.0, which operator-sdk reads as unset',
    bundle: () =>
      change(
        () => undefined,
        () => cleanBundle('0.0.0'),
      ),
    expected: ['B-VERSION-MISSING:error'],
    upstream: 'operator-sdk:OperatorHubValidator',
  },
  {
    name: 'no icon',
    bundle: () => change((b) => delete b.csv.spec.icon),
    // operator-sdk warns; operator-pipelines' check_required_fields fails.
    expected: ['B-ICON:warning', 'B-REQUIRED-FIELDS:error'],
    upstream: 'operator-sdk:OperatorHubValidator',
  },
  {
    name: 'an icon of a media type OperatorHub does not show',
    bundle: () => change((b) => (b.csv.spec.icon[0].mediatype = 'image/bmp')),
    expected: ['B-ICON:error', 'B-REQUIRED-FIELDS:error'],
    upstream: 'operator-sdk:OperatorHubV2Validator',
  },
  {
    name: 'a capability level that does not exist',
    bundle: () => change((b) => (b.csv.metadata.annotations.capabilities = 'Expert')),
    expected: ['B-CAPABILITIES:error', 'B-REQUIRED-FIELDS:warning'],
    upstream: 'operator-sdk:StandardCapabilitiesValidator',
  },
  {
    name: 'a category that does not exist',
    bundle: () => change((b) => (b.csv.metadata.annotations.categories = 'Monitoring, Gaming')),
    expected: ['B-CATEGORIES:error', 'B-REQUIRED-FIELDS:warning'],
    upstream: 'operator-sdk:StandardCategoriesValidator',
  },
  {
    name: 'a v1beta1 CRD in a bundle for OpenShift 4.14 (Kubernetes 1.27)',
    bundle: () =>
      change((b) => {
        b.crds[0]!.apiVersion = 'apiextensions.k8s.io/v1beta1';
        b.crds[0]!.spec.version = 'v1';
      }),
    // And the CRD validator's: v1beta1 defaults preserveUnknownFields to true, which apiextensions refuses.
    expected: ['B-REMOVED-API:error', 'B-CRD-DEFINITION:error'],
    upstream: 'operator-sdk:AlphaDeprecatedAPIsValidator',
  },
  {
    name: 'a policy/v1beta1 PodDisruptionBudget in a bundle for an OpenShift range no catalog has, older Kubernetes',
    bundle: () => change((b) => withV1beta1Pdb(b, '=v4.8')),
    // Only where the bundle claims a Kubernetes that removed it is it an error.
    expected: ['B-REMOVED-API:warning'],
    upstream: OSDK_HUB,
  },
  {
    name: 'a CRD the CSV does not own',
    bundle: () =>
      change((b) => {
        const gadget = structuredClone(b.crds[0]!);
        gadget.metadata.name = 'gadgets.demo.example.com';
        gadget.spec.names = { kind: 'Gadget', plural: 'gadgets' };
        b.crds.push(gadget);
      }),
    expected: ['B-CRD-NOT-OWNED:error'],
    upstream: 'operator-sdk:BundleValidator',
  },
  {
    name: "a ServiceAccount manifest the CSV's deployment names",
    bundle: () =>
      withManifest('sa.yaml', {
        apiVersion: 'v1',
        kind: 'ServiceAccount',
        metadata: { name: 'demo-operator' },
      }),
    expected: ['B-SERVICE-ACCOUNT:error'],
    upstream: 'operator-sdk:BundleValidator',
  },
  {
    name: 'a related image that is no pull spec',
    bundle: () => change((b) => (b.csv.spec.relatedImages[0].image = 'quay.io/demo/Demo:1.0.0')),
    expected: ['B-RELATED-IMAGES:error'],
    upstream: 'operator-sdk:BundleValidator',
  },
  {
    name: 'a bundle over 1 MiB compressed',
    bundle: () =>
      withManifest('blob.yaml', {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'blob' },
        data: { blob: randomBytes(1_100_000).toString('base64') },
      }),
    expected: ['B-COMPRESSED-SIZE:error'],
    upstream: 'operator-sdk:BundleValidator',
  },
  {
    name: 'no deployment',
    bundle: () => change((b) => delete b.csv.spec.install.spec.deployments),
    expected: ['B-NO-DEPLOYMENT:error', 'B-CSV-REQUIRED:error'],
    upstream: 'operator-sdk:GoodPracticesValidator',
  },
  {
    name: 'a container without resource requests',
    bundle: () =>
      change((b) => delete b.csv.spec.install.spec.deployments[0].spec.template.spec.containers[0].resources),
    expected: ['B-RESOURCE-REQUESTS:warning'],
    upstream: 'operator-sdk:GoodPracticesValidator',
  },
  {
    name: 'an owned CRD without a description',
    bundle: () => change((b) => (b.csv.spec.customresourcedefinitions.owned[0].description = '')),
    expected: ['B-CRD-DESCRIPTION:warning'],
    upstream: OSDK_FW,
  },
  {
    name: 'a channel not named candidate, fast or stable',
    bundle: () =>
      change((b) => {
        b.annotations['operators.operatorframework.io.bundle.channels.v1'] = 'alpha';
        b.annotations['operators.operatorframework.io.bundle.channel.default.v1'] = 'alpha';
      }),
    expected: ['B-CHANNEL-NAMING:warning'],
    upstream: 'operator-sdk:GoodPracticesValidator',
  },
  {
    name: 'permission to create CRDs',
    bundle: () =>
      change((b) =>
        b.csv.spec.install.spec.permissions[0].rules.push({
          apiGroups: ['apiextensions.k8s.io'],
          resources: ['customresourcedefinitions'],
          verbs: ['create'],
        }),
      ),
    expected: ['B-CRD-PERMISSION:warning'],
    upstream: 'operator-sdk:GoodPracticesValidator',
  },
  {
    name: 'a CSV name without .v before its version',
    bundle: () => change((b) => (b.csv.metadata.name = 'demo-operator.1.0.0')),
    // The bundle check's own B-CSV-NAME wants <package>.v<version> too.
    expected: ['B-CSV-NAME-CONVENTION:warning', 'B-CSV-NAME:error'],
    upstream: 'operator-sdk:GoodPracticesValidator',
  },
  {
    name: 'a description annotation under 10 characters and no support annotation',
    bundle: () =>
      change((b) => {
        b.csv.metadata.annotations.description = 'Widgets';
        delete b.csv.metadata.annotations.support;
      }),
    expected: ['B-REQUIRED-FIELDS:warning'],
    upstream: 'operator-pipelines:check_required_fields',
  },
  {
    name: 'a display name of two characters',
    bundle: () => change((b) => (b.csv.spec.displayName = 'DO')),
    expected: ['B-REQUIRED-FIELDS:error'],
    upstream: 'operator-pipelines:check_required_fields',
  },
  {
    name: 'minKubeVersion above the Kubernetes of OpenShift versions the range selects (no templates)',
    bundle: () =>
      change(
        (b) => (b.annotations['com.redhat.openshift.versions'] = 'v4.12'),
        () => withoutFbc(cleanBundle()),
      ),
    expected: ['B-OCP-KUBE-CONSTRAINTS:error', 'B-USING-FBC:warning'],
    upstream: 'operator-pipelines:check_api_version_constraints',
  },
  {
    name: 'a NetworkPolicy',
    bundle: () =>
      withManifest('netpol.yaml', {
        apiVersion: 'networking.k8s.io/v1',
        kind: 'NetworkPolicy',
        metadata: { name: 'deny' },
        spec: { podSelector: {} },
      }),
    expected: ['B-NETWORK-POLICY:error'],
    upstream: 'operator-pipelines:check_network_policy_presence',
  },
  {
    name: 'release-config.yaml naming a template ci.yaml does not map',
    bundle: () => change((b) => (b.releaseConfig!.catalog_templates[0].template_name = 'semver.yaml')),
    expected: ['B-RELEASE-CONFIG-CI:error'],
    upstream: 'operator-pipelines:check_bundle_release_config',
  },
  {
    name: 'a semver template channel that is not Fast, Candidate or Stable',
    bundle: () => change((b) => (b.ci.fbc.catalog_mapping[0].type = 'olm.semver')),
    expected: ['B-RELEASE-CONFIG-CI:error'],
    upstream: 'operator-pipelines:check_bundle_release_config',
  },
  {
    name: 'release-config.yaml against its schema',
    bundle: () =>
      change(
        (b) =>
          (b.releaseConfig = {
            catalog_templates: [{ template_name: 'basic.yaml', channels: [] }],
            automerge: true,
          }),
      ),
    expected: ['B-RELEASE-CONFIG-SCHEMA:error'],
    upstream: 'operator-pipelines:check_validate_schema_bundle_release_config',
  },
  {
    name: 'an olm.skipRange without replaces, in a channel with other bundles (isv, no templates)',
    bundle: () =>
      change(
        (b) => (b.csv.metadata.annotations['olm.skipRange'] = '<1.0.0'),
        () => withoutFbc(cleanBundle()),
      ),
    options: { suites: ['isv'], others: [older('0.9.0')] },
    expected: ['B-PRUNED-GRAPH:warning'],
    upstream: 'operator-pipelines:check_pruned_graph',
  },
  {
    name: 'a marketplace bundle without the marketplace annotations (isv)',
    bundle: () => cleanBundle(),
    options: { suites: ['isv'], organization: 'redhat-marketplace' },
    expected: ['B-MARKETPLACE:error'],
    upstream: 'operator-pipelines:check_marketplace_annotation',
  },
  {
    name: "a CSV name whose operator is not the one the package's other bundles use",
    bundle: () => cleanBundle(),
    options: {
      others: [
        older('0.9.0', (o) => (o.csv.metadata.name = 'demo.v0.9.0'), true),
        older('0.9.5', (o) => (o.csv.metadata.name = 'demo.v0.9.5'), true),
      ],
    },
    expected: ['B-OPERATOR-NAME:error'],
    upstream: 'operator-pipelines:check_operator_name',
  },
  {
    name: 'replaces a version the package does not have (no templates)',
    bundle: () => withoutFbc(cleanBundle('1.0.0', 'demo-operator.v0.8.0')),
    options: { others: [older('0.9.0')] },
    // 0.9.0 is then replaced by nothing and is not the head: dangling.
    expected: ['B-REPLACES-AVAILABILITY:error', 'B-DANGLING-BUNDLES:error', 'B-USING-FBC:warning'],
    upstream: 'operator-pipelines:check_replaces_availability',
  },
  {
    name: 'replaces a bundle that goes to fewer OpenShift versions (no templates)',
    bundle: () => withoutFbc(cleanBundle('1.0.0', 'demo-operator.v0.9.0')),
    options: { others: [older('0.9.0', (o) => (o.annotations['com.redhat.openshift.versions'] = 'v4.16'))] },
    expected: ['B-REPLACES-AVAILABILITY:error', 'B-USING-FBC:warning'],
    upstream: 'operator-pipelines:check_replaces_availability',
  },
  {
    name: 'an upgrade loop (no templates)',
    bundle: () => withoutFbc(cleanBundle('1.0.0', 'demo-operator.v0.9.0')),
    options: { others: [older('0.9.0', (o) => (o.csv.spec.replaces = 'demo-operator.v1.0.0'))] },
    expected: ['B-UPGRADE-GRAPH-LOOP:error', 'B-USING-FBC:warning'],
    upstream: 'operator-pipelines:check_upgrade_graph_loop',
  },
  {
    name: 'bundles of several operator names (no templates)',
    bundle: () => withoutFbc(cleanBundle('1.0.0', 'demo-operator.v0.9.0')),
    options: { others: [older('0.9.0', (o) => (o.csv.metadata.name = 'demo.v0.9.0'))] },
    // check_operator_name sees it too; replaces is looked up by version alone, so 0.9.0 is found.
    expected: ['B-OPERATOR-NAME-UNIQUE:error', 'B-OPERATOR-NAME:error', 'B-USING-FBC:warning'],
    upstream: 'operator-pipelines:check_operator_name_unique',
  },
  {
    name: 'an updateGraph value operator-pipelines does not know (no templates)',
    bundle: () =>
      change(
        (b) => (b.ci.updateGraph = 'graph-mode'),
        () => withoutFbc(cleanBundle()),
      ),
    // The ci.yaml schema says so too, and no update graph can be built.
    expected: [
      'B-CI-UPDATE-GRAPH:error',
      'B-CI-SCHEMA:error',
      'B-DANGLING-BUNDLES:error',
      'B-UPGRADE-GRAPH-LOOP:error',
      'B-USING-FBC:warning',
    ],
    upstream: 'operator-pipelines:check_ci_upgrade_graph',
  },
  {
    name: 'no updateGraph in ci.yaml (no templates)',
    bundle: () =>
      change(
        (b) => delete b.ci.updateGraph,
        () => withoutFbc(cleanBundle()),
      ),
    expected: ['B-CI-UPDATE-GRAPH:warning', 'B-USING-FBC:warning'],
    upstream: 'operator-pipelines:check_ci_upgrade_graph',
  },
  {
    name: 'ci.yaml reviewers as one string',
    bundle: () => change((b) => (b.ci.reviewers = 'demo-dev')),
    expected: ['B-CI-SCHEMA:error'],
    upstream: 'operator-pipelines:check_schema_operator_ci_config',
  },
  {
    name: 'two templates mapped to one catalog',
    bundle: () =>
      change((b) =>
        b.ci.fbc.catalog_mapping.push({
          template_name: 'semver.yaml',
          type: 'olm.semver',
          catalog_names: ['v4.15'],
        }),
      ),
    expected: ['B-CI-CATALOG-MAPPING:error'],
    upstream: 'operator-pipelines:check_catalog_usage_ci_config',
  },
  {
    name: 'a CRD with two storage versions',
    bundle: () =>
      change((b) =>
        b.crds[0]!.spec.versions.push({
          name: 'v2',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object' } },
        }),
      ),
    expected: ['B-CRD-DEFINITION:error'],
    upstream: 'operator-sdk:CustomResourceDefinitionValidator',
  },
  {
    name: 'a CRD conversion webhook without conversionReviewVersions',
    bundle: () =>
      change(
        (b) =>
          (b.crds[0]!.spec.conversion = {
            strategy: 'Webhook',
            webhook: { clientConfig: { service: { name: 'demo-webhook', namespace: 'demo' } } },
          }),
      ),
    expected: ['B-CRD-DEFINITION:error'],
    upstream: OSDK_HUB,
  },
  {
    name: 'a CRD whose short name is no DNS label, in a kube group without approval',
    bundle: () =>
      change((b) => {
        const crd = b.crds[0]!;
        crd.spec.names.shortNames = ['Wd_1'];
        crd.spec.group = 'demo.k8s.io';
        crd.metadata.name = 'widgets.demo.k8s.io';
        b.csv.spec.customresourcedefinitions.owned[0].name = 'widgets.demo.k8s.io';
        b.csv.metadata.annotations['alm-examples'] = JSON.stringify([
          { apiVersion: 'demo.k8s.io/v1', kind: 'Widget', metadata: { name: 'example' } },
        ]);
      }),
    expected: ['B-CRD-DEFINITION:error'],
    upstream: OSDK_FW,
  },
  {
    // Stricter: operator-sdk drops every error under openAPIV3Schema; the API server refuses it.
    name: 'a v1 CRD with a property of no type (not a structural schema)',
    bundle: () =>
      change(
        (b) =>
          (b.crds[0]!.spec.versions[0].schema.openAPIV3Schema = {
            type: 'object',
            properties: { spec: { type: 'object', properties: { size: { description: 'how many' } } } },
          }),
      ),
    expected: ['B-CRD-DEFINITION:error'],
    upstream: 'operator-sdk:CustomResourceDefinitionValidator',
  },
  {
    name: 'spec.release with a CSV not named <package>-v<version>-<release>',
    bundle: () => change((b) => (b.csv.spec.release = 'rc.2')),
    expected: ['B-RELEASE-NAME:error'],
    upstream: 'operator-sdk:BundleValidator',
  },
  {
    name: 'spec.release that is no release version',
    bundle: () => change((b) => (b.csv.spec.release = '1.02')),
    expected: ['B-RELEASE-NAME:error'],
    upstream: 'operator-sdk:BundleValidator',
  },
];

describe('each rule, on a bundle that trips it', () => {
  it.each(cases)('$name', ({ bundle, options, expected, upstream }) => {
    const got = findings(bundle(), options);
    expect(verdicts(got)).toEqual([...expected].sort());
    const first = got.find((f) => `${f.rule}:${f.level}` === expected[0]);
    expect(first?.upstream).toContain(upstream);
    for (const f of got) {
      expect(f.file).toMatch(/^operators\/demo-operator\//);
      expect(f.line).toBeGreaterThan(0);
    }
  });

  it('covers every rule of the table', () => {
    const tripped = new Set(cases.flatMap((c) => c.expected.map((e) => e.split(':')[0])));
    expect(BUNDLE_RULES.map((r) => r.id).filter((id) => !tripped.has(id))).toEqual([]);
  });

  it('runs only the rules of the suites asked for', () => {
    const b = change((x) => {
      delete x.csv.spec.icon;
      x.csv.metadata.annotations.description = 'Widgets';
    });
    // operator-sdk alone knows nothing of check_required_fields.
    expect(verdicts(findings(b, { suites: ['operatorhub'] }))).toEqual(['B-ICON:warning']);
    expect(verdicts(findings(b, { suites: ['isv'] }))).toEqual([]);
    // Without suites the bundle check keeps its own rules only.
    expect(findings(b, { suites: [] })).toEqual([]);
  });
});

describe("the repository's waivers (config.yaml tests ignore_operators)", () => {
  const trips = (): BundleParts =>
    change((b) => {
      b.csv.metadata.annotations.description = 'Widgets';
      b.annotations['operators.operatorframework.io.bundle.channels.v1'] = 'alpha';
      b.annotations['operators.operatorframework.io.bundle.channel.default.v1'] = 'alpha';
    });
  const run = (tests: unknown) => findings(trips(), { waivers: parseWaivers({ tests }).waivers });

  it('turn a finding of a waived static test into a notice that names the waiver, as re.match reads it', () => {
    const got = run([{ name: 'check_required_fields', ignore_operators: ['^ack-.*', 'demo-'] }]);
    const waived = got.filter((f) => f.rule === 'B-REQUIRED-FIELDS');
    expect(waived.map((f) => f.level)).toEqual(['notice']);
    expect(waived[0]!.waived).toEqual({ test: 'check_required_fields', pattern: 'demo-' });
    expect(waived[0]!.message).toMatch(/waived for demo-operator: config\.yaml tests check_required_fields/);
    // Not waived: the channel warning stands for operator-sdk, run by two other static tests.
    expect(got.find((f) => f.rule === 'B-CHANNEL-NAMING')!.level).toBe('warning');
  });

  it('waive only when the pattern matches at the start of the name, and every test the finding stands for', () => {
    expect(
      run([{ name: 'check_required_fields', ignore_operators: ['operator'] }]).find(
        (f) => f.rule === 'B-REQUIRED-FIELDS',
      )!.level,
    ).toBe('warning');
    const one = run([{ name: 'check_osdk_bundle_validate_operator_framework', ignore_operators: ['demo'] }]);
    expect(one.find((f) => f.rule === 'B-CHANNEL-NAMING')!.level).toBe('notice');
  });

  it('refuse patterns that could take exponential time, and say so', () => {
    const { waivers, problems } = parseWaivers({
      tests: [
        {
          name: 'check_required_fields',
          ignore_operators: ['(a+)+$', '([a-z]*)*x', 'x'.repeat(300), '[', '^ok'],
        },
      ],
    });
    expect(waivers.map((w) => w.pattern)).toEqual(['^ok']);
    expect(problems).toHaveLength(4);
    const started = Date.now();
    waiverFor(['operator-pipelines:check_required_fields'], `${'a'.repeat(40)}!`, waivers);
    expect(Date.now() - started).toBeLessThan(100);
  });
});

describe('wrong types anywhere in the CSV, CRD, annotations, ci.yaml and release-config.yaml', () => {
  /** CSV fields the typed CSV declares (none a number). */
  const TYPED = [
    'metadata.name',
    'metadata.annotations',
    'spec.displayName',
    'spec.version',
    'spec.keywords',
    'spec.maintainers',
    'spec.icon',
    'spec.install',
    'spec.installModes',
    'spec.provider.name',
    'spec.relatedImages',
  ];
  const ODD: unknown[] = [null, 7, 'text', ['x', 1], { a: { b: [null] } }];
  /** Every path of a JSON value, down to depth 6. */
  const paths = (v: unknown, prefix: string[] = [], depth = 0): string[][] => {
    if (depth > 6 || typeof v !== 'object' || v === null) return [];
    return Object.entries(v).flatMap(([k, x]) => [[...prefix, k], ...paths(x, [...prefix, k], depth + 1)]);
  };
  const set = (root: Record<string, unknown>, path: string[], value: unknown): void => {
    let o = root as Record<string, unknown>;
    for (const k of path.slice(0, -1)) o = o[k] as Record<string, unknown>;
    o[path[path.length - 1]!] = value;
  };

  it('never throw, each path set to each odd value; a CSV field of another type is a B-CSV-TYPES error', () => {
    const base = withoutFbc(cleanBundle('1.0.0', 'demo-operator.v0.9.0'));
    const parts: [keyof BundleParts, string[][]][] = (
      ['csv', 'crds', 'annotations', 'ci', 'releaseConfig'] as const
    ).map((k) => [k, paths(k === 'releaseConfig' ? cleanBundle().releaseConfig : base[k])]);
    let runs = 0;
    for (const [key, list] of parts)
      for (const path of list)
        for (const value of ODD) {
          const b =
            key === 'releaseConfig'
              ? cleanBundle()
              : withoutFbc(cleanBundle('1.0.0', 'demo-operator.v0.9.0'));
          set(b[key] as Record<string, unknown>, path, value);
          const where = `${key}.${path.join('.')} = ${JSON.stringify(value)}`;
          let got: ReturnType<typeof findings> = [];
          expect(() => (got = findings(b, { others: [older('0.9.0')] })), where).not.toThrow();
          // A CRD field of another type is a finding of the CRD validator, not a crash.
          if (
            key === 'crds' &&
            value === 7 &&
            ['spec', 'metadata', 'spec.group', 'spec.versions'].includes(path.slice(1).join('.'))
          )
            expect(
              got.some((f) => f.rule === 'B-CRD-DEFINITION' && f.level === 'error'),
              where,
            ).toBe(true);
          if (key === 'csv' && value === 7 && TYPED.includes(path.join('.')))
            expect(
              got.some((f) => f.rule === 'B-CSV-TYPES' && f.level === 'error'),
              where,
            ).toBe(true);
          runs++;
        }
    expect(runs).toBeGreaterThan(400);
  }, 60_000);
});

describe('hostile layout', () => {
  it('a CRD schema of 150,000 untyped properties (1.5 MB, under the file limit): one pass, its problems capped', () => {
    const b = cleanBundle();
    const files = bundleFiles(b);
    const crd = structuredClone(b.crds[0]!);
    crd.spec.versions[0].schema.openAPIV3Schema = { type: 'object', properties: { PROPS: 0 } };
    const props = Array.from({ length: 150_000 }, (_, i) => `"p${i}":{}`).join(',');
    const text = JSON.stringify(crd).replace('{"PROPS":0}', `{${props}}`);
    expect(text.length).toBeGreaterThan(1_500_000);
    files.set('manifests/crd-0.yaml', Buffer.from(text));
    const started = Date.now();
    const got = findings(b, { files });
    expect(Date.now() - started).toBeLessThan(15_000);
    const problems = got.filter((f) => f.rule === 'B-CRD-DEFINITION');
    expect(problems.length).toBe(20);
    expect(problems[0]!.message).toMatch(/properties\[p\d+\]\.type: Required value/);
  }, 30_000);

  it('a CSV padded with a million blank lines costs linear time to point at its lines', () => {
    const b = change((x) => {
      delete x.csv.spec.icon;
      x.csv.metadata.annotations.description = 'Widgets';
    });
    const files = bundleFiles(b);
    const path = 'manifests/demo-operator.clusterserviceversion.yaml';
    files.set(path, Buffer.from('\n'.repeat(1_000_000) + files.get(path)!.toString('utf8')));
    const started = Date.now();
    const got = findings(b, { files });
    expect(Date.now() - started).toBeLessThan(5000);
    expect(verdicts(got)).toEqual(['B-ICON:warning', 'B-REQUIRED-FIELDS:error', 'B-REQUIRED-FIELDS:warning']);
    expect(got.find((f) => f.rule === 'B-ICON')!.line).toBeGreaterThan(1_000_000);
  });
});

describe('docs/bundle-rules.md', () => {
  const doc = readFileSync(new URL('../docs/bundle-rules.md', import.meta.url), 'utf8');
  // Every check_* of operator-pipelines' operatorcert/static_tests (common, community, isv)
  // and every validator of operator-framework/api's pkg/validation, as of August 2026.
  const PIPELINES = [
    'check_operator_name',
    'check_bundle_release_config',
    'check_validate_schema_bundle_release_config',
    'check_network_policy_presence',
    'check_operator_version_directory_name',
    'check_replaces_availability',
    'check_schema_operator_ci_config',
    'check_catalog_usage_ci_config',
    'check_bundle_images_in_fbc',
    'check_olm_bundle_object_in_fbc',
    'check_osdk_bundle_validate_operatorhub',
    'check_osdk_bundle_validate_operator_framework',
    'check_required_fields',
    'check_dangling_bundles',
    'check_api_version_constraints',
    'check_using_fbc',
    'check_operator_name_unique',
    'check_ci_upgrade_graph',
    'check_upgrade_graph_loop',
    'check_pruned_graph',
    'check_marketplace_annotation',
  ];
  const VALIDATORS = [
    'ClusterServiceVersionValidator',
    'CustomResourceDefinitionValidator',
    'BundleValidator',
    'OperatorHubValidator',
    'OperatorHubV2Validator',
    'StandardCapabilitiesValidator',
    'StandardCategoriesValidator',
    'AlphaDeprecatedAPIsValidator',
    'GoodPracticesValidator',
    'CommunityOperatorValidator',
    'MultipleArchitecturesValidator',
    'ObjectValidator',
    'OperatorGroupValidator',
    'PackageManifestValidator',
  ];

  it('has a row for every upstream static test and validator', () => {
    for (const name of PIPELINES) expect(doc, name).toMatch(new RegExp(`\\| \`${name}\` \\(`));
    for (const name of VALIDATORS) expect(doc, name).toContain(`\`${name}\``);
  });

  it('has a row for every rule and every upstream check a rule names', () => {
    for (const rule of BUNDLE_RULES) {
      expect(doc, rule.id).toContain(`\`${rule.id}\``);
      for (const u of rule.upstream) {
        const [tool, name] = u.split(':') as [string, string];
        expect(doc, `${rule.id}: ${u}`).toMatch(
          new RegExp(tool === 'operator-pipelines' ? `\\| \`${name}\`` : `\`${name}\``),
        );
      }
    }
  });
});
