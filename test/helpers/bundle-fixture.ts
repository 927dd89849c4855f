// A small bundle every bundle rule passes (docs/bundle-rules.md), as plain objects a test
// changes to trip one rule, and the ways to hand it to the rules: as a bundle directory's
// files in memory, or written out as operators/<package>/<version> of a repository.
/* eslint-disable @typescript-eslint/no-explicit-any -- a test edits any field of these plain objects */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';

/** The apiextensions.k8s.io/v1 CRD of kind Thing (stored version v1), with `moreVersions` listed after v1. */
export const thingCrd = (moreVersions = ''): string => `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: things.x.example.com
spec:
  group: x.example.com
  names: {kind: Thing, plural: things}
  scope: Namespaced
  versions:
  - {name: v1, served: true, storage: true}
${moreVersions}`;

export interface BundleParts {
  package: string;
  version: string;
  csv: Record<string, any>;
  crds: Record<string, any>[];
  /** More manifests (file name -> object). */
  extra: Record<string, unknown>;
  annotations: Record<string, any>;
  releaseConfig: Record<string, any> | undefined;
  ci: Record<string, any>;
}

/** A 1x1 PNG. */
const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

export function cleanBundle(version = '1.0.0', replaces?: string): BundleParts {
  const pkg = 'demo-operator';
  return {
    package: pkg,
    version,
    csv: {
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'ClusterServiceVersion',
      metadata: {
        name: `${pkg}.v${version}`,
        annotations: {
          'alm-examples': JSON.stringify([
            {
              apiVersion: 'demo.example.com/v1',
              kind: 'Widget',
              metadata: { name: 'sample' },
              spec: { size: 1 },
            },
          ]),
          capabilities: 'Basic Install',
          categories: 'Monitoring, Developer Tools',
          containerImage: `quay.io/demo/demo-operator:${version}`,
          createdAt: '2026-01-02T03:04:05Z',
          repository: 'https://github.com/demo/demo-operator',
          support: 'Demo Inc.',
          description: 'Keeps widgets in shape.',
        },
      },
      spec: {
        displayName: 'Demo Operator',
        description: 'The demo operator keeps widgets in shape on every cluster.',
        version,
        ...(replaces ? { replaces } : {}),
        minKubeVersion: '1.27.0',
        maturity: 'stable',
        keywords: ['demo', 'widgets'],
        maintainers: [{ name: 'Demo Team', email: 'team@demo.example.com' }],
        provider: { name: 'Demo Inc.', url: 'https://demo.example.com' },
        links: [{ name: 'Source', url: 'https://github.com/demo/demo-operator' }],
        icon: [{ base64data: PNG, mediatype: 'image/png' }],
        installModes: [
          { type: 'OwnNamespace', supported: true },
          { type: 'SingleNamespace', supported: true },
          { type: 'MultiNamespace', supported: false },
          { type: 'AllNamespaces', supported: true },
        ],
        customresourcedefinitions: {
          owned: [
            {
              name: 'widgets.demo.example.com',
              version: 'v1',
              kind: 'Widget',
              displayName: 'Widget',
              description: 'A widget.',
            },
          ],
        },
        install: {
          strategy: 'deployment',
          spec: {
            deployments: [
              {
                name: 'demo-operator',
                spec: {
                  selector: { matchLabels: { app: 'demo' } },
                  template: {
                    metadata: { labels: { app: 'demo' } },
                    spec: {
                      serviceAccountName: 'demo-operator',
                      containers: [
                        {
                          name: 'manager',
                          image: `quay.io/demo/demo-operator:${version}`,
                          resources: { requests: { cpu: '10m', memory: '64Mi' } },
                        },
                      ],
                    },
                  },
                },
              },
            ],
            permissions: [
              {
                serviceAccountName: 'demo-operator',
                rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }],
              },
            ],
          },
        },
        relatedImages: [{ name: 'operator', image: `quay.io/demo/demo-operator:${version}` }],
      },
    },
    crds: [
      {
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name: 'widgets.demo.example.com' },
        spec: {
          group: 'demo.example.com',
          names: { kind: 'Widget', plural: 'widgets', singular: 'widget', listKind: 'WidgetList' },
          scope: 'Namespaced',
          versions: [
            { name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } },
          ],
        },
      },
    ],
    extra: {},
    annotations: {
      'operators.operatorframework.io.bundle.mediatype.v1': 'registry+v1',
      'operators.operatorframework.io.bundle.manifests.v1': 'manifests/',
      'operators.operatorframework.io.bundle.metadata.v1': 'metadata/',
      'operators.operatorframework.io.bundle.package.v1': pkg,
      'operators.operatorframework.io.bundle.channels.v1': 'stable',
      'operators.operatorframework.io.bundle.channel.default.v1': 'stable',
      'com.redhat.openshift.versions': 'v4.14',
    },
    releaseConfig: { catalog_templates: [{ template_name: 'basic.yaml', channels: ['stable'] }] },
    ci: {
      reviewers: ['demo-dev'],
      fbc: {
        enabled: true,
        catalog_mapping: [
          { template_name: 'basic.yaml', type: 'olm.template.basic', catalog_names: ['v4.14', 'v4.15'] },
        ],
      },
    },
  };
}

/** Puts a policy/v1beta1 PodDisruptionBudget (removed in Kubernetes 1.25) in a bundle for the
 * OpenShift range `openshiftVersions` that claims Kubernetes 1.21: the removed-API rule's case. */
export function withV1beta1Pdb(parts: BundleParts, openshiftVersions: string): BundleParts {
  parts.annotations['com.redhat.openshift.versions'] = openshiftVersions;
  parts.csv.spec.minKubeVersion = '1.21.0';
  parts.extra['pdb.yaml'] = {
    apiVersion: 'policy/v1beta1',
    kind: 'PodDisruptionBudget',
    metadata: { name: 'demo' },
    spec: { minAvailable: 1 },
  };
  return parts;
}

/** A package released the old way (no templates): the tests operator-pipelines marks skip_fbc run. */
export function withoutFbc(parts: BundleParts): BundleParts {
  return {
    ...parts,
    releaseConfig: undefined,
    ci: { reviewers: ['demo-dev'], updateGraph: 'replaces-mode' },
  };
}

/** The bundle directory's files, by path relative to it. */
export function bundleFiles(parts: BundleParts): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  files.set(`manifests/${parts.package}.clusterserviceversion.yaml`, Buffer.from(stringify(parts.csv)));
  parts.crds.forEach((crd, i) => files.set(`manifests/crd-${i}.yaml`, Buffer.from(stringify(crd))));
  for (const [name, value] of Object.entries(parts.extra))
    files.set(
      `manifests/${name}`,
      Buffer.isBuffer(value) ? value : Buffer.from(typeof value === 'string' ? value : stringify(value)),
    );
  files.set('metadata/annotations.yaml', Buffer.from(stringify({ annotations: parts.annotations })));
  if (parts.releaseConfig) files.set('release-config.yaml', Buffer.from(stringify(parts.releaseConfig)));
  return files;
}

/** Writes the bundles as operators/<package>/<version> of `root`, with the package's ci.yaml. */
export function writeBundles(root: string, bundles: BundleParts[]): string[] {
  const dirs: string[] = [];
  for (const parts of bundles) {
    const dir = join(root, 'operators', parts.package, parts.version);
    for (const [path, data] of bundleFiles(parts)) {
      mkdirSync(join(dir, path, '..'), { recursive: true });
      writeFileSync(join(dir, path), data);
    }
    writeFileSync(join(root, 'operators', parts.package, 'ci.yaml'), stringify(parts.ci));
    dirs.push(dir);
  }
  return dirs;
}
