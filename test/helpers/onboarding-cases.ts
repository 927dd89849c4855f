// The real onboarding cases of community-operators-prod (shared data, read-only): each is a
// repository before the conversion and the catalogs the pipeline wrote from the published
// index. Helpers to run `onboard` on one and to compare catalogs the way the cases are scored
// (graph, bundle blobs without the CSV-carrying properties, bytes).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { decodeFile } from '../../src/catalog/fbc/decode.js';
import type { JsonObject } from '../../src/catalog/templates/write.js';
import { SHARED_DATA } from './oracle.js';

export const ONBOARDING = join(SHARED_DATA, 'onboarding');

export interface OnboardingCase {
  dir: string;
  package: string;
  mode: 'replaces-mode' | 'semver-mode';
  kind: 'exact' | 'index-differs';
  csvMetadataFrom: string | undefined;
  inBefore: string[];
  compared: string[];
  ignore: string[];
  indexWithoutPackage: string[];
}

export function onboardingCases(): OnboardingCase[] {
  return readdirSync(ONBOARDING)
    .filter((name) => existsSync(join(ONBOARDING, name, 'case.yaml')))
    .sort()
    .map((name) => {
      const dir = join(ONBOARDING, name);
      const c = parse(readFileSync(join(dir, 'case.yaml'), 'utf8')) as JsonObject;
      const catalogs = c.catalogs as Record<string, string[] | undefined>;
      return {
        dir,
        package: String(c.package),
        mode: c.mode as OnboardingCase['mode'],
        kind: c.kind as OnboardingCase['kind'],
        csvMetadataFrom: typeof c.csv_metadata_from === 'string' ? c.csv_metadata_from : undefined,
        inBefore: catalogs.in_before ?? [],
        compared: catalogs.compared ?? [],
        ignore: catalogs.ignore ?? [],
        indexWithoutPackage: (c.index_without_package as string[] | null) ?? [],
      };
    });
}

export function bundleImagesOf(c: OnboardingCase): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of readFileSync(join(c.dir, 'bundle-images.txt'), 'utf8').split('\n')) {
    const [name, image] = line.trim().split(/\s+/);
    if (name && image) out.set(name, image);
  }
  return out;
}

export function blobsOf(text: string): JsonObject[] {
  return decodeFile(Buffer.from(text)).values.map((v) => v.value as JsonObject);
}

/** What the cases score as the graph: default channel; per channel its entries (edges as sets). */
export function graphOf(blobs: JsonObject[]): {
  defaultChannel: unknown;
  channels: Record<string, string[]>;
} {
  const pkg = blobs.find((b) => b.schema === 'olm.package');
  const channels: Record<string, string[]> = {};
  for (const c of blobs.filter((b) => b.schema === 'olm.channel'))
    channels[String(c.name)] = (c.entries as JsonObject[])
      .map((e) =>
        JSON.stringify([
          e.name,
          e.replaces ?? '',
          [...((e.skips as string[] | undefined) ?? [])].sort(),
          e.skipRange ?? '',
        ]),
      )
      .sort();
  return { defaultChannel: pkg?.defaultChannel, channels };
}

/** Bundle blobs as scored: image, package, related images and properties (no bundle object / CSV metadata). */
export function bundlesOf(blobs: JsonObject[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const b of blobs.filter((x) => x.schema === 'olm.bundle')) {
    const props = ((b.properties as JsonObject[] | undefined) ?? [])
      .filter((p) => p.type !== 'olm.bundle.object' && p.type !== 'olm.csv.metadata')
      .map((p) => JSON.stringify(p))
      .sort();
    const related = ((b.relatedImages as JsonObject[] | undefined) ?? [])
      .map((r) => JSON.stringify(r))
      .sort();
    out[String(b.name)] = JSON.stringify([b.image, b.package, props, related]);
  }
  return out;
}
