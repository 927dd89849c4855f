// What clusters see differently once an onboarding merges (docs/legacy-index.md, "`/onboard`
// in the App"): per OpenShift catalog, the catalog the index serves today (the emulated
// graph of onboardPackage, with the bundles the directories hold) against the catalog the
// conversion writes, loaded as opm loads it, compared by the impact engine
// (docs/impact.md). Pure: an onboarding result in, the changed catalogs out.
import { validateCatalog } from '../index.js';
import type { Model } from '../fbc/model.js';
import type { CatalogSource, SourceEntry } from '../fbc/source.js';
import { decodeFile } from '../fbc/decode.js';
import { catalogImpact, type PackageImpact } from '../olm/impact.js';
import { SCHEMA_BUNDLE, SCHEMA_CHANNEL, SCHEMA_PACKAGE } from '../property.js';
import type { JsonObject } from '../templates/write.js';
import type { OnboardResult } from './onboard.js';

/** A catalog root's changed packages (the shape `catalog-bot impact` reports). */
export interface RootImpact {
  packages: Record<string, PackageImpact>;
}

/** One catalog file held in memory, as a catalog root. */
class OneFileSource implements CatalogSource {
  readonly label: string;
  readonly #data: Buffer;
  constructor(label: string, text: string) {
    this.label = label;
    this.#data = Buffer.from(text);
  }
  async list(): Promise<SourceEntry[]> {
    return [{ path: 'catalog.json', kind: 'file', size: this.#data.length }];
  }
  async read(paths: string[]): Promise<Map<string, Buffer | Error>> {
    return new Map(paths.map((p) => [p, p === 'catalog.json' ? this.#data : new Error(`no ${p}`)]));
  }
}

async function modelOf(label: string, blobs: JsonObject[]): Promise<Model> {
  const text = blobs.map((b) => JSON.stringify(b)).join('\n');
  return (await validateCatalog(new OneFileSource(label, text))).model;
}

/**
 * Per catalog root the conversion writes, what changes for clusters against what the index
 * serves them today; roots where nothing changes are left out (an empty record: nothing
 * changes anywhere).
 */
export async function onboardingImpact(result: OnboardResult): Promise<Record<string, RootImpact>> {
  const pkg = result.package;
  const suffix = `/${pkg}/catalog.yaml`;
  const out: Record<string, RootImpact> = {};
  for (const edit of result.edits) {
    if (!edit.path.endsWith(suffix)) continue;
    const root = edit.path.slice(0, -suffix.length);
    const catalog = result.catalogs[root.slice(root.lastIndexOf('/') + 1)];
    if (!catalog) continue;
    const written = decodeFile(Buffer.from(edit.after)).values.map((v) => v.value as JsonObject);
    // The index serves each bundle from the image its directory was built into: the same
    // blob the conversion renders from that directory. What may differ is the graph.
    const served = new Set(catalog.bundles);
    const today: JsonObject[] = [
      { schema: SCHEMA_PACKAGE, name: pkg, defaultChannel: catalog.defaultChannel },
      ...Object.entries(catalog.channels).map(([name, entries]) => ({
        schema: SCHEMA_CHANNEL,
        name,
        package: pkg,
        entries: entries.map((e) => ({
          name: e.name,
          ...(e.replaces ? { replaces: e.replaces } : {}),
          ...(e.skips.length > 0 ? { skips: e.skips } : {}),
          ...(e.skipRange ? { skipRange: e.skipRange } : {}),
        })),
      })),
      ...written.filter((b) => b?.schema === SCHEMA_BUNDLE && served.has(String(b.name))),
    ];
    const [before, after] = await Promise.all([
      modelOf(`the index of ${root}`, today),
      modelOf(edit.path, written),
    ]);
    const packages = catalogImpact(before, after);
    if (Object.keys(packages).length > 0) out[root] = { packages };
  }
  return out;
}
