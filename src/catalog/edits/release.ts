// `catalog-bot release <bundle-dir>`: what the release bot of community-operators-prod does
// after a bundle pull request, done on a file tree. The bundle directory's
// `release-config.yaml` names catalog templates; the bundle is added to each (basic: a
// channel entry per named channel and an `olm.bundle` image entry; semver: an `Image`
// entry under the named channel), and every catalog those templates map to (ci.yaml
// `fbc.catalog_mapping`) is re-rendered with the opm behaviour and migrate level the
// repository uses. Pure: files come from a tree, edits go back as before/after texts.
// docs/bundles.md describes the layout and each refusal.
import { parseDocument, isMap, isSeq, type Node as YamlNode } from 'yaml';
import { BundleError, bundleImageReference, loadBundleDirectory, type LoadedBundle } from '../bundle.js';
import {
  applySplices,
  contentEnd,
  dashColumn,
  detectStyle,
  EditError,
  formatOfPath,
  insertSeqItem,
  pairOf,
  parseNodes,
  scalarOf,
  valueOf,
  type Splice,
  type Style,
  type TMap,
  type TSeq,
} from './promote-edit.js';
import type { FileEdit } from './promote.js';
import { CiYamlError, templateMappingsFromCiYaml, type TemplateMapping } from '../templates/ci-yaml.js';
import { renderMappedOutputs, type EditedTemplate } from './render-outputs.js';
import {
  parseTemplate,
  templateKind,
  TemplateError,
  type BundleResolver,
  type TemplateKind,
} from '../templates/index.js';
import { goYamlMarshal } from '../templates/write.js';
import { SCHEMA_BUNDLE, SCHEMA_CHANNEL, SCHEMA_SEMVER_TEMPLATE } from '../property.js';

/** Read access to a repository's files. */
export interface ReleaseTree {
  /** Every file path, `/`-separated, relative to the repository root. */
  list(): string[];
  read(path: string): string | undefined;
  readBytes(path: string): Buffer | undefined;
}

/** The `bundles` settings of the repository config (docs/bundles.md). */
export interface BundleSettings {
  /** Where bundle directories live: `{package}` and `{version}` placeholders. */
  path: string;
  /** The image reference of a released bundle: `{package}` and `{version}` placeholders. */
  imageTemplate: string;
  /** The opm release whose template behaviour the catalogs were rendered with. */
  opmVersion: string;
  /** The first catalog name rendered with `--migrate-level bundle-object-to-csv-metadata`. */
  csvMetadataFrom?: string;
}

export const DEFAULT_BUNDLE_SETTINGS: BundleSettings = {
  path: 'operators/{package}/{version}',
  imageTemplate: 'quay.io/community-operator-pipeline-prod/{package}:{version}',
  opmVersion: 'v1.46.0',
  csvMetadataFrom: 'v4.17',
};

/** Why a bundle cannot be released as asked; the message says what to do. */
export class ReleaseRefusal extends Error {
  constructor(
    message: string,
    readonly file?: string,
    readonly line?: number,
  ) {
    super(message);
    this.name = 'ReleaseRefusal';
  }
}

export interface ReleaseResult {
  package: string;
  version: string;
  /** The CSV name, which is the bundle's name in the catalogs. */
  bundle: string;
  image: string;
  /** Every file written: templates first, then rendered catalogs (before undefined: created). */
  edits: (Omit<FileEdit, 'before'> & { before: string | undefined })[];
  notes: string[];
}

/** One `catalog_templates` entry of a release-config.yaml. */
interface ReleaseTarget {
  templateName: string;
  channels: string[];
  replaces?: string;
  skips?: string[];
  skipRange?: string;
  line: number;
}

const SEMVER_CHANNELS = ['Candidate', 'Fast', 'Stable'];
/** A release-config.yaml is a few lines; a bundle a few MiB at most. Larger input is refused unread. */
const MAX_RELEASE_CONFIG_BYTES = 64 * 1024;
const MAX_BUNDLE_BYTES = 64 * 2 ** 20;
/** The release bot writes YAML lines at most this wide (its emitter's default width). */
const BOT_LINE_WIDTH = 80;

export { migratesCsvMetadata } from './render-outputs.js';

// ---- where the bundle is

/** `bundles.path` as a pattern: each placeholder is one path segment, the same one each time. */
export function pathPattern(template: string): RegExp {
  const seen = new Set<string>();
  const parts = template.split(/(\{package\}|\{version\})/).map((part) => {
    const name = /^\{(package|version)\}$/.exec(part)?.[1];
    if (!name) return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    if (seen.has(name)) return `\\k<${name}>`;
    seen.add(name);
    return `(?<${name}>[^/]+)`;
  });
  return new RegExp(`^${parts.join('')}$`);
}

function normaliseDir(dir: string): string {
  const parts = dir
    .replace(/\\/g, '/')
    .split('/')
    .filter((p) => p !== '' && p !== '.');
  if (parts.includes('..')) throw new ReleaseRefusal(`${dir}: a bundle directory cannot name a parent (..)`);
  return parts.join('/');
}

// ---- release-config.yaml

function lineAt(text: string, offset: number | undefined): number {
  if (offset === undefined) return 1;
  let line = 1;
  for (let i = 0; i < offset && i < text.length; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

function readReleaseConfig(path: string, text: string): ReleaseTarget[] {
  const doc = parseDocument(text);
  if (doc.errors.length > 0) {
    const e = doc.errors[0]!;
    throw new ReleaseRefusal(
      `${path} is not valid YAML: ${e.message.split('\n')[0]}`,
      path,
      e.linePos?.[0]?.line,
    );
  }
  const top = doc.contents as YamlNode | null;
  const list = isMap(top) ? top.get('catalog_templates', true) : undefined;
  if (!isSeq(list) || list.items.length === 0) {
    throw new ReleaseRefusal(
      `${path} has no catalog_templates list: it must name the templates the bundle goes to (catalog_templates: [{template_name, channels}])`,
      path,
      1,
    );
  }
  const out: ReleaseTarget[] = [];
  for (const item of list.items as YamlNode[]) {
    const line = lineAt(text, item.range?.[0]);
    const bad = (what: string): never => {
      throw new ReleaseRefusal(`${path}:${line}: ${what}`, path, line);
    };
    if (!isMap(item)) bad('each catalog_templates entry must be a mapping with template_name and channels');
    const map = item as unknown as { toJSON(): Record<string, unknown> };
    const value = map.toJSON();
    const known = ['template_name', 'channels', 'replaces', 'skips', 'skipRange'];
    for (const k of Object.keys(value))
      if (!known.includes(k)) bad(`unknown key "${k}" (known: ${known.join(', ')})`);
    const name = value.template_name;
    if (typeof name !== 'string' || name === '' || name.includes('/'))
      bad('template_name must be the file name of a template in catalog-templates/');
    const channels = value.channels;
    if (
      !Array.isArray(channels) ||
      channels.length === 0 ||
      !channels.every((c) => typeof c === 'string' && c)
    )
      bad('channels must be a non-empty list of channel names');
    const optional = (k: string): string | undefined => {
      const v = value[k];
      if (v === undefined || v === null) return undefined;
      if (typeof v !== 'string' || v === '') bad(`${k} must be a string`);
      return v as string;
    };
    const skips = value.skips;
    if (
      skips !== undefined &&
      skips !== null &&
      (!Array.isArray(skips) || !skips.every((s) => typeof s === 'string'))
    )
      bad('skips must be a list of bundle names');
    const replaces = optional('replaces');
    const skipRange = optional('skipRange');
    out.push({
      templateName: name as string,
      channels: channels as string[],
      ...(replaces ? { replaces } : {}),
      ...(Array.isArray(skips) && skips.length > 0 ? { skips: skips as string[] } : {}),
      ...(skipRange ? { skipRange } : {}),
      line,
    });
  }
  return out;
}

// ---- template edits, written as the release bot writes them

const lineEndAt = (text: string, at: number): number => {
  const i = text.indexOf('\n', at);
  return i < 0 ? text.length : i;
};

/** A scalar as the bot's emitter writes it: plain where YAML allows, else single-quoted. */
function botScalar(value: string): string {
  const go = goYamlMarshal({ v: value }).slice('v: '.length).replace(/\n$/, '');
  return go.includes('\n') ? JSON.stringify(value) : go;
}

/** `key: value` lines at a column; a value that would pass the line width goes on the next line. */
function pairLines(column: number, lead: string, key: string, value: string): string[] {
  const head = `${' '.repeat(column)}${lead}${key}:`;
  const scalar = botScalar(value);
  if (head.length + 1 + scalar.length > BOT_LINE_WIDTH)
    return [`${head} `, `${' '.repeat(column + lead.length + 2)}${scalar}`];
  return [`${head} ${scalar}`];
}

/** A block-sequence item holding a mapping of scalars (and lists of scalars). */
function itemLines(dash: number, pairs: [string, string | string[]][], indentSeq: boolean): string[] {
  const out: string[] = [];
  pairs.forEach(([key, value], i) => {
    const lead = i === 0 ? '- ' : '  ';
    if (Array.isArray(value)) {
      out.push(`${' '.repeat(dash)}${lead}${key}:`);
      const column = dash + 2 + (indentSeq ? 2 : 0);
      for (const v of value) out.push(`${' '.repeat(column)}- ${botScalar(v)}`);
    } else out.push(...pairLines(dash, lead, key, value));
  });
  return out;
}

/** Append an item after the last one of a block sequence. */
function appendItem(text: string, seq: TSeq, pairs: [string, string | string[]][], style: Style): Splice {
  const last = seq.items[seq.items.length - 1];
  // Flow sequences and JSON templates: the file's own style, as /promote writes it.
  if (seq.flow || !last || style.format === 'json')
    return insertSeqItem(text, seq, Object.fromEntries(pairs), style);
  const indentSeq = style.indentSeq;
  const lines = itemLines(dashColumn(text, seq.items[0]!), pairs, indentSeq);
  return { at: lineEndAt(text, contentEnd(last)), del: 0, ins: `\n${lines.join('\n')}` };
}

function templateEntries(path: string, text: string): { top: TMap; entries: TSeq } {
  const top = parseNodes(text, formatOfPath(path, text))[0];
  const entries = top?.kind === 'map' ? valueOf(top, 'entries') : undefined;
  if (top?.kind !== 'map' || entries?.kind !== 'seq')
    throw new ReleaseRefusal(`${path} has no entries list, so the bundle cannot be added to it`, path, 1);
  return { top, entries };
}

/** The image names the same repository name and tag (or digest) as `image`, from elsewhere. */
function sameBundleOtherImage(other: string, image: string): boolean {
  const last = (ref: string): string => ref.slice(ref.lastIndexOf('/') + 1);
  return other !== image && last(other) === last(image);
}

/** How a channel entry differs from what release-config.yaml asks, or undefined. */
function entryDifference(entry: TMap, target: ReleaseTarget): string | undefined {
  const value = (key: string): unknown => {
    const node = valueOf(entry, key);
    if (!node) return undefined;
    if (node.kind === 'seq') return node.items.map((i) => (i.kind === 'scalar' ? String(i.value) : '?'));
    return node.kind === 'scalar' ? String(node.value) : '?';
  };
  const asked: [string, unknown][] = [
    ['replaces', target.replaces],
    ['skips', target.skips],
    ['skipRange', target.skipRange],
  ];
  for (const [key, want] of asked) {
    const have = value(key);
    const empty = (v: unknown): boolean =>
      v === undefined || v === null || v === '' || (Array.isArray(v) && v.length === 0);
    if (empty(have) && empty(want)) continue;
    if (JSON.stringify(have) !== JSON.stringify(want))
      return `its ${key} is ${empty(have) ? 'not set' : JSON.stringify(have)} where release-config.yaml says ${empty(want) ? 'none' : JSON.stringify(want)}`;
  }
  return undefined;
}

function editBasic(
  path: string,
  text: string,
  target: ReleaseTarget,
  pkg: string,
  bundle: string,
  image: string,
): string {
  const { entries } = templateEntries(path, text);
  const style = detectStyle(text, formatOfPath(path, text));
  const splices: Splice[] = [];
  const maps = entries.items.filter((i): i is TMap => i.kind === 'map');
  for (const channel of target.channels) {
    const site = maps.find(
      (m) =>
        scalarOf(m, 'schema') === SCHEMA_CHANNEL &&
        scalarOf(m, 'name') === channel &&
        (scalarOf(m, 'package') ?? pkg) === pkg,
    );
    const list = site && valueOf(site, 'entries');
    if (!site || list?.kind !== 'seq') {
      const have = maps
        .filter((m) => scalarOf(m, 'schema') === SCHEMA_CHANNEL)
        .map((m) => String(scalarOf(m, 'name')));
      throw new ReleaseRefusal(
        `${path} has no channel "${channel}" of package ${pkg} (it has: ${have.join(', ') || 'none'}); fix channels in release-config.yaml, or add the channel to the template first`,
        path,
        1,
      );
    }
    const pairs: [string, string | string[]][] = [['name', bundle]];
    if (target.replaces) pairs.push(['replaces', target.replaces]);
    if (target.skips) pairs.push(['skips', target.skips]);
    if (target.skipRange) pairs.push(['skipRange', target.skipRange]);
    const existing = list.items.find((e): e is TMap => e.kind === 'map' && scalarOf(e, 'name') === bundle);
    if (existing) {
      // Listed by hand already: left as it is when it says what release-config.yaml says
      // (the release bot renders it so); otherwise one of the two is wrong.
      const differs = entryDifference(existing, target);
      if (differs)
        throw new ReleaseRefusal(
          `${bundle} is already in channel "${channel}" of ${path}, but ${differs}; make the entry and release-config.yaml agree (or remove the entry and let the release add it)`,
          path,
          lineAt(text, existing.start),
        );
      continue;
    }
    splices.push(appendItem(text, list, pairs, style));
  }
  const bundleImages = maps
    .filter((m) => scalarOf(m, 'schema') === SCHEMA_BUNDLE)
    .map((m) => ({ image: String(scalarOf(m, 'image')), at: m.start }));
  const other = bundleImages.find((b) => sameBundleOtherImage(b.image, image));
  if (other)
    throw new ReleaseRefusal(
      `${path} lists ${other.image} for ${bundle}, but its image is ${image} (bundles.imageTemplate); fix the olm.bundle entry or remove it`,
      path,
      lineAt(text, other.at),
    );
  const listed = bundleImages.some((b) => b.image === image);
  if (!listed)
    splices.push(
      appendItem(
        text,
        entries,
        [
          ['schema', SCHEMA_BUNDLE],
          ['image', image],
        ],
        style,
      ),
    );
  return applySplices(text, splices);
}

function editSemver(path: string, text: string, target: ReleaseTarget, image: string): string {
  const format = formatOfPath(path, text);
  const top = parseNodes(text, format)[0];
  if (top?.kind !== 'map') throw new ReleaseRefusal(`${path}: the template is not a mapping`, path, 1);
  const style = detectStyle(text, format);
  let out = text;
  for (const channel of target.channels) {
    const arch = SEMVER_CHANNELS.find((c) => c.toLowerCase() === channel.toLowerCase());
    if (!arch)
      throw new ReleaseRefusal(
        `channel "${channel}" of ${path} is not one of the semver template's ${SEMVER_CHANNELS.join(', ')}; fix channels in release-config.yaml`,
        path,
      );
    const node = parseNodes(out, format)[0] as TMap;
    const archPair = pairOf(node, arch);
    const bundles = archPair?.value?.kind === 'map' ? valueOf(archPair.value, 'bundles') : undefined;
    if (bundles?.kind !== 'seq' || bundles.items.length === 0)
      throw new ReleaseRefusal(
        `${path} has no ${arch} bundles list to add ${image} to; add "${arch}: {Bundles: [...]}" to the template first`,
        path,
      );
    const images = bundles.items.map((i) => (i.kind === 'map' ? String(scalarOf(i, 'image')) : ''));
    const other = images.findIndex((i) => sameBundleOtherImage(i, image));
    if (other >= 0)
      throw new ReleaseRefusal(
        `the ${arch} bundles of ${path} list ${images[other]}, but the bundle's image is ${image} (bundles.imageTemplate); fix the entry or remove it`,
        path,
        lineAt(out, bundles.items[other]!.start),
      );
    // Listed by hand already: left as it is, as the release bot does.
    if (images.includes(image)) continue;
    const first = bundles.items[0]!;
    const key = first.kind === 'map' ? (pairOf(first, 'image')?.key ?? 'Image') : 'Image';
    out = applySplices(out, [appendItem(out, bundles, [[key, image]], style)]);
  }
  return out;
}

export interface ReleaseInput {
  tree: ReleaseTree;
  settings?: Partial<BundleSettings>;
}

/** Release the bundle in `bundleDir` (relative to the tree's root) to its templates and catalogs. */
export async function releaseBundle(bundleDir: string, input: ReleaseInput): Promise<ReleaseResult> {
  const settings = { ...DEFAULT_BUNDLE_SETTINGS, ...input.settings };
  const { tree } = input;
  const dir = normaliseDir(bundleDir);
  const all = tree.list();
  const under = all.filter((p) => p.startsWith(`${dir}/`));
  if (under.length === 0)
    throw new ReleaseRefusal(`${dir} is not a directory of the repository (or it is empty)`);
  const where = pathPattern(settings.path).exec(dir);
  if (!where?.groups) {
    throw new ReleaseRefusal(
      `${dir} is not where bundles live in this repository (${settings.path}, set by bundles.path)`,
    );
  }
  const pkg = where.groups.package!;
  const version = where.groups.version!;
  const packageDir = dir.slice(0, dir.lastIndexOf('/'));

  // ---- layout
  const has = (p: string): boolean => under.some((f) => f.startsWith(`${dir}/${p}`));
  if (!has('manifests/') || !under.includes(`${dir}/metadata/annotations.yaml`)) {
    const nested = ['bundle', version].find((n) => has(`${n}/manifests/`) || has(`${n}/metadata/`));
    if (nested)
      throw new ReleaseRefusal(
        `${dir} keeps its bundle under ${dir}/${nested}/manifests and ${dir}/${nested}/metadata; a bundle's manifests/ and metadata/ must sit directly in ${dir}: move them up one level (git mv ${dir}/${nested}/manifests ${dir}/${nested}/metadata ${dir}/)`,
        `${dir}/${nested}`,
      );
    const missing = [
      ...(has('manifests/') ? [] : [`${dir}/manifests/ (the CSV and CRDs)`]),
      ...(under.includes(`${dir}/metadata/annotations.yaml`) ? [] : [`${dir}/metadata/annotations.yaml`]),
    ];
    throw new ReleaseRefusal(`${dir} is not a bundle: it has no ${missing.join(' and no ')}`);
  }

  // ---- release-config.yaml
  const configPath = `${dir}/release-config.yaml`;
  const configText = tree.read(configPath);
  if (configText === undefined) {
    const packageLevel = `${packageDir}/release-config.yaml`;
    if (tree.read(packageLevel) !== undefined)
      throw new ReleaseRefusal(
        `${packageLevel} sits at the package level, where it applies to no bundle: each bundle carries its own release-config.yaml. Move it to ${configPath} (and give each later bundle its own)`,
        packageLevel,
        1,
      );
    throw new ReleaseRefusal(
      `${dir} has no release-config.yaml, so nothing says which templates and channels it goes to: add ${configPath} with catalog_templates (template_name, channels, and replaces/skips/skipRange as needed)`,
    );
  }
  if (Buffer.byteLength(configText) > MAX_RELEASE_CONFIG_BYTES)
    throw new ReleaseRefusal(
      `${configPath} is larger than ${MAX_RELEASE_CONFIG_BYTES / 1024} KiB; it should name a few templates and channels`,
      configPath,
      1,
    );
  const targets = readReleaseConfig(configPath, configText);

  // ---- the bundle
  const prefix = `${dir}/`;
  const files = new Map<string, Buffer>();
  let size = 0;
  for (const p of under) {
    const data = tree.readBytes(p)!;
    size += data.length;
    if (size > MAX_BUNDLE_BYTES)
      throw new ReleaseRefusal(
        `${dir} holds more than ${MAX_BUNDLE_BYTES / 2 ** 20} MiB of files, far more than a bundle; it cannot be released`,
        dir,
      );
    files.set(p.slice(prefix.length), data);
  }
  const image = bundleImageReference(settings.imageTemplate, pkg, version);
  let loaded: LoadedBundle;
  try {
    loaded = loadBundleDirectory(files, { image });
  } catch (err) {
    if (!(err instanceof BundleError)) throw err;
    throw new ReleaseRefusal(`${dir} cannot be rendered as opm renders it: ${err.message}`, dir);
  }
  if (loaded.package !== pkg)
    throw new ReleaseRefusal(
      `${dir}/metadata/annotations.yaml names package "${loaded.package}", but the bundle sits in ${packageDir}: they must agree`,
      `${dir}/metadata/annotations.yaml`,
    );

  // ---- templates
  const ciPath = `${packageDir}/ci.yaml`;
  const ciText = tree.read(ciPath);
  if (ciText === undefined)
    throw new ReleaseRefusal(`${ciPath} is missing: it maps templates to catalogs`, ciPath);
  let mappings: TemplateMapping[];
  try {
    mappings = templateMappingsFromCiYaml(ciPath, ciText);
  } catch (err) {
    if (!(err instanceof CiYamlError)) throw err;
    throw new ReleaseRefusal(err.message, ciPath);
  }
  const edited = new Map<string, EditedTemplate>();
  const notes: string[] = [];
  for (const target of targets) {
    const path = `${packageDir}/catalog-templates/${target.templateName}`;
    const mapping = mappings.find((m) => m.template === path);
    if (!mapping)
      throw new ReleaseRefusal(
        `${configPath}:${target.line}: template ${target.templateName} is not in ${ciPath} fbc.catalog_mapping, so no catalog is rendered from it; name a mapped template (${mappings.map((m) => m.template.split('/').pop()).join(', ') || 'none mapped'})`,
        configPath,
        target.line,
      );
    const current = edited.get(path);
    const before = current?.before ?? tree.read(path);
    if (before === undefined)
      throw new ReleaseRefusal(
        `${configPath}:${target.line}: template ${path} does not exist`,
        configPath,
        target.line,
      );
    const text = current?.after ?? before;
    let kind: TemplateKind;
    try {
      kind = templateKind(parseTemplate(text));
    } catch (err) {
      if (!(err instanceof TemplateError)) throw err;
      throw new ReleaseRefusal(`${path} is not a template opm can read: ${err.message}`, path);
    }
    let after: string;
    try {
      after =
        kind === SCHEMA_SEMVER_TEMPLATE
          ? editSemver(path, text, target, image)
          : editBasic(path, text, target, pkg, loaded.name, image);
    } catch (err) {
      if (err instanceof EditError) throw new ReleaseRefusal(`${path}: ${err.message}`, path);
      throw err;
    }
    edited.set(path, { before, after, kind, mapping });
    notes.push(
      after === text
        ? `${loaded.name} is in ${target.channels.map((c) => `"${c}"`).join(', ')} of ${path} already: the entry is left as it is`
        : `added ${loaded.name} to ${target.channels.map((c) => `"${c}"`).join(', ')} of ${path}`,
    );
  }

  // ---- catalogs
  const dirBundles = bundlesFromDirectories(tree, all, settings, pkg, packageDir, { version, loaded });
  const edits: ReleaseResult['edits'] = [...edited.entries()]
    .filter(([, e]) => e.after !== e.before)
    .map(([path, e]) => ({ path, before: e.before, after: e.after }));
  const rendered = await renderMappedOutputs(
    tree,
    edited,
    settings,
    dirBundles,
    (template, output, message) =>
      new ReleaseRefusal(
        `${template} with ${loaded.name} added cannot be rendered for ${output}: ${message}`,
        template,
      ),
  );
  edits.push(...rendered.edits);
  notes.push(...rendered.notes);
  return { package: pkg, version, bundle: loaded.name, image, edits, notes };
}

/** Bundles by image reference from the package's bundle directories (a bundle being released first). */
export function bundlesFromDirectories(
  tree: ReleaseTree,
  all: string[],
  settings: Pick<BundleSettings, 'imageTemplate'>,
  pkg: string,
  packageDir: string,
  released?: { version: string; loaded: LoadedBundle },
): BundleResolver {
  const cache = new Map<string, LoadedBundle | undefined>();
  if (released)
    cache.set(bundleImageReference(settings.imageTemplate, pkg, released.version), released.loaded);
  return async (image) => {
    if (!cache.has(image)) {
      cache.set(image, undefined);
      const versions = new Set(
        all
          .filter((p) => p.startsWith(`${packageDir}/`))
          .map((p) => p.slice(packageDir.length + 1).split('/')[0]!),
      );
      const version = [...versions].find(
        (v) => bundleImageReference(settings.imageTemplate, pkg, v) === image,
      );
      if (version !== undefined) {
        const prefix = `${packageDir}/${version}/`;
        const files = new Map<string, Buffer>();
        for (const p of all) if (p.startsWith(prefix)) files.set(p.slice(prefix.length), tree.readBytes(p)!);
        try {
          cache.set(image, loadBundleDirectory(files, { image }));
        } catch (err) {
          if (!(err instanceof BundleError)) throw err;
        }
      }
    }
    const got = cache.get(image);
    return got ? { blob: got.blob, csv: got.csv } : undefined;
  };
}

/** The YAML value of a node, for tests and callers comparing templates as YAML. */
export function yamlValue(text: string): unknown {
  return parseDocument(text).toJS();
}
