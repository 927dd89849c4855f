// The `catalog-bot/upgrade-graph` check (docs/olm-upgrades.md, "What the checks ask of a
// graph"): graph rules on the new catalog, old-vs-new rules so that no installed user is
// stranded, and the skipRange lint, for the packages a change touches. Pure: it is given
// both catalogs.
import type { Diagnostic } from '../../catalog/diagnostics.js';
import { channelGraph, mermaid } from '../../catalog/olm/graph.js';
import type { Model } from '../../catalog/fbc/model.js';
import { lintSkipRange } from '../../catalog/versions/range-lint.js';
import type { Version } from '../../catalog/versions/semver.js';
import { cell, findingsTable, toAnnotations, type CheckResult } from '../check.js';
import type { CheckedRoot } from '../checked-root.js';
import { compareFindings } from './compare.js';
import { singleCatalogFindings } from './single.js';

export const UPGRADE_GRAPH_CHECK = 'catalog-bot/upgrade-graph';

/** skipRange lint for every entry of the given packages, with the versions ever published. */
export function skipRangeFindings(model: Model, packages: Set<string>, old?: Model): Diagnostic[] {
  const findings: Diagnostic[] = [];
  for (const name of packages) {
    const pkg = model.get(name);
    if (!pkg) continue;
    const published: Version[] = [];
    for (const m of [old?.get(name), pkg]) {
      for (const ch of m?.channels.values() ?? [])
        for (const b of ch.bundles.values()) if (b.version) published.push(b.version);
    }
    // Ranges the base already had: the change did not write them, so they only warn.
    const before = new Set<string>();
    for (const ch of old?.get(name)?.channels.values() ?? [])
      for (const b of ch.bundles.values()) if (b.skipRange !== '') before.add(`${b.name}\0${b.skipRange}`);
    const seen = new Set<string>();
    for (const ch of pkg.channels.values()) {
      for (const b of ch.bundles.values()) {
        const key = `${b.name}\0${b.skipRange}`;
        if (b.skipRange === '' || seen.has(key)) continue;
        seen.add(key);
        const existed = before.has(key);
        for (const lint of lintSkipRange(b.skipRange, published)) {
          const demoted = existed && lint.level === 'error';
          findings.push({
            rule: lint.rule,
            level: demoted ? 'warning' : lint.level,
            message: `package "${name}", bundle "${b.name}": skipRange ${JSON.stringify(b.skipRange)}: ${lint.message}${demoted ? ' (already so before this change)' : ''}`,
            // The entry (and its skipRange) lives in the channel's file.
            file: ch.pos?.file,
            line: b.entry.line ?? ch.pos?.line,
            package: name,
            hint: lint.suggestion ? `Write \`skipRange: '${lint.suggestion}'\`.` : undefined,
          });
        }
      }
    }
  }
  return findings;
}

/** Bundles that the findings say are left without a way forward, per package. */
function strandedBundles(findings: Diagnostic[]): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const d of findings) {
    const m = DEAD_END_SUBJECT.exec(d.message) ?? STRANDED_SUBJECT.exec(d.message);
    if (!m || d.level !== 'error' || d.package === undefined) continue;
    const set = out.get(d.package) ?? new Set<string>();
    set.add(m[1] as string);
    out.set(d.package, set);
  }
  return out;
}

function diagrams(root: CheckedRoot, findings: Diagnostic[]): string[] {
  const stranded = strandedBundles(findings);
  const out: string[] = [];
  for (const name of [...root.packages].sort()) {
    const after = root.head?.model.get(name);
    const before = root.base?.model.get(name);
    for (const channelName of new Set([
      ...(after?.channels.keys() ?? []),
      ...(before?.channels.keys() ?? []),
    ])) {
      const parts: string[] = [];
      for (const [label, pkg] of [
        ['before', before],
        ['after', after],
      ] as const) {
        const ch = pkg?.channels.get(channelName);
        if (!pkg || !ch || ch.bundles.size === 0) parts.push(`${label}: (no channel)`);
        else {
          const options =
            label === 'after'
              ? { before: before?.channels.get(channelName), stranded: stranded.get(name) }
              : {};
          parts.push(`${label}:\n\n\`\`\`mermaid\n${mermaid(channelGraph(pkg, ch), ch, options)}\`\`\``);
        }
      }
      out.push(`#### \`${root.path}\` ${name} / ${channelName}\n\n${parts.join('\n\n')}`);
    }
  }
  return out;
}

/**
 * A pull request is judged on what it changes: a graph problem the base already had
 * stays visible, as a warning, but does not fail the change.
 */
function notBlamingTheChange(findings: Diagnostic[], before: Diagnostic[]): Diagnostic[] {
  const old = new Set(before.map((d) => `${d.rule}\0${d.message}`));
  return findings.map((d) =>
    d.level === 'error' && old.has(`${d.rule}\0${d.message}`)
      ? { ...d, level: 'warning', message: `${d.message} (already so before this change)` }
      : d,
  );
}

// The bundle a G6 dead-end finding and a G12 stranding finding are about.
const DEAD_END_SUBJECT = /has no update from (\S+?):/;
const STRANDED_SUBJECT = /^installed bundle (\S+) /;

/** G12 (this change strands users of B) says all that G6 (B is a classic dead end) says. */
function withoutRestatements(single: Diagnostic[], compared: Diagnostic[]): Diagnostic[] {
  const stranded = new Set(
    compared.flatMap((d) => {
      const m = STRANDED_SUBJECT.exec(d.message);
      return m ? [`${d.package}\0${m[1]}`] : [];
    }),
  );
  return single.filter((d) => {
    const m = d.rule === 'G6-CLASSIC-DEAD-END' ? DEAD_END_SUBJECT.exec(d.message) : null;
    return !(m && stranded.has(`${d.package}\0${m[1]}`));
  });
}

export function upgradeGraphCheck(roots: CheckedRoot[]): CheckResult {
  const findings: Diagnostic[] = [];
  const rows: string[] = [];
  for (const root of roots) {
    if (!root.head) continue; // a removed root: nothing left to upgrade to
    const headModel = root.head.model;
    const compared = root.base
      ? compareFindings(root.base.model, headModel, { packages: root.packages })
      : [];
    const single = singleCatalogFindings(headModel, { packages: root.packages });
    const before = root.base ? singleCatalogFindings(root.base.model, { packages: root.packages }) : [];
    const rootFindings = [
      ...withoutRestatements(notBlamingTheChange(single, before), compared),
      ...compared,
      ...skipRangeFindings(headModel, root.packages, root.base?.model),
    ];
    for (const d of rootFindings)
      findings.push(d.file === undefined ? d : { ...d, file: `${root.path}/${d.file}` });
    for (const name of [...root.packages].sort()) {
      const mine = rootFindings.filter((d) => d.package === name);
      const errors = mine.filter((d) => d.level === 'error').length;
      rows.push(`| \`${cell(root.path)}\` | ${cell(name)} | ${errors} | ${mine.length - errors} |`);
    }
  }
  const errors = findings.filter((d) => d.level === 'error').length;
  const summary = [
    rows.length === 0
      ? 'This change touches no operator package.'
      : '| catalog | package | errors | warnings and notes |\n|---|---|---:|---:|\n' + rows.join('\n'),
    ...findingsTable(findings),
    ...roots
      .flatMap((r) =>
        diagrams(
          r,
          findings.filter((d) => d.file?.startsWith(r.path + '/')),
        ),
      )
      .map((d) => `\n${d}`),
  ].join('\n');
  return {
    name: UPGRADE_GRAPH_CHECK,
    conclusion: errors > 0 ? 'failure' : 'success',
    title:
      rows.length === 0
        ? 'No package changed'
        : errors > 0
          ? `${errors} upgrade-graph error${errors === 1 ? '' : 's'}`
          : 'Every installed version keeps a way forward',
    summary,
    findings,
    annotations: toAnnotations(findings),
  };
}
