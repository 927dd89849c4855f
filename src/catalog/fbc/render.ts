// The normalised FBC stream `opm render -o json` writes: objects grouped by package
// (sorted), then channels and bundles by name, other schemas, deprecations, and finally
// package-less blobs; fields in opm's struct order, empty optional fields left out.
import type { Bundle, Channel, DeclarativeConfig, Deprecation, Other, Package, Property } from './declcfg.js';
import { goJsonEncode, GoMap } from '../go/gojsonencode.js';
import { goStringCompare } from '../go/gostrings.js';
import { PROPERTY_BUNDLE_OBJECT, PROPERTY_CSV_METADATA } from '../property.js';

type Json = Record<string, unknown>;

/**
 * A blob or property value as declcfg.Meta holds it: re-encoded from a map[string]any
 * (keys sorted) by an Encoder with SetEscapeHTML(false).
 */
export function metaJson(v: unknown): GoMap {
  return new GoMap(v ?? null);
}

/** How a blob's properties are written (`{properties: [...]}`, or nothing when there are none). */
export type PropertiesJson = (props: Property[]) => Json | undefined;

function properties(props: Property[]): Json | undefined {
  if (props.length === 0) return undefined;
  // opm moves the bulky bundle payload properties to the end.
  const heavy = (p: Property): boolean =>
    p.type === PROPERTY_BUNDLE_OBJECT || p.type === PROPERTY_CSV_METADATA;
  return {
    properties: [...props.filter((p) => !heavy(p)), ...props.filter(heavy)].map((p) => ({
      type: p.type,
      value: metaJson(p.value),
    })),
  };
}

// Fields in opm's struct order, empty optional ones left out. The template writer shares
// these with its own way of writing properties (src/catalog/templates/basic.ts).
export function packageJson(p: Package, props: PropertiesJson = properties): Json {
  return {
    schema: p.schema,
    name: p.name,
    defaultChannel: p.defaultChannel,
    ...(p.icon ? { icon: { base64data: p.icon.base64data ?? '', mediatype: p.icon.mediatype ?? '' } } : {}),
    ...(p.description ? { description: p.description } : {}),
    ...props(p.properties),
  };
}

export function channelJson(c: Channel, props: PropertiesJson = properties): Json {
  return {
    schema: c.schema,
    name: c.name,
    package: c.package,
    entries: c.entries.map((e) => ({
      name: e.name,
      ...(e.replaces ? { replaces: e.replaces } : {}),
      ...(e.skips.length > 0 ? { skips: e.skips } : {}),
      ...(e.skipRange ? { skipRange: e.skipRange } : {}),
    })),
    ...props(c.properties),
  };
}

function bundleJson(b: Bundle): Json {
  const related = [...b.relatedImages].sort((x, y) => goStringCompare(x.image, y.image));
  return {
    schema: b.schema,
    ...(b.name ? { name: b.name } : {}),
    ...(b.package ? { package: b.package } : {}),
    image: b.image,
    ...properties(b.properties),
    ...(related.length > 0 ? { relatedImages: related } : {}),
  };
}

export function deprecationJson(d: Deprecation): Json {
  return {
    schema: d.schema,
    package: d.package,
    entries: d.entries.map((e) => ({
      reference: { schema: e.reference.schema, ...(e.reference.name ? { name: e.reference.name } : {}) },
      message: e.message,
    })),
  };
}

const byName = <T extends { name: string }>(a: T, b: T): number => goStringCompare(a.name, b.name);

/** The render stream, one pretty-printed object at a time. */
export function* renderJson(cfg: DeclarativeConfig): Generator<string> {
  const groups = new Map<string, { p: Package[]; c: Channel[]; b: Bundle[]; o: Other[]; d: Deprecation[] }>();
  const group = (name: string) => {
    let g = groups.get(name);
    if (!g) groups.set(name, (g = { p: [], c: [], b: [], o: [], d: [] }));
    return g;
  };
  // opm drops objects whose package is empty, except package-less other blobs.
  for (const p of cfg.packages) if (p.name) group(p.name).p.push(p);
  for (const c of cfg.channels) if (c.package) group(c.package).c.push(c);
  for (const b of cfg.bundles) if (b.package) group(b.package).b.push(b);
  for (const d of cfg.deprecations) if (d.package) group(d.package).d.push(d);
  const rootOthers: Other[] = [];
  for (const o of cfg.others) (o.package ? group(o.package).o : rootOthers).push(o);

  // declcfg.WriteJSON: a json.Encoder with SetIndent("", "    ") and SetEscapeHTML(false)
  // writing structs (the objects above are in Go's field order).
  const write = (v: unknown): string =>
    goJsonEncode(v, { sortKeys: false, escapeHtml: false, indent: '    ' });
  for (const name of [...groups.keys()].sort(goStringCompare)) {
    const g = groups.get(name)!;
    for (const p of g.p) yield write(packageJson(p));
    for (const c of [...g.c].sort(byName)) yield write(channelJson(c));
    for (const b of [...g.b].sort(byName)) yield write(bundleJson(b));
    for (const o of [...g.o].sort((a, b) => goStringCompare(a.schema, b.schema))) {
      yield write(metaJson(o.value));
    }
    for (const d of g.d) yield write(deprecationJson(d));
  }
  for (const o of rootOthers) yield write(metaJson(o.value));
}
