// One bundle image, many variants that each change one file with a YAML or JSON corner
// (test/helpers/yaml-corners.ts has the catalog-file versions): each is pushed to a real
// registry and rendered by the real `opm render` and by catalog-bot. catalog-bot must refuse
// it with a read-refusal rule naming the file, or render what opm renders, or fail where opm
// fails (docs/security.md, "The bot reads files exactly as opm does").
import { execFile } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { READ_REFUSALS } from '../src/catalog/fbc/decode.js';
import { changedLines } from '../src/catalog/edits/promote-diff.js';
import { bundleObject } from '../src/catalog/templates/index.js';
import { emptyOutput, writeConfig } from '../src/catalog/templates/write.js';
import { bundleRenderer } from '../src/publish/bundle-render.js';
import { RegistryClient } from '../src/publish/registry.js';
import { thingCrd } from './helpers/bundle-fixture.js';
import { pushBundle, type Files } from './helpers/bundle-images.js';
import { haveOpm, OPM } from './helpers/oracle.js';
import { haveRegistryTools, startRegistry, type RunningRegistry } from './helpers/registry.js';
import { mapLimit } from '../src/catalog/map-limit.js';

const CSV_PATH = 'manifests/thing.clusterserviceversion.yaml';
const CRD_PATH = 'manifests/things.crd.yaml';
const ANNOTATIONS_PATH = 'metadata/annotations.yaml';
const EXTRA_YAML = 'manifests/extra.yaml';
const EXTRA_JSON = 'manifests/extra.json';

const CSV = `apiVersion: operators.coreos.com/v1alpha1
kind: ClusterServiceVersion
metadata:
  name: thing-operator.v1.0.0
  annotations:
    capabilities: Basic Install
spec:
  version: 1.0.0
  displayName: Thing Operator
  description: Manages things.
  customresourcedefinitions:
    owned:
    - name: things.x.example.com
      version: v1
      kind: Thing
  relatedImages:
  - name: operator
    image: quay.io/example/operator:1.0
`;

const CRD = thingCrd();

const ANNOTATIONS = `annotations:
  operators.operatorframework.io.bundle.package.v1: thing-operator
  operators.operatorframework.io.bundle.channels.v1: stable
`;

const BASE: Files = { [CSV_PATH]: CSV, [CRD_PATH]: CRD, [ANNOTATIONS_PATH]: ANNOTATIONS };

/** A ConfigMap manifest: opm serves it as an olm.bundle.object, so how it was read shows. */
const configMap = (data: string): string =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\n${data}`;

type Outcome = 'refused' | 'same' | 'both fail';

interface Variant {
  name: string;
  /** The one file changed or added. */
  path: string;
  content: string | Buffer;
  expected: Outcome;
}

const VARIANTS: Variant[] = [
  {
    name: 'U+2028 in a comment hides a key',
    path: EXTRA_YAML,
    content: configMap('data:\n  a: "1" # note\u2028  b: "2"\n'),
    expected: 'refused',
  },
  {
    name: 'U+0085 in a comment of the CSV hides a key',
    path: CSV_PATH,
    content: CSV.replace(
      '  displayName: Thing Operator\n',
      '  displayName: Thing Operator # c\u0085  maturity: alpha\n',
    ),
    expected: 'refused',
  },
  {
    name: 'a lone CR ends a line',
    path: EXTRA_YAML,
    content: configMap('data:\n  a: "1"\r  b: "2"\n'),
    expected: 'refused',
  },
  {
    name: '... then more keys',
    path: EXTRA_YAML,
    content: configMap('data:\n  a: "1"\n...\nimmutable: true\n'),
    expected: 'refused',
  },
  {
    name: 'a !!binary tag',
    path: EXTRA_YAML,
    content: configMap('data:\n  a: !!binary aGVsbG8=\n'),
    expected: 'refused',
  },
  {
    name: 'a merge key after explicit keys',
    path: EXTRA_YAML,
    content: `base: &b {a: "from merge"}\n${configMap('data:\n  a: "1"\n  <<: *b\n')}`,
    expected: 'refused',
  },
  {
    name: '?key inside a flow mapping',
    path: EXTRA_YAML,
    content: configMap('data: {?a: "1", b: "2"}\n'),
    expected: 'refused',
  },
  {
    name: 'a float key',
    path: EXTRA_YAML,
    content: configMap('data:\n  1.50: x\n'),
    expected: 'refused',
  },
  {
    name: 'an anchor with . in its name',
    path: EXTRA_YAML,
    content: configMap('data:\n  a: &a.b "1"\n  b: *a.b\n'),
    expected: 'refused',
  },
  {
    name: 'a CRLF ConfigMap',
    path: EXTRA_YAML,
    content: configMap('data:\n  a: "1"\n  b: |\n    x\n    y\n').replaceAll('\n', '\r\n'),
    expected: 'same',
  },
  {
    name: 'a CRLF CSV',
    path: CSV_PATH,
    content: CSV.replaceAll('\n', '\r\n'),
    expected: 'same',
  },
  {
    name: 'a CRLF annotations.yaml',
    path: ANNOTATIONS_PATH,
    content: ANNOTATIONS.replaceAll('\n', '\r\n'),
    expected: 'same',
  },
  // opm renders these two, reading the file as YAML when JSON fails
  {
    name: 'U+2028 as JSON whitespace',
    path: EXTRA_JSON,
    content: '{"apiVersion":"v1",\u2028"kind":"ConfigMap","metadata":{"name":"extra"},"data":{"a":"1"}}\n',
    expected: 'refused',
  },
  {
    name: 'a JSON number too large for a float64',
    path: EXTRA_JSON,
    content: '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"extra"},"n":1e400}\n',
    expected: 'refused',
  },
  {
    name: 'duplicate keys in a JSON manifest',
    path: EXTRA_JSON,
    content: '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"extra"},"data":{"a":"1","a":"2"}}\n',
    expected: 'same',
  },
  // opm reads the CSV's fields by their exact keys: a folded or capitalised twin changes
  // nothing, for opm or for catalog-bot
  {
    name: 'ſpec in the CSV',
    path: CSV_PATH,
    content: `${CSV}ſpec:\n  version: 9.9.9\n`,
    expected: 'same',
  },
  {
    name: 'Spec beside spec in the CSV',
    path: CSV_PATH,
    content: `${CSV}Spec:\n  version: 9.9.9\n`,
    expected: 'same',
  },
  {
    name: 'Metadata beside metadata in the CSV',
    path: CSV_PATH,
    content: `${CSV}Metadata:\n  name: other.v9.9.9\n`,
    expected: 'same',
  },
  // opm finds no CSV: its kind is looked up by the exact key
  {
    name: 'Kind in the CSV',
    path: CSV_PATH,
    content: CSV.replace('kind: ClusterServiceVersion', 'Kind: ClusterServiceVersion'),
    expected: 'both fail',
  },
  {
    name: 'a BOM before the CSV',
    path: CSV_PATH,
    content: `\ufeff${CSV}`,
    expected: 'same',
  },
  {
    name: 'a BOM before a JSON manifest',
    path: EXTRA_JSON,
    content: '\ufeff{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"extra"},"data":{"a":"1"}}\n',
    expected: 'same',
  },
  {
    name: 'duplicate keys in a ConfigMap',
    path: EXTRA_YAML,
    content: configMap('data:\n  a: "1"\n  a: "2"\n'),
    expected: 'same',
  },
  {
    name: 'U+2028 in a comment of annotations.yaml hides the package',
    path: ANNOTATIONS_PATH,
    content: ANNOTATIONS.replace(
      'stable\n',
      'stable # c\u2028  operators.operatorframework.io.bundle.package.v1: other\n',
    ),
    expected: 'refused',
  },
  {
    name: 'a !!str tag in annotations.yaml',
    path: ANNOTATIONS_PATH,
    content: ANNOTATIONS.replace('package.v1: thing-operator', 'package.v1: !!str thing-operator'),
    expected: 'refused',
  },
];

interface Result {
  status: number | null;
  stdout: string;
  stderr: string;
}

function opmRender(ref: string): Promise<Result> {
  return new Promise((resolve) => {
    execFile(
      OPM,
      ['render', ref, '-o', 'json', '--use-http'],
      { encoding: 'utf8', timeout: 60_000, env: { ...process.env, HOME: process.env.HOME ?? '/tmp' } },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : null) : 0;
        resolve({ status: code, stdout, stderr });
      },
    );
  });
}

describe.runIf(haveRegistryTools && haveOpm)(
  'bundle variants: catalog-bot refuses or renders what opm renders',
  () => {
    let registry: RunningRegistry;
    let client: RegistryClient;
    const refs: string[] = [];

    beforeAll(async () => {
      registry = await startRegistry();
      client = new RegistryClient({ insecureHosts: [registry.host] });
      const images = [{ path: '', content: '' }, ...VARIANTS].map((v, i) => ({
        repo: { registry: registry.host, repository: `variants/v${i}`, tag: 'v1' },
        files: v.path === '' ? BASE : { ...BASE, [v.path]: v.content },
      }));
      await Promise.all(images.map((img) => pushBundle(client, img.repo, 'thing-operator', img.files)));
      refs.push(...images.map((img) => `${img.repo.registry}/${img.repo.repository}:v1`));
    }, 60_000);

    afterAll(async () => {
      client?.close();
      await registry?.stop();
    });

    async function ours(ref: string): Promise<{ json: string } | { error: string }> {
      try {
        const cfg = emptyOutput();
        cfg.bundles.push(bundleObject((await bundleRenderer(client).render(ref)).blob));
        return { json: writeConfig(cfg, 'json') };
      } catch (err) {
        return { error: (err as Error).message };
      }
    }

    it('every variant is refused, rendered the same, or fails for both', async () => {
      const opm = await mapLimit(refs, 4, opmRender);
      const mine = await Promise.all(refs.map(ours));
      // the unchanged bundle renders the same: a difference below is the variant's
      expect(opm[0]!.status).toBe(0);
      expect('json' in mine[0]! && mine[0].json).toBe(opm[0]!.stdout);

      const outcomes: Record<string, Outcome | string> = {};
      VARIANTS.forEach((v, i) => {
        const theirs = opm[i + 1]!;
        const own = mine[i + 1]!;
        if ('error' in own) {
          const rule = new RegExp(`${v.path.replaceAll('.', '\\.')}:\\d+: (L-[A-Z-]+):`).exec(own.error)?.[1];
          if (rule && rule in READ_REFUSALS) outcomes[v.name] = 'refused';
          else if (theirs.status !== 0) outcomes[v.name] = 'both fail';
          else outcomes[v.name] = `catalog-bot fails where opm renders: ${own.error}`;
        } else if (theirs.status !== 0) {
          outcomes[v.name] = `catalog-bot renders where opm fails: ${theirs.stderr.trim()}`;
        } else if (own.json === theirs.stdout) {
          outcomes[v.name] = 'same';
        } else {
          outcomes[v.name] = `renders differ: ${JSON.stringify(changedLines(theirs.stdout, own.json))}`;
        }
      });
      expect(outcomes).toEqual(Object.fromEntries(VARIANTS.map((v) => [v.name, v.expected])));
    }, 60_000);
  },
);
