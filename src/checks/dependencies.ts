// The `catalog-bot/dependencies` check (docs/validation-rules.md, "Installability
// findings"): every bundle a user may install or upgrade to can resolve its requirements
// within its catalog; no change leaves an API or package that another package's channel
// head requires without a provider among the channel heads; plus warnings for version
// deadlocks, two heads providing one API, ranges with a maximum and package/GVK
// requirements that OLM cannot AND together. Pure: it is given both catalogs. Semantics:
// src/catalog/olm/dependencies.ts.
import {
  dependencyIndex,
  externallyMet,
  formatGvk,
  gvkKey,
  matches,
  rangeLowerBound,
  rangeUpperBounds,
  type CatalogBundle,
  type Constraint,
  type Dependency,
  type DependencyIndex,
  type ExternalProviders,
  type GVK,
} from '../catalog/olm/dependencies.js';
import { sortDiagnostics, type Diagnostic } from '../catalog/diagnostics.js';
import type { Model } from '../catalog/fbc/model.js';
import { formatVersion } from '../catalog/versions/semver.js';
import { cell, findingsTable, toAnnotations, type CheckResult } from './check.js';
import type { CheckedRoot } from './checked-root.js';
import { PROPERTY_GVK_REQUIRED, PROPERTY_PACKAGE_REQUIRED } from '../catalog/property.js';

export const DEPENDENCIES_CHECK = 'catalog-bot/dependencies';

export type { ExternalProviders, GVK };

export interface DependenciesOptions {
  /**
   * Providers outside the catalog (APIs the cluster serves, packages from other catalogs):
   * requirements they meet count as met. The repository config key
   * `dependencies.externalProviders`.
   */
  externalProviders?: ExternalProviders;
}

export interface DependencyFindingsOptions extends DependenciesOptions {
  /** The catalog before the change; without it every bundle counts as new. */
  base?: Model;
  /** Packages the change touched; default: every package of the catalog. */
  packages?: Set<string>;
}

/** A finding plus what identifies the problem across the old and the new catalog. */
interface Keyed {
  d: Diagnostic;
  key: string;
}

const HINT_EXTERNAL =
  'If the cluster or another catalog provides it, list it under `dependencies.externalProviders` in `.github/catalog-bot.yml`.';

/**
 * The dependency findings for the packages a change touched (and the packages that depend
 * on them), old catalog vs new. A problem the old catalog already had is a warning.
 */
export function dependencyFindings(head: Model, options: DependencyFindingsOptions = {}): Diagnostic[] {
  const ext = options.externalProviders;
  const headIndex = dependencyIndex(head);
  const baseIndex = options.base ? dependencyIndex(options.base) : undefined;
  const changed = options.packages ?? new Set(head.keys());
  const scope = withDependants(changed, [headIndex, baseIndex], ext);
  const now = singleFindings(headIndex, scope, changed, ext, baseIndex);
  const before = baseIndex
    ? new Set(singleFindings(baseIndex, scope, changed, ext).map((k) => k.key))
    : new Set();
  const removed = baseIndex ? providerRemovedFindings(baseIndex, headIndex, changed, ext) : [];
  return sortDiagnostics([
    ...now.map(({ d, key }) =>
      d.level === 'error' && before.has(key)
        ? { ...d, level: 'warning' as const, message: `${d.message} (already so before this change)` }
        : d,
    ),
    ...removed.map((k) => k.d),
  ]);
}

/** The changed packages plus every package with a bundle that requires something they provide. */
function withDependants(
  changed: Set<string>,
  indexes: (DependencyIndex | undefined)[],
  ext: ExternalProviders | undefined,
): Set<string> {
  const scope = new Set(changed);
  for (const index of indexes) {
    if (!index) continue;
    // The changed packages' bundles, matched directly: no catalog-wide lookup needed.
    const theirs = [...changed].flatMap((p) => index.packageBundles(p));
    for (const b of index.dependants) {
      if (scope.has(b.package)) continue;
      const needsChanged = b.dependencies.some(
        (d) =>
          d.constraint !== undefined &&
          !externallyMet(d.constraint, ext) &&
          theirs.some((x) => matches(d.constraint!, x)),
      );
      if (needsChanged) scope.add(b.package);
    }
  }
  return scope;
}

function where(b: CatalogBundle, line?: number): Pick<Diagnostic, 'file' | 'line' | 'package'> {
  return { file: b.file, line: line ?? b.line, package: b.package };
}

const bundleKey = (b: CatalogBundle): string => `${b.package}\0${b.name}`;

function singleFindings(
  index: DependencyIndex,
  scope: Set<string>,
  changed: Set<string>,
  ext: ExternalProviders | undefined,
  base?: DependencyIndex,
): Keyed[] {
  const out: Keyed[] = [];
  for (const pkg of [...scope].sort()) {
    const heads = new Set(index.heads.get(pkg) ?? []);
    for (const b of index.chainBundles.get(pkg) ?? []) {
      const isHead = heads.has(b);
      // Lint what users are offered now and what this change adds, not every old release.
      const lint = isHead || (base !== undefined && base.bundle(b.package, b.name) === undefined);
      for (const dep of b.dependencies) {
        out.push(...requirementFindings(index, b, dep, isHead, ext));
        if (lint && dep.constraint) out.push(...rangeFindings(b, dep, dep.constraint));
      }
      if (lint) out.push(...mixedFindings(index, b));
    }
  }
  out.push(...gvkConflictFindings(index, changed));
  out.push(...deadlockFindings(index, scope, ext, base));
  return out;
}

function requirementFindings(
  index: DependencyIndex,
  b: CatalogBundle,
  dep: Dependency,
  isHead: boolean,
  ext: ExternalProviders | undefined,
): Keyed[] {
  const role = isHead ? 'the channel head' : 'on the replaces chain, so users upgrade through it';
  const key = (rule: string) => `${rule}\0${bundleKey(b)}\0${dep.text}`;
  if (dep.error) {
    return [
      {
        key: key(dep.error.rule),
        d: {
          rule: dep.error.rule,
          level: 'error',
          message:
            dep.error.rule === 'D-CEL-COST'
              ? `bundle ${b.name} (${role}) has a ${dep.type} property catalog-bot does not evaluate: ${dep.error.message}`
              : `bundle ${b.name} (${role}) has a ${dep.type} property OLM cannot use: ${dep.error.message}. OLM fails every resolution that reaches this bundle`,
          ...where(b, dep.line),
          hint:
            dep.error.rule === 'D-CEL-COST'
              ? 'Write a cheaper rule: iterate over `properties` once (e.g. `properties.exists(p, p.type == "olm.package" && p.value.packageName == "etcd")`), without nesting comprehensions over long lists.'
              : dep.error.rule === 'D-CEL-INVALID'
                ? 'Fix the CEL rule: it is evaluated over `properties` (a list of `{type, value}` maps) and must return a bool, e.g. `properties.exists(p, p.type == "olm.package" && semver_compare(p.value.version, "1.0.0") >= 0)`.'
                : dep.error.rule === 'D-RANGE-INVALID'
                  ? 'Write the versionRange in blang form, e.g. `>=1.2.0` (no commas, `~`, `^` or `v` prefix).'
                  : 'An olm.constraint holds exactly one of `gvk`, `package`, `cel`, `all`, `any`, `not` (plus an optional `failureMessage`); remove unknown keys.',
        },
      },
    ];
  }
  const c = dep.constraint!;
  if (externallyMet(c, ext)) return [];
  const candidates = index.candidates(c);
  if (candidates.length > 0 && candidates.some((x) => index.installable(x.bundle, ext))) return [];
  const why =
    candidates.length === 0
      ? `nothing in this catalog satisfies it: ${index.explain(c)}`
      : `its candidates (${candidates
          .slice(0, 3)
          .map((x) => x.bundle.name)
          .join(
            ', ',
          )}${candidates.length > 3 ? ', …' : ''}) cannot be installed themselves, because their own requirements are unmet`;
  return [
    {
      key: key('D-UNSATISFIED'),
      d: {
        rule: 'D-UNSATISFIED',
        level: 'error',
        message: `bundle ${b.name} (${role}) requires ${dep.text}${dep.failureMessage ? ` ("${dep.failureMessage}")` : ''}, and ${why}. OLM cannot install or upgrade to this bundle`,
        ...where(b, dep.line),
        hint: `Add a bundle that provides it to this catalog (on a channel's replaces chain), or relax the requirement. ${HINT_EXTERNAL}`,
      },
    },
  ];
}

/** Package ranges (outside a `not`) that exclude every future version of the provider. */
function rangeFindings(b: CatalogBundle, dep: Dependency, c: Constraint): Keyed[] {
  const out: Keyed[] = [];
  const walk = (x: Constraint): void => {
    if (x.kind === 'all' || x.kind === 'any') x.children.forEach(walk);
    if (x.kind !== 'package') return;
    const upper = rangeUpperBounds(x.range);
    if (!upper) return;
    const lower = rangeLowerBound(x.range);
    out.push({
      key: `D-RANGE-UPPER-BOUND\0${bundleKey(b)}\0${x.packageName}\0${x.versionRange}`,
      d: {
        rule: 'D-RANGE-UPPER-BOUND',
        level: 'warning',
        message: `bundle ${b.name} requires package ${x.packageName} in range ${JSON.stringify(x.versionRange)}, which has a maximum (${upper.join(', ')}): once ${x.packageName} releases a newer version, clusters running both cannot upgrade ${x.packageName}, and new installs resolve only while an old ${x.packageName} stays in the catalog`,
        ...where(b, dep.line),
        hint: `OLM's best practice is to set a minimum and no maximum: \`versionRange: '>=${lower ? formatVersion(lower) : '0.0.0'}'\`.`,
      },
    });
  };
  walk(c);
  return out;
}

/** olm.package.required and olm.gvk.required meant for one provider: OLM may pick two. */
function mixedFindings(index: DependencyIndex, b: CatalogBundle): Keyed[] {
  const out: Keyed[] = [];
  const pkgs = b.dependencies.filter(
    (d) => d.type === PROPERTY_PACKAGE_REQUIRED && d.constraint?.kind === 'package',
  );
  const gvks = b.dependencies.filter((d) => d.type === PROPERTY_GVK_REQUIRED && d.constraint?.kind === 'gvk');
  for (const g of gvks) {
    const gvk = (g.constraint as { gvk: GVK }).gvk;
    for (const p of pkgs) {
      const pc = p.constraint as Extract<Constraint, { kind: 'package' }>;
      const providers = index.allByGvk.get(gvkKey(gvk)) ?? [];
      if (!providers.some((x) => x.package === pc.packageName)) continue;
      out.push({
        key: `D-MIXED-REQUIRED\0${bundleKey(b)}\0${pc.packageName}\0${gvkKey(gvk)}`,
        d: {
          rule: 'D-MIXED-REQUIRED',
          level: 'warning',
          message: `bundle ${b.name} requires package ${pc.packageName} (${pc.versionRange}) and, separately, ${formatGvk(gvk)}, which ${pc.packageName} provides: OLM resolves the two requirements independently (there is no AND across them), so two different operators may satisfy them`,
          ...where(b, g.line),
          hint: `Replace both with one olm.constraint: \`{type: olm.constraint, value: {all: {constraints: [{package: {packageName: ${pc.packageName}, versionRange: '${pc.versionRange}'}}, {gvk: {group: ${gvk.group}, version: ${gvk.version}, kind: ${gvk.kind}}}]}}}\`.`,
        },
      });
    }
  }
  return out;
}

const headsByGvk = new WeakMap<DependencyIndex, Map<string, CatalogBundle[]>>();

function headProviders(index: DependencyIndex): Map<string, CatalogBundle[]> {
  let map = headsByGvk.get(index);
  if (!map) {
    map = new Map();
    for (const heads of index.heads.values()) {
      for (const h of heads) {
        for (const key of h.gvkKeys) {
          const list = map.get(key) ?? [];
          list.push(h);
          map.set(key, list);
        }
      }
    }
    headsByGvk.set(index, map);
  }
  return map;
}

/** Channel heads of two packages providing the same API: OLM installs one provider per API. */
function gvkConflictFindings(index: DependencyIndex, changed: Set<string>): Keyed[] {
  const byGvk = headProviders(index);
  const pairs = new Map<string, { mine: CatalogBundle; other: CatalogBundle; gvks: GVK[]; line?: number }>();
  for (const pkg of [...changed].sort()) {
    for (const h of index.heads.get(pkg) ?? []) {
      for (const g of h.gvks) {
        for (const o of byGvk.get(gvkKey(g.gvk)) ?? []) {
          if (o.package === pkg) continue;
          // Each pair once: under the first of the two names when both are in scope.
          if (changed.has(o.package) && o.package < pkg) continue;
          const id = `${pkg}\0${o.package}`;
          const pair = pairs.get(id) ?? { mine: h, other: o, gvks: [], line: g.line };
          if (!pair.gvks.some((x) => gvkKey(x) === gvkKey(g.gvk))) pair.gvks.push(g.gvk);
          pairs.set(id, pair);
        }
      }
    }
  }
  return [...pairs.values()].map(({ mine, other, gvks, line }) => ({
    key: `D-GVK-CONFLICT\0${mine.package}\0${other.package}\0${gvks.map(gvkKey).sort().join(',')}`,
    d: {
      rule: 'D-GVK-CONFLICT',
      level: 'warning',
      message: `channel heads of packages ${mine.package} (${mine.name}) and ${other.package} (${other.name}) both provide ${gvks
        .slice(0, 3)
        .map(formatGvk)
        .join(
          ', ',
        )}${gvks.length > 3 ? ` and ${gvks.length - 3} more` : ''}: OLM allows one provider per API in a namespace, so the two cannot be installed together there`,
      ...where(mine, line),
      hint: `If they are alternatives, nothing to do; otherwise let one package own the API and have the other require it (olm.gvk.required) instead of shipping it.`,
    },
  }));
}

/**
 * The OLM docs' "version deadlock": packages whose bundles require each other, where the
 * new versions only work together, so neither can upgrade alone.
 */
function deadlockFindings(
  index: DependencyIndex,
  scope: Set<string>,
  ext: ExternalProviders | undefined,
  base?: DependencyIndex,
): Keyed[] {
  // Each package's upgrade: from the old catalog's default head (without an old catalog,
  // the head's predecessor on the chain) to the new default head.
  const moves = new Map<string, { from: CatalogBundle; to: CatalogBundle }>();
  const graph = new Map<string, Set<string>>();
  // Only packages reachable from the scope can share a cycle with it.
  const queue = [...scope];
  const seen = new Set(queue);
  while (queue.length > 0) {
    const pkg = queue.pop()!;
    const to = index.defaultHead.get(pkg);
    if (!to) continue;
    const from = previousBundle(index, pkg, base) ?? to;
    if (to.dependencies.length === 0 && from.dependencies.length === 0) continue;
    moves.set(pkg, { from, to });
    const edges = new Set<string>();
    graph.set(pkg, edges);
    for (const x of new Set([from, to])) {
      for (const d of x.dependencies) {
        if (!d.constraint || externallyMet(d.constraint, ext)) continue;
        for (const c of index.candidates(d.constraint)) {
          if (c.bundle.package === pkg) continue;
          edges.add(c.bundle.package);
          if (!seen.has(c.bundle.package)) {
            seen.add(c.bundle.package);
            queue.push(c.bundle.package);
          }
        }
      }
    }
  }
  const out: Keyed[] = [];
  for (const component of stronglyConnected(graph)) {
    if (component.length < 2 || !component.some((p) => scope.has(p))) continue;
    const members = component.filter((p) => moves.has(p)).sort();
    if (members.length !== component.length) continue;
    const moving = members.filter((p) => moves.get(p)!.from !== moves.get(p)!.to);
    if (moving.length < 2) continue;
    const inCycle = new Set(component);
    const state = (pick: (p: string) => CatalogBundle) => members.map(pick);
    const oldSet = state((p) => moves.get(p)!.from);
    const newSet = state((p) => moves.get(p)!.to);
    if (!consistent(index, oldSet, inCycle, ext) || !consistent(index, newSet, inCycle, ext)) continue;
    const alone = moving.filter((p) =>
      consistent(
        index,
        state((q) => (q === p ? moves.get(q)!.to : moves.get(q)!.from)),
        inCycle,
        ext,
      ),
    );
    if (alone.length > 0) continue;
    const names = newSet.map((b) => b.name).join(', ');
    for (const head of newSet) {
      if (!scope.has(head.package)) continue;
      out.push({
        key: `D-DEADLOCK\0${members.join(',')}\0${names}`,
        d: {
          rule: 'D-DEADLOCK',
          level: 'warning',
          message: `version deadlock: packages ${members.join(', ')} require each other, and their new versions (${names}) only work together: none can upgrade alone from ${oldSet.map((b) => b.name).join(', ')}, and OLM upgrades one subscription at a time, so clusters running them stay on the old versions`,
          ...where(head),
          hint: `Release in steps: first a version of one package that still provides what the others' installed versions require while also supporting the new APIs, then upgrade the others.`,
        },
      });
    }
  }
  return out;
}

/** The bundle users upgrade from: the old default head, else the head's chain predecessor. */
function previousBundle(
  index: DependencyIndex,
  pkg: string,
  base?: DependencyIndex,
): CatalogBundle | undefined {
  const head = index.defaultHead.get(pkg);
  if (base) {
    const old = base.defaultHead.get(pkg);
    return old && old.name !== head?.name ? old : undefined;
  }
  const channel = index.model.get(pkg)?.defaultChannel;
  if (!channel || !head) return undefined;
  const chain = [...(index.chainBundles.get(pkg) ?? [])];
  // chainBundles holds the default channel's chain first (sortBundles order).
  const next = chain[1];
  return next && next !== head && channel.bundles.has(next.name) ? next : undefined;
}

/** Every requirement of the set is met by the set, by packages outside the cycle, or externally. */
function consistent(
  index: DependencyIndex,
  set: CatalogBundle[],
  cycle: Set<string>,
  ext: ExternalProviders | undefined,
): boolean {
  return set.every((b) =>
    b.dependencies.every(
      (d) =>
        d.constraint !== undefined &&
        (externallyMet(d.constraint, ext) ||
          set.some((x) => x !== b && matches(d.constraint!, x)) ||
          index.candidates(d.constraint).some((c) => !cycle.has(c.bundle.package))),
    ),
  );
}

/** Tarjan's strongly connected components. */
function stronglyConnected(graph: Map<string, Set<string>>): string[][] {
  const indexOf = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  let counter = 0;
  const visit = (v: string): void => {
    indexOf.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!indexOf.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, indexOf.get(w)!));
    }
    if (low.get(v) === indexOf.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      out.push(component);
    }
  };
  for (const v of [...graph.keys()].sort()) if (!indexOf.has(v)) visit(v);
  return out;
}

/**
 * The OLM docs' "deprecating dependent APIs": a change leaves a requirement of another
 * package's channel head that a changed package's head met before with no provider
 * among the channel heads. OLM then blocks the provider's upgrade wherever the
 * dependant runs.
 */
function providerRemovedFindings(
  base: DependencyIndex,
  head: DependencyIndex,
  changed: Set<string>,
  ext: ExternalProviders | undefined,
): Keyed[] {
  const groups = new Map<
    string,
    { text: string; providers: Set<string>; dependants: CatalogBundle[]; line?: number; dep: Dependency }
  >();
  for (const b of head.dependants) {
    if (!(head.heads.get(b.package) ?? []).includes(b)) continue;
    for (const dep of b.dependencies) {
      const c = dep.constraint;
      if (!c || externallyMet(c, ext)) continue;
      const isHeadOf = (index: DependencyIndex, x: CatalogBundle) =>
        x.package !== b.package && (index.heads.get(x.package) ?? []).includes(x);
      const before = base.candidates(c).filter((x) => isHeadOf(base, x.bundle));
      const fromChanged = before.filter((x) => changed.has(x.bundle.package));
      if (fromChanged.length === 0) continue;
      if (head.candidates(c).some((x) => isHeadOf(head, x.bundle))) continue;
      const group = groups.get(dep.text) ?? {
        text: dep.text,
        providers: new Set(),
        dependants: [],
        line: dep.line,
        dep,
      };
      for (const x of fromChanged) group.providers.add(x.bundle.package);
      if (!group.dependants.includes(b)) group.dependants.push(b);
      groups.set(dep.text, group);
    }
  }
  const out: Keyed[] = [];
  for (const group of groups.values()) {
    const providers = [...group.providers].sort();
    const dependants = group.dependants.map((b) => `${b.name} (${b.package})`).join(', ');
    // Point at the provider's new head, where the change is; else at the requirement.
    const newHead = providers.map((p) => head.defaultHead.get(p) ?? head.heads.get(p)?.[0]).find((x) => x);
    const at = newHead ? where(newHead) : where(group.dependants[0]!, group.line);
    const stillInstallable = head.candidates(group.dep.constraint!).length > 0;
    out.push({
      key: `D-PROVIDER-REMOVED\0${group.text}`,
      d: {
        rule: 'D-PROVIDER-REMOVED',
        level: 'error',
        message: `this change leaves ${group.text} without a provider among the channel heads: ${providers.join(', ')} provided it before, and it is still required by ${dependants}. OLM would block the upgrade of ${providers.join(', ')} on every cluster that runs ${group.dependants.length === 1 ? 'that package' : 'those packages'}${stillInstallable ? ' (older bundles still provide it, so only fresh installs keep working)' : ''}`,
        file: at.file,
        line: at.line,
        package: providers[0],
        hint: `Keep providing it in the new head (serve the old API version alongside the new one) until the dependants have released versions that no longer require it, or update those dependants in the same change.`,
      },
    });
  }
  return out;
}

// ---- The check ----

export function dependenciesCheck(roots: CheckedRoot[], options: DependenciesOptions = {}): CheckResult {
  const findings: Diagnostic[] = [];
  const rows: string[] = [];
  for (const root of roots) {
    if (!root.head) continue; // a removed root: nothing left to install
    const rootFindings = dependencyFindings(root.head.model, {
      base: root.base?.model,
      packages: root.packages,
      externalProviders: options.externalProviders,
    });
    for (const d of rootFindings)
      findings.push(d.file === undefined ? d : { ...d, file: `${root.path}/${d.file}` });
    const packages = new Set([
      ...root.packages,
      ...rootFindings.flatMap((d) => (d.package ? [d.package] : [])),
    ]);
    for (const name of [...packages].sort()) {
      const mine = rootFindings.filter((d) => d.package === name);
      const errors = mine.filter((d) => d.level === 'error').length;
      const requirements = dependencyIndex(root.head.model).heads.get(name)?.[0]?.dependencies.length ?? 0;
      rows.push(
        `| \`${cell(root.path)}\` | ${cell(name)} | ${requirements} | ${errors} | ${mine.length - errors} |`,
      );
    }
  }
  const errors = findings.filter((d) => d.level === 'error').length;
  const summary = [
    rows.length === 0
      ? 'This change touches no operator package.'
      : '| catalog | package | requirements of the head | errors | warnings |\n|---|---|---:|---:|---:|\n' +
        rows.join('\n'),
    ...findingsTable(findings),
  ].join('\n');
  return {
    name: DEPENDENCIES_CHECK,
    conclusion: errors > 0 ? 'failure' : 'success',
    title:
      rows.length === 0
        ? 'No package changed'
        : errors > 0
          ? `${errors} dependency error${errors === 1 ? '' : 's'}`
          : 'Every requirement can be resolved',
    summary,
    findings,
    annotations: toAnnotations(findings),
  };
}
