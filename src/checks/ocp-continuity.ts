// `catalog-bot/ocp-continuity` (docs/ocp-lifecycle.md): a cluster that upgrades OpenShift
// from v4.N to v4.N+1 switches to the next catalog, and must find there every operator it
// runs (the same bundle, or a way forward, in the same channel). Plus the rules that depend
// on a catalog's OpenShift version. Pure: loaded models in, findings out.
import type { Bundle } from '../catalog/fbc/declcfg.js';
import { sortDiagnostics, type Diagnostic } from '../catalog/diagnostics.js';
import type { Model, ModelBundle, ModelChannel, ModelPackage } from '../catalog/fbc/model.js';
import {
  formatOcp,
  holdsClustersBefore,
  maxOpenShiftValues,
  maxOpenShiftVersion,
  ocpCatalogVersion,
  parseOcpMinor,
  rankOcp,
  runnableBundles,
  wayForward,
  type OcpMinor,
  type Reach,
} from '../catalog/olm/ocp-continuity.js';
import { classicChannel } from '../catalog/olm/classic.js';
import { compareVersions, formatVersion } from '../catalog/versions/semver.js';
import { cell, findingsTable, shellWord, toAnnotations, type CheckResult } from './check.js';
import { parseProperties, PROPERTY_BUNDLE_OBJECT } from '../catalog/property.js';
import { renderCommand } from './templates.js';

export const OCP_CONTINUITY_CHECK = 'catalog-bot/ocp-continuity';

/** The per-version rules (`.github/catalog-bot.yml` `ocp:`), with community-operators defaults. */
export interface OcpConfig {
  /** First catalog where bundles must carry `olm.csv.metadata`, not `olm.bundle.object`; null or `never`: no rule. */
  bundleObjectForbiddenFrom: string | null;
  /** Kubernetes `major.minor` of OpenShift catalogs; 4.N defaults to 1.(N+13). */
  kubernetesVersions: { openshift: string; kubernetes: string }[];
}

export const DEFAULT_OCP_CONFIG: OcpConfig = Object.freeze({
  bundleObjectForbiddenFrom: 'v4.17',
  kubernetesVersions: [],
});

export interface OcpCatalog {
  /** The directory name, like `v4.21`. */
  name: string;
  /** The catalog root's path in the repository, like `catalogs/v4.21`. */
  root: string;
  model: Model;
}

export interface OcpContinuityInput {
  catalogs: OcpCatalog[];
  /** Only these packages (the ones a change touches); default: every package. */
  packages?: Set<string>;
  config?: OcpConfig;
  /**
   * Which template renders which catalog file (`.github/catalog-bot.yml` templates, ci.yaml
   * `fbc.catalog_mapping`): a fix hint that re-renders a catalog names its template.
   */
  templates?: readonly { template: string; outputs: readonly string[] }[];
  /**
   * The repository's config.yaml `allowed_bundle_registries`: prefixes every bundle image of a
   * catalog must start with (operator-pipelines' check_bundle_images_in_fbc); empty: any image.
   */
  allowedBundleRegistries?: readonly string[];
}

/** config.yaml's `allowed_bundle_registries`, its strings only (upstream compares with startswith). */
export function allowedBundleRegistriesOf(config: unknown): string[] {
  const value =
    typeof config === 'object' && config !== null && !Array.isArray(config)
      ? (config as Record<string, unknown>).allowed_bundle_registries
      : undefined;
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

interface Versioned extends OcpCatalog {
  version: OcpMinor;
}

/** OpenShift catalogs in version order; other roots are not OpenShift catalogs. */
function ordered(catalogs: OcpCatalog[]): Versioned[] {
  return catalogs
    .flatMap((c) => {
      const version = ocpCatalogVersion(c.name);
      return version ? [{ ...c, version }] : [];
    })
    .sort((a, b) => rankOcp(a.version) - rankOcp(b.version));
}

/** The Kubernetes version an OpenShift catalog's clusters run. */
export function kubernetesVersionOf(name: string, config: OcpConfig): OcpMinor | null {
  const configured = config.kubernetesVersions.find((k) => k.openshift === name);
  if (configured !== undefined) return parseOcpMinor(configured.kubernetes);
  const v = ocpCatalogVersion(name);
  return v && v.major === 4 ? { major: 1, minor: v.minor + 13 } : null;
}

const at = (
  c: OcpCatalog,
  file: string | undefined,
  line: number | undefined,
): Pick<Diagnostic, 'file' | 'line'> => ({
  ...(file !== undefined ? { file: `${c.root}/${file}` } : {}),
  ...(line !== undefined ? { line } : {}),
});

const entryAt = (c: OcpCatalog, channel: ModelChannel, b?: ModelBundle): Pick<Diagnostic, 'file' | 'line'> =>
  at(c, channel.pos?.file ?? b?.blob?.pos.file, b?.entry.line ?? channel.pos?.line);

const v = (b: ModelBundle): string => (b.version ? formatVersion(b.version) : 'no version');

const REACH_TEXT: Record<Reach, string> = {
  classic: "on classic OLM's upgrade path",
  v1: 'installed or upgraded to by OLM v1',
  pinned: 'installed only when asked for by name or version',
};

/** The highest-version bundle of a package (any channel). */
function newest(pkg: ModelPackage): ModelBundle | undefined {
  let top: ModelBundle | undefined;
  for (const ch of pkg.channels.values()) {
    for (const b of ch.bundles.values()) {
      if (b.version && (!top?.version || compareVersions(b.version, top.version) > 0)) top = b;
    }
  }
  return top;
}

/** The head of a channel as classic OLM sees it (for hints), else its highest version. */
function headOf(channel: ModelChannel): ModelBundle | undefined {
  let top: ModelBundle | undefined;
  for (const b of channel.bundles.values()) {
    if (b.version && (!top?.version || compareVersions(b.version, top.version) > 0)) top = b;
  }
  return top;
}

/** What a finding is about, the same before and after a change (messages name other bundles too). */
const findingKeys = new WeakMap<Diagnostic, string>();

function push(out: Diagnostic[], key: string, d: Diagnostic): void {
  findingKeys.set(d, key);
  out.push(d);
}

const keyOf = (d: Diagnostic): string => findingKeys.get(d) ?? `${d.rule}\0${d.message}`;

function list(names: string[], max = 6): string {
  return names.length <= max
    ? names.join(', ')
    : `${names.slice(0, max).join(', ')} and ${names.length - max} more`;
}

function continuity(older: Versioned, newer: Versioned, name: string, out: Diagnostic[]): void {
  const oldPkg = older.model.get(name)!;
  const newPkg = newer.model.get(name);
  const pair = `catalog ${older.name} -> ${newer.name}`;
  if (!newPkg) {
    const top = newest(oldPkg);
    const capped = top?.blob && holdsClustersBefore(top.blob, newer.version);
    const unheld = capped
      ? [...new Set([...oldPkg.channels.values()].flatMap((c) => [...c.bundles.values()]))]
          .filter((b) => !holdsClustersBefore(b.blob, newer.version))
          .map((b) => b.name)
      : [];
    push(out, `${capped ? 'retired' : 'dropped'}|${name}|${older.name}|${newer.name}`, {
      rule: capped ? 'OCP-PACKAGE-RETIRED' : 'OCP-PACKAGE-DROPPED',
      level: capped ? 'notice' : 'error',
      message: capped
        ? `${pair}: package "${name}" is in ${older.name} but not in ${newer.name}, and its newest bundle ${top!.name} declares olm.maxOpenShiftVersion ${formatOcp(maxOpenShiftVersion(top!.blob)!)}, so clusters running it cannot upgrade to OpenShift ${formatOcp(newer.version)}${unheld.length > 0 ? ` (clusters on ${list(unheld)}, which declare no such limit, can, and lose the operator's updates)` : ''}`
        : `${pair}: package "${name}" is in ${older.name} but not in ${newer.name}: clusters that upgrade to OpenShift ${formatOcp(newer.version)} lose it (no updates, and it can no longer be installed)${top ? `; its newest bundle ${top.name} declares no olm.maxOpenShiftVersion below ${formatOcp(newer.version)} that would hold them back` : ''}`,
      ...at(older, oldPkg.pos.file, oldPkg.pos.line),
      package: name,
      hint: capped
        ? `Nothing to do if the operator is retired on OpenShift ${formatOcp(newer.version)}.`
        : `Add the package to catalog ${newer.name} (\`catalog-bot ocp-promote ${older.name} ${newer.name} --package ${shellWord(name)}\`), or, if it does not support OpenShift ${formatOcp(newer.version)}, give its newest bundle \`olm.maxOpenShiftVersion: "${formatOcp(older.version)}"\`.`,
    });
    return;
  }
  for (const channel of oldPkg.channels.values()) {
    const runnable = runnableBundles(oldPkg, channel).filter(
      (r) => !holdsClustersBefore(r.bundle.blob, newer.version),
    );
    if (runnable.length === 0) continue;
    const next = newPkg.channels.get(channel.name);
    if (!next) {
      // A channel of the next catalog that holds this channel's head looks like its new name.
      const head = headOf(channel);
      const renamed = [...newPkg.channels.values()].find(
        (c) => !oldPkg.channels.has(c.name) && head !== undefined && c.bundles.has(head.name),
      );
      push(out, `channel|${name}|${channel.name}|${older.name}|${newer.name}`, {
        rule: 'OCP-CHANNEL-DROPPED',
        level: runnable.some((r) => r.reach.some((x) => x !== 'pinned')) ? 'error' : 'warning',
        message: `${pair}: channel "${channel.name}" of package "${name}" is in ${older.name} (with ${list(runnable.map((r) => r.bundle.name))}) but not in ${newer.name}${renamed ? `, which has a new channel "${renamed.name}" holding its head ${head!.name} instead (renamed?)` : ''}: subscriptions and cluster extensions on "${channel.name}" find nothing to update to after the cluster upgrades to OpenShift ${formatOcp(newer.version)}`,
        ...(channel.pos
          ? at(older, channel.pos.file, channel.pos.line)
          : at(older, oldPkg.pos.file, oldPkg.pos.line)),
        package: name,
        hint: `Keep channel "${channel.name}" in ${newer.name}, as in ${older.name}${renamed ? `: it may list the same entries as "${renamed.name}", with an olm.deprecations entry that points its users to "${renamed.name}"` : ''}.`,
      });
      continue;
    }
    const stranded: { b: ModelBundle; reach: Reach[]; olms: string[] }[] = [];
    for (const { bundle, reach } of runnable) {
      const way = wayForward(newPkg, next, bundle);
      if (way.same) continue;
      const olms: string[] = [];
      if (way.classic === null) olms.push('classic OLM');
      if (way.v1 === null) olms.push('OLM v1');
      if (olms.length > 0) stranded.push({ b: bundle, reach, olms });
    }
    if (stranded.length === 0) continue;
    const head = headOf(next);
    for (const level of ['error', 'warning'] as const) {
      const group = stranded.filter((s) => (level === 'error') === s.reach.some((x) => x !== 'pinned'));
      if (group.length === 0) continue;
      const names = group.map((s) => s.b.name);
      const who = [...new Set(group.flatMap((s) => s.olms))].join(' and ');
      const how = [...new Set(group.flatMap((s) => s.reach))].map((r) => REACH_TEXT[r]).join('; ');
      push(out, `forward|${name}|${channel.name}|${older.name}|${newer.name}|${level}|${names.join(',')}`, {
        rule: 'OCP-NO-WAY-FORWARD',
        level,
        message: `${pair}: ${group.length === 1 ? 'bundle' : `bundles (${group.length})`} ${list(group.map((s) => `${s.b.name} (${v(s.b)})`))} of package "${name}" ${group.length === 1 ? 'runs' : 'run'} on clusters from ${older.name} in channel "${channel.name}" (${how}), but channel "${channel.name}" of ${newer.name} has neither ${group.length === 1 ? 'it' : 'them'} nor an upgrade from ${group.length === 1 ? 'it' : 'them'}: after the cluster upgrades to OpenShift ${formatOcp(newer.version)}, ${who} ${who.includes(' and ') ? 'leave' : 'leaves'} ${group.length === 1 ? 'it' : 'them'} without updates`,
        ...entryAt(newer, next, head),
        package: name,
        hint: head
          ? `In ${newer.name}, add ${list(names.map((n) => `\`${n}\``))} to the \`skips\` of ${head.name} (channel "${next.name}"), or keep ${names.length === 1 ? 'it' : 'them'} in the channel as in ${older.name}.`
          : `Keep ${list(names)} in channel "${next.name}" of ${newer.name}, as in ${older.name}.`,
      });
    }
  }
}

// ---- per-version rules

function hasProperty(blob: Bundle, type: string): boolean {
  return blob.properties.some((p) => p.type === type);
}

/** spec.minKubeVersion of the bundle's CSV (from olm.csv.metadata, or the CSV object when kept). */
export function minKubeVersionOf(blob: Bundle): string | undefined {
  for (const metadata of parseProperties(blob.properties).csvMetadatas) {
    const m = metadata.minKubeVersion;
    if (typeof m === 'string' && m !== '') return m;
  }
  for (const text of blob.objects ?? []) {
    try {
      const o = JSON.parse(text) as { kind?: unknown; spec?: { minKubeVersion?: unknown } };
      if (
        o?.kind === 'ClusterServiceVersion' &&
        typeof o.spec?.minKubeVersion === 'string' &&
        o.spec.minKubeVersion !== ''
      )
        return o.spec.minKubeVersion;
    } catch {
      // not JSON: the loader reports it
    }
  }
  return undefined;
}

const MIGRATE_TO_CSV_METADATA = 'bundle-object-to-csv-metadata';

/**
 * How to re-render a catalog file with olm.csv.metadata: the command, when a template is
 * known to render it (offline, from the file itself and the sibling catalogs loaded with it);
 * else in words, never a command with placeholders (docs/ocp-lifecycle.md).
 */
function bundleObjectHint(
  c: Versioned,
  file: string | undefined,
  name: string,
  catalogs: readonly Versioned[],
  templates: OcpContinuityInput['templates'],
): string {
  const mapping = file === undefined ? undefined : templates?.find((m) => m.outputs.includes(file));
  if (file === undefined || mapping === undefined)
    return `Render ${c.name}'s catalog of "${name}" again from its template with the migrate level ${MIGRATE_TO_CSV_METADATA} (the \`--migrate-level\` option of render-template), or write each bundle's olm.csv.metadata in place of its olm.bundle.object properties.`;
  const loaded = new Set(
    catalogs.flatMap((k) => {
      const at = k.model.get(name)?.pos.file;
      return at === undefined ? [] : [`${k.root}/${at}`];
    }),
  );
  // The file's own bundles first (the migrate level turns their objects into csv metadata).
  const bundlesFrom = [file, ...mapping.outputs.filter((o) => o !== file && loaded.has(o))];
  return `Run \`${renderCommand(mapping.template, file, MIGRATE_TO_CSV_METADATA, undefined, bundlesFrom)}\` and commit the result.`;
}

function versionRules(
  c: Versioned,
  name: string,
  config: OcpConfig,
  out: Diagnostic[],
  catalogs: readonly Versioned[] = [],
  templates?: OcpContinuityInput['templates'],
  allowedRegistries: readonly string[] = [],
): void {
  const pkg = c.model.get(name)!;
  const forbidFrom = config.bundleObjectForbiddenFrom
    ? ocpCatalogVersion(config.bundleObjectForbiddenFrom)
    : null;
  const kube = kubernetesVersionOf(c.name, config);
  const seen = new Set<Bundle>();
  for (const channel of pkg.channels.values()) {
    for (const b of channel.bundles.values()) {
      const blob = b.blob;
      if (!blob || seen.has(blob)) continue;
      seen.add(blob);
      const where = at(c, blob.pos.file, blob.pos.line);
      if (
        forbidFrom &&
        rankOcp(c.version) >= rankOcp(forbidFrom) &&
        hasProperty(blob, PROPERTY_BUNDLE_OBJECT)
      ) {
        push(out, `object|${name}|${c.name}|${b.name}`, {
          rule: 'OCP-BUNDLE-OBJECT',
          level: 'error',
          message: `catalog ${c.name}: bundle ${b.name} of package "${name}" carries olm.bundle.object, which catalogs from ${config.bundleObjectForbiddenFrom} on must not (they carry olm.csv.metadata)`,
          ...where,
          package: name,
          hint: bundleObjectHint(c, where.file, name, catalogs, templates),
        });
      }
      // check_bundle_images_in_fbc: a prefix match, as upstream's str.startswith.
      if (
        allowedRegistries.length > 0 &&
        blob.image !== '' &&
        !allowedRegistries.some((prefix) => blob.image.startsWith(prefix))
      )
        push(out, `registry|${name}|${c.name}|${b.name}`, {
          rule: 'OCP-BUNDLE-REGISTRY',
          level: 'error',
          message: `catalog ${c.name}: bundle ${b.name} of package "${name}" has the image ${blob.image}, which is in none of the registries config.yaml allows for bundle images (allowed_bundle_registries: ${allowedRegistries.join(', ')})`,
          ...where,
          package: name,
          hint: 'Release the bundle to an allowed registry and render the catalog again, or ask the repository maintainers to add the registry to allowed_bundle_registries in config.yaml.',
        });
      const values = maxOpenShiftValues(blob);
      if (values.length > 0) {
        const bad =
          values.length > 1
            ? `declares olm.maxOpenShiftVersion ${values.length} times`
            : typeof values[0] !== 'string'
              ? `has olm.maxOpenShiftVersion ${JSON.stringify(values[0])}, not a string (YAML reads 4.10 as the number 4.1)`
              : !parseOcpMinor(values[0])
                ? `has olm.maxOpenShiftVersion "${values[0]}", not "<major>.<minor>"`
                : undefined;
        const max = maxOpenShiftVersion(blob);
        if (bad) {
          push(out, `max-malformed|${name}|${c.name}|${b.name}`, {
            rule: 'OCP-MAX-OPENSHIFT-MALFORMED',
            level: 'error',
            message: `catalog ${c.name}: bundle ${b.name} of package "${name}" ${bad}: OLM cannot read it, and blocks cluster upgrades while it is installed`,
            ...where,
            package: name,
            hint: 'Declare it once, as a quoted string like `value: "4.18"`.',
          });
        } else if (max && rankOcp(max) < rankOcp(c.version)) {
          push(out, `max-below|${name}|${c.name}|${b.name}`, {
            rule: 'OCP-MAX-OPENSHIFT-BELOW',
            level: 'error',
            message: `catalog ${c.name}: bundle ${b.name} of package "${name}" declares olm.maxOpenShiftVersion ${formatOcp(max)}, below the OpenShift ${formatOcp(c.version)} this catalog serves: clusters on ${formatOcp(c.version)} are past it already`,
            ...where,
            package: name,
            hint: `Raise it to at least "${formatOcp(c.version)}" (or drop the bundle from ${c.name}).`,
          });
        }
      }
      const minKube = minKubeVersionOf(blob);
      const m = minKube ? /^v?(0|[1-9]\d*)\.(0|[1-9]\d*)(?:\.(0|[1-9]\d*))?/.exec(minKube) : null;
      if (
        kube &&
        m &&
        (Number(m[1]) > kube.major || (Number(m[1]) === kube.major && Number(m[2]) > kube.minor))
      ) {
        push(out, `kube|${name}|${c.name}|${b.name}`, {
          rule: 'OCP-MIN-KUBE-ABOVE',
          level: 'error',
          message: `catalog ${c.name}: bundle ${b.name} of package "${name}" needs Kubernetes ${minKube} (minKubeVersion), but OpenShift ${formatOcp(c.version)} runs Kubernetes ${formatOcp(kube)}: OLM refuses to install it there`,
          ...where,
          package: name,
          hint: `Remove the bundle from ${c.name} (its template's catalog_names), or lower its minKubeVersion to ${formatOcp(kube)}.`,
        });
      }
    }
  }
}

/** Every finding for the packages in scope, across every pair of consecutive OpenShift catalogs. */
export function ocpContinuityFindings(input: OcpContinuityInput): Diagnostic[] {
  const config = input.config ?? DEFAULT_OCP_CONFIG;
  const catalogs = ordered(input.catalogs);
  const out: Diagnostic[] = [];
  const names = new Set<string>();
  for (const c of catalogs)
    for (const n of c.model.keys()) if (!input.packages || input.packages.has(n)) names.add(n);
  for (const name of [...names].sort()) {
    catalogs.forEach((c, i) => {
      if (!c.model.has(name)) return;
      versionRules(c, name, config, out, catalogs, input.templates, input.allowedBundleRegistries);
      const newer = catalogs[i + 1];
      if (newer) continuity(c, newer, name, out);
    });
  }
  return sortDiagnostics(out);
}

// ---- the matrix: package x OpenShift version

export interface MatrixCell {
  defaultChannel: string | null;
  /** The default channel's head (classic OLM's), null when the channel has none or several. */
  head: string | null;
  version: string | null;
  /** The worst finding about the package in this catalog (null: none). */
  level: Diagnostic['level'] | null;
}

export interface OcpMatrix {
  catalogs: string[];
  packages: { package: string; cells: Record<string, MatrixCell | null> }[];
  findings: Diagnostic[];
}

const LEVEL_RANK = { error: 3, warning: 2, notice: 1 } as const;

/** Every package (or those given) in every OpenShift catalog, marked with the continuity findings. */
export function ocpMatrix(input: OcpContinuityInput, findings = ocpContinuityFindings(input)): OcpMatrix {
  const catalogs = ordered(input.catalogs);
  const names = new Set<string>();
  for (const c of catalogs)
    for (const n of c.model.keys()) if (!input.packages || input.packages.has(n)) names.add(n);
  const worst = new Map<string, Diagnostic['level']>();
  for (const d of findings) {
    const root = catalogs.find((c) => d.file?.startsWith(`${c.root}/`));
    if (!root || !d.package) continue;
    const key = `${d.package}\0${root.name}`;
    const seen = worst.get(key);
    if (!seen || LEVEL_RANK[d.level] > LEVEL_RANK[seen]) worst.set(key, d.level);
  }
  return {
    catalogs: catalogs.map((c) => c.name),
    packages: [...names].sort().map((name) => ({
      package: name,
      cells: Object.fromEntries(
        catalogs.map((c) => {
          const pkg = c.model.get(name);
          if (!pkg) return [c.name, null];
          const channel = pkg.defaultChannel;
          const heads = channel ? classicChannel(channel).heads : [];
          const head = heads.length === 1 ? channel!.bundles.get(heads[0]!) : undefined;
          return [
            c.name,
            {
              defaultChannel: channel?.name ?? null,
              head: head?.name ?? null,
              version: head?.version ? formatVersion(head.version) : null,
              level: worst.get(`${name}\0${c.name}`) ?? null,
            },
          ];
        }),
      ),
    })),
    findings,
  };
}

const MARK = { error: ' ✗', warning: ' ⚠', notice: ' ℹ' } as const;

/** One cell as text: the head's version (or name), `-` where the package is not, and a mark per finding. */
export function matrixCellText(
  cell: MatrixCell | null,
  level: Diagnostic['level'] | null = cell?.level ?? null,
): string {
  const text = cell === null ? '-' : (cell.version ?? cell.head ?? '?');
  return level ? text + MARK[level] : text;
}

/** The matrix as a markdown table. */
export function matrixMarkdown(m: OcpMatrix): string[] {
  if (m.packages.length === 0) return [];
  return [
    `| package | ${m.catalogs.join(' | ')} |`,
    `|---|${m.catalogs.map(() => '---').join('|')}|`,
    ...m.packages.map(
      (p) =>
        `| ${cell(p.package)} | ${m.catalogs.map((c) => cell(matrixCellText(p.cells[c] ?? null))).join(' | ')} |`,
    ),
  ];
}

/**
 * A finding the catalogs already had before the change is a warning: it is not what the
 * change does (as for `catalog-bot/upgrade-graph`).
 */
function notBlamingTheChange(findings: Diagnostic[], before: Diagnostic[]): Diagnostic[] {
  const known = new Set(before.map(keyOf));
  return findings.map((d) =>
    d.level === 'error' && known.has(keyOf(d))
      ? { ...d, level: 'warning', message: `${d.message} (already so before this change)` }
      : d,
  );
}

/** The check run over the findings; `before`: the findings of the catalogs before the change. */
export function ocpContinuityCheck(input: OcpContinuityInput, before?: Diagnostic[]): CheckResult {
  const found = ocpContinuityFindings(input);
  const findings = before ? notBlamingTheChange(found, before) : found;
  const errors = findings.filter((d) => d.level === 'error').length;
  const warnings = findings.filter((d) => d.level === 'warning').length;
  const catalogs = ordered(input.catalogs).map((c) => c.name);
  const title =
    errors > 0
      ? `${errors} OpenShift upgrade problem${errors === 1 ? '' : 's'}`
      : warnings > 0
        ? `${warnings} warning${warnings === 1 ? '' : 's'}`
        : 'Every operator survives the OpenShift upgrade';
  return {
    name: OCP_CONTINUITY_CHECK,
    conclusion: errors > 0 ? 'failure' : 'success',
    title,
    summary: [
      catalogs.length < 2
        ? 'Fewer than two OpenShift catalogs: nothing to compare between versions.'
        : `Checked the OpenShift catalogs ${catalogs.join(', ')} pairwise (each against the next): a cluster that upgrades OpenShift must find each operator it runs, or a way forward, in the next catalog.`,
      '',
      'Head of the default channel per OpenShift catalog (`-`: not there; ✗ error, ⚠ warning, ℹ notice):',
      '',
      ...matrixMarkdown(ocpMatrix(input, findings)),
      ...findingsTable(findings),
    ].join('\n'),
    findings,
    annotations: toAnnotations(findings),
  };
}

/** A catalog root of a change, as `pr.ts` loads it. */
export interface ChangedRoot {
  path: string;
  base?: { model: Model };
  head?: { model: Model };
  packages: Set<string>;
}

const rootName = (path: string): string => path.slice(path.lastIndexOf('/') + 1);

/**
 * The check for a change: the packages it touches in OpenShift catalogs, across the touched
 * catalogs and their neighbours (loaded with `load`; an untouched root is the same in base
 * and head, so it is loaded once). Undefined when the change touches no OpenShift catalog.
 */
export async function ocpContinuityForChange(input: {
  roots: ChangedRoot[];
  baseRoots: string[];
  headRoots: string[];
  load: (path: string) => Promise<Model>;
  config?: OcpConfig;
  templates?: OcpContinuityInput['templates'];
  allowedBundleRegistries?: readonly string[];
}): Promise<CheckResult | undefined> {
  const touched = input.roots.filter((r) => r.packages.size > 0 && ocpCatalogVersion(rootName(r.path)));
  if (touched.length === 0) return undefined;
  const packages = new Set(touched.flatMap((r) => [...r.packages]));
  const byPath = new Map(input.roots.map((r) => [r.path, r]));
  const untouched = new Map<string, Promise<Model>>();
  const side = async (paths: string[], which: 'base' | 'head'): Promise<OcpCatalog[]> => {
    const ocp = paths
      .filter((p) => ocpCatalogVersion(rootName(p)))
      .sort((a, b) => rankOcp(ocpCatalogVersion(rootName(a))!) - rankOcp(ocpCatalogVersion(rootName(b))!));
    const wanted = ocp.filter(
      (p, i) => byPath.has(p) || byPath.has(ocp[i - 1] ?? '') || byPath.has(ocp[i + 1] ?? ''),
    );
    const out: OcpCatalog[] = [];
    for (const path of wanted) {
      const changed = byPath.get(path);
      let model = changed?.[which]?.model;
      if (!model && !changed) {
        if (!untouched.has(path)) untouched.set(path, input.load(path));
        model = await untouched.get(path)!;
      }
      if (model) out.push({ name: rootName(path), root: path, model });
    }
    return out;
  };
  const config = input.config ?? DEFAULT_OCP_CONFIG;
  const allowed = input.allowedBundleRegistries
    ? { allowedBundleRegistries: input.allowedBundleRegistries }
    : {};
  const before = ocpContinuityFindings({
    catalogs: await side(input.baseRoots, 'base'),
    packages,
    config,
    ...allowed,
  });
  const templates = input.templates ? { templates: input.templates } : {};
  return ocpContinuityCheck(
    { catalogs: await side(input.headRoots, 'head'), packages, config, ...templates, ...allowed },
    before,
  );
}
