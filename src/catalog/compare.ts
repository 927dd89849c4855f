// Two catalogs compared as OLM sees them (docs/publishing.md, "verify-published"): the same
// packages, default channels, channels with the same entries and edges, the same bundles
// with the same image and properties. Differences are said in plain words, one a line.
import type { Bundle, Channel, ChannelEntry, DeclarativeConfig } from './fbc/declcfg.js';
import { sortedJson } from './fbc/load.js';
import { renderJson } from './fbc/render.js';

/** What each side is called in the messages (`the root`, `the image`). */
export interface Sides {
  left: string;
  right: string;
}

const byName = <T extends { name: string }>(items: T[]): Map<string, T> =>
  new Map(items.map((i) => [i.name, i]));

const list = (names: string[]): string => names.sort().join(', ');

/** Names only on one side, as messages. */
function onlyIn(what: string, left: Set<string>, right: Set<string>, sides: Sides): string[] {
  const out: string[] = [];
  const missingRight = [...left].filter((n) => !right.has(n));
  const missingLeft = [...right].filter((n) => !left.has(n));
  if (missingRight.length > 0) out.push(`${what} only in ${sides.left}: ${list(missingRight)}`);
  if (missingLeft.length > 0) out.push(`${what} only in ${sides.right}: ${list(missingLeft)}`);
  return out;
}

function edges(e: ChannelEntry): string {
  const parts = [
    e.replaces ? `replaces ${e.replaces}` : '',
    e.skips.length > 0 ? `skips ${[...e.skips].sort().join(', ')}` : '',
    e.skipRange ? `skipRange ${e.skipRange}` : '',
  ].filter(Boolean);
  return parts.length > 0 ? parts.join('; ') : 'no edges';
}

function compareChannel(pkg: string, a: Channel, b: Channel, sides: Sides): string[] {
  const where = `package ${pkg}, channel ${a.name}`;
  const ea = byName(a.entries);
  const eb = byName(b.entries);
  const out = onlyIn(`${where}: entries`, new Set(ea.keys()), new Set(eb.keys()), sides);
  for (const [name, entry] of ea) {
    const other = eb.get(name);
    if (other && edges(entry) !== edges(other))
      out.push(
        `${where}, entry ${name}: ${edges(entry)} in ${sides.left}, ${edges(other)} in ${sides.right}`,
      );
  }
  return out;
}

const properties = (b: Bundle): string =>
  sortedJson(b.properties.map((p) => ({ type: p.type, value: p.value })));
const related = (b: Bundle): string =>
  sortedJson([...b.relatedImages].map((r) => `${r.name ?? ''}=${r.image}`).sort());

function compareBundle(a: Bundle, b: Bundle, sides: Sides): string[] {
  const where = `package ${a.package}, bundle ${a.name}`;
  const out: string[] = [];
  if (a.image !== b.image)
    out.push(`${where}: image ${a.image} in ${sides.left}, ${b.image} in ${sides.right}`);
  if (properties(a) !== properties(b)) out.push(`${where}: its properties differ`);
  if (related(a) !== related(b)) out.push(`${where}: its related images differ`);
  return out;
}

/** Every difference between two loaded catalogs; empty when OLM would see the same catalog. */
export function compareCatalogs(left: DeclarativeConfig, right: DeclarativeConfig, sides: Sides): string[] {
  const out: string[] = [];
  const pa = byName(left.packages);
  const pb = byName(right.packages);
  out.push(...onlyIn('packages', new Set(pa.keys()), new Set(pb.keys()), sides));
  const ofPackage = <T extends { package: string }>(items: T[], pkg: string) =>
    items.filter((i) => i.package === pkg);
  for (const [name, a] of pa) {
    const b = pb.get(name);
    if (!b) continue;
    if (a.defaultChannel !== b.defaultChannel)
      out.push(
        `package ${name}: default channel ${a.defaultChannel} in ${sides.left}, ${b.defaultChannel} in ${sides.right}`,
      );
    const ca = byName(ofPackage(left.channels, name));
    const cb = byName(ofPackage(right.channels, name));
    out.push(...onlyIn(`package ${name}: channels`, new Set(ca.keys()), new Set(cb.keys()), sides));
    for (const [channel, c] of ca) {
      const other = cb.get(channel);
      if (other) out.push(...compareChannel(name, c, other, sides));
    }
    const ba = byName(ofPackage(left.bundles, name));
    const bb = byName(ofPackage(right.bundles, name));
    out.push(...onlyIn(`package ${name}: bundles`, new Set(ba.keys()), new Set(bb.keys()), sides));
    for (const [bundle, x] of ba) {
      const other = bb.get(bundle);
      if (other) out.push(...compareBundle(x, other, sides));
    }
  }
  // The rest (package icons and descriptions, deprecations, other schemas): compared whole.
  if (out.length === 0 && [...renderJson(left)].join('') !== [...renderJson(right)].join(''))
    out.push(
      `the catalogs differ in other content (package details, deprecations or other schemas): compare \`catalog-bot render\` of both`,
    );
  return out;
}
