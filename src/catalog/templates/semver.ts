// The `olm.semver` template (operator-registry alpha/template/semver/semver.go): bundles
// listed per archetype (candidate, fast, stable) become `<archetype>-v<X>` and/or
// `<archetype>-v<X>.<Y>` channels with generated edges and a default channel
// (docs/olm-upgrades.md, "The olm.semver template"). Bundles come from a resolver, never
// from a registry here.
import {
  compareVersions,
  formatVersion,
  SemverError,
  parseVersion,
  type Version,
} from '../versions/semver.js';
import { goStringCompare } from '../go/gostrings.js';
import type { FbcObject, JsonObject, OutputConfig } from './write.js';
import { PROPERTY_PACKAGE, SCHEMA_CHANNEL, SCHEMA_PACKAGE, SCHEMA_SEMVER_TEMPLATE } from '../property.js';

export class TemplateError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TemplateError';
  }
}

export type Archetype = 'candidate' | 'fast' | 'stable';
export type StreamType = 'minor' | 'major';
export const ARCHETYPES: readonly Archetype[] = ['candidate', 'fast', 'stable'];

/** The template after reading, with opm's defaults applied. */
export interface SemverTemplate {
  generateMajorChannels: boolean;
  generateMinorChannels: boolean;
  defaultChannelTypePreference: StreamType;
  /** Image references per archetype, in template order. */
  bundles: Record<Archetype, string[]>;
}

/**
 * How opm links the generated entries. The rule changed twice:
 * - `edge-scoped` (opm v1.61.0 and later, the current rule): entries are linked across
 *   one major run of an archetype and kind; each Y-stream's highest Z replaces the
 *   previous Y's highest Z and skips every earlier entry of the run except that one.
 * - `channel-scoped` (v1.57.0 to v1.60.x): the same, but linked per channel, and a Y
 *   head skips only the lower Z's of its own Y.
 * - `channel-scoped-skip-replaced` (before v1.57.0, until commit a0e2cf85): like
 *   `channel-scoped`, and each Y head also skips the entry it replaces.
 */
export type SemverEdgeRule = 'edge-scoped' | 'channel-scoped' | 'channel-scoped-skip-replaced';

export interface SemverOptions {
  edgeRule?: SemverEdgeRule;
  /** Copy icon and description from the default channel head's CSV (opm v1.65.0 and later). */
  packageMetadata?: boolean;
}

/** The behaviour of a given opm version (`v1.56.0`, `1.73.0`). */
export function semverOptionsForOpm(version: string): Required<SemverOptions> {
  const m = /^v?(\d+)\.(\d+)/.exec(version);
  if (!m) throw new TemplateError(`not an opm version: ${JSON.stringify(version)}`);
  const minor = Number(m[1]) > 1 ? Infinity : Number(m[2]);
  return {
    edgeRule: minor >= 61 ? 'edge-scoped' : minor >= 57 ? 'channel-scoped' : 'channel-scoped-skip-replaced',
    packageMetadata: minor >= 65,
  };
}

// ---- reading (sigs.k8s.io/yaml UnmarshalStrict into SemverTemplateData)

/** encoding/json field matching: the exact key, else a case-insensitive one. */
function fieldOf(key: string, fields: readonly string[]): string | undefined {
  if (fields.includes(key)) return key;
  return fields.find((f) => f.toLowerCase() === key.toLowerCase());
}

function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v === 'object' ? 'object' : typeof v;
}

function strictObject(value: unknown, fields: readonly string[], where: string): Record<string, unknown> {
  if (value === null || value === undefined) return {};
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw new TemplateError(`json: cannot unmarshal ${jsonType(value)} into Go value of type ${where}`);
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const f = fieldOf(k, fields);
    if (f === undefined)
      throw new TemplateError(`error unmarshaling JSON: json: unknown field ${JSON.stringify(k)}`);
    out[f] = v;
  }
  return out;
}

function expect<T>(v: unknown, type: 'string' | 'boolean', field: string): T | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== type) {
    throw new TemplateError(
      `json: cannot unmarshal ${jsonType(v)} into Go struct field SemverTemplateData.${field} of type ${type === 'boolean' ? 'bool' : 'string'}`,
    );
  }
  return v as T;
}

/** readFile of semver.go: strict fields (any case), schema check, defaults. */
export function readSemverTemplate(doc: unknown): SemverTemplate {
  const top = strictObject(
    doc,
    [
      'schema',
      'generateMajorChannels',
      'generateMinorChannels',
      'defaultChannelTypePreference',
      'candidate',
      'fast',
      'stable',
    ],
    'semver.SemverTemplateData',
  );
  if (expect<string>(top.schema, 'string', 'schema') !== SCHEMA_SEMVER_TEMPLATE) {
    throw new TemplateError('readFile: input file has unknown schema, should be "olm.semver"');
  }
  let major = expect<boolean>(top.generateMajorChannels, 'boolean', 'generateMajorChannels') ?? false;
  let minor = expect<boolean>(top.generateMinorChannels, 'boolean', 'generateMinorChannels') ?? false;
  if (!major && !minor) minor = true;
  const pref =
    expect<string>(top.defaultChannelTypePreference, 'string', 'defaultChannelTypePreference') ?? '';
  let preference: StreamType;
  switch (pref) {
    case '':
      preference = minor ? 'minor' : 'major';
      break;
    case 'minor':
      if (!minor) {
        throw new TemplateError(
          "schema attribute mismatch: DefaultChannelTypePreference set to 'minor' doesn't make sense if not generating minor-version channels",
        );
      }
      preference = 'minor';
      break;
    case 'major':
      if (!major) {
        throw new TemplateError(
          "schema attribute mismatch: DefaultChannelTypePreference set to 'major' doesn't make sense if not generating major-version channels",
        );
      }
      preference = 'major';
      break;
    default:
      throw new TemplateError(
        `unknown DefaultChannelTypePreference: ${JSON.stringify(pref)}\nValid values are 'major' or 'minor'`,
      );
  }
  major = major === true;
  const bundles = {} as Record<Archetype, string[]>;
  for (const a of ARCHETYPES) {
    const ch = strictObject(top[a], ['bundles'], 'semver.channelBundles');
    const list = ch.bundles ?? [];
    if (!Array.isArray(list)) {
      throw new TemplateError(
        `json: cannot unmarshal ${jsonType(list)} into Go struct field channelBundles.${a}.bundles of type []semver.bundleEntry`,
      );
    }
    bundles[a] = list.map((b) => {
      const entry = strictObject(b, ['image'], 'semver.bundleEntry');
      return expect<string>(entry.image, 'string', 'image') ?? '';
    });
  }
  return {
    generateMajorChannels: major,
    generateMinorChannels: minor,
    defaultChannelTypePreference: preference,
    bundles,
  };
}

// ---- generation

/** What generation needs to know of one rendered bundle. */
export interface SemverBundle {
  name: string;
  package: string;
  version: Version;
}

export interface GeneratedEntry {
  name: string;
  replaces?: string;
  skips?: string[];
}

export interface GeneratedChannel {
  name: string;
  archetype: Archetype;
  kind: StreamType;
  entries: GeneratedEntry[];
}

export interface SemverGraph {
  package: string;
  defaultChannel: string;
  channels: GeneratedChannel[];
}

const ARCHETYPE_PRIORITY: Record<Archetype, number> = { candidate: 0, fast: 1, stable: 2 };
const STREAM_PRIORITY: Record<StreamType | '', number> = { minor: 2, major: 1, '': 0 };

const sameMajor = (a: Version, b: Version): boolean => a.major === b.major;
const sameMinor = (a: Version, b: Version): boolean => a.major === b.major && a.minor === b.minor;
const sortStrings = (list: Iterable<string>): string[] => [...list].sort(goStringCompare);

export function minorChannelName(archetype: Archetype, v: Version): string {
  return `${archetype}-v${v.major}.${v.minor}`;
}

export function majorChannelName(archetype: Archetype, v: Version): string {
  return `${archetype}-v${v.major}`;
}

/**
 * Channels, edges and default channel for the bundles of each archetype (bundle name →
 * version, as getVersionsFromStandardChannels builds it).
 */
export function generateSemverGraph(
  template: SemverTemplate,
  byArchetype: Record<Archetype, Map<string, Version>>,
  pkg: string,
  options: SemverOptions = {},
): SemverGraph {
  const rule = options.edgeRule ?? 'edge-scoped';
  interface Tuple {
    arch: Archetype;
    kind: StreamType;
    parent: GeneratedChannel;
    name: string;
    version: Version;
    index: number;
  }
  const channels = new Map<string, GeneratedChannel>();
  const tuples: Tuple[] = [];
  // The "high-water" channel: most stable archetype, then the version of the bundle that
  // created the channel, then the preferred kind.
  let hwc: { arch: Archetype; kind: StreamType | ''; version: Version; name: string } = {
    arch: 'candidate',
    kind: '',
    version: { major: 0n, minor: 0n, patch: 0n, pre: [], build: [] },
    name: '',
  };
  const gt = (h: typeof hwc, ih: typeof hwc): boolean => {
    if (h.arch !== ih.arch) return ARCHETYPE_PRIORITY[h.arch] > ARCHETYPE_PRIORITY[ih.arch];
    const c = compareVersions(h.version, ih.version);
    if (c !== 0) return c > 0;
    if (h.kind !== ih.kind) {
      if (h.kind === template.defaultChannelTypePreference) return true;
      if (ih.kind === template.defaultChannelTypePreference) return false;
      return STREAM_PRIORITY[h.kind] > STREAM_PRIORITY[ih.kind];
    }
    return false;
  };

  for (const arch of ARCHETYPES) {
    const bundles = byArchetype[arch];
    const names = [...bundles.keys()].sort((a, b) => compareVersions(bundles.get(a)!, bundles.get(b)!));
    for (const name of names) {
      const version = bundles.get(name)!;
      const kinds: [StreamType, string][] = [];
      if (template.generateMajorChannels) kinds.push(['major', majorChannelName(arch, version)]);
      if (template.generateMinorChannels) kinds.push(['minor', minorChannelName(arch, version)]);
      for (const [kind, channelName] of kinds) {
        let ch = channels.get(channelName);
        if (!ch) {
          ch = { name: channelName, archetype: arch, kind, entries: [] };
          channels.set(channelName, ch);
          const candidate = { arch, kind, version, name: channelName };
          if (gt(candidate, hwc)) hwc = candidate;
        }
        ch.entries.push({ name });
        tuples.push({ arch, kind, parent: ch, name, version, index: ch.entries.length - 1 });
      }
    }
  }

  if (rule === 'edge-scoped') linkEdgeScoped(tuples);
  else {
    for (const ch of channels.values()) {
      const versionOf = new Map(tuples.filter((t) => t.parent === ch).map((t) => [t.name, t.version]));
      linkChannelScoped(ch.entries, versionOf, rule === 'channel-scoped-skip-replaced');
    }
  }
  return {
    package: pkg,
    defaultChannel: hwc.name,
    channels: [...channels.values()].sort((a, b) => goStringCompare(a.name, b.name)),
  };

  function linkEdgeScoped(entries: Tuple[]): void {
    entries.sort(
      (a, b) =>
        ARCHETYPE_PRIORITY[a.arch] - ARCHETYPE_PRIORITY[b.arch] ||
        STREAM_PRIORITY[a.kind] - STREAM_PRIORITY[b.kind] ||
        compareVersions(a.version, b.version),
    );
    let prevZMax = '';
    let curSkips = new Set<string>();
    const setEdges = (t: Tuple): void => {
      const entry = t.parent.entries[t.index]!;
      entry.replaces = prevZMax;
      const skips = sortStrings([...curSkips].filter((s) => s !== prevZMax));
      if (skips.length > 0) entry.skips = skips;
    };
    for (let i = 1; i < entries.length; i++) {
      const prev = entries[i - 1]!;
      const cur = entries[i]!;
      const archOrKind = cur.arch !== prev.arch || cur.kind !== prev.kind;
      const xChange = !sameMajor(prev.version, cur.version);
      const yChange = !sameMinor(prev.version, cur.version);
      if (archOrKind || xChange || yChange) setEdges(prev);
      if (archOrKind || xChange) {
        curSkips = new Set();
        prevZMax = '';
      } else {
        if (yChange) prevZMax = prev.name;
        curSkips.add(prev.name);
      }
    }
    if (entries.length > 1) {
      const last = entries[entries.length - 1]!;
      const pen = entries[entries.length - 2]!;
      if (last.arch === pen.arch && last.kind === pen.kind && sameMajor(pen.version, last.version)) {
        setEdges(last);
      }
    }
  }
}

/** The per-channel "inchworm" of opm before v1.61.0. */
function linkChannelScoped(
  entries: GeneratedEntry[],
  versionOf: Map<string, Version>,
  skipReplaced: boolean,
): void {
  const v = (i: number): Version => versionOf.get(entries[i]!.name)!;
  entries.sort((a, b) => compareVersions(versionOf.get(a.name)!, versionOf.get(b.name)!));
  let curEdge = 0;
  let yProbe = 0;
  let zmaxQueue = '';
  const count = entries.length;
  while (curEdge < count) {
    while (yProbe < count && v(yProbe).minor === v(curEdge).minor && v(yProbe).major === v(curEdge).major) {
      yProbe++;
    }
    const preChange = yProbe - 1;
    const head = entries[preChange]!;
    if (curEdge !== yProbe) {
      if (zmaxQueue !== '') {
        if (skipReplaced) (head.skips ??= []).push(zmaxQueue);
        head.replaces = zmaxQueue;
      }
      zmaxQueue = head.name;
    }
    for (; curEdge < preChange; curEdge++) {
      if (skipReplaced || head.replaces !== entries[curEdge]!.name)
        (head.skips ??= []).push(entries[curEdge]!.name);
    }
    curEdge++;
    yProbe = curEdge + 1;
  }
  if (count > 1) {
    const pen = entries[count - 2]!;
    const last = entries[count - 1]!;
    if (versionOf.get(last.name)!.minor !== versionOf.get(pen.name)!.minor) last.replaces = pen.name;
  }
}

// ---- render

/** A bundle object as it will be written (fields in Go's order). */
export type BundleObject = Omit<FbcObject, 'value'> & { value: JsonObject };

export interface RenderedBundle {
  object: BundleObject;
  /** The CSV, when the bundle carries it (for the package icon and description). */
  csv?: JsonObject;
}

/** The olm.package property of a bundle: name and strict version, as semver.go reads it. */
export function bundlePackageVersion(b: BundleObject): { package: string; version: Version } {
  const props = Array.isArray(b.value.properties) ? (b.value.properties as JsonObject[]) : [];
  const pkgs = props.filter((p) => p?.type === PROPERTY_PACKAGE);
  if (pkgs.length !== 1) {
    throw new TemplateError(
      `bundle ${JSON.stringify(b.name)} has multiple "olm.package" properties, expected exactly 1`,
    );
  }
  const value = (pkgs[0]!.value ?? {}) as JsonObject;
  const version = typeof value.version === 'string' ? value.version : '';
  try {
    return {
      package: typeof value.packageName === 'string' ? value.packageName : '',
      version: parseVersion(version),
    };
  } catch (err) {
    if (err instanceof SemverError) {
      throw new TemplateError(
        `bundle ${JSON.stringify(b.name)} has invalid version ${JSON.stringify(version)}: ${err.message}`,
      );
    }
    throw err;
  }
}

/**
 * semver.go Render after the bundles are rendered: `rendered` maps each template image
 * reference to its bundle.
 */
export function renderSemver(
  template: SemverTemplate,
  rendered: Map<string, RenderedBundle>,
  options: SemverOptions = {},
): OutputConfig {
  const out: OutputConfig = { packages: [], channels: [], bundles: [], others: [], deprecations: [] };
  const seenImages = new Set<string>();
  for (const b of rendered.values()) {
    if (seenImages.has(b.object.value.image as string)) continue;
    seenImages.add(b.object.value.image as string);
    out.bundles.push(b.object);
  }
  if (out.bundles.length === 0) {
    throw new TemplateError('render: no bundles specified or no bundles could be rendered');
  }
  let pkg = '';
  const byArchetype = {} as Record<Archetype, Map<string, Version>>;
  for (const arch of ARCHETYPES) {
    const versions = new Map<string, Version>();
    for (const image of template.bundles[arch]) {
      const b = rendered.get(image);
      if (!b) {
        throw new TemplateError(
          `render: unable to post-process bundle info: supplied bundle image name ${JSON.stringify(image)} not found in rendered bundle images`,
        );
      }
      const pv = bundlePackageVersion(b.object);
      if (pkg === '') pkg = pv.package;
      else if (pv.package !== pkg) {
        throw new TemplateError(
          `render: unable to post-process bundle info: bundle ${JSON.stringify(pv.package)} does not belong to this package: ${JSON.stringify(pkg)}`,
        );
      }
      if (versions.has(b.object.name)) {
        throw new TemplateError(
          `render: unable to post-process bundle info: duplicate bundle name ${JSON.stringify(b.object.name)}`,
        );
      }
      versions.set(b.object.name, pv.version);
    }
    // Versions that differ only in build metadata cannot be ordered.
    const stripped = new Map<string, number>();
    const conflicts: string[] = [];
    for (const v of versions.values()) {
      const s = formatVersion({ ...v, build: [] });
      stripped.set(s, (stripped.get(s) ?? 0) + 1);
      if (stripped.get(s)! > 1)
        conflicts.push(
          `bundle version ${JSON.stringify(formatVersion(v))} cannot be compared to ${JSON.stringify(s)}`,
        );
    }
    if (conflicts.length > 0) {
      throw new TemplateError(
        `render: unable to post-process bundle info: encountered bundle versions which differ only by build metadata, which cannot be ordered: ${conflicts.length === 1 ? conflicts[0] : `[${conflicts.join(', ')}]`}`,
      );
    }
    byArchetype[arch] = versions;
  }

  const graph = generateSemverGraph(template, byArchetype, pkg, options);
  let icon: JsonObject | undefined;
  let description = '';
  if (options.packageMetadata ?? true) {
    // populatePackageMetadata: icon and description of the default channel head's CSV.
    const def = graph.channels.find((c) => c.name === graph.defaultChannel);
    const headName = def?.entries[def.entries.length - 1]?.name;
    const head = [...rendered.values()].find((b) => b.object.name === headName);
    const spec = head?.csv?.spec as JsonObject | undefined;
    if (spec && typeof spec === 'object') {
      const first = Array.isArray(spec.icon) ? (spec.icon[0] as JsonObject | undefined) : undefined;
      if (first && typeof first === 'object') {
        const data = typeof first.base64data === 'string' ? first.base64data : '';
        icon = {
          base64data: Buffer.from(data, 'base64').toString('base64'),
          mediatype: typeof first.mediatype === 'string' ? first.mediatype : '',
        };
      }
      if (typeof spec.description === 'string') description = spec.description;
    }
  }
  const pkgValue: JsonObject = {
    schema: SCHEMA_PACKAGE,
    name: pkg,
    defaultChannel: graph.defaultChannel,
    ...(icon ? { icon } : {}),
    ...(description ? { description } : {}),
  };
  out.packages.push({ schema: SCHEMA_PACKAGE, package: '', name: pkg, value: pkgValue });
  for (const ch of graph.channels) {
    out.channels.push({
      schema: SCHEMA_CHANNEL,
      package: pkg,
      name: ch.name,
      value: {
        schema: SCHEMA_CHANNEL,
        name: ch.name,
        package: pkg,
        entries: ch.entries.map((e) => ({
          name: e.name,
          ...(e.replaces ? { replaces: e.replaces } : {}),
          ...(e.skips && e.skips.length > 0 ? { skips: e.skips } : {}),
        })),
      },
    });
  }
  return out;
}
