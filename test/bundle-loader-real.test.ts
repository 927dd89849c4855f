// The bundle loader against the real community-operators-prod data: every `olm.bundle`
// blob of the six packages, in every catalog they are in, must come out of the package's
// bundle directories alone, byte for byte as the catalog holds it.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  BundleError,
  bundleImageReference,
  DEFAULT_BUNDLE_IMAGE_TEMPLATE,
  loadBundleDirectory,
} from '../src/catalog/bundle.js';
import { decodeFile } from '../src/catalog/fbc/decode.js';
import { bundleObject } from '../src/catalog/templates/index.js';
import { encodeYaml, type JsonObject } from '../src/catalog/templates/write.js';
import { readTree, SHARED_DATA } from './helpers/oracle.js';

const REPO = join(SHARED_DATA, 'real-repo', 'community-operators-prod');

const packages = readdirSync(join(REPO, 'operators')).sort();
const catalogs = readdirSync(join(REPO, 'catalogs')).sort();

/** The bundle directories of a package: version -> files (only those with a CSV version). */
function bundleDirs(pkg: string): Map<string, Map<string, Buffer>> {
  const out = new Map<string, Map<string, Buffer>>();
  for (const v of readdirSync(join(REPO, 'operators', pkg))) {
    if (!/^\d/.test(v)) continue;
    out.set(v, readTree(join(REPO, 'operators', pkg, v)));
  }
  return out;
}

/** v4.17 and later are rendered with --migrate-level bundle-object-to-csv-metadata. */
const migrated = (catalog: string): boolean => Number(catalog.split('.')[1]) >= 17;

const rendered = new Map<string, string>();

function render(files: Map<string, Buffer>, image: string, migrate: boolean): string {
  const loaded = loadBundleDirectory(files, {
    image,
    ...(migrate ? { migrateLevel: 'bundle-object-to-csv-metadata' as const } : {}),
  });
  return encodeYaml(bundleObject(loaded.blob).value);
}

interface Outcome {
  blobs: number;
  matched: number;
  fromTemplate: number;
  mismatches: string[];
  digestImages: string[];
}

function compareAll(): Outcome {
  const outcome: Outcome = { blobs: 0, matched: 0, fromTemplate: 0, mismatches: [], digestImages: [] };
  for (const pkg of packages) {
    const dirs = bundleDirs(pkg);
    for (const catalog of catalogs) {
      let text: string;
      try {
        text = readFileSync(join(REPO, 'catalogs', catalog, pkg, 'catalog.yaml'), 'utf8');
      } catch {
        continue;
      }
      // go-yaml writes one document per blob after a `---` line (write.go).
      const docs = text.split(/^(?=---\n)/m);
      for (const doc of docs) {
        const value = decodeFile(Buffer.from(doc)).values[0]?.value as JsonObject | undefined;
        if (value?.schema !== 'olm.bundle') continue;
        outcome.blobs++;
        const name = String(value.name);
        const image = String(value.image);
        const where = `${catalog}/${pkg}/catalog.yaml ${name}`;
        // The bundle directory is named by the version: the CSV name is <package>.v<version>.
        const version = name.slice(name.indexOf('.v') + 2);
        const files = dirs.get(version);
        if (!files) {
          outcome.mismatches.push(`${where}: no bundle directory operators/${pkg}/${version}`);
          continue;
        }
        const fromTemplate = bundleImageReference(DEFAULT_BUNDLE_IMAGE_TEMPLATE, pkg, version);
        if (fromTemplate === image) outcome.fromTemplate++;
        else outcome.digestImages.push(image);
        let ours: string;
        try {
          // Catalogs that share a format hold the same blob: render each once.
          const key = `${version}\0${image}\0${migrated(catalog)}`;
          ours = rendered.get(key) ?? render(files, image, migrated(catalog));
          rendered.set(key, ours);
        } catch (err) {
          if (!(err instanceof BundleError)) throw err;
          outcome.mismatches.push(`${where}: the loader refuses the directory: ${err.message}`);
          continue;
        }
        if (ours === doc) outcome.matched++;
        else {
          const a = ours.split('\n');
          const b = doc.split('\n');
          const i = a.findIndex((l, n) => l !== b[n]);
          outcome.mismatches.push(
            `${where}: first difference at line ${i + 1} of the blob: loader ${JSON.stringify(a[i]?.slice(0, 120))}, catalog ${JSON.stringify(b[i]?.slice(0, 120))}`,
          );
        }
      }
    }
  }
  return outcome;
}

describe('bundle loader on the real community-operators-prod packages', () => {
  const outcome = compareAll();

  it('reproduces every olm.bundle blob of every catalog from the bundle directories', () => {
    expect(outcome.mismatches).toEqual([]);
    // 266 blobs: 6 packages, 43 catalog files (v4.12-v4.16 with olm.bundle.object, v4.17+ with olm.csv.metadata).
    expect(outcome.blobs).toBe(266);
    expect(outcome.matched).toBe(outcome.blobs);
  });

  it('derives the image reference of every tag-released bundle from bundles.imageTemplate', () => {
    // The others were released by the earlier pipeline under a digest reference, which
    // no bundle directory can tell: the loader takes those images as given.
    expect(outcome.fromTemplate).toBe(166);
    expect(outcome.digestImages.length).toBe(100);
    for (const image of outcome.digestImages) expect(image).toMatch(/@sha256:[0-9a-f]{64}$/);
  });

  it('is sensitive to the migrate level (the comparison can fail)', () => {
    const files = bundleDirs('jumpstarter-operator').get('0.9.0')!;
    const image = bundleImageReference(DEFAULT_BUNDLE_IMAGE_TEMPLATE, 'jumpstarter-operator', '0.9.0');
    const doc = readFileSync(join(REPO, 'catalogs', 'v4.18', 'jumpstarter-operator', 'catalog.yaml'), 'utf8')
      .split(/^(?=---\n)/m)
      .find((d) => d.includes('\nname: jumpstarter-operator.v0.9.0\n'));
    expect(doc).toBeDefined();
    expect(render(files, image, true)).toBe(doc);
    expect(render(files, image, false)).not.toBe(doc);
  });

  it("refuses a misplaced bundle/manifests layout with opm's reason", () => {
    const files = bundleDirs('rabbitmq-messaging-topology-operator').get('1.18.3')!;
    expect([...files.keys()].some((p) => p.startsWith('bundle/manifests/'))).toBe(true);
    expect(() => loadBundleDirectory(files, { image: 'x' })).toThrow(BundleError);
    expect(() => loadBundleDirectory(files, { image: 'x' })).toThrow(/manifests directory/);
  });
});
