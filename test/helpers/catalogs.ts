// Small builders for file-based catalogs used by the differential tests.
import { dump } from 'js-yaml';

export type Obj = Record<string, unknown>;

/** An `olm.package` blob; `defaultChannel` is `stable` unless overridden (undefined drops it). */
export function pkg(name = 'foo', extra: Obj = {}): Obj {
  return dropUndefined({ schema: 'olm.package', name, defaultChannel: 'stable', ...extra });
}

/** An `olm.channel` blob. Entries given as strings become `{name}`. */
export function channel(entries: (string | Obj)[], extra: Obj = {}): Obj {
  return dropUndefined({
    schema: 'olm.channel',
    package: 'foo',
    name: 'stable',
    entries: entries.map((e) => (typeof e === 'string' ? { name: e } : e)),
    ...extra,
  });
}

/** A bundle `<pkg>.v<version>` with an image and one `olm.package` property. */
export function bundle(version: string, extra: Obj = {}, packageName = 'foo'): Obj {
  return dropUndefined({
    schema: 'olm.bundle',
    package: packageName,
    name: `${packageName}.v${version}`,
    image: `quay.io/example/${packageName}-bundle:v${version}`,
    properties: [{ type: 'olm.package', value: { packageName, version } }],
    ...extra,
  });
}

export function olmPackageProp(version: string, packageName = 'foo', extra: Obj = {}): Obj {
  return { type: 'olm.package', value: { packageName, version, ...extra } };
}

export function deprecations(entries: unknown, extra: Obj = {}): Obj {
  return dropUndefined({ schema: 'olm.deprecations', package: 'foo', entries, ...extra });
}

/** The smallest valid catalog: foo, channel stable with v1.0.0 <- v1.1.0. */
export function basic(): Obj[] {
  return [
    pkg(),
    channel(['foo.v1.0.0', { name: 'foo.v1.1.0', replaces: 'foo.v1.0.0' }]),
    bundle('1.0.0'),
    bundle('1.1.0'),
  ];
}

/** YAML documents separated by `---`. */
export function yamlStream(...objs: Obj[]): string {
  return objs.map((o) => dump(o, { lineWidth: -1, noRefs: true })).join('---\n');
}

/** One JSON object per line. */
export function jsonStream(...objs: Obj[]): string {
  return objs.map((o) => JSON.stringify(o)).join('\n') + '\n';
}

/** Pretty-printed JSON objects back to back. */
export function prettyJsonStream(...objs: Obj[]): string {
  return objs.map((o) => JSON.stringify(o, null, 2)).join('\n');
}

function dropUndefined(o: Obj): Obj {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
}

/** The bundle name of package foo at a version. */
export const v = (version: string): string => `foo.v${version}`;

/** A channel entry's edges, naming versions of package foo (`replaces: '1.0.0'` is `foo.v1.0.0`). */
export interface Edges {
  replaces?: string;
  skips?: string[];
  skipRange?: string;
}

/**
 * A skips ladder (each version skips the one before, the head replaces the top rung): opm
 * accepts it, yet classic OLM offers an install of 1.0.0 no update (docs/olm-upgrades.md, G6-CLASSIC-DEAD-END).
 */
export const SKIPS_LADDER: Readonly<Record<string, Edges>> = {
  '1.0.0': {},
  '2.0.0': { skips: ['1.0.0'] },
  '3.0.0': { skips: ['2.0.0'] },
  '4.0.0': { replaces: '3.0.0' },
};

/** The channel entry of foo at `version` with those edges. */
export function versionEntry(version: string, e: Edges): Obj {
  const entry: Obj = { name: v(version) };
  if (e.replaces !== undefined) entry.replaces = v(e.replaces);
  if (e.skips !== undefined) entry.skips = e.skips.map(v);
  if (e.skipRange !== undefined) entry.skipRange = e.skipRange;
  return entry;
}

/**
 * Package `name` as hand-written YAML: one channel `stable` with one bundle v1.0.0 at `image`;
 * `extraProperties` (YAML list items, two-space indented) follow the bundle's olm.package property.
 */
export function oneBundlePackageYaml(name: string, image: string, extraProperties = ''): string {
  return `---
schema: olm.package
name: ${name}
defaultChannel: stable
---
schema: olm.channel
package: ${name}
name: stable
entries:
  - name: ${name}.v1.0.0
---
schema: olm.bundle
package: ${name}
name: ${name}.v1.0.0
image: ${image}
properties:
  - type: olm.package
    value:
      packageName: ${name}
      version: 1.0.0
${extraProperties}`;
}

/**
 * Package `name` with one channel `stable` of `count` bundles, each replacing the one before,
 * one JSON object a line: large catalogs for the tests that bound time and memory.
 */
export function longChannelJson(name: string, count: number): string {
  const version = (i: number) => `1.${Math.floor(i / 100)}.${i % 100}`;
  const entries: Obj[] = [];
  const bundles: Obj[] = [];
  for (let i = 0; i < count; i++) {
    const at = version(i);
    entries.push(
      i === 0
        ? { name: `${name}.v${at}` }
        : { name: `${name}.v${at}`, replaces: `${name}.v${version(i - 1)}` },
    );
    bundles.push(bundle(at, {}, name));
  }
  return jsonStream(pkg(name), ...bundles, channel(entries, { package: name }));
}
