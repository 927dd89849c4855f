// The repository config `.github/catalog-bot.yml` (README "Repository configuration"): its JSON
// Schema, and a loader that reports every problem with the key path and its line and column.
import { Ajv2020, type ErrorObject } from 'ajv/dist/2020.js';
import type { BundleSuite } from './bundle-rules/context.js';
import configSchema from './config.schema.json' with { type: 'json' };
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
  automerge: {
    enabled: boolean;
    method: 'merge' | 'squash' | 'rebase';
    /** The bot's own batch merge, without GitHub's merge queue (docs/merge-queue.md). */
    batch: { enabled: boolean; max: number };
  };
  publish: { images: string[]; baseImage: string; dispatch?: { eventType?: string; workflow?: string } };
  dependencies: {
    externalProviders: { gvks: { group: string; version: string; kind: string }[]; packages: string[] };
  };
  images: { allowedRegistries: string[]; unverifiableRegistries: string[] };
  templates: { template: string; outputs: string[] }[];
  bundles: {
    path: string;
    imageTemplate: string;
    /** Build and push the image of every bundle directory a merge adds (docs/bundles.md). */
    pushImages: boolean;
    renderer: { opmVersion: string; csvMetadataFrom?: string };
    /** What the App does with a bundle-only pull request's catalog update (docs/bundles.md). */
    release: 'push' | 'follow-up' | 'off';
    /** The upstream suites whose rules the bundle check runs too (docs/bundle-rules.md). */
    suites: BundleSuite[];
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
  automerge: { enabled: false, method: 'squash', batch: { enabled: false, max: 8 } },
  publish: { images: [], baseImage: 'quay.io/operator-framework/opm:latest' },
  dependencies: { externalProviders: { gvks: [], packages: [] } },
  images: { allowedRegistries: [], unverifiableRegistries: [] },
  templates: [],
  // community-operators-prod's layout and pipeline (docs/bundles.md).
  bundles: {
    path: 'operators/{package}/{version}',
    imageTemplate: 'quay.io/community-operator-pipeline-prod/{package}:{version}',
    pushImages: false,
    renderer: { opmVersion: 'v1.46.0', csvMetadataFrom: 'v4.17' },
    release: 'push',
    suites: [],
  },
  ocp: { bundleObjectForbiddenFrom: 'v4.17', kubernetesVersions: [] },
});

/**
 * The JSON Schema (draft 2020-12) of `.github/catalog-bot.yml`; every key has a description.
 * It lives in config.schema.json, the one copy: the App validates with it and editors use it
 * (README "Configuration"). Its patterns are compiled with the `u` flag; all are linear.
 */
export const CONFIG_SCHEMA = deepFreeze(configSchema);

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
  pattern?: string;
  minimum?: number;
  maximum?: number;
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

/** The pattern the schema gives a string key. */
function patternAt(path: readonly Segment[]): RegExp {
  const pattern = schemaAt(path)?.pattern;
  if (pattern === undefined) throw new Error(`the config schema has no pattern at ${path.join('.')}`);
  return new RegExp(pattern, 'u');
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
  integer: 'a whole number',
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
    case 'minimum':
    case 'maximum': {
      const node = schemaAt(path);
      const range = `from ${String(node?.minimum)} to ${String(node?.maximum)}`;
      return { path, message: `must be a whole number ${range} (got ${got(e.data)})`, atKey: false };
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
  const imageTemplate = patternAt(['publish', 'images', 0]);
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
    patternAt(['publish', 'baseImage']).test(baseImage) &&
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
