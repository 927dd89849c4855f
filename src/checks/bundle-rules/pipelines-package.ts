// operator-pipelines' static tests that read the whole package (operatorcert/static_tests/
// common/bundle.py check_operator_name and check_replaces_availability, community/bundle.py
// check_dangling_bundles, common/operator.py, community/operator.py), with the update graph
// their operator_repo builds (docs/bundle-rules.md). They say nothing when the bundle is
// checked alone (no package directory) or, for ci.yaml, when the package has none.
import { posix } from 'node:path';
import { compareVersions, tryParseVersion } from '../../catalog/versions/semver.js';
import { tryParseRange } from '../../catalog/versions/range.js';
import {
  COMMON_SUITES,
  csvKeyLine,
  isMap,
  list,
  map,
  str,
  type BundleContext,
  type BundleRule,
  type SiblingBundle,
} from './context.js';
import { fbcEnabled } from './pipelines-bundle.js';
import { selectedIndexes } from './removed-apis.js';

const PIPELINES = 'operator-pipelines:';
const PACKAGE_ANNOTATION = 'operators.operatorframework.io.bundle.package.v1';
const CHANNELS_ANNOTATION = 'operators.operatorframework.io.bundle.channels.v1';
const DEFAULT_CHANNEL_ANNOTATION = 'operators.operatorframework.io.bundle.channel.default.v1';

/** The CSV name split as operator_repo does: name before the first dot, version after it less a leading v. */
function csvFullName(b: SiblingBundle): { name: string; version: string } | undefined {
  const full = b.csv && isMap(b.csv.metadata) ? b.csv.metadata.name : undefined;
  if (typeof full !== 'string' || !full.includes('.')) return undefined;
  const dot = full.indexOf('.');
  return { name: full.slice(0, dot), version: full.slice(dot + 1).replace(/^v+/, '') };
}

const channelsOf = (b: SiblingBundle): Set<string> =>
  CHANNELS_ANNOTATION in b.annotations
    ? new Set(
        str(b.annotations[CHANNELS_ANNOTATION])
          .split(',')
          .map((c) => c.trim()),
      )
    : new Set();

function defaultChannelOf(b: SiblingBundle): string | undefined {
  const d = b.annotations[DEFAULT_CHANNEL_ANNOTATION];
  return d === undefined ? undefined : String(d).trim();
}

/** Bundles in version order (semver, else the text), as operator_repo sorts them. */
function byVersion(a: SiblingBundle, b: SiblingBundle): number {
  const va = csvFullName(a)?.version ?? a.version;
  const vb = csvFullName(b)?.version ?? b.version;
  const pa = tryParseVersion(va);
  const pb = tryParseVersion(vb);
  if (pa.ok && pb.ok) return compareVersions(pa.version, pb.version);
  return va < vb ? -1 : va > vb ? 1 : 0;
}

const ciFile = (ctx: BundleContext): string => `${posix.dirname(ctx.dir)}/ci.yaml`;

/** The channel's update graph: each bundle (by directory) to the bundles that replace it. */
export function updateGraph(ctx: BundleContext, channel: string): Map<string, Set<string>> | string {
  const all = (ctx.packageBundles ?? []).filter((b) => channelsOf(b).has(channel)).sort(byVersion);
  const mode = ctx.ciYaml?.updateGraph ?? 'replaces-mode';
  const edges = new Map<string, Set<string>>();
  const edge = (from: string, to: string): void =>
    void edges.set(from, (edges.get(from) ?? new Set()).add(to));
  if (mode === 'semver-mode') {
    for (let i = 0; i + 1 < all.length; i++) edge(all[i]!.version, all[i + 1]!.version);
    return edges;
  }
  if (mode !== 'replaces-mode') return `unsupported updateGraph value: ${String(mode)}`;
  const byCsvVersion = new Map(
    all.flatMap((b) => (csvFullName(b) ? [[csvFullName(b)!.version, b] as const] : [])),
  );
  for (const b of all) {
    const skipRange = map(map(b.csv?.metadata).annotations)['olm.skipRange'];
    if (typeof skipRange === 'string' && skipRange !== '') {
      const range = tryParseRange(skipRange);
      if (range.ok)
        for (const [v, replaced] of byCsvVersion) {
          const parsed = tryParseVersion(v);
          if (parsed.ok && range.range.matches(parsed.version)) edge(replaced.version, b.version);
        }
    }
    const spec = map(b.csv?.spec);
    const previous = new Set<unknown>([...list(spec.skips), spec.replaces]);
    for (const name of previous) {
      if (name === undefined || name === null) continue;
      if (typeof name !== 'string' || !name.includes('.'))
        return `${posix.basename(posix.dirname(ctx.dir))}/${b.version} has invalid 'replaces' field: '${String(name)}'`;
      const replaced = byCsvVersion.get(name.slice(name.indexOf('.') + 1).replace(/^v+/, ''));
      if (replaced) edge(replaced.version, b.version);
    }
  }
  return edges;
}

/** Every channel a bundle of the package names, default channels included. */
function packageChannels(ctx: BundleContext): string[] {
  const out = new Set<string>();
  for (const b of ctx.packageBundles ?? []) {
    for (const c of channelsOf(b)) out.add(c);
    const d = defaultChannelOf(b);
    if (d !== undefined) out.add(d);
  }
  return [...out].sort();
}

/** A back edge of a depth-first walk: the update graph has a loop through it. */
export function findLoop(graph: Map<string, Set<string>>): [string, string] | undefined {
  const visited = new Set<string>();
  const stack = new Set<string>();
  const walk = (node: string): [string, string] | undefined => {
    visited.add(node);
    stack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!visited.has(next)) {
        const found = walk(next);
        if (found) return found;
      } else if (stack.has(next)) return [node, next];
    }
    stack.delete(node);
    return undefined;
  };
  for (const node of graph.keys()) {
    if (visited.has(node)) continue;
    const found = walk(node);
    if (found) return found;
  }
  return undefined;
}

// ---- check_operator_name (common/bundle.py) -----------------------------------------------

const operatorNameRule: BundleRule = {
  id: 'B-OPERATOR-NAME',
  upstream: [`${PIPELINES}check_operator_name`],
  suites: COMMON_SUITES,
  run(ctx, report) {
    if (!ctx.packageBundles) return;
    const annotationsFile = `${ctx.dir}/metadata/annotations.yaml`;
    const metaName = ctx.annotations[PACKAGE_ANNOTATION];
    if (metaName === undefined || metaName === null || metaName === '') return; // B-ANNOTATIONS says so
    const self = ctx.packageBundles.find((b) => b.version === ctx.version)!;
    const own = csvFullName(self);
    if (!own) {
      report({
        level: 'error',
        message: 'the CSV name has no dot, so it names no operator (<operator>.v<version>)',
        line: csvKeyLine(ctx, 'name'),
      });
      return;
    }
    const others = ctx.packageBundles.filter((b) => b.version !== ctx.version);
    const consistency = (
      mine: string,
      all: Set<string>,
      theirs: Set<string>,
      where: string,
      file?: string,
    ): void => {
      if (theirs.size === 1) {
        const common = [...theirs][0]!;
        if (common !== mine)
          report({
            level: 'error',
            message: `the operator name ${where} (${mine}) is not the one the package's other bundles use (${common})`,
            ...(file ? { file } : {}),
          });
      } else
        report({
          level: 'warning',
          message: `the operator name ${where} differs across the package's bundles: ${[...all].sort().join(', ')}`,
          ...(file ? { file } : {}),
        });
    };
    if (others.length > 0) {
      const metaOf = (bs: SiblingBundle[]): Set<string> =>
        new Set(bs.map((b) => String(b.annotations[PACKAGE_ANNOTATION] ?? '')));
      const csvOf = (bs: SiblingBundle[]): Set<string> =>
        new Set(bs.flatMap((b) => (csvFullName(b) ? [csvFullName(b)!.name] : [])));
      consistency(
        String(metaName),
        metaOf(ctx.packageBundles),
        metaOf(others),
        'in annotations.yaml',
        annotationsFile,
      );
      consistency(own.name, csvOf(ctx.packageBundles), csvOf(others), 'in the CSV name');
    }
    const level = others.length > 0 ? 'warning' : 'error';
    if (String(metaName) !== own.name)
      report({
        level,
        message: `the operator name in annotations.yaml (${String(metaName)}) is not the one in the CSV name (${own.name})`,
        file: annotationsFile,
      });
    if (String(metaName) !== ctx.package)
      report({
        level,
        message: `the operator name in annotations.yaml (${String(metaName)}) is not the package directory's name (${ctx.package})`,
        file: annotationsFile,
      });
  },
};

// ---- check_replaces_availability (common/bundle.py, skip_fbc) ------------------------------

const replacesAvailabilityRule: BundleRule = {
  id: 'B-REPLACES-AVAILABILITY',
  upstream: [`${PIPELINES}check_replaces_availability`],
  suites: COMMON_SUITES,
  run(ctx, report) {
    if (!ctx.packageBundles || fbcEnabled(ctx)) return;
    const replaces = map(ctx.csv?.spec).replaces;
    if (typeof replaces !== 'string' || replaces === '') return;
    const line = csvKeyLine(ctx, 'replaces');
    const delimiter = replaces.includes('.v') ? '.v' : '.';
    if (!replaces.includes(delimiter)) {
      report({ level: 'error', message: `spec.replaces "${replaces}" is not <operator>.v<version>`, line });
      return;
    }
    const version = replaces.slice(replaces.indexOf(delimiter) + delimiter.length);
    const self = ctx.packageBundles.find((b) => b.version === ctx.version)!;
    if (version === csvFullName(self)?.version) {
      report({ level: 'error', message: `the bundle replaces itself (spec.replaces ${replaces})`, line });
      return;
    }
    const replaced = ctx.packageBundles.find((b) => csvFullName(b)?.version === version);
    if (!replaced) {
      const known = ctx.packageBundles
        .flatMap((b) => (csvFullName(b) ? [csvFullName(b)!.version] : []))
        .sort();
      report({
        level: 'error',
        message: `spec.replaces names version ${version}, which the package does not have (it has ${known.join(', ')}); rebase the branch if it was released meanwhile`,
        line,
      });
      return;
    }
    const mine = ctx.annotations['com.redhat.openshift.versions'];
    const theirs = replaced.annotations['com.redhat.openshift.versions'];
    if (mine === theirs) return;
    const own = new Set(selectedIndexes(mine, ctx.ocpIndexes) ?? []);
    const old = new Set(selectedIndexes(theirs, ctx.ocpIndexes) ?? []);
    const extra = [...own].filter((i) => !old.has(i));
    if (extra.length > 0)
      report({
        level: 'error',
        message: `the bundle goes to OpenShift ${extra.join(', ')}, where the bundle it replaces (${replaced.version}, com.redhat.openshift.versions ${JSON.stringify(theirs ?? null)}) is not: align com.redhat.openshift.versions with it`,
        file: `${ctx.dir}/metadata/annotations.yaml`,
      });
  },
};

// ---- check_dangling_bundles (community/bundle.py, skip_fbc) --------------------------------

const danglingRule: BundleRule = {
  id: 'B-DANGLING-BUNDLES',
  upstream: [`${PIPELINES}check_dangling_bundles`],
  suites: ['community'],
  run(ctx, report) {
    if (!ctx.packageBundles || fbcEnabled(ctx)) return;
    const self = ctx.packageBundles.find((b) => b.version === ctx.version)!;
    const channels = channelsOf(self);
    const d = defaultChannelOf(self);
    if (d !== undefined) channels.add(d);
    for (const channel of [...channels].sort()) {
      const inChannel = ctx.packageBundles.filter((b) => channelsOf(b).has(channel)).sort(byVersion);
      const head = inChannel[inChannel.length - 1]?.version;
      const graph = updateGraph(ctx, channel);
      if (typeof graph === 'string') {
        report({ level: 'error', message: graph, file: ciFile(ctx) });
        return;
      }
      const dangling = inChannel
        .filter((b) => !graph.has(b.version) && b.version !== head)
        .map((b) => b.version);
      if (dangling.length > 0)
        report({
          level: 'error',
          message: `channel ${channel} has bundles nothing upgrades from and that are not its head: ${dangling.join(', ')}`,
          file: ctx.dir,
        });
    }
  },
};

// ---- community/operator.py (skip_fbc) ------------------------------------------------------

const graphLoopRule: BundleRule = {
  id: 'B-UPGRADE-GRAPH-LOOP',
  upstream: [`${PIPELINES}check_upgrade_graph_loop`],
  suites: ['community'],
  run(ctx, report) {
    if (!ctx.packageBundles || fbcEnabled(ctx)) return;
    for (const channel of packageChannels(ctx)) {
      const graph = updateGraph(ctx, channel);
      if (typeof graph === 'string') {
        report({ level: 'error', message: graph, file: ciFile(ctx) });
        return;
      }
      const loop = findLoop(graph);
      if (loop)
        report({
          level: 'error',
          message: `channel ${channel} has an upgrade loop: ${loop[0]} -> ${loop[1]}`,
          file: ctx.dir,
        });
    }
  },
};

const nameUniqueRule: BundleRule = {
  id: 'B-OPERATOR-NAME-UNIQUE',
  upstream: [`${PIPELINES}check_operator_name_unique`],
  suites: ['community'],
  run(ctx, report) {
    if (!ctx.packageBundles || fbcEnabled(ctx)) return;
    const names = new Set(ctx.packageBundles.flatMap((b) => (csvFullName(b) ? [csvFullName(b)!.name] : [])));
    if (names.size > 1)
      report({
        level: 'error',
        message: `the package's bundles use several operator names in their CSV names: ${[...names].sort().join(', ')}`,
        file: ctx.dir,
      });
  },
};

const ciUpdateGraphRule: BundleRule = {
  id: 'B-CI-UPDATE-GRAPH',
  upstream: [`${PIPELINES}check_ci_upgrade_graph`],
  suites: ['community'],
  run(ctx, report) {
    if (!ctx.ciYaml || fbcEnabled(ctx)) return;
    const mode = ctx.ciYaml.updateGraph;
    if (!mode)
      report({
        level: 'warning',
        message: 'ci.yaml has no updateGraph: replaces-mode is used',
        file: ciFile(ctx),
      });
    else if (mode !== 'replaces-mode' && mode !== 'semver-mode')
      report({
        level: 'error',
        message: `ci.yaml updateGraph is ${JSON.stringify(mode)}; it must be replaces-mode or semver-mode`,
        file: ciFile(ctx),
      });
  },
};

// ---- common/operator.py --------------------------------------------------------------------

/** What ci-schema.json allows, checked field by field. */
export function ciSchemaProblems(ci: unknown): string[] {
  if (!isMap(ci)) return ['it is not a mapping'];
  const out: string[] = [];
  if ('updateGraph' in ci && ci.updateGraph !== 'replaces-mode' && ci.updateGraph !== 'semver-mode')
    out.push('updateGraph must be replaces-mode or semver-mode');
  if ('reviewers' in ci) {
    const r = ci.reviewers;
    if (!Array.isArray(r) || !r.every((x) => typeof x === 'string'))
      out.push('reviewers must be a list of GitHub logins');
    else if (r.length === 0) out.push('reviewers must name at least one login');
  }
  if ('merge' in ci && typeof ci.merge !== 'boolean') out.push('merge must be true or false');
  if ('cert_project_id' in ci && typeof ci.cert_project_id !== 'string')
    out.push('cert_project_id must be a string');
  if ('fbc' in ci) {
    const fbc = ci.fbc;
    if (!isMap(fbc)) return [...out, 'fbc must be a mapping'];
    for (const k of Object.keys(fbc))
      if (!['enabled', 'version_promotion_strategy', 'catalog_mapping'].includes(k))
        out.push(`fbc has an unknown field "${k}"`);
    if ('enabled' in fbc && typeof fbc.enabled !== 'boolean') out.push('fbc.enabled must be true or false');
    if (
      'version_promotion_strategy' in fbc &&
      !['review-needed', 'always', 'never'].includes(fbc.version_promotion_strategy as string)
    )
      out.push('fbc.version_promotion_strategy must be review-needed, always or never');
    if ('catalog_mapping' in fbc) {
      const m = fbc.catalog_mapping;
      if (!Array.isArray(m)) out.push('fbc.catalog_mapping must be a list');
      else
        for (const [i, e] of m.entries()) {
          const where = `fbc.catalog_mapping[${i}]`;
          if (!isMap(e)) {
            out.push(`${where} must be a mapping`);
            continue;
          }
          for (const f of ['template_name', 'type', 'catalog_names'])
            if (!(f in e)) out.push(`${where}.${f} is required`);
          if ('template_name' in e && typeof e.template_name !== 'string')
            out.push(`${where}.template_name must be a string`);
          if ('type' in e && e.type !== 'olm.template.basic' && e.type !== 'olm.semver')
            out.push(`${where}.type must be olm.template.basic or olm.semver`);
          if ('catalog_names' in e) {
            const c = e.catalog_names;
            if (!Array.isArray(c) || !c.every((x) => typeof x === 'string'))
              out.push(`${where}.catalog_names must be a list of catalog names`);
            else if (c.length === 0) out.push(`${where}.catalog_names must name at least one catalog`);
            else if (new Set(c).size !== c.length) out.push(`${where}.catalog_names names a catalog twice`);
          }
        }
    }
  }
  return out;
}

const ciSchemaRule: BundleRule = {
  id: 'B-CI-SCHEMA',
  upstream: [`${PIPELINES}check_schema_operator_ci_config`],
  suites: COMMON_SUITES,
  run(ctx, report) {
    if (!ctx.ciYaml) return;
    for (const p of ciSchemaProblems(ctx.ciYaml))
      report({ level: 'error', message: `ci.yaml does not follow its schema: ${p}`, file: ciFile(ctx) });
  },
};

const ciCatalogUsageRule: BundleRule = {
  id: 'B-CI-CATALOG-MAPPING',
  upstream: [`${PIPELINES}check_catalog_usage_ci_config`],
  suites: COMMON_SUITES,
  run(ctx, report) {
    const byCatalog = new Map<string, string[]>();
    for (const t of list(map(ctx.ciYaml?.fbc).catalog_mapping))
      for (const c of list(map(t).catalog_names))
        byCatalog.set(String(c), [...(byCatalog.get(String(c)) ?? []), str(map(t).template_name)]);
    for (const [catalog, templates] of byCatalog)
      if (templates.length > 1)
        report({
          level: 'error',
          message: `ci.yaml maps several templates (${templates.join(', ')}) to the catalog ${catalog}: each catalog is rendered from one template`,
          file: ciFile(ctx),
        });
  },
};

export const PIPELINES_PACKAGE_RULES: BundleRule[] = [
  operatorNameRule,
  replacesAvailabilityRule,
  danglingRule,
  graphLoopRule,
  nameUniqueRule,
  ciUpdateGraphRule,
  ciSchemaRule,
  ciCatalogUsageRule,
];
