// Bundle images rendered by catalog-bot against the real `opm render <image>` on the same
// images in a local registry: the JSON must be byte-identical.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { changedLines } from '../src/catalog/edits/promote-diff.js';
import { bundleObject, renderTemplateText } from '../src/catalog/templates/index.js';
import { emptyOutput, writeConfig } from '../src/catalog/templates/write.js';
import {
  bundleManifests,
  bundleRenderer,
  BundleRenderError,
  goMarshal,
} from '../src/publish/bundle-render.js';
import { createTar, readTar } from '../src/publish/tar.js';
import { RegistryClient, RegistryError } from '../src/publish/registry.js';
import { thingCrd } from './helpers/bundle-fixture.js';
import { bundleLabels, pushBundle, pushImage, type Files } from './helpers/bundle-images.js';
import { haveOpm, OPM, removeTree, writeTree } from './helpers/oracle.js';
import { haveRegistryTools, startRegistry, type RunningRegistry } from './helpers/registry.js';
import { cliCommand } from './helpers/cli.js';
import { freePort } from './helpers/fleet.js';

const renderTemplateCommand = cliCommand('render-template');

const CSV = (name: string, version: string, extra = ''): string => `apiVersion: operators.coreos.com/v1alpha1
kind: ClusterServiceVersion
metadata:
  name: ${name}
  annotations:
    alm-examples: '[{"apiVersion":"x.example.com/v1","kind":"Thing","spec":{"size":3}}]'
    olm.properties: '[{"type":"olm.maxOpenShiftVersion","value":"4.18"},{"type":"olm.label","value":{"label":"a<b&c"}},{"type":"olm.package","value":{"packageName":"from-annotation","version":"9.9.9"}},{"type":"olm.written","value": {"v": 4.10, "big": 100000000000000000001, "e": "\\u00e9", "z": 1, "10": 2}}]'
    description: "Tags <b>bold</b> & more, unicode é 😀, line\\u2028sep"
    "10": numeric key
    "2": another
spec:
  version: ${version}
  displayName: Thing Operator
  description: |
    A description with <html> & "quotes".
  numbers: [1, 1.0, 1.5, 1e-7, 100000000000000000000, -0, 0777, 0x1F, 1_000]
  empty:
  nested: {z: 1, a: {y: [true, false, null], b: "yes"}}
  customresourcedefinitions:
    owned:
    - name: things.x.example.com
      version: v1
      kind: Thing
    - name: oldthings.x.example.com
      version: v1beta1
      kind: OldThing
    required:
    - name: others.y.example.com
      version: v2
      kind: Other
  apiservicedefinitions:
    owned:
    - name: metrics
      group: metrics.example.com
      version: v1alpha1
      kind: Metric
      deploymentName: op
  relatedImages:
  - name: operand
    image: quay.io/example/operand:1.0
  - name: operator
    image: quay.io/example/operator:1.0
  install:
    strategy: deployment
    spec:
      deployments:
      - name: op
        spec:
          template:
            spec:
              initContainers:
              - name: init
                image: quay.io/example/init:1.0
              containers:
              - name: manager
                image: quay.io/example/operator:1.0
              - name: proxy
                image: gcr.io/example/proxy@sha256:${'a'.repeat(64)}
${extra}`;

const CRD_V1 = thingCrd('  - {name: v1alpha1, served: true, storage: false}\n');

const CRD_V1BETA1 = `apiVersion: apiextensions.k8s.io/v1beta1
kind: CustomResourceDefinition
metadata:
  name: oldthings.x.example.com
spec:
  group: x.example.com
  version: v1beta1
  names: {kind: OldThing, plural: oldthings}
  scope: Namespaced
`;

const ANNOTATIONS = (pkg: string): string => `annotations:
  operators.operatorframework.io.bundle.package.v1: ${pkg}
  operators.operatorframework.io.bundle.channels.v1: stable,fast
`;

function fullBundle(pkg: string, name: string, version: string): Files {
  return {
    'manifests/thing.clusterserviceversion.yaml': CSV(name, version),
    'manifests/things.crd.yaml': CRD_V1,
    'manifests/oldthings.crd.yaml': `---\n${CRD_V1BETA1}`,
    'manifests/service.json': JSON.stringify({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'svc', labels: { '10': 'a', '9': 'b', z: '<z>' } },
      spec: { ports: [{ port: 8443, targetPort: 8443 }] },
    }),
    'manifests/config.yaml':
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\ndata:\n  a: "1"\n---\nkind: Ignored\n',
    'manifests/.hidden.yaml': 'apiVersion: v1\nkind: Secret\nmetadata: {name: hidden}\n',
    'manifests/nokind.yaml': 'apiVersion: v1\nmetadata: {name: nokind}\n',
    'manifests/notes.txt': 'not yaml: [',
    'manifests/sub/inner.yaml': 'apiVersion: v1\nkind: Secret\nmetadata: {name: inner}\n',
    'metadata/annotations.yaml': ANNOTATIONS(pkg),
    'metadata/dependencies.yaml': `dependencies:
- type: olm.package
  value: {packageName: dep, version: ">=1.0.0 <2.0.0"}
- type: olm.gvk
  value: {group: z.example.com, kind: Zed, version: v1}
- type: olm.constraint
  value:
    failureMessage: needs a <thing> & more
    cel: {rule: 'properties.exists(p, p.type == "olm.package" && p.value.version >= "1.0.0")'}
`,
    'metadata/properties.yaml': `properties:
- type: olm.maxOpenShiftVersion
  value: "4.18"
- type: custom.thing
  value: {b: 1, a: [x, y]}
`,
  };
}

function minimalBundle(pkg: string, name: string, version: string, extra = ''): Files {
  return {
    'manifests/csv.yaml': `apiVersion: operators.coreos.com/v1alpha1
kind: ClusterServiceVersion
metadata: {name: ${name}}
spec:
  version: ${version}
${extra}`,
    'metadata/annotations.yaml': ANNOTATIONS(pkg),
  };
}

function opmRender(
  refs: string[],
  extra: string[] = [],
): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(OPM, ['render', ...refs, '-o', 'json', '--use-http', ...extra], {
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, HOME: process.env.HOME ?? '/tmp' },
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('tar and JSON details', () => {
  it('reads ustar, long (PAX) names, and nested directories', () => {
    const long = `manifests/${'x'.repeat(150)}/${'y'.repeat(120)}.yaml`;
    const tar = createTar([
      { path: 'manifests', type: 'dir' },
      { path: 'manifests/a.yaml', type: 'file', data: Buffer.from('a: 1\n') },
      { path: long, type: 'file', data: Buffer.from('b') },
    ]);
    const items = readTar(tar);
    expect(items.map((i) => [i.path, i.type])).toEqual([
      ['manifests', 'dir'],
      ['manifests/a.yaml', 'file'],
      [long, 'file'],
    ]);
    expect(items[1]!.data.toString()).toBe('a: 1\n');
  });

  it('marshals as Go does: sorted keys, HTML escaped, U+2028 escaped', () => {
    expect(goMarshal({ b: '<&>', a: [1, 1.5, 1e21, 1e-7], '10': 'x', '9': '\u2028\n\u0001' })).toBe(
      '{"10":"x","9":"\\u2028\\n\\u0001","a":[1,1.5,1e+21,1e-7],"b":"\\u003c\\u0026\\u003e"}',
    );
  });
});

describe.skipIf(!haveRegistryTools || !haveOpm)('bundle images: catalog-bot render = opm render', () => {
  let registry: RunningRegistry;
  let client: RegistryClient;
  const refs: Record<string, string> = {};
  const repo = (name: string) => ({ registry: registry.host, repository: `bundles/${name}`, tag: 'v1' });

  beforeAll(async () => {
    registry = await startRegistry();
    client = new RegistryClient({ insecureHosts: [registry.host] });
    const push = async (name: string, files: Files, pkg = 'thing-operator'): Promise<void> => {
      await pushBundle(client, repo(name), pkg, files);
      refs[name] = `${registry.host}/bundles/${name}:v1`;
    };
    await push('full', fullBundle('thing-operator', 'thing-operator.v1.2.3', '1.2.3'));
    await push('minimal', minimalBundle('tiny', 'tiny.v0.1.0', '0.1.0'), 'tiny');
    await push(
      'release',
      minimalBundle(
        'tiny',
        'tiny.v0.2.0',
        '0.2.0',
        '  release: 3\n  relatedImages:\n  - {name: z, image: a.io/z:1}\n  - {name: a, image: a.io/z:1}\n',
      ),
      'tiny',
    );
    // two platforms: opm on linux/amd64 takes the amd64 one
    await pushImage(client, repo('multi'), [
      {
        layers: [minimalBundle('multi', 'multi.v1.0.0', '1.0.0')],
        labels: bundleLabels('multi'),
        architecture: 'arm64',
      },
      {
        layers: [minimalBundle('multi', 'multi.v2.0.0', '2.0.0')],
        labels: bundleLabels('multi'),
        architecture: 'amd64',
      },
    ]);
    refs.multi = `${registry.host}/bundles/multi:v1`;
    // a later layer deletes a manifest of an earlier one
    await pushImage(client, repo('layers'), [
      {
        layers: [
          {
            ...minimalBundle('layers', 'layers.v1.0.0', '1.0.0'),
            'manifests/gone.yaml': 'apiVersion: v1\nkind: Secret\nmetadata: {name: gone}\n',
          },
          {
            'manifests/.wh.gone.yaml': '',
            'manifests/kept.yaml': 'apiVersion: v1\nkind: Secret\nmetadata: {name: kept}\n',
          },
        ],
        labels: bundleLabels('layers'),
      },
    ]);
    refs.layers = `${registry.host}/bundles/layers:v1`;
    // metadata files in JSON: opm keeps their property values as written (4.10 stays 4.10)
    await push(
      'json-metadata',
      {
        ...minimalBundle('jsonmeta', 'jsonmeta.v1.0.0', '1.0.0'),
        'metadata/properties.json':
          '{"properties": [{"type": "olm.written", "value": {"n": 1.50, "e": "\\u00e9", "2": 0}}]}\n',
        'metadata/dependencies.json':
          '{"dependencies": [{"type": "olm.constraint", "value": {"failureMessage": "x", "cel": {"rule": "true"}, "weight": 1.0}}]}\n',
      },
      'jsonmeta',
    );
    // an olm.properties annotation Go cannot decode: opm warns and takes none of it
    const annotated = (name: string, properties: string): Files => ({
      'manifests/csv.yaml': `apiVersion: operators.coreos.com/v1alpha1
kind: ClusterServiceVersion
metadata:
  name: ${name}.v1.0.0
  annotations:
    olm.properties: '${properties}'
spec:
  version: 1.0.0
`,
      'metadata/annotations.yaml': ANNOTATIONS(name),
    });
    await push(
      'annotation-number',
      annotated('annonum', '[{"type":"olm.label","value":{"label":"x"}}, 5]'),
      'annonum',
    );
    await push(
      'annotation-type',
      annotated('annotype', '[{"type":"olm.label","value":{"label":"x"}}, {"type":5}]'),
      'annotype',
    );
    await push(
      'annotation-case',
      annotated('annocase', '[{"type":"olm.first","TYPE":"olm.second","value":1,"Value":2}]'),
      'annocase',
    );
    await push(
      'annotation-null',
      annotated('annonull', '[{"type":"olm.label","value":{"label":"x"}}, null]'),
      'annonull',
    );
  }, 60_000);

  afterAll(async () => {
    client?.close();
    await registry?.stop();
  });

  async function ours(names: string[], migrate = false): Promise<string> {
    const renderer = bundleRenderer(client, migrate ? { migrateLevel: 'bundle-object-to-csv-metadata' } : {});
    const cfg = emptyOutput();
    for (const n of names) cfg.bundles.push(bundleObject((await renderer.render(refs[n]!)).blob));
    return writeConfig(cfg, 'json');
  }

  const names = [
    'full',
    'minimal',
    'release',
    'multi',
    'layers',
    'json-metadata',
    'annotation-number',
    'annotation-type',
    'annotation-null',
    'annotation-case',
  ];

  it('every bundle image renders byte-identical to opm render -o json', async () => {
    const opm = opmRender(names.map((n) => refs[n]!));
    expect(opm.stderr).not.toMatch(/level=(error|fatal)/);
    expect(opm.status).toBe(0);
    const mine = await ours(names);
    expect(changedLines(opm.stdout, mine)).toEqual([]);
    expect(mine).toBe(opm.stdout);
    // the things the fixture is there for
    expect(mine).toContain('"packageName": "from-annotation"');
    expect(mine).toContain('multi.v2.0.0');
    expect(mine).not.toContain('multi.v1.0.0');
  });

  it('--migrate-level bundle-object-to-csv-metadata matches opm', async () => {
    const opm = opmRender([refs.full!, refs.minimal!], ['--migrate-level', 'bundle-object-to-csv-metadata']);
    expect(opm.status).toBe(0);
    expect(changedLines(opm.stdout, await ours(['full', 'minimal'], true))).toEqual([]);
  });

  it('caches by digest: a second render asks the registry for the manifest only', async () => {
    const counting = new RegistryClient({ insecureHosts: [registry.host] });
    const renderer = bundleRenderer(counting);
    const first = await renderer.render(refs.full!);
    const before = counting.stats.requests;
    const again = await renderer.render(refs.full!);
    expect(again.blob).toEqual(first.blob);
    // the objects again, as the crd-upgrade check wants them
    const manifests = await bundleManifests(renderer)(refs.full!);
    expect(manifests?.map((m) => (JSON.parse(m) as { kind: string }).kind).sort()).toEqual([
      'ClusterServiceVersion',
      'ConfigMap',
      'CustomResourceDefinition',
      'CustomResourceDefinition',
      'Service',
    ]);
    expect(counting.stats.requests - before).toBe(0);
    expect(renderer.cached).toBe(1);
    counting.close();
  });

  it('for the crd-upgrade check: a registry that cannot be reached rejects (the check asks it no more); an image it lacks is undefined', async () => {
    const closed = `127.0.0.1:${await freePort()}`; // nothing listens there
    const asking = new RegistryClient({ insecureHosts: [registry.host, closed] });
    const manifests = bundleManifests(bundleRenderer(asking));
    await expect(manifests(`${closed}/example/foo-bundle:v1`)).rejects.toThrow(
      `cannot reach registry ${closed}`,
    );
    expect(await manifests(`${registry.host}/example/not-pushed:v1`)).toBeUndefined();
    asking.close();
  });

  it('images opm refuses are refused with the reason', async () => {
    await pushImage(client, repo('nolabels'), [{ layers: [minimalBundle('x', 'x.v1.0.0', '1.0.0')] }]);
    await pushImage(client, repo('nocsv'), [
      {
        layers: [
          {
            'manifests/a.yaml': 'apiVersion: v1\nkind: Secret\nmetadata: {name: a}\n',
            'metadata/annotations.yaml': ANNOTATIONS('x'),
          },
        ],
        labels: bundleLabels('x'),
      },
    ]);
    await pushImage(client, repo('missingcrd'), [
      {
        layers: [
          {
            ...minimalBundle(
              'x',
              'x.v1.0.0',
              '1.0.0',
              '  customresourcedefinitions:\n    owned:\n    - {name: as.b.io, version: v1, kind: A}\n',
            ),
          },
        ],
        labels: bundleLabels('x'),
      },
    ]);
    const renderer = bundleRenderer(client);
    for (const [name, message] of [
      ['nolabels', /image type could not be determined: image has no labels/],
      ['nocsv', /no csv in bundle/],
      ['missingcrd', /couldn't find b\.io\/v1, Kind=A/],
      ['absent', /render reference .*absent.*manifest unknown/],
    ] as const) {
      const ref = `${registry.host}/bundles/${name}:v1`;
      await expect(renderer.render(ref)).rejects.toThrow(message);
      await expect(renderer.render(ref)).rejects.toBeInstanceOf(BundleRenderError);
      // only a missing image is the registry's answer; the others are the image's content
      const err = await renderer.render(ref).catch((e: Error) => e);
      expect((err as Error).cause instanceof RegistryError).toBe(name === 'absent');
      expect(opmRender([ref]).status).not.toBe(0);
    }
  });

  it('a template renders like opm alpha render-template from the same registry', async () => {
    const template = JSON.stringify({
      schema: 'olm.template.basic',
      entries: [
        { schema: 'olm.package', name: 'tiny', defaultChannel: 'stable' },
        {
          schema: 'olm.channel',
          package: 'tiny',
          name: 'stable',
          entries: [{ name: 'tiny.v0.1.0' }, { name: 'tiny.v0.2.0', replaces: 'tiny.v0.1.0' }],
        },
        { schema: 'olm.bundle', image: refs.minimal },
        { schema: 'olm.bundle', image: refs.release },
      ],
    });
    const r = spawnSync(OPM, ['alpha', 'render-template', '-', '-o', 'yaml', '--use-http'], {
      input: template,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(r.status).toBe(0);
    const mine = await renderTemplateText(template, 'yaml', {
      resolveBundle: bundleRenderer(client).resolver,
    });
    expect(changedLines(r.stdout, mine)).toEqual([]);
    // the command pulls them too when no --bundles-from is given
    const dir = writeTree({ 't.json': template });
    try {
      let printed = '';
      const out = new Writable({
        write(chunk: Buffer, _enc, done) {
          printed += chunk.toString();
          done();
        },
      });
      const env = { REGISTRY_INSECURE_HOSTS: registry.host };
      expect(await renderTemplateCommand([join(dir, 't.json'), '-o', 'yaml'], out, undefined, env)).toBe(0);
      expect(printed).toBe(mine);
      printed = '';
      // without plain HTTP for the host the pull fails, with the reason on stderr (127.0.0.1
      // is internal: listed as private, so that this is about plain HTTP only)
      let errors = '';
      const err = new Writable({
        write(chunk: Buffer, _enc, done) {
          errors += chunk.toString();
          done();
        },
      });
      expect(
        await renderTemplateCommand([join(dir, 't.json')], out, err, {
          REGISTRY_PRIVATE_HOSTS: '127.0.0.1',
        }),
      ).toBe(1);
      expect(printed).toBe('');
      expect(errors).toMatch(/render reference ".*minimal:v1": .*REGISTRY_INSECURE_HOSTS/);
    } finally {
      removeTree(dir);
    }
  });
});
