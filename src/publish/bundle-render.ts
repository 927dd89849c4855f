// `opm render <bundle-image>` without opm: pull a bundle image through the distribution
// API, read `manifests/` and `metadata/` from its layers, and build the `olm.bundle` blob
// exactly as operator-registry does (pkg/registry parse.go, registry_to_model.go,
// alpha/action/render.go). Rendered bundles are cached by manifest digest.
import { gunzipSync } from 'node:zlib';
import { decodeFile } from '../catalog/decode.js';
import { TemplateError, type BundleResolver, type ResolvedBundle } from '../catalog/templates/index.js';
import { migrateBundleObjectToCsvMetadata } from '../catalog/templates/migrate.js';
import { RawJson, type JsonObject } from '../catalog/templates/write.js';
import { isIndex, type Descriptor, type ImageIndex, type ImageManifest } from './oci.js';
import { parseRef, referenceOf, RegistryError, type ManifestResult, type RepoRef } from './registry.js';

export const BUNDLE_PACKAGE_LABEL = 'operators.operatorframework.io.bundle.package.v1';
const CONFIGS_LABEL = 'operators.operatorframework.io.index.configs.v1';
const DB_LABEL = 'operators.operatorframework.io.index.database.v1';
/** A bundle is a few manifests; a layer unpacking to more is refused (gzip bombs). */
const MAX_LAYER_BYTES = 256 * 2 ** 20;

/** What bundle rendering needs of a registry (RegistryClient has it). */
export interface ImageSource {
  getManifest(ref: RepoRef, reference: string): Promise<ManifestResult>;
  /** At most `maxBytes` (the source's own cap when absent). */
  getBlob(ref: RepoRef, digest: string, maxBytes?: number): Promise<Buffer>;
}

/** An image config is a few KiB of JSON. */
const MAX_CONFIG_BYTES = 4 * 2 ** 20;

/** Why a bundle image could not be rendered; `cause` is the RegistryError when the registry failed. */
export class BundleRenderError extends TemplateError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message);
    this.name = 'BundleRenderError';
    if (options?.cause !== undefined) this.cause = options.cause;
  }
}

// ---- Go's encoding/json -------------------------------------------------------------

const goCompare = (a: string, b: string): number =>
  a === b ? 0 : Buffer.compare(Buffer.from(a), Buffer.from(b));

function goString(s: string, escapeHTML: boolean): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x22) out += '\\"';
    else if (c === 0x5c) out += '\\\\';
    else if (c < 0x20) {
      out +=
        c === 0x0a
          ? '\\n'
          : c === 0x0d
            ? '\\r'
            : c === 0x09
              ? '\\t'
              : c === 0x08
                ? '\\b'
                : c === 0x0c
                  ? '\\f'
                  : `\\u00${c.toString(16).padStart(2, '0')}`;
    } else if (escapeHTML && (c === 0x3c || c === 0x3e || c === 0x26)) {
      out += `\\u00${c.toString(16)}`;
    } else if (c === 0x2028 || c === 0x2029) out += `\\u${c.toString(16)}`;
    else if (c >= 0xd800 && c <= 0xdfff) {
      // A lone surrogate is invalid UTF-8 in Go: U+FFFD.
      const next = s.charCodeAt(i + 1);
      if (c < 0xdc00 && next >= 0xdc00 && next <= 0xdfff) {
        out += s[i]! + s[i + 1]!;
        i++;
      } else out += '\ufffd';
    } else out += s[i]!;
  }
  return out + '"';
}

/** json.Marshal of a decoded value: map keys sorted bytewise, HTML escaped when asked. */
export function goMarshal(v: unknown, escapeHTML = true): string {
  if (v instanceof RawJson) return v.text;
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'string') return goString(v, escapeHTML);
  if (typeof v === 'number') return Number.isFinite(v) ? JSON.stringify(v) : 'null';
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (Array.isArray(v)) return `[${v.map((x) => goMarshal(x, escapeHTML)).join(',')}]`;
  const o = v as JsonObject;
  const keys = Object.keys(o).sort(goCompare);
  return `{${keys.map((k) => `${goString(k, escapeHTML)}:${goMarshal(o[k], escapeHTML)}`).join(',')}}`;
}

/** json.Marshal in the object's own key order (Go structs), no HTML escaping. */
function structJson(v: JsonObject): string {
  return `{${Object.entries(v)
    .map(
      ([k, x]) => `${goString(k, false)}:${typeof x === 'string' ? goString(x, false) : goMarshal(x, false)}`,
    )
    .join(',')}}`;
}

/** encoding/json field lookup: the exact key, else the first key equal under case folding. */
function field(o: unknown, name: string): unknown {
  if (typeof o !== 'object' || o === null || Array.isArray(o)) return undefined;
  const rec = o as JsonObject;
  if (name in rec) return rec[name];
  const lower = name.toLowerCase();
  const k = Object.keys(rec).find((x) => x.toLowerCase() === lower);
  return k === undefined ? undefined : rec[k];
}

/** A Go map lookup (exact key), as opm reads the CSV spec through map[string]RawMessage. */
function key(o: unknown, name: string): unknown {
  return typeof o === 'object' && o !== null && !Array.isArray(o) ? (o as JsonObject)[name] : undefined;
}

const asString = (v: unknown): string => (typeof v === 'string' ? v : '');
const asList = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

// ---- image layers -------------------------------------------------------------------

type Node = { type: 'file'; data: Buffer } | { type: 'dir' } | { type: 'symlink'; target: string };

/** The image's root file system: slash paths without a leading slash. */
export class ImageFs {
  readonly nodes = new Map<string, Node>();

  private remove(path: string, keepSelf = false): void {
    for (const p of [...this.nodes.keys()]) {
      if ((!keepSelf && p === path) || p.startsWith(path === '' ? '' : `${path}/`)) this.nodes.delete(p);
    }
  }

  /** Apply one layer (an uncompressed tar), honouring whiteouts. */
  applyLayer(tar: Buffer): void {
    for (const entry of readTar(tar)) {
      const path = normalise(entry.path);
      if (path === '') continue;
      const slash = path.lastIndexOf('/');
      const dir = slash < 0 ? '' : path.slice(0, slash);
      const base = path.slice(slash + 1);
      if (base === '.wh..wh..opq') {
        this.remove(dir, true);
        continue;
      }
      if (base.startsWith('.wh.')) {
        this.remove(dir === '' ? base.slice(4) : `${dir}/${base.slice(4)}`);
        continue;
      }
      if (entry.type === 'dir') {
        if (this.nodes.get(path)?.type !== 'dir') this.remove(path);
        this.nodes.set(path, { type: 'dir' });
      } else if (entry.type === 'file') {
        this.remove(path);
        this.nodes.set(path, { type: 'file', data: entry.data });
      } else if (entry.type === 'symlink') {
        this.remove(path);
        this.nodes.set(path, { type: 'symlink', target: entry.link });
      } else if (entry.type === 'hardlink') {
        const target = this.nodes.get(normalise(entry.link));
        this.remove(path);
        if (target) this.nodes.set(path, target);
      }
    }
  }

  /** Follow symlinks (inside the image) to the node a path names. */
  resolve(path: string): { path: string; node: Node } | undefined {
    let parts = normalise(path).split('/').filter(Boolean);
    for (let hops = 0; hops < 40; hops++) {
      let done = true;
      for (let i = 1; i <= parts.length; i++) {
        const prefix = parts.slice(0, i).join('/');
        const node = this.nodes.get(prefix);
        if (node?.type !== 'symlink') continue;
        const base = node.target.startsWith('/') ? [] : parts.slice(0, i - 1);
        parts = resolveDots([...base, ...node.target.split('/'), ...parts.slice(i)]);
        done = false;
        break;
      }
      if (done) {
        const p = parts.join('/');
        const node = p === '' ? ({ type: 'dir' } as Node) : this.nodes.get(p);
        if (!node) {
          // A directory may exist only through its entries' paths.
          if ([...this.nodes.keys()].some((k) => k.startsWith(`${p}/`)))
            return { path: p, node: { type: 'dir' } };
          return undefined;
        }
        return { path: p, node };
      }
    }
    return undefined;
  }

  /** Names directly inside a directory, sorted as Go's fs.ReadDir sorts them. */
  readDir(path: string): { name: string; isDir: boolean }[] | undefined {
    const dir = this.resolve(path);
    if (!dir || dir.node.type !== 'dir') return undefined;
    const prefix = dir.path === '' ? '' : `${dir.path}/`;
    const names = new Map<string, boolean>();
    for (const [p, node] of this.nodes) {
      if (!p.startsWith(prefix) || p === dir.path) continue;
      const rest = p.slice(prefix.length);
      const slash = rest.indexOf('/');
      const name = slash < 0 ? rest : rest.slice(0, slash);
      names.set(name, (names.get(name) ?? false) || slash >= 0 || node.type === 'dir');
    }
    return [...names].sort(([a], [b]) => goCompare(a, b)).map(([name, isDir]) => ({ name, isDir }));
  }

  readFile(path: string): Buffer | undefined {
    const got = this.resolve(path);
    return got?.node.type === 'file' ? got.node.data : undefined;
  }
}

function normalise(path: string): string {
  return resolveDots(path.split('/')).join('/');
}

function resolveDots(parts: string[]): string[] {
  const out: string[] = [];
  for (const p of parts) {
    if (p === '' || p === '.') continue;
    if (p === '..') out.pop();
    else out.push(p);
  }
  return out;
}

interface TarItem {
  path: string;
  type: 'file' | 'dir' | 'symlink' | 'hardlink' | 'other';
  link: string;
  data: Buffer;
}

function tarString(b: Buffer, start: number, length: number): string {
  const slice = b.subarray(start, start + length);
  const nul = slice.indexOf(0);
  return slice.subarray(0, nul < 0 ? slice.length : nul).toString('utf8');
}

function tarNumber(b: Buffer, start: number, length: number): number {
  const slice = b.subarray(start, start + length);
  if ((slice[0]! & 0x80) !== 0) {
    // base-256 (GNU) for large sizes
    let n = slice[0]! & 0x7f;
    for (let i = 1; i < slice.length; i++) n = n * 256 + slice[i]!;
    return n;
  }
  const text = tarString(b, start, length).trim();
  return text === '' ? 0 : parseInt(text, 8);
}

function parsePax(data: Buffer): Map<string, string> {
  const out = new Map<string, string>();
  let i = 0;
  while (i < data.length) {
    const space = data.indexOf(0x20, i);
    if (space < 0) break;
    const length = parseInt(data.subarray(i, space).toString('ascii'), 10);
    if (!Number.isFinite(length) || length <= 0) break;
    const record = data.subarray(space + 1, i + length - 1).toString('utf8');
    const eq = record.indexOf('=');
    if (eq > 0) out.set(record.slice(0, eq), record.slice(eq + 1));
    i += length;
  }
  return out;
}

/** The entries of a tar archive (ustar, PAX and GNU long names). */
export function readTar(tar: Buffer): TarItem[] {
  const out: TarItem[] = [];
  let offset = 0;
  let pax = new Map<string, string>();
  const global = new Map<string, string>();
  let longName: string | undefined;
  let longLink: string | undefined;
  while (offset + 512 <= tar.length) {
    const h = tar.subarray(offset, offset + 512);
    if (h.every((b) => b === 0)) break;
    const size = tarNumber(h, 124, 12);
    const type = String.fromCharCode(h[156]!);
    const data = tar.subarray(offset + 512, offset + 512 + size);
    offset += 512 + Math.ceil(size / 512) * 512;
    if (type === 'x') {
      pax = parsePax(data);
      continue;
    }
    if (type === 'g') {
      for (const [k, v] of parsePax(data)) global.set(k, v);
      continue;
    }
    if (type === 'L') {
      longName = tarString(data, 0, data.length);
      continue;
    }
    if (type === 'K') {
      longLink = tarString(data, 0, data.length);
      continue;
    }
    const magic = tarString(h, 257, 6);
    const prefix = magic.startsWith('ustar') ? tarString(h, 345, 155) : '';
    const name = tarString(h, 0, 100);
    const path = pax.get('path') ?? longName ?? global.get('path') ?? (prefix ? `${prefix}/${name}` : name);
    const link = pax.get('linkpath') ?? longLink ?? tarString(h, 157, 100);
    const kind: TarItem['type'] =
      type === '0' || type === '\0' || type === '7'
        ? path.endsWith('/')
          ? 'dir'
          : 'file'
        : type === '5'
          ? 'dir'
          : type === '2'
            ? 'symlink'
            : type === '1'
              ? 'hardlink'
              : 'other';
    out.push({ path: path.replace(/\/+$/, ''), type: kind, link, data: Buffer.from(data) });
    pax = new Map();
    longName = undefined;
    longLink = undefined;
  }
  return out;
}

function layerTar(mediaType: string, data: Buffer, digest: string): Buffer {
  if (/zstd/.test(mediaType))
    throw new BundleRenderError(`layer ${digest} is zstd-compressed, which catalog-bot cannot read yet`);
  // gzip by magic number (some registries label layers loosely)
  if (data[0] !== 0x1f || data[1] !== 0x8b) return data;
  try {
    return gunzipSync(data, { maxOutputLength: MAX_LAYER_BYTES });
  } catch (err) {
    throw new BundleRenderError(
      (err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE'
        ? `layer ${digest} unpacks to more than ${MAX_LAYER_BYTES / 2 ** 20} MiB, far more than a bundle holds`
        : `layer ${digest} is not a valid gzip stream: ${(err as Error).message}`,
    );
  }
}

// ---- pulling --------------------------------------------------------------------------

export interface PulledImage {
  /** Digest of the (platform) manifest whose layers were read. */
  digest: string;
  labels: Record<string, string>;
  fs: ImageFs;
}

/** Pick linux/amd64 from an index (what opm on a usual host pulls), else the first. */
function pickPlatform(index: ImageIndex): Descriptor | undefined {
  const list = index.manifests ?? [];
  return (
    list.find((d) => d.platform?.os === 'linux' && d.platform.architecture === 'amd64') ??
    list.find((d) => !d.platform || d.platform.architecture !== 'unknown') ??
    list[0]
  );
}

async function platformManifest(
  source: ImageSource,
  repo: RepoRef,
  reference: string,
): Promise<{ digest: string; manifest: ImageManifest; top: string }> {
  let got = await source.getManifest(repo, reference);
  const top = got.digest;
  if (isIndex(got.mediaType)) {
    const chosen = pickPlatform(JSON.parse(got.data.toString('utf8')) as ImageIndex);
    if (!chosen) throw new BundleRenderError(`image index ${top} lists no manifests`);
    got = await source.getManifest(repo, chosen.digest);
  }
  return { digest: got.digest, manifest: JSON.parse(got.data.toString('utf8')) as ImageManifest, top };
}

async function pullLayers(
  source: ImageSource,
  repo: RepoRef,
  digest: string,
  manifest: ImageManifest,
): Promise<PulledImage> {
  const configBytes = await source.getBlob(repo, manifest.config.digest, MAX_CONFIG_BYTES);
  let config: { config?: { Labels?: Record<string, string> } };
  try {
    config = JSON.parse(configBytes.toString('utf8')) as typeof config;
  } catch {
    // JSON.parse quotes the text it choked on: a fixed message keeps the blob out of check runs.
    throw new BundleRenderError(`image config ${manifest.config.digest} is not JSON`);
  }
  const labels = config.config?.Labels ?? {};
  const fs = new ImageFs();
  // Only bundle images are unpacked: a catalog image can be large and is refused anyway.
  if (!(BUNDLE_PACKAGE_LABEL in labels) || CONFIGS_LABEL in labels) return { digest, labels, fs };
  // A layer larger than what a bundle layer may unpack to is refused before it is held.
  const layers = await Promise.all(
    manifest.layers.map((l) => source.getBlob(repo, l.digest, MAX_LAYER_BYTES)),
  );
  manifest.layers.forEach((l, i) => fs.applyLayer(layerTar(l.mediaType, layers[i]!, l.digest)));
  return { digest, labels, fs };
}

// ---- bundle parsing (pkg/registry) ----------------------------------------------------

interface Prop {
  type: string;
  /** The value as written out. */
  value: unknown;
  /** The value's JSON bytes as opm holds them (for sorting and de-duplication). */
  raw: string;
}

const prop = (type: string, value: JsonObject): Prop => ({ type, value, raw: structJson(value) });

/** A value read from a file: YAML goes through json.Marshal (sorted, HTML escaped), JSON stays. */
function rawProp(type: string, value: unknown, fromYaml: boolean): Prop {
  const raw = fromYaml ? goMarshal(value, true) : JSON.stringify(value ?? null);
  return { type, value: new RawJson(raw), raw };
}

/** The first document of a file, decoded as apimachinery's YAMLOrJSONDecoder does. */
function decodeFirst(data: Buffer): { value: unknown; yaml: boolean } | undefined {
  const decoded = decodeFile(data);
  const first = decoded.values[0];
  const problem = decoded.problems[0];
  if (!first || (problem && problem.line <= first.line)) return undefined;
  const text = data.toString('utf8').trimStart();
  return { value: first.value, yaml: !text.startsWith('{') };
}

interface ParsedBundle {
  name: string;
  package: string;
  csv: JsonObject;
  /** Sorted properties, bundle objects last (render.go). */
  properties: Prop[];
  /** relatedImages from the CSV plus operator images; the bundle image is added per reference. */
  csvRelated: { name: string; image: string }[];
  operatorImages: string[];
}

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

interface ApiKey {
  group: string;
  version: string;
  kind: string;
  plural: string;
}
const apiKey = (k: ApiKey): string => JSON.stringify([k.group, k.version, k.kind, k.plural]);

function providedApis(objects: JsonObject[], csv: JsonObject): Map<string, ApiKey> {
  const provided = new Map<string, ApiKey>();
  const add = (k: ApiKey): void => void provided.set(apiKey(k), k);
  // v1 CRDs first, then v1beta1 (Bundle.CustomResourceDefinitions)
  for (const version of ['v1', 'v1beta1']) {
    for (const o of objects) {
      if (o.kind !== 'CustomResourceDefinition') continue;
      const apiVersion = asString(o.apiVersion);
      if (apiVersion.slice(apiVersion.indexOf('/') + 1) !== version) continue;
      const spec = isObject(o.spec) ? o.spec : {};
      const names = isObject(spec.names) ? spec.names : {};
      const base = {
        group: asString(spec.group),
        kind: asString(names.kind),
        plural: asString(names.plural),
      };
      for (const v of asList(spec.versions)) add({ ...base, version: asString(field(v, 'name')) });
      if (version === 'v1beta1' && asString(spec.version) !== '')
        add({ ...base, version: asString(spec.version) });
    }
  }
  const apis = key(key(csv, 'spec'), 'apiservicedefinitions');
  for (const a of asList(field(apis, 'owned'))) {
    add({
      group: asString(field(a, 'group')),
      version: asString(field(a, 'version')),
      kind: asString(field(a, 'kind')),
      plural: asString(field(a, 'name')),
    });
  }
  return provided;
}

/** CSV crdDescriptions as API keys; `bad` when the name is not `<plural>.<group>`. */
function definitionKeys(list: unknown): (ApiKey & { bad: boolean })[] {
  return asList(list).map((d) => {
    const name = asString(field(d, 'name'));
    const dot = name.indexOf('.');
    return {
      group: dot < 0 ? '' : name.slice(dot + 1),
      version: asString(field(d, 'version')),
      kind: asString(field(d, 'kind')),
      plural: dot < 0 ? name : name.slice(0, dot),
      bad: dot < 0,
    };
  });
}

/** parse.go Parse plus registry_to_model.go ObjectsAndPropertiesFromBundle. */
export function parseBundleFs(fs: ImageFs): ParsedBundle {
  // ---- manifests/
  const manifestEntries = fs.readDir('manifests');
  if (!manifestEntries) throw new BundleRenderError('error opening manifests directory: no such directory');
  const objects: JsonObject[] = [];
  let csv: JsonObject | undefined;
  for (const entry of manifestEntries) {
    if (entry.isDir || entry.name.startsWith('.')) continue;
    const data = fs.readFile(`manifests/${entry.name}`);
    if (!data) continue;
    const decoded = decodeFirst(data);
    if (!decoded || !isObject(decoded.value)) continue;
    const obj = decoded.value;
    if (typeof obj.kind !== 'string' || obj.kind === '') continue;
    if (obj.kind === 'ClusterServiceVersion') {
      if (csv) continue;
      csv = obj;
    }
    objects.push(obj);
  }
  if (objects.length === 0) throw new BundleRenderError('no bundle objects found');
  if (!csv) throw new BundleRenderError('no csv in bundle');
  const name = asString(key(csv.metadata, 'name'));
  const spec = key(csv, 'spec');
  const provided = providedApis(objects, csv);
  const crds = key(spec, 'customresourcedefinitions');
  for (const k of definitionKeys(field(crds, 'owned'))) {
    if (k.bad)
      throw new BundleRenderError(
        `error checking provided apis in bundle ${name}: couldn't parse plural.group from crd name: ${k.plural}`,
      );
    if (!provided.has(apiKey({ group: k.group, version: k.version, kind: k.kind, plural: k.plural })))
      throw new BundleRenderError(
        `error checking provided apis in bundle ${name}: couldn't find ${k.group}/${k.version}, Kind=${k.kind} (${k.plural}) in bundle`,
      );
  }

  // ---- metadata/
  const metaEntries = fs.readDir('metadata');
  if (!metaEntries) throw new BundleRenderError('error opening metadata directory: no such directory');
  let annotations: { package: string; channels: string; defaultChannel: string } | undefined;
  let dependencies: { type: string; value: unknown; yaml: boolean }[] | undefined;
  let fileProps: Prop[] | undefined;
  for (const entry of metaEntries) {
    const data = fs.readFile(`metadata/${entry.name}`);
    if (!data) continue;
    const decoded = decodeFirst(data);
    if (!decoded || !isObject(decoded.value)) continue;
    const doc = decoded.value;
    const ann = field(doc, 'annotations');
    if (!annotations && isObject(ann)) {
      const a = {
        package: field(ann, 'operators.operatorframework.io.bundle.package.v1'),
        channels: field(ann, 'operators.operatorframework.io.bundle.channels.v1'),
        defaultChannel: field(ann, 'operators.operatorframework.io.bundle.channel.default.v1'),
      };
      const typed = [a.package, a.channels, a.defaultChannel].every(
        (x) => x === undefined || typeof x === 'string',
      );
      if (typed && (a.package || a.channels || a.defaultChannel))
        annotations = {
          package: asString(a.package),
          channels: asString(a.channels),
          defaultChannel: asString(a.defaultChannel),
        };
    }
    const deps = field(doc, 'dependencies');
    if (!dependencies && Array.isArray(deps) && deps.length > 0 && deps.every(isObject)) {
      dependencies = deps.map((d) => ({
        type: asString(field(d, 'type')),
        value: field(d, 'value'),
        yaml: decoded.yaml,
      }));
    }
    const props = field(doc, 'properties');
    if (!fileProps && Array.isArray(props) && props.length > 0 && props.every(isObject)) {
      fileProps = props.map((p) => rawProp(asString(field(p, 'type')), field(p, 'value'), decoded.yaml));
    }
  }
  if (!annotations) throw new BundleRenderError('Could not find annotations file');

  // ---- derived properties (parse.go derivedProperties)
  const version = key(spec, 'version');
  if (version !== undefined && version !== null && typeof version !== 'string')
    throw new BundleRenderError(
      `get version: json: cannot unmarshal ${typeof version} into Go value of type string`,
    );
  const releaseRaw = key(spec, 'release');
  const release =
    typeof releaseRaw === 'string' ? releaseRaw : typeof releaseRaw === 'number' ? String(releaseRaw) : '';
  const derived: Prop[] = [];
  const csvAnnotations = field(csv.metadata, 'annotations');
  const fromCsv = isObject(csvAnnotations) ? csvAnnotations['olm.properties'] : undefined;
  if (typeof fromCsv === 'string') {
    try {
      const list = JSON.parse(fromCsv) as unknown;
      if (Array.isArray(list))
        for (const p of list) derived.push(rawProp(asString(field(p, 'type')), field(p, 'value'), false));
    } catch {
      // opm logs a warning and goes on
    }
  }
  const packageValue = (pkg: string, v: string, r: string): JsonObject => ({
    packageName: pkg,
    version: v,
    ...(r ? { release: r } : {}),
  });
  if (annotations.package !== '')
    derived.unshift(prop('olm.package', packageValue(annotations.package, asString(version), release)));
  for (const k of provided.values())
    derived.push(prop('olm.gvk', { group: k.group, kind: k.kind, version: k.version }));
  const all = dedupe([...(fileProps ?? []), ...dedupe(derived)]);

  // ---- ObjectsAndPropertiesFromBundle
  const gvks = new Map<string, Prop>();
  const gvksRequired = new Map<string, Prop>();
  let packageProp: Prop | undefined;
  const others: Prop[] = [];
  const gvkProp = (type: string, v: unknown): Prop =>
    prop(type, {
      group: asString(field(v, 'group')),
      kind: asString(field(v, 'kind')),
      version: asString(field(v, 'version')),
    });
  for (const p of all) {
    const value = p.value instanceof RawJson ? (JSON.parse(p.value.text) as unknown) : p.value;
    if (p.type === 'olm.gvk') {
      const g = gvkProp('olm.gvk', value);
      gvks.set(g.raw, g);
    } else if (p.type === 'olm.package') {
      packageProp = prop(
        'olm.package',
        packageValue(
          asString(field(value, 'packageName')),
          asString(field(value, 'version')),
          asString(field(value, 'release')),
        ),
      );
    } else others.push(p);
  }
  const packageRequired: Prop[] = [];
  for (const d of dependencies ?? []) {
    if (d.type === 'olm.gvk') {
      const g = gvkProp('olm.gvk.required', d.value);
      gvksRequired.set(g.raw, g);
    } else if (d.type === 'olm.package') {
      packageRequired.push(
        prop('olm.package.required', {
          packageName: asString(field(d.value, 'packageName')),
          versionRange: asString(field(d.value, 'version')),
        }),
      );
    } else others.push(rawProp(d.type, d.value, d.yaml));
  }
  for (const k of provided.values()) {
    const g = gvkProp('olm.gvk', k);
    if (!gvks.has(g.raw)) gvks.set(g.raw, g);
  }
  const required: ApiKey[] = [];
  for (const k of definitionKeys(field(crds, 'required'))) {
    if (k.bad)
      throw new BundleRenderError(
        `get required apis: couldn't parse plural.group from crd name: ${k.plural}`,
      );
    required.push(k);
  }
  required.push(
    ...asList(field(key(spec, 'apiservicedefinitions'), 'required')).map((a) => ({
      group: asString(field(a, 'group')),
      version: asString(field(a, 'version')),
      kind: asString(field(a, 'kind')),
      plural: asString(field(a, 'name')),
    })),
  );
  for (const k of required) {
    const g = gvkProp('olm.gvk.required', k);
    if (!gvksRequired.has(g.raw)) gvksRequired.set(g.raw, g);
  }
  const props: Prop[] = objects.map((o) =>
    prop('olm.bundle.object', { data: Buffer.from(goMarshal(o, true)).toString('base64') }),
  );
  props.push(
    packageProp ?? prop('olm.package', packageValue(annotations.package, asString(version), release)),
  );
  props.push(...gvks.values(), ...gvksRequired.values(), ...packageRequired, ...others);
  props.sort((a, b) => (a.type !== b.type ? goCompare(a.type, b.type) : goCompare(a.raw, b.raw)));
  // render.go moveBundleObjectsToEndOfPropertySlices
  const heavy = (p: Prop): boolean => p.type === 'olm.bundle.object' || p.type === 'olm.csv.metadata';
  const ordered = [...props.filter((p) => !heavy(p)), ...props.filter(heavy)];

  // ---- related images (render.go getRelatedImages)
  const csvRelated = asList(key(spec, 'relatedImages')).map((r) => ({
    name: asString(field(r, 'name')),
    image: asString(field(r, 'image')),
  }));
  const operatorImages: string[] = [];
  const install = field(spec, 'install');
  if (field(install, 'strategy') === 'deployment') {
    for (const d of asList(field(field(install, 'spec'), 'deployments'))) {
      const podSpec = field(field(field(d, 'spec'), 'template'), 'spec');
      for (const list of ['containers', 'initContainers'])
        for (const c of asList(field(podSpec, list))) operatorImages.push(asString(field(c, 'image')));
    }
  }
  return { name, package: annotations.package, csv, properties: ordered, csvRelated, operatorImages };
}

function dedupe(list: Prop[]): Prop[] {
  const seen = new Set<string>();
  return list.filter((p) => {
    const k = `${p.type}\0${p.raw}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

/** The `olm.bundle` blob of a parsed bundle pulled as `image` (bundleToDeclcfg + Run). */
export function bundleBlob(parsed: ParsedBundle, image: string): JsonObject {
  const related = [...parsed.csvRelated];
  const seen = new Set(related.map((r) => r.image));
  if (image !== '' && !seen.has(image)) related.push({ name: '', image });
  for (const img of parsed.operatorImages) {
    if (!seen.has(img)) related.push({ name: '', image: img });
    seen.add(img);
  }
  // Operator images come from a Go map, so their order before this sort is random.
  related.sort((a, b) => goCompare(a.image, b.image));
  return {
    schema: 'olm.bundle',
    name: parsed.name,
    package: parsed.package,
    image,
    properties: parsed.properties.map((p) => ({ type: p.type, value: p.value })),
    relatedImages: related,
  };
}

// ---- rendering with a cache -----------------------------------------------------------

export interface BundleRenderOptions {
  /** opm --migrate-level. */
  migrateLevel?: 'bundle-object-to-csv-metadata';
  /**
   * Where to pull an image from, like a registries.conf mirror: the rendered bundle keeps
   * the reference as written. Return undefined to pull the image itself.
   */
  mirror?: (image: string) => string | undefined;
  /** How many parsed bundles the cache keeps (default 512). */
  cacheSize?: number;
}

/** Parsed bundles by manifest digest, least recently used evicted first. */
class BundleCache {
  private readonly map = new Map<string, Promise<ParsedBundle>>();
  constructor(private readonly size: number) {}
  get(key: string): Promise<ParsedBundle> | undefined {
    const hit = this.map.get(key);
    if (hit) {
      this.map.delete(key);
      this.map.set(key, hit);
    }
    return hit;
  }
  set(key: string, value: Promise<ParsedBundle>): void {
    this.map.set(key, value);
    value.catch(() => this.map.delete(key));
    while (this.map.size > this.size) this.map.delete(this.map.keys().next().value!);
  }
  get count(): number {
    return this.map.size;
  }
}

export interface BundleRenderer {
  /** The `olm.bundle` blob (and CSV) `opm render <image>` gives; throws BundleRenderError. */
  render(image: string): Promise<ResolvedBundle>;
  /** The same as a template BundleResolver. */
  resolver: BundleResolver;
  /** Parsed bundles held. */
  readonly cached: number;
}

export function bundleRenderer(source: ImageSource, options: BundleRenderOptions = {}): BundleRenderer {
  const cache = new BundleCache(options.cacheSize ?? 512);
  // tag references resolve to a digest once per renderer
  const digests = new Map<string, string>();

  async function parsedOf(image: string): Promise<ParsedBundle> {
    const from = options.mirror?.(image) ?? image;
    let ref;
    try {
      ref = parseRef(from);
    } catch (err) {
      throw new BundleRenderError(`render reference "${image}": ${(err as Error).message}`);
    }
    const reference = referenceOf(ref);
    const known = ref.digest ?? digests.get(from);
    const cached = known ? cache.get(known) : undefined;
    if (cached) return cached;
    try {
      const { digest, manifest, top } = await platformManifest(source, ref, reference);
      digests.set(from, top);
      let pending = cache.get(top);
      if (!pending) {
        pending = pullLayers(source, ref, digest, manifest).then((pulled) => {
          const labels = pulled.labels;
          if (CONFIGS_LABEL in labels)
            throw new BundleRenderError('cannot render declarative config image: not allowed');
          if (!(BUNDLE_PACKAGE_LABEL in labels)) {
            if (DB_LABEL in labels)
              throw new BundleRenderError('sqlite-based index images are no longer supported');
            const keys = Object.keys(labels).sort(goCompare);
            throw new BundleRenderError(
              keys.length > 0
                ? `image type could not be determined, found labels\n${keys.map((k) => `  ${k}=${labels[k]}`).join('\n')}`
                : 'image type could not be determined: image has no labels',
            );
          }
          return parseBundleFs(pulled.fs);
        });
        cache.set(top, pending);
      }
      return await pending;
    } catch (err) {
      const message = (err as Error).message;
      throw new BundleRenderError(`render reference "${image}": ${message}`, {
        ...(err instanceof RegistryError ? { cause: err } : {}),
      });
    }
  }

  async function render(image: string): Promise<ResolvedBundle> {
    const parsed = await parsedOf(image);
    let blob = bundleBlob(parsed, image);
    if (options.migrateLevel === 'bundle-object-to-csv-metadata')
      blob = migrateBundleObjectToCsvMetadata(blob);
    return { blob, csv: parsed.csv };
  }

  return {
    render,
    resolver: (image) => render(image),
    get cached() {
      return cache.count;
    },
  };
}

/** A template BundleResolver that pulls bundle images (opm alpha render-template's way). */
export function bundleResolverFromRegistry(
  source: ImageSource,
  options: BundleRenderOptions = {},
): BundleResolver {
  return bundleRenderer(source, options).resolver;
}

/**
 * The manifests (JSON texts) of a bundle image, for checks that need a bundle's objects
 * (the crd-upgrade check's `renderBundle`); undefined when the image cannot be rendered.
 */
export function bundleManifests(renderer: BundleRenderer): (image: string) => Promise<string[] | undefined> {
  return async (image) => {
    try {
      const { blob } = await renderer.render(image);
      return (blob.properties as { type: string; value: { data?: string } }[])
        .filter((p) => p.type === 'olm.bundle.object' && typeof p.value.data === 'string')
        .map((p) => Buffer.from(p.value.data!, 'base64').toString('utf8'));
    } catch (err) {
      if (err instanceof BundleRenderError) return undefined;
      throw err;
    }
  };
}
