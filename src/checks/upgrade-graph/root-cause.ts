// One wrong `replaces` makes several rules fire at once (docs/output.md, "One root cause"):
// the channel's old head is left out of the update chain, so opm sees two heads
// (C-MULTIPLE-HEADS), OLM v1 keeps the old head (G7), its users are stranded (G12), and
// each rule proposes its own repair. This names the one entry and the one edit instead.
// Pure: it is given both catalogs.
import type { Diagnostic } from '../../catalog/diagnostics.js';
import type { ModelChannel } from '../../catalog/fbc/model.js';
import type { CheckedRoot } from '../checked-root.js';

export interface RootCause {
  /** Stable within one result: the entry's file and line (`catalogs/v4.17/x/catalog.yaml:29`). */
  id: string;
  package: string;
  channel: string;
  /** The entry whose `replaces` the change wrote. */
  bundle: string;
  file: string;
  line?: number;
  message: string;
  /** The one edit that repairs every finding the cause explains. */
  fix: string;
}

/** The rules a wrong `replaces` sets off (docs/validation-rules.md). */
const GRAPH_RULES = /^(C-MULTIPLE-HEADS|C-NO-HEAD|G6-|G7-|G11-|G12-|G13-|G16-)/;

/** The one entry nothing else in the channel replaces or skips, or undefined when not exactly one. */
function soleHead(ch: ModelChannel): string | undefined {
  const reached = new Set<string>();
  for (const b of ch.bundles.values()) {
    if (b.replaces !== '') reached.add(b.replaces);
    for (const s of b.skips) reached.add(s);
  }
  const heads = [...ch.bundles.keys()].filter((n) => !reached.has(n));
  return heads.length === 1 ? heads[0] : undefined;
}

/** Who reaches each name in the channel, with one entry's edges replaced. */
function heads(ch: ModelChannel, name: string, replaces: string, skips: readonly string[]): string[] {
  const reached = new Set<string>();
  for (const b of ch.bundles.values()) {
    const edges = b.name === name ? { replaces, skips } : b;
    if (edges.replaces !== '') reached.add(edges.replaces);
    for (const s of edges.skips) reached.add(s);
  }
  return [...ch.bundles.keys()].filter((n) => !reached.has(n));
}

/**
 * The entry's edges that make it the only head again: `replaces` the old head, and `skips`
 * what it skipped before plus whatever would be left with nothing reaching it (its old
 * `replaces` target among them). Undefined when that does not give one head, or when the
 * old head is reached anyway (then the wrong `replaces` is not what strands it).
 */
function repairedEntry(ch: ModelChannel, name: string, oldHead: string): { skips: string[] } | undefined {
  const entry = ch.bundles.get(name)!;
  const now = heads(ch, name, entry.replaces, entry.skips);
  if (!now.includes(oldHead)) return undefined;
  const skips = [...entry.skips];
  for (const n of heads(ch, name, oldHead, skips)) if (n !== name && !skips.includes(n)) skips.push(n);
  const after = heads(ch, name, oldHead, skips);
  if (after.length !== 1 || after[0] !== name) return undefined;
  return { skips: skips.filter((s) => !entry.skips.includes(s)) };
}

/**
 * Channels where the change wrote exactly one entry's `replaces` (a new entry, or a changed
 * value) and that value leaves the channel's previous head with nothing that replaces or
 * skips it: the previous head is what the entry should have replaced.
 */
export function replacesCauses(roots: CheckedRoot[]): RootCause[] {
  const causes: RootCause[] = [];
  for (const root of roots) {
    const before = root.base?.model;
    const after = root.head?.model;
    if (!before || !after) continue;
    for (const name of [...root.packages].sort()) {
      const oldPkg = before.get(name);
      const newPkg = after.get(name);
      if (!oldPkg || !newPkg) continue;
      for (const ch of newPkg.channels.values()) {
        const oldCh = oldPkg.channels.get(ch.name);
        if (!oldCh) continue;
        const written = [...ch.bundles.values()].filter(
          (b) => b.replaces !== '' && b.replaces !== (oldCh.bundles.get(b.name)?.replaces ?? ''),
        );
        if (written.length !== 1) continue;
        const entry = written[0]!;
        const oldHead = soleHead(oldCh);
        if (oldHead === undefined || oldHead === entry.replaces || oldHead === entry.name) continue;
        if (!ch.bundles.has(oldHead)) continue; // removed on purpose: another matter
        const fix = repairedEntry(ch, entry.name, oldHead);
        if (!fix) continue;
        const file = ch.pos?.file !== undefined ? `${root.path}/${ch.pos.file}` : root.path;
        const line = entry.entry.line ?? ch.pos?.line;
        const missing = ch.bundles.has(entry.replaces) ? '' : ` (${entry.replaces} is not in the channel)`;
        causes.push({
          id: `${file}:${line ?? 0}`,
          package: name,
          channel: ch.name,
          bundle: entry.name,
          file,
          ...(line !== undefined ? { line } : {}),
          message: `package "${name}", channel "${ch.name}": ${entry.name} has \`replaces: ${entry.replaces}\`${missing}, but the channel's head before this change was ${oldHead}: nothing replaces or skips ${oldHead} any more, so it stays a second head and its users get no update`,
          fix: `In the entry of ${entry.name}, write \`replaces: ${oldHead}\` (instead of \`replaces: ${entry.replaces}\`)${fix.skips.length > 0 ? ` and \`skips: [${fix.skips.join(', ')}]\`` : ''}: it is then the channel's only head again.`,
        });
      }
    }
  }
  return causes;
}

/** The cause a finding comes from: same catalog file, package and channel, a graph rule. */
export function causeOf(d: Diagnostic, causes: readonly RootCause[]): RootCause | undefined {
  if (!GRAPH_RULES.test(d.rule)) return undefined;
  return causes.find(
    (c) =>
      c.file === d.file &&
      (d.package ?? c.package) === c.package &&
      d.message.includes(`package "${c.package}"`) &&
      d.message.includes(`channel "${c.channel}"`),
  );
}
