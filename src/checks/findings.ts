// What a pull request's author has to read (docs/output.md): the findings the change caused
// first, the ones the base already had counted per rule, the same finding in several
// catalogs once, and the findings one wrong entry sets off under their one cause. Pure:
// given the findings, the base's findings and the catalog roots.
import type { Diagnostic } from '../catalog/diagnostics.js';
import { causeOf, type RootCause } from './upgrade-graph/root-cause.js';

// Text a check adds when it already knows a finding is old (upgrade-graph, ocp-continuity).
const ALREADY = / \(already so before this change\)$/;

/** What makes two findings the same finding, whatever line it moved to. */
function sameFindingKey(d: Diagnostic): string {
  const message = d.message.replace(ALREADY, '').replace(/\bline \d+/g, 'line N');
  return JSON.stringify([d.rule, d.package ?? '', d.file ?? '', message]);
}

/**
 * `findings` with `preExisting` set on those the base has too (as many as the base has:
 * a change that adds a second copy of an old finding caused the second one).
 */
export function markPreExisting(findings: Diagnostic[], onBase: Diagnostic[]): Diagnostic[] {
  const left = new Map<string, number>();
  for (const d of onBase) left.set(sameFindingKey(d), (left.get(sameFindingKey(d)) ?? 0) + 1);
  return findings.map((d) => {
    const key = sameFindingKey(d);
    const n = left.get(key) ?? 0;
    // The check itself found it on the base (its own words say so). Not an error: a
    // message can end in a name the pull request wrote, and an error must not fold by it.
    if (d.level !== 'error' && ALREADY.test(d.message)) return { ...d, preExisting: true };
    if (n === 0) return d;
    left.set(key, n - 1);
    return { ...d, preExisting: true };
  });
}

/** `findings` with `cause` set on the new ones a root cause explains. */
export function markCauses(findings: Diagnostic[], causes: readonly RootCause[]): Diagnostic[] {
  return findings.map((d) => {
    if (d.preExisting) return d;
    const cause = causeOf(d, causes);
    return cause ? { ...d, cause: cause.id } : d;
  });
}

/** The catalog root a path lies in (the longest that holds it). */
export function rootOf(file: string | undefined, roots: readonly string[]): string | undefined {
  if (file === undefined) return undefined;
  let best: string | undefined;
  for (const r of roots)
    if (file.startsWith(r + '/') && (best === undefined || r.length > best.length)) best = r;
  return best;
}

/** One finding as it reads in every catalog it is in. */
export interface FindingGroup {
  /** The finding in the first of its catalogs. */
  first: Diagnostic;
  members: Diagnostic[];
  /** The catalog roots it is in, in the order of `roots` (empty when not in a root). */
  roots: string[];
}

const escapeRe = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The same finding in several catalog roots (byte-identical catalogs give the same file,
 * line, message and hint, up to the root's own path) as one group.
 */
export function groupAcrossCatalogs(
  findings: readonly Diagnostic[],
  roots: readonly string[],
): FindingGroup[] {
  const groups = new Map<string, FindingGroup>();
  for (const d of findings) {
    const root = rootOf(d.file, roots);
    const anon = (s: string | undefined): string =>
      root === undefined || s === undefined ? (s ?? '') : s.replace(new RegExp(escapeRe(root), 'g'), '\0');
    const key = JSON.stringify([
      d.rule,
      d.level,
      d.package ?? '',
      anon(d.file),
      d.line ?? 0,
      d.column ?? 0,
      anon(d.message),
      anon(d.hint),
      d.preExisting === true,
      d.cause === undefined ? '' : anon(d.cause),
      root === undefined ? (d.file ?? '') : '', // findings outside roots are never merged
    ]);
    const group = groups.get(key);
    if (group && root !== undefined && !group.roots.includes(root)) {
      group.members.push(d);
      group.roots.push(root);
    } else if (!group) groups.set(key, { first: d, members: [d], roots: root === undefined ? [] : [root] });
    else groups.set(`${key}\0${groups.size}`, { first: d, members: [d], roots: [root as string] });
  }
  return [...groups.values()];
}

/** The last path segment of a root: `catalogs/v4.17` -> `v4.17`. */
const shortRoot = (r: string): string => r.slice(r.lastIndexOf('/') + 1);

/**
 * Where a group is: `v4.17-v4.21, 5 catalogs` when its roots are consecutive among `all`,
 * else the names (`v4.17, v4.19, 2 catalogs`); undefined for one catalog.
 */
export function catalogsLabel(group: readonly string[], all: readonly string[]): string | undefined {
  if (group.length < 2) return undefined;
  const at = group.map((r) => all.indexOf(r));
  const consecutive = at.every((i, k) => i >= 0 && (k === 0 || i === (at[k - 1] as number) + 1));
  const names = group.map(shortRoot);
  const where = consecutive && group.length > 2 ? `${names[0]}-${names[names.length - 1]}` : names.join(', ');
  return `${where}, ${group.length} catalogs`;
}

/** Pre-existing findings counted per rule, level and package: one line each. */
export interface PreExistingCount {
  rule: string;
  level: Diagnostic['level'];
  package?: string;
  count: number;
  /** The catalog roots they are in. */
  roots: string[];
}

export function countPreExisting(
  findings: readonly Diagnostic[],
  roots: readonly string[],
): PreExistingCount[] {
  const counts = new Map<string, PreExistingCount>();
  for (const d of findings) {
    if (!d.preExisting) continue;
    const key = JSON.stringify([d.rule, d.level, d.package ?? '']);
    const c = counts.get(key) ?? {
      rule: d.rule,
      level: d.level,
      ...(d.package !== undefined ? { package: d.package } : {}),
      count: 0,
      roots: [],
    };
    c.count++;
    const root = rootOf(d.file, roots);
    if (root !== undefined && !c.roots.includes(root)) c.roots.push(root);
    counts.set(key, c);
  }
  return [...counts.values()];
}

/** `20 pre-existing G11-DIVERGENCE notices in clusterpulse (v4.17-v4.21, 5 catalogs), unchanged by this change`. */
export function preExistingLine(c: PreExistingCount, all: readonly string[]): string {
  const sorted = all.filter((r) => c.roots.includes(r));
  const where = catalogsLabel(sorted, all) ?? sorted.map(shortRoot).join('');
  const kind = c.level === 'error' ? 'error' : c.level === 'warning' ? 'warning' : 'notice';
  return `${c.count} pre-existing ${c.rule} ${kind}${c.count === 1 ? '' : 's'}${c.package !== undefined ? ` in ${c.package}` : ''}${where ? ` (${where})` : ''}, unchanged by this change`;
}

/** A root cause with the findings it explains (across checks). */
export interface ExplainedCause extends RootCause {
  /** The rules of the findings it explains, sorted. */
  rules: string[];
  /** How many findings it explains. */
  findings: number;
  /** The catalog roots where it is (byte-identical catalogs give one cause each). */
  roots: string[];
  /** The ids of the causes it stands for (one per catalog). */
  ids: string[];
}

/**
 * Findings of every check marked (pre-existing, root cause), and the causes that explain
 * findings of at least two rules: one rule alone already names its own fix.
 */
export function markFindings(
  checks: { findings: Diagnostic[]; onBase?: Diagnostic[] }[],
  causes: readonly RootCause[],
  roots: readonly string[],
): { findings: Diagnostic[][]; causes: ExplainedCause[] } {
  let marked = checks.map((c) => markCauses(markPreExisting(c.findings, c.onBase ?? []), causes));
  const explained: ExplainedCause[] = [];
  for (const cause of causes) {
    const members = marked.flat().filter((d) => d.cause === cause.id);
    const rules = [...new Set(members.map((d) => d.rule))].sort();
    if (rules.length < 2) continue;
    const root = rootOf(cause.file, roots);
    explained.push({
      ...cause,
      rules,
      findings: members.length,
      roots: root === undefined ? [] : [root],
      ids: [cause.id],
    });
  }
  const kept = new Set(explained.map((c) => c.id));
  marked = marked.map((list) =>
    list.map((d) => {
      if (d.cause === undefined || kept.has(d.cause)) return d;
      const { cause: _dropped, ...rest } = d;
      return rest;
    }),
  );
  return { findings: marked, causes: explained };
}

/** The same cause in byte-identical catalogs: one, naming its catalogs. */
export function groupCauses(causes: readonly ExplainedCause[], roots: readonly string[]): ExplainedCause[] {
  const out = new Map<string, ExplainedCause>();
  for (const c of causes) {
    const root = c.roots[0];
    const anon = (s: string): string => (root === undefined ? s : s.split(root).join('\0'));
    const key = JSON.stringify([anon(c.id), c.message, c.fix, c.rules]);
    const seen = out.get(key);
    if (seen) {
      seen.roots.push(...c.roots);
      seen.ids.push(...c.ids);
      seen.findings += c.findings;
    } else out.set(key, { ...c, roots: [...c.roots], ids: [...c.ids] });
  }
  for (const c of out.values()) c.roots.sort((a, b) => roots.indexOf(a) - roots.indexOf(b));
  return [...out.values()];
}
