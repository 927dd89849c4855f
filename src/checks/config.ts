// The repository config `.github/catalog-bot.yml` (design.md, Repository contract): its JSON
// Schema, and a loader that reports every problem with the key path and its line and column.
import { Ajv2020, type ErrorObject } from 'ajv/dist/2020.js';
import {
  isAlias,
  isMap,
  isPair,
  isScalar,
  isSeq,
  LineCounter,
  parseDocument,
  visit,
  type Document,
} from 'yaml';
import type { Diagnostic } from '../catalog/diagnostics.js';
import { parseImageReference } from '../catalog/image-ref.js';

export const CONFIG_PATH = '.github/catalog-bot.yml';

/** The config file is a few settings: anything larger is refused unread. */
export const MAX_CONFIG_BYTES = 64 * 1024;

export interface RepoConfig {
  catalogs: string[];
  maintainers: string[];
  ownership: { ownersFiles: boolean; packageOwners?: string; newPackages: 'maintainers' | 'anyone' };
  automerge: { enabled: boolean; method: 'merge' | 'squash' | 'rebase' };
  publish: { images: string[]; baseImage: string; dispatch?: { eventType?: string; workflow?: string } };
  dependencies: {
    externalProviders: { gvks: { group: string; version: string; kind: string }[]; packages: string[] };
  };
  images: { allowedRegistries: string[]; unverifiableRegistries: string[] };
  templates: { template: string; outputs: string[] }[];
  bundles: {
    path: string;
    imageTemplate: string;
    renderer: { opmVersion: string; csvMetadataFrom?: string };
  };
  ocp: { bundleObjectForbiddenFrom: string; kubernetesVersions: { openshift: string; kubernetes: string }[] };
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object') {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

/** What applies when the file is missing, and for every key the file leaves out. */
export const DEFAULT_CONFIG: RepoConfig = deepFreeze({
  catalogs: ['catalogs/*'],
  maintainers: [],
  ownership: { ownersFiles: true, newPackages: 'maintainers' },
  // Off unless the repository opts in: merging is the one thing the bot does that cannot be undone.
  automerge: { enabled: false, method: 'squash' },
  publish: { images: [], baseImage: 'quay.io/operator-framework/opm:latest' },
  dependencies: { externalProviders: { gvks: [], packages: [] } },
  images: { allowedRegistries: [], unverifiableRegistries: [] },
  templates: [],
  // community-operators-prod's layout and pipeline (docs/bundles.md).
  bundles: {
    path: 'operators/{package}/{version}',
    imageTemplate: 'quay.io/community-operator-pipeline-prod/{package}:{version}',
    renderer: { opmVersion: 'v1.46.0', csvMetadataFrom: 'v4.17' },
  },
  ocp: { bundleObjectForbiddenFrom: 'v4.17', kubernetesVersions: [] },
});

// Patterns (ajv compiles them with the `u` flag; all are linear).
const RELATIVE_GLOB = '^(?!/)(?!(?:.*/)?\\.\\.?(?:/|$))(?!.*//).+$';
const GITHUB_PRINCIPAL = '^[A-Za-z0-9][A-Za-z0-9-]{0,38}(?:/[A-Za-z0-9][A-Za-z0-9_.-]*)?$';
const PACKAGE_PATH = '^(?!/)(?!(?:.*/)?\\.\\.(?:/|$))[^{}\\s]*\\{package\\}(?:[^{}\\s]|\\{package\\})*$';
const IMAGE_TEMPLATE = '^(?:[^\\s{}]|\\{(?:root|sha)\\})+$';
const IMAGE_REF = '^[^\\s{}]+$';
const BUNDLE_PATH =
  '^(?!/)(?!(?:.*/)?\\.\\.(?:/|$))(?=.*\\{package\\})(?=.*\\{version\\})(?:[^{}\\s]|\\{package\\}|\\{version\\})+$';
const BUNDLE_IMAGE = '^(?:[^\\s{}]|\\{(?:package|version)\\})+$';

/** The JSON Schema (draft 2020-12) of `.github/catalog-bot.yml`; every key has a description. */
export const CONFIG_SCHEMA = deepFreeze({
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  title: 'catalog-bot repository configuration',
  description:
    'The file .github/catalog-bot.yml of a catalog repository. It is always read from the base branch of a pull request, so a pull request cannot change the rules that judge it. Every key is optional; a missing file means all defaults.',
  type: 'object',
  additionalProperties: false,
  properties: {
    catalogs: {
      description:
        'Globs of FBC catalog roots, relative to the repository root; each matching directory is one catalog. `*`, `?` and `[...]` match within one path segment.',
      type: 'array',
      minItems: 1,
      items: {
        description: 'A glob of directories, like `catalogs/*`.',
        type: 'string',
        pattern: RELATIVE_GLOB,
      },
      default: ['catalogs/*'],
    },
    maintainers: {
      description:
        'GitHub users (`alice`) and teams (`my-org/catalog-admins`) who may change anything in the repository and approve any change.',
      type: 'array',
      items: {
        description: 'A GitHub user login, or a team as `org/team-slug` (no `@`).',
        type: 'string',
        pattern: GITHUB_PRINCIPAL,
      },
      default: [],
    },
    ownership: {
      description: 'Who may change which package.',
      type: 'object',
      additionalProperties: false,
      properties: {
        ownersFiles: {
          description:
            'Use Prow-style OWNERS and OWNERS_ALIASES files along the changed paths to find who may approve a change.',
          type: 'boolean',
          default: true,
        },
        packageOwners: {
          description:
            'Optional per-package owners file, relative to the repository root, with `{package}` standing for the package name, like `operators/{package}/ci.yaml`. It is read in OWNERS format or as a ci.yaml with `reviewers:`.',
          type: 'string',
          pattern: PACKAGE_PATH,
        },
        newPackages: {
          description:
            'Who may add a package that the base branch does not have: `maintainers` only, or `anyone`.',
          enum: ['maintainers', 'anyone'],
          default: 'maintainers',
        },
      },
      default: {},
    },
    automerge: {
      description:
        'Merge a pull request once every catalog-bot check and every required check is green on its head, it is not a draft nor on hold, and its permissions are satisfied.',
      type: 'object',
      additionalProperties: false,
      properties: {
        enabled: {
          description:
            'Turn auto-merge on. Off by default: the bot merges nothing unless the repository asks for it.',
          type: 'boolean',
          default: false,
        },
        method: {
          description: 'How the bot merges: `merge`, `squash` or `rebase`.',
          enum: ['merge', 'squash', 'rebase'],
          default: 'squash',
        },
      },
      default: {},
    },
    publish: {
      description: 'Catalog images built and pushed for each changed catalog root after a merge.',
      type: 'object',
      additionalProperties: false,
      properties: {
        images: {
          description:
            'Image tags pushed for each changed catalog root. `{root}` is the root directory name, `{sha}` the first 12 hex digits of the merge commit. Empty: nothing is published.',
          type: 'array',
          items: {
            description:
              'An image reference with a tag, like `registry.example.com/org/catalog:{root}-{sha}`.',
            type: 'string',
            pattern: IMAGE_TEMPLATE,
          },
          default: [],
        },
        baseImage: {
          description:
            'The image whose layers the catalog image is built on; it must provide `opm` for `opm serve`.',
          type: 'string',
          pattern: IMAGE_REF,
          default: 'quay.io/operator-framework/opm:latest',
        },
        dispatch: {
          description:
            'Build elsewhere: instead of pushing images, trigger a workflow with the merge commit and the changed catalog roots. Give `eventType` (a `repository_dispatch`) or `workflow` (a `workflow_dispatch` of that workflow file on the default branch).',
          type: 'object',
          additionalProperties: false,
          minProperties: 1,
          maxProperties: 1,
          properties: {
            eventType: {
              description: 'The `repository_dispatch` event type, like `catalog-changed`.',
              type: 'string',
              pattern: '^[A-Za-z0-9_.-]{1,100}$',
            },
            workflow: {
              description: 'The workflow file to run with `workflow_dispatch`, like `publish.yml`.',
              type: 'string',
              pattern: '^[A-Za-z0-9_.-]+\\.ya?ml$',
            },
          },
        },
      },
      default: {},
    },
    dependencies: {
      description:
        'The `catalog-bot/dependencies` check: requirements of bundles on other operators and APIs.',
      type: 'object',
      additionalProperties: false,
      properties: {
        externalProviders: {
          description:
            'Providers that live outside this catalog (APIs of the cluster, operators from another catalog): requirements on them count as met.',
          type: 'object',
          additionalProperties: false,
          properties: {
            gvks: {
              description:
                'APIs provided outside the catalog, like `{group: cert-manager.io, version: v1, kind: Certificate}`.',
              type: 'array',
              items: {
                description: 'One API: group (empty for the core group), version and kind.',
                type: 'object',
                additionalProperties: false,
                required: ['group', 'version', 'kind'],
                properties: {
                  group: { description: 'The API group; empty for the core group.', type: 'string' },
                  version: { description: 'The API version, like `v1`.', type: 'string', minLength: 1 },
                  kind: { description: 'The kind, like `Certificate`.', type: 'string', minLength: 1 },
                },
              },
              default: [],
            },
            packages: {
              description: 'Operator packages provided outside the catalog (at any version).',
              type: 'array',
              items: { description: 'A package name.', type: 'string', minLength: 1 },
              default: [],
            },
          },
          default: {},
        },
      },
      default: {},
    },
    templates: {
      description:
        'Catalog templates (`olm.semver`, `olm.template.basic`) and the committed files rendered from them: `catalog-bot/templates` checks that each output is the render of its template. community-operators `operators/<package>/ci.yaml` `fbc.catalog_mapping` entries are read too.',
      type: 'array',
      items: {
        description: 'One template and its outputs.',
        type: 'object',
        additionalProperties: false,
        required: ['template', 'outputs'],
        properties: {
          template: {
            description: 'The template file, relative to the repository root, like `templates/etcd.yaml`.',
            type: 'string',
            pattern: RELATIVE_GLOB,
          },
          outputs: {
            description: 'The rendered catalog files made from it, like `catalogs/v4.21/etcd/catalog.yaml`.',
            type: 'array',
            minItems: 1,
            items: { description: 'A rendered catalog file.', type: 'string', pattern: RELATIVE_GLOB },
          },
        },
      },
      default: [],
    },
    images: {
      description:
        'The `catalog-bot/images` check: every bundle and related image a pull request adds must exist.',
      type: 'object',
      additionalProperties: false,
      properties: {
        allowedRegistries: {
          description:
            'If not empty, images must come from one of these registries (host names such as `quay.io` or `registry.example.com:5000`).',
          type: 'array',
          items: {
            description: 'A registry host, with a port if it has one.',
            type: 'string',
            pattern: '^[^\\s/]+$',
          },
          default: [],
        },
        unverifiableRegistries: {
          description:
            'Registries whose images may go unverified: when catalog-bot cannot ask about an image there (the registry refuses anonymous access and catalog-bot has no credentials it may send to it, or does not answer), the check is neutral instead of failing. Host names, repository prefixes (`registry.example.com/org`) or `*.example.com`. Default: none, so an image that cannot be checked fails the check.',
          type: 'array',
          items: {
            description:
              'A registry host (with a port if it has one), a host/repository prefix, or `*.` and a domain.',
            type: 'string',
            pattern: '^[^\\s]+$',
          },
          default: [],
        },
      },
      default: {},
    },
    bundles: {
      description:
        'Bundle directories (`manifests/`, `metadata/`) and how `catalog-bot release` adds a bundle to the catalogs its `release-config.yaml` names (docs/bundles.md).',
      type: 'object',
      additionalProperties: false,
      properties: {
        path: {
          description:
            'Where bundle directories live, relative to the repository root, with `{package}` and `{version}` (the directory name, which is the image tag).',
          type: 'string',
          pattern: BUNDLE_PATH,
          default: 'operators/{package}/{version}',
        },
        imageTemplate: {
          description:
            'The image reference a released bundle gets in the catalogs, with `{package}` and `{version}`.',
          type: 'string',
          pattern: BUNDLE_IMAGE,
          default: 'quay.io/community-operator-pipeline-prod/{package}:{version}',
        },
        renderer: {
          description: 'How the catalogs of released bundles are rendered from their templates.',
          type: 'object',
          additionalProperties: false,
          properties: {
            opmVersion: {
              description:
                'The opm release whose `alpha render-template` behaviour to reproduce, like `v1.46.0` (semver templates render edges differently before v1.57.0 and v1.61.0). A package whose committed catalogs were rendered by another opm keeps that behaviour.',
              type: 'string',
              pattern: '^v?\\d+\\.\\d+\\.\\d+$',
              default: 'v1.46.0',
            },
            csvMetadataFrom: {
              description:
                'The first catalog name (like `v4.17`) rendered with `--migrate-level bundle-object-to-csv-metadata`; it and every later one carry `olm.csv.metadata` instead of `olm.bundle.object`.',
              type: 'string',
              pattern: '^[A-Za-z0-9._-]+$',
              default: 'v4.17',
            },
          },
          default: {},
        },
      },
      default: {},
    },
    ocp: {
      description:
        'Catalogs per OpenShift version (directories named like `v4.21`): the `catalog-bot/ocp-continuity` check and its per-version rules (docs/ocp-lifecycle.md).',
      type: 'object',
      additionalProperties: false,
      properties: {
        bundleObjectForbiddenFrom: {
          description:
            'The first OpenShift catalog whose bundles must carry `olm.csv.metadata` instead of `olm.bundle.object`, like `v4.17`; `never` turns the rule off.',
          type: 'string',
          pattern: '^(?:v[0-9]{1,3}\\.[0-9]{1,3}|never)$',
          default: 'v4.17',
        },
        kubernetesVersions: {
          description:
            'The Kubernetes version of OpenShift versions, for the minKubeVersion rule, like `[{openshift: v5.0, kubernetes: "1.36"}]`. OpenShift 4.N defaults to Kubernetes 1.(N+13).',
          type: 'array',
          items: {
            description: 'One OpenShift catalog and the Kubernetes `major.minor` it runs.',
            type: 'object',
            additionalProperties: false,
            required: ['openshift', 'kubernetes'],
            properties: {
              openshift: {
                description: 'The catalog directory name, like `v5.0`.',
                type: 'string',
                pattern: '^v[0-9]{1,3}\\.[0-9]{1,3}$',
              },
              kubernetes: {
                description: 'The Kubernetes `major.minor`, like `1.36`.',
                type: 'string',
                pattern: '^[0-9]{1,3}\\.[0-9]{1,3}$',
              },
            },
          },
          default: [],
        },
      },
      default: {},
    },
  },
});

const ajv = new Ajv2020({ strict: true, allErrors: true, verbose: true, useDefaults: true });
const validate = ajv.compile(CONFIG_SCHEMA);

export interface ConfigProblem {
  /** The key path, like `automerge.method` or `catalogs[1]`; "" for the document as a whole. */
  key: string;
  /** The whole human message, key included: `automerge.method: must be one of ...`. */
  message: string;
  line: number;
  column: number;
}

// ---- schema lookups ---------------------------------------------------------

interface SchemaNode {
  description?: string;
  type?: string;
  enum?: readonly string[];
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode;
  default?: unknown;
}

type Segment = string | number;

/** The schema of a key path (array indexes step into `items`), or undefined for an unknown key. */
function schemaAt(path: readonly Segment[]): SchemaNode | undefined {
  let node: SchemaNode | undefined = CONFIG_SCHEMA as SchemaNode;
  for (const seg of path) {
    if (node === undefined) return undefined;
    node =
      typeof seg === 'number'
        ? node.items
        : Object.hasOwn(node.properties ?? {}, seg)
          ? node.properties?.[seg]
          : undefined;
  }
  return node;
}

/** Every key the schema knows, with the path of the mapping it belongs to. */
function allKeys(node: SchemaNode = CONFIG_SCHEMA as SchemaNode, at: string[] = []): [string[], string][] {
  const out: [string[], string][] = [];
  for (const [name, child] of Object.entries(node.properties ?? {})) {
    out.push([at, name]);
    out.push(...allKeys(child, [...at, name]));
  }
  return out;
}

// ---- messages -----------------------------------------------------------------

function keyPath(path: readonly Segment[]): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else if (/^[A-Za-z0-9_-]+$/.test(seg)) out += out === '' ? seg : `.${seg}`;
    else out += `[${JSON.stringify(seg)}]`;
  }
  return out;
}

function got(value: unknown): string {
  if (value === null || value === undefined) return 'an empty value';
  if (Array.isArray(value)) return 'a list';
  if (value instanceof Uint8Array) return 'binary data';
  if (typeof value === 'object') return 'a mapping';
  if (typeof value === 'string') {
    const shown = value.length > 60 ? `${value.slice(0, 57)}...` : value;
    return JSON.stringify(shown);
  }
  return String(value);
}

const WHAT: Record<string, string> = {
  catalogs: 'a list of globs, like [catalogs/*]',
  'catalogs[]': 'a glob (a string)',
  maintainers: 'a list of GitHub users and org/teams, like [alice, my-org/catalog-admins]',
  'maintainers[]': 'a GitHub user or org/team (a string)',
  'publish.images': 'a list of image references',
  'publish.images[]': 'an image reference (a string)',
};

const TYPE_NAMES: Record<string, string> = {
  object: 'a mapping of keys',
  array: 'a list',
  string: 'a string',
  boolean: 'true or false',
};

/** `catalogs[]` for `catalogs[3]`: the schema-level name of a path. */
function shape(path: readonly Segment[]): string {
  return keyPath(path.map((s) => (typeof s === 'number' ? -1 : s))).replaceAll('[-1]', '[]');
}

function patternMessage(path: readonly Segment[], value: string): string {
  switch (shape(path)) {
    case 'catalogs[]':
      return `must be a glob relative to the repository root, like catalogs/* (got ${got(value)})`;
    case 'maintainers[]':
      return value.startsWith('@')
        ? `must be a GitHub user or org/team without the "@" (got ${got(value)})`
        : `must be a GitHub user or org/team, like alice or my-org/catalog-admins (got ${got(value)})`;
    case 'ownership.packageOwners':
      return !value.includes('{package}')
        ? `must contain {package}, like operators/{package}/ci.yaml (got ${got(value)})`
        : `must be a path relative to the repository root whose only placeholder is {package}, like operators/{package}/ci.yaml (got ${got(value)})`;
    case 'publish.images[]': {
      const unknown = [...value.matchAll(/\{[^{}]*\}/g)].find((m) => m[0] !== '{root}' && m[0] !== '{sha}');
      return unknown
        ? `unknown placeholder ${unknown[0]}; the placeholders are {root} and {sha} (got ${got(value)})`
        : `must be an image reference without spaces, with only {root} and {sha} as placeholders (got ${got(value)})`;
    }
    case 'publish.baseImage':
      return `must be an image reference without spaces or placeholders (got ${got(value)})`;
    default:
      return `has the wrong form (got ${got(value)})`;
  }
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      cur[j] = Math.min((prev[j] as number) + 1, (cur[j - 1] as number) + 1, (prev[j - 1] as number) + cost);
    }
    prev = cur;
  }
  return prev[b.length] as number;
}

const normal = (s: string): string => s.toLowerCase().replace(/[-_\s]/g, '');

/** Close names for an unknown key: siblings first, else the same name under another section. */
function suggest(parent: readonly Segment[], name: string): string[] {
  const n = normal(name);
  const limit = n.length >= 6 ? 2 : 1;
  const siblings = Object.keys(schemaAt(parent)?.properties ?? {});
  const scored = siblings.map((s) => [s, editDistance(n, normal(s))] as const).filter(([, d]) => d <= limit);
  if (scored.length > 0) {
    const best = Math.min(...scored.map(([, d]) => d));
    return scored.filter(([, d]) => d === best).map(([s]) => s);
  }
  // The section itself and its ancestors are no suggestion for a key inside it.
  const here = keyPath(parent);
  const ancestors = new Set(parent.map((_, i) => keyPath(parent.slice(0, i + 1))));
  return allKeys()
    .filter(([at, key]) => keyPath(at) !== here && !ancestors.has(keyPath([...at, key])))
    .filter(([, key]) => editDistance(n, normal(key)) <= (limit > 1 ? 1 : 0))
    .map(([at, key]) => keyPath([...at, key]));
}

// ---- positions ------------------------------------------------------------------

interface Located {
  /** Offset of the node that best shows the problem. */
  offset: number;
}

/** The key as the data has it (what `toJS` would name it). */
function keyName(key: unknown): string {
  return isScalar(key) ? String(key.value) : String(key);
}

/**
 * Walks the document along `path`. With `atKey`, the position of the last key itself
 * (for unknown keys); otherwise of the value, or of its key when the value is empty.
 */
function locate(doc: Document, path: readonly Segment[], atKey: boolean): Located {
  let node: unknown = doc.contents;
  let offset = (isScalar(node) || isMap(node) || isSeq(node) ? node.range?.[0] : undefined) ?? 0;
  for (let i = 0; i < path.length; i++) {
    const seg = path[i] as Segment;
    if (isAlias(node)) node = node.resolve(doc);
    if (isMap(node)) {
      const pair = node.items.find((p) => isPair(p) && keyName(p.key) === String(seg));
      if (pair === undefined) break;
      const keyStart =
        isScalar(pair.key) || isMap(pair.key) || isSeq(pair.key) ? pair.key.range?.[0] : undefined;
      const value = pair.value as { range?: [number, number, number] } | null;
      const last = i === path.length - 1;
      const emptyValue = value === null || !value.range || value.range[0] === value.range[1];
      if (last && (atKey || emptyValue)) return { offset: keyStart ?? offset };
      offset = (emptyValue ? keyStart : value.range?.[0]) ?? offset;
      node = pair.value;
    } else if (isSeq(node) && typeof seg === 'number') {
      const item = node.items[seg] as { range?: [number, number, number] } | undefined;
      if (item?.range === undefined) break;
      offset = item.range[0];
      node = item;
    } else break;
  }
  return { offset };
}

/** The path of the mapping key that starts at `offset`, if any (for duplicate keys). */
function keyPathAt(doc: Document, offset: number): Segment[] | undefined {
  const walk = (node: unknown, at: Segment[]): Segment[] | undefined => {
    if (isMap(node)) {
      for (const p of node.items) {
        const k = p.key as { range?: [number, number, number] } | null;
        if (k?.range?.[0] === offset) return [...at, keyName(p.key)];
        const found = walk(p.value, [...at, keyName(p.key)]);
        if (found) return found;
      }
    } else if (isSeq(node)) {
      for (const [i, item] of node.items.entries()) {
        const found = walk(item, [...at, i]);
        if (found) return found;
      }
    }
    return undefined;
  };
  return walk(doc.contents, []);
}

// ---- the loader -------------------------------------------------------------------

/** The ajv instance path `/publish/images/0` as segments, numbers where the data is a list. */
function segments(instancePath: string, data: unknown): Segment[] {
  if (instancePath === '') return [];
  const out: Segment[] = [];
  let here = data;
  for (const raw of instancePath.slice(1).split('/')) {
    const seg = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    if (Array.isArray(here)) {
      out.push(Number(seg));
      here = here[Number(seg)];
    } else {
      out.push(seg);
      here = here !== null && typeof here === 'object' ? (here as Record<string, unknown>)[seg] : undefined;
    }
  }
  return out;
}

function describeError(
  e: ErrorObject,
  path: Segment[],
): { path: Segment[]; message: string; atKey: boolean } {
  switch (e.keyword) {
    case 'additionalProperties': {
      const name = String((e.params as { additionalProperty: string }).additionalProperty);
      const close = suggest(path, name);
      const hint = close.length > 0 ? ` (did you mean ${close.join(' or ')}?)` : '';
      return { path: [...path, name], message: `unknown key${hint}`, atKey: true };
    }
    case 'type': {
      const what = WHAT[shape(path)] ?? TYPE_NAMES[String(e.schema)] ?? String(e.schema);
      // `[a:{root}]` is a list holding a mapping: YAML reads `{`, `[` and `: ` as structure.
      const quote =
        e.schema === 'string' && e.data !== null && typeof e.data === 'object'
          ? '; put the value in quotes if it contains {, }, [, ] or ": "'
          : '';
      return { path, message: `must be ${what} (got ${got(e.data)}${quote})`, atKey: false };
    }
    case 'enum': {
      const allowed = (e.params as { allowedValues: unknown[] }).allowedValues.join(', ');
      return { path, message: `must be one of ${allowed} (got ${got(e.data)})`, atKey: false };
    }
    case 'pattern':
      return { path, message: patternMessage(path, String(e.data)), atKey: false };
    case 'minItems':
      return {
        path,
        message:
          shape(path) === 'catalogs'
            ? 'must list at least one glob (with none, no catalog would be checked)'
            : `must list at least ${String(e.schema)} item(s)`,
        atKey: false,
      };
    case 'minProperties':
    case 'maxProperties':
      return {
        path,
        message:
          shape(path) === 'publish.dispatch'
            ? 'must name exactly one of eventType (repository_dispatch) or workflow (workflow_dispatch)'
            : (e.message ?? 'is invalid'),
        atKey: false,
      };
    default:
      return { path, message: e.message ?? 'is invalid', atKey: false };
  }
}

/** Checks the schema cannot express: image references must parse as opm parses them. */
function imageProblems(data: Record<string, unknown>): { path: Segment[]; message: string }[] {
  const out: { path: Segment[]; message: string }[] = [];
  const publish = data['publish'];
  if (publish === null || typeof publish !== 'object' || Array.isArray(publish)) return out;
  const { images, baseImage } = publish as Record<string, unknown>;
  const imageTemplate = new RegExp(IMAGE_TEMPLATE, 'u');
  if (Array.isArray(images)) {
    images.forEach((image, i) => {
      if (typeof image !== 'string' || !imageTemplate.test(image)) return;
      const ref = parseImageReference(
        image.replaceAll('{root}', 'catalog').replaceAll('{sha}', '0123456789ab'),
      );
      if (ref === null)
        out.push({
          path: ['publish', 'images', i],
          message: `is not a valid image reference (got ${got(image)})`,
        });
      else if (ref.digest !== undefined)
        out.push({
          path: ['publish', 'images', i],
          message: `must be a tag, not a digest: the bot pushes tags (got ${got(image)})`,
        });
    });
  }
  if (
    typeof baseImage === 'string' &&
    new RegExp(IMAGE_REF, 'u').test(baseImage) &&
    parseImageReference(baseImage) === null
  )
    out.push({
      path: ['publish', 'baseImage'],
      message: `is not a valid image reference (got ${got(baseImage)})`,
    });
  return out;
}

const defaults = (): RepoConfig => structuredClone(DEFAULT_CONFIG) as RepoConfig;

/** text === undefined means the file does not exist (defaults apply, no problem). */
export function parseRepoConfig(text: string | undefined): { config: RepoConfig; problems: ConfigProblem[] } {
  if (text === undefined) return { config: defaults(), problems: [] };
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > MAX_CONFIG_BYTES) {
    const message = `the file is ${bytes} bytes; the limit is ${MAX_CONFIG_BYTES} bytes (64 KiB)`;
    return { config: defaults(), problems: [{ key: '', message, line: 1, column: 1 }] };
  }
  if (text.startsWith('\uFEFF')) text = text.slice(1);

  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, logLevel: 'error' });
  const problems: ConfigProblem[] = [];
  const add = (path: readonly Segment[], message: string, offset: number): void => {
    const key = keyPath(path);
    const { line, col } = lineCounter.linePos(offset);
    const full = key === '' ? message : `${key}: ${message}`;
    if (!problems.some((p) => p.key === key && p.message === full && p.line === line))
      problems.push({ key, message: full, line, column: col });
  };
  const done = (): { config: RepoConfig; problems: ConfigProblem[] } => {
    problems.sort((a, b) => a.line - b.line || a.column - b.column);
    return { config: defaults(), problems };
  };

  if (doc.errors.length > 0) {
    for (const e of doc.errors) {
      if (e.code === 'MULTIPLE_DOCS')
        add([], 'the file must hold one YAML document, but another one starts here', e.pos[0]);
      else if (e.code === 'DUPLICATE_KEY') add(keyPathAt(doc, e.pos[0]) ?? [], 'duplicate key', e.pos[0]);
      else add([], `YAML syntax error: ${e.message}`, e.pos[0]);
    }
    return done();
  }

  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: 100 });
  } catch (e) {
    // An alias without its anchor, or too many aliases: point at the first culprit.
    let offset: number | undefined;
    visit(doc, {
      Alias(_, node) {
        if (offset === undefined || node.resolve(doc) === undefined) offset = node.range?.[0];
        return node.resolve(doc) === undefined ? visit.BREAK : undefined;
      },
    });
    add([], `YAML error: ${e instanceof Error ? e.message : String(e)}`, offset ?? 0);
    return done();
  }
  if (data === null || data === undefined) return { config: defaults(), problems: [] };
  if (typeof data !== 'object' || Array.isArray(data)) {
    add(
      [],
      `the file must be a mapping of keys (catalogs, maintainers, ...), not ${got(data)}`,
      locate(doc, [], false).offset,
    );
    return done();
  }

  if (!validate(data)) {
    for (const e of validate.errors ?? []) {
      const d = describeError(e, segments(e.instancePath, data));
      add(d.path, d.message, locate(doc, d.path, d.atKey).offset);
    }
  }
  for (const p of imageProblems(data as Record<string, unknown>))
    add(p.path, p.message, locate(doc, p.path, false).offset);
  if (problems.length > 0) return done();
  return { config: data as RepoConfig, problems: [] };
}

// ---- diagnostics -----------------------------------------------------------------------

const TOP_KEYS = Object.keys((CONFIG_SCHEMA as SchemaNode).properties ?? {}).join(', ');

/** The segments of a problem's key (`publish.images[0]` → publish, images, 0). */
function parseKey(key: string): Segment[] {
  const out: Segment[] = [];
  for (const m of key.matchAll(/\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]|([^.[\]]+)/g)) {
    if (m[1] !== undefined) out.push(Number(m[1]));
    else if (m[2] !== undefined) out.push(JSON.parse(m[2]) as string);
    else if (m[3] !== undefined) out.push(m[3]);
  }
  return out;
}

/** How to fix a problem at `key`, quoting the allowed keys or values. */
export function configHint(key: string): string {
  const path = parseKey(key);
  if (path.length === 0)
    return `${CONFIG_PATH} must be one YAML mapping of at most 64 KiB; its keys, all optional, are ${TOP_KEYS}.`;
  const node = schemaAt(path);
  if (node === undefined) {
    const parent = path.slice(0, -1);
    const allowed = Object.keys(schemaAt(parent)?.properties ?? {}).join(', ');
    return parent.length === 0
      ? `Allowed top-level keys: ${allowed}.`
      : `Allowed keys under ${keyPath(parent)}: ${allowed}.`;
  }
  const parts: string[] = [];
  if (node.description) parts.push(node.description);
  if (node.properties) parts.push(`Keys: ${Object.keys(node.properties).join(', ')}.`);
  if (node.enum) parts.push(`Allowed values: ${node.enum.join(', ')}.`);
  else if (node.type === 'boolean') parts.push('Allowed values: true, false.');
  if (node.default !== undefined && node.type !== 'object')
    parts.push(`Default: ${JSON.stringify(node.default)}.`);
  return parts.join(' ');
}

export function configProblemsAsDiagnostics(problems: ConfigProblem[]): Diagnostic[] {
  return problems.map((p) => ({
    rule: 'CONFIG-INVALID',
    level: 'error',
    message: p.message,
    file: CONFIG_PATH,
    line: p.line,
    column: p.column,
    hint: configHint(p.key),
  }));
}
