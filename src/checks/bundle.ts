// The `catalog-bot/bundle` findings for one bundle directory of a pull request
// (docs/bundles.md): layout, annotations against the directory, ci.yaml and the CSV, CSV
// name and version, owned CRDs, replaces/skips targets in the mapped catalogs, and bundles
// already released never edited. Pure: every file is given; nothing is run.
import { parseDocument, isMap, isSeq, type Node as YamlNode } from 'yaml';
import { BundleError, bundleFilesFromMap, decodeBundleFile, parseBundle } from '../catalog/bundle.js';
import { decodeFile, READ_REFUSALS } from '../catalog/fbc/decode.js';
import { READ_REFUSAL_HINTS, type ReadRefusal } from '../catalog/fbc/yaml-screen.js';
import type { Diagnostic } from '../catalog/diagnostics.js';
import { metadataPackageNames } from './bundle-metadata.js';
import {
  BUNDLE_CHECK_UPSTREAM,
  checkBundleRules,
  type BundleSuite,
  type SiblingBundle,
} from './bundle-rules/index.js';
import { waiverFor, type Waiver } from './bundle-rules/waivers.js';
import { tryParseVersion } from '../catalog/versions/semver.js';
import {
  CSV_PROPERTIES_ANNOTATION,
  PROPERTY_MAX_OPENSHIFT_VERSION,
  SCHEMA_BUNDLE,
} from '../catalog/property.js';

export const BUNDLE_CHECK = 'catalog-bot/bundle';

const ANNOTATION = 'operators.operatorframework.io.bundle.';
/** Annotations every bundle image carries, and the values opm's bundle format fixes. */
const REQUIRED_ANNOTATIONS: [string, string | undefined][] = [
  [`${ANNOTATION}mediatype.v1`, 'registry+v1'],
  [`${ANNOTATION}manifests.v1`, 'manifests/'],
  [`${ANNOTATION}metadata.v1`, 'metadata/'],
  [`${ANNOTATION}package.v1`, undefined],
  [`${ANNOTATION}channels.v1`, undefined],
];

export interface BundleCheckInput {
  /** The bundle directory relative to the repository root, like `operators/etcd/0.9.4`. */
  dir: string;
  /** The package and version the directory's place names (`bundles.path`). */
  package: string;
  version: string;
  /** The head's files of the directory, by path relative to it. */
  files: ReadonlyMap<string, Buffer>;
  /** The base's files of the directory, when the base has it: the bundle is released. */
  baseFiles?: ReadonlyMap<string, Buffer>;
  /**
   * The package's `ci.yaml` at the base. Only the base's decides what the check asks: a pull
   * request's own copy never judges it (docs/security.md, "A bundle is judged by the base's configuration").
   */
  baseCiYaml?: string;
  /**
   * The rendered catalogs the bundle goes to, with the template each is rendered from
   * (replaces and skips of a release-config entry are looked up in its template's catalogs).
   */
  catalogs?: { path: string; text: string; template?: string; names?: ReadonlySet<string> }[];
  /**
   * The upstream suites whose rules run too (docs/bundle-rules.md); none when absent. Their
   * findings carry the upstream checks they stand for.
   */
  suites?: readonly BundleSuite[];
  /** The package's other bundles, for the package-wide rules of the suites. */
  otherBundles?: SiblingBundle[];
  /** The repository's config.yaml organization and its OpenShift catalogs (like `4.12`). */
  organization?: string;
  ocpIndexes?: string[];
  /** The repository's waivers (config.yaml `tests`): a waived finding becomes a notice that says so. */
  waivers?: readonly Waiver[];
}

/**
 * What a bundle directory may hold, and one file of it; more is reported, not read or parsed
 * (docs/security.md, "Checks are bounded work, off the event loop"). The real bundles of
 * community-operators-prod hold at most 181 KB, their largest manifest 126 KB (the largest
 * bundle in the real catalogs 329 KB, its largest object 208 KB); Kubernetes stores no object
 * over about 1.5 MiB. Decoding YAML the fast reader does not take costs about 1.4 s a MiB.
 */
export const MAX_BUNDLE_BYTES = 4 * 2 ** 20;
export const MAX_BUNDLE_FILE_BYTES = 2 * 2 ** 20;
/**
 * release-config.yaml is read with the full YAML library (about 3 s a MiB): the real ones are
 * at most 559 bytes, a few template names and channels.
 */
export const MAX_RELEASE_CONFIG_BYTES = 64 * 1024;

const fileLimit = (path: string): number =>
  path === 'release-config.yaml' ? MAX_RELEASE_CONFIG_BYTES : MAX_BUNDLE_FILE_BYTES;

type Finding = Omit<Diagnostic, 'level'> & { level?: Diagnostic['level'] };

/** The 1-based line of the first match of `pattern` in a text (1 when absent). */
function lineOf(text: string | undefined, pattern: RegExp): number {
  if (text === undefined) return 1;
  const m = pattern.exec(text);
  return m ? text.slice(0, m.index).split('\n').length : 1;
}

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function firstDocument(data: Buffer | undefined): unknown {
  if (!data) return undefined;
  return decodeBundleFile(data).values[0]?.value;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Names of the bundles a rendered catalog holds. */
export function bundleNames(text: string): Set<string> {
  const out = new Set<string>();
  for (const { value } of decodeFile(Buffer.from(text)).values)
    if (isObject(value) && value.schema === SCHEMA_BUNDLE && typeof value.name === 'string')
      out.add(value.name);
  return out;
}

interface ReleaseEntry {
  template: string;
  replaces?: string;
  skips: string[];
  line: number;
}

function releaseEntries(text: string): ReleaseEntry[] {
  const doc = parseDocument(text);
  const list = isMap(doc.contents) ? doc.contents.get('catalog_templates', true) : undefined;
  if (!isSeq(list)) return [];
  const out: ReleaseEntry[] = [];
  for (const item of list.items as YamlNode[]) {
    if (!isMap(item)) continue;
    const v = item.toJSON() as Record<string, unknown>;
    if (typeof v.template_name !== 'string') continue;
    out.push({
      template: v.template_name,
      ...(typeof v.replaces === 'string' ? { replaces: v.replaces } : {}),
      skips: Array.isArray(v.skips) ? v.skips.filter((s): s is string => typeof s === 'string') : [],
      line: text.slice(0, item.range?.[0] ?? 0).split('\n').length,
    });
  }
  return out;
}

/** A directory over MAX_BUNDLE_BYTES: not read. */
export function tooLarge(dir: string, bytes: number): Omit<Diagnostic, 'level'> & { level: 'error' } {
  return {
    level: 'error',
    rule: 'B-SIZE',
    message: `${dir} holds ${(bytes / 2 ** 20).toFixed(1)} MiB of files, over the ${MAX_BUNDLE_BYTES / 2 ** 20} MiB a bundle directory may hold (a bundle is a few manifests); it was not read`,
    file: dir,
    line: 1,
    hint: 'Keep only the bundle in the directory: manifests/, metadata/ and release-config.yaml.',
  };
}

/**
 * Every finding for one bundle directory; empty when the bundle is fine. Each names the
 * upstream checks it stands for (docs/bundle-rules.md); a waived one is a notice.
 */
export function checkBundle(input: BundleCheckInput): Diagnostic[] {
  const out = bundleFindings(input);
  for (const d of out) {
    d.upstream ??= BUNDLE_CHECK_UPSTREAM[d.rule] ?? [];
    const waived =
      input.waivers && d.level !== 'notice' ? waiverFor(d.upstream, input.package, input.waivers) : undefined;
    if (waived) {
      d.message += ` (waived for ${input.package}: config.yaml tests ${waived.test} ignore_operators ${JSON.stringify(waived.pattern)}; it was ${d.level === 'error' ? 'an error' : 'a warning'})`;
      d.level = 'notice';
      d.waived = waived;
    }
  }
  return out;
}

/**
 * The rules in the order docs/bundles.md lists them. The first three are gates: a bundle
 * already released, too large to read, or without a bundle layout gets only those findings.
 */
function bundleFindings(input: BundleCheckInput): Diagnostic[] {
  const withPackage = (f: Finding): Diagnostic => ({ level: 'error', package: input.package, ...f });
  for (const gate of [releasedBundleEdits, sizeFindings, layoutFindings]) {
    const found = gate(input);
    if (found.length > 0) return found.map(withPackage);
  }
  const csv = readCsv(input);
  return [
    ...annotationFindings(input),
    ...otherMetadataFindings(input),
    ...csv.findings,
    ...csvFieldFindings(input, csv),
    ...targetFindings(input, csv),
    ...releaseConfigFindings(input),
  ]
    .map(withPackage)
    .concat(suiteFindings(input));
}

const textOf = (input: BundleCheckInput, path: string): string | undefined =>
  input.files.get(path)?.toString('utf8');

/** B-RELEASED-EDITED: a bundle the base already has is never edited. */
function releasedBundleEdits(input: BundleCheckInput): Finding[] {
  const { dir, files, baseFiles } = input;
  if (!baseFiles) return [];
  const out: Finding[] = [];
  const paths = new Set([...baseFiles.keys(), ...files.keys()]);
  for (const p of [...paths].sort()) {
    const a = baseFiles.get(p);
    const b = files.get(p);
    if (a && b && a.equals(b)) continue;
    out.push({
      rule: 'B-RELEASED-EDITED',
      message: `${dir} is a released bundle: its ${p} is ${!a ? 'added' : !b ? 'removed' : 'changed'}, but a bundle image, once released, must never change`,
      file: `${dir}/${p}`,
      line: 1,
      hint: `Release the change as a new version in a new directory (e.g. a higher patch version next to ${dir}), and leave ${dir} as it was.`,
    });
  }
  return out;
}

/** B-SIZE: a directory or a file too large to read (docs/security.md, bounded work). */
function sizeFindings(input: BundleCheckInput): Finding[] {
  const { dir, files } = input;
  const size = [...files.values()].reduce((n, b) => n + b.length, 0);
  if (size > MAX_BUNDLE_BYTES) return [tooLarge(dir, size)];
  const large = [...files].filter(([p, data]) => data.length > fileLimit(p));
  return large
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([p, data]) => ({
      rule: 'B-SIZE',
      message: `${dir}/${p} is ${data.length} bytes, over the ${p === 'release-config.yaml' ? `${MAX_RELEASE_CONFIG_BYTES / 1024} KiB a release-config.yaml` : `${MAX_BUNDLE_FILE_BYTES / 2 ** 20} MiB one file of a bundle`} may hold; it was not read`,
      file: `${dir}/${p}`,
      line: 1,
      hint: 'A manifest is one Kubernetes object, and Kubernetes stores none over about 1.5 MiB: trim it (long descriptions in a CRD schema), or keep it out of the bundle.',
    }));
}

/** B-LAYOUT: manifests/ and metadata/annotations.yaml, not one level too deep. */
function layoutFindings(input: BundleCheckInput): Finding[] {
  const { dir, files } = input;
  const has = (prefix: string): boolean => [...files.keys()].some((p) => p.startsWith(prefix));
  const hasManifests = has('manifests/');
  const hasAnnotations = files.has('metadata/annotations.yaml');
  if (hasManifests && hasAnnotations) return [];
  const nested = ['bundle', input.version].find((n) => has(`${n}/manifests/`) || has(`${n}/metadata/`));
  if (nested)
    return [
      {
        rule: 'B-LAYOUT',
        message: `${dir} keeps its bundle under ${nested}/manifests and ${nested}/metadata, one level too deep: the pipeline finds no bundle there`,
        file: `${dir}/${nested}`,
        line: 1,
        hint: `Move them up: git mv ${dir}/${nested}/manifests ${dir}/${nested}/metadata ${dir}/`,
      },
    ];
  const out: Finding[] = [];
  if (!hasManifests)
    out.push({
      rule: 'B-LAYOUT',
      message: `${dir} has no manifests/ directory (the CSV and the CRDs it owns)`,
      file: dir,
      line: 1,
      hint: `Put the ClusterServiceVersion and the CRDs in ${dir}/manifests/.`,
    });
  if (!hasAnnotations)
    out.push({
      rule: 'B-LAYOUT',
      message: `${dir} has no metadata/annotations.yaml`,
      file: dir,
      line: 1,
      hint: `Add ${dir}/metadata/annotations.yaml with the bundle annotations (${REQUIRED_ANNOTATIONS.map(([k]) => k).join(', ')}).`,
    });
  return out;
}

/** B-ANNOTATIONS in annotations.yaml: the required ones, the package, the default channel. */
function annotationFindings(input: BundleCheckInput): Finding[] {
  const annotationsPath = `${input.dir}/metadata/annotations.yaml`;
  const annotationsText = textOf(input, 'metadata/annotations.yaml');
  const annotationsDoc = firstDocument(input.files.get('metadata/annotations.yaml'));
  const annotations = isObject(annotationsDoc) ? annotationsDoc.annotations : undefined;
  if (!isObject(annotations))
    return [
      {
        rule: 'B-ANNOTATIONS',
        message: `${annotationsPath} has no annotations mapping`,
        file: annotationsPath,
        line: 1,
        hint: 'The file must be `annotations:` followed by the bundle annotations.',
      },
    ];
  const out: Finding[] = [];
  for (const [key, fixed] of REQUIRED_ANNOTATIONS) {
    const value = annotations[key];
    if (typeof value !== 'string' || value === '')
      out.push({
        rule: 'B-ANNOTATIONS',
        message: `${annotationsPath} lacks the annotation ${key}`,
        file: annotationsPath,
        line: 1,
        hint:
          fixed !== undefined || key.endsWith('package.v1')
            ? `Add \`${key}: ${fixed ?? input.package}\` under annotations.`
            : `Add \`${key}\` under annotations, with the channels the bundle goes into, comma-separated (like \`${key}: stable\`).`,
      });
    else if (fixed !== undefined && value !== fixed)
      out.push({
        rule: 'B-ANNOTATIONS',
        message: `${annotationsPath}: ${key} is "${value}", but a bundle has "${fixed}"`,
        file: annotationsPath,
        line: lineOf(annotationsText, new RegExp(escape(key))),
        hint: `Set it to ${fixed}.`,
      });
  }
  const pkg = annotations[`${ANNOTATION}package.v1`];
  if (typeof pkg === 'string' && pkg !== '' && pkg !== input.package)
    out.push({
      rule: 'B-ANNOTATIONS',
      message: `${annotationsPath} names package "${pkg}", but the bundle sits in the directory of package "${input.package}"`,
      file: annotationsPath,
      line: lineOf(annotationsText, /bundle\.package\.v1/),
      hint: `Set ${ANNOTATION}package.v1 to ${input.package}, or move the bundle to its package's directory.`,
    });
  const channels = annotations[`${ANNOTATION}channels.v1`];
  const defaultChannel = annotations[`${ANNOTATION}channel.default.v1`];
  if (
    typeof channels === 'string' &&
    typeof defaultChannel === 'string' &&
    defaultChannel !== '' &&
    !channels
      .split(',')
      .map((c) => c.trim())
      .includes(defaultChannel)
  )
    out.push({
      rule: 'B-ANNOTATIONS',
      message: `${annotationsPath}: the default channel "${defaultChannel}" is not among the bundle's channels (${channels})`,
      file: annotationsPath,
      line: lineOf(annotationsText, /channel\.default\.v1/),
      hint: 'Add the default channel to channels.v1, or name one of them as the default.',
    });
  return out;
}

/**
 * B-ANNOTATIONS in the rest of metadata/: opm takes the first file with annotations,
 * whatever its name (docs/bundles.md).
 */
function otherMetadataFindings(input: BundleCheckInput): Finding[] {
  const metadataFiles = new Map(
    [...input.files]
      .filter(([p]) => p.startsWith('metadata/'))
      .map(([p, data]) => [p.slice('metadata/'.length), data]),
  );
  const out: Finding[] = [];
  for (const named of metadataPackageNames(metadataFiles).names) {
    // annotations.yaml's own (first) document is annotationFindings' to judge.
    if (named.package === input.package || (named.path === 'annotations.yaml' && named.document === 0))
      continue;
    const path = `${input.dir}/metadata/${named.path}`;
    out.push({
      rule: 'B-ANNOTATIONS',
      message: `${path}${named.document > 0 ? ` (document ${named.document + 1})` : ''} names package ${JSON.stringify(named.package)}, but the bundle sits in the directory of package "${input.package}": opm reads the annotations of the first file in metadata/ that has them, whatever its name${named.document > 0 ? ' (and a reader of every document could take this one)' : ''}, so the bundle could be released as that package`,
      file: path,
      line: lineOf(textOf(input, `metadata/${named.path}`), /bundle\.package\.v1/),
      hint: `Keep the bundle annotations in metadata/annotations.yaml only: remove ${named.path === 'annotations.yaml' ? 'the second document of annotations.yaml' : `metadata/${named.path}`}.`,
    });
  }
  return out;
}

/** The CSV as opm parses the bundle, or why it could not. */
interface CsvRead {
  csv?: Record<string, unknown>;
  name: string;
  /** Where the findings on the CSV point: its file, else manifests/. */
  file: string;
  path?: string;
  text?: string;
  findings: Finding[];
}

/** B-CSV, B-CRD-MISSING, B-MANIFEST-SYNTAX: the bundle read as opm reads it. */
function readCsv(input: BundleCheckInput): CsvRead {
  const { dir, files } = input;
  try {
    const parsed = parseBundle(bundleFilesFromMap(files));
    return {
      csv: parsed.csv,
      name: parsed.name,
      file: parsed.csvPath ? `${dir}/${parsed.csvPath}` : `${dir}/manifests`,
      path: parsed.csvPath,
      ...(parsed.csvPath ? { text: textOf(input, parsed.csvPath) } : {}),
      findings: [],
    };
  } catch (err) {
    if (!(err instanceof BundleError)) throw err;
    return { name: '', file: `${dir}/manifests`, findings: unreadableBundleFindings(input, err) };
  }
}

function unreadableBundleFindings(input: BundleCheckInput, err: BundleError): Finding[] {
  const { dir, files } = input;
  // A manifest that is not YAML is the cause people can fix: point at its line.
  const broken = [...files.keys()]
    .filter((p) => p.startsWith('manifests/') && /\.(ya?ml|json)$/i.test(p))
    .sort()
    .flatMap((p) => {
      const problem = decodeBundleFile(files.get(p)!).problems[0];
      return problem ? [{ path: p, problem }] : [];
    });
  if (broken.length > 0)
    return broken.map(({ path, problem }) => {
      const refused = problem.rule in READ_REFUSALS;
      return {
        rule: refused ? problem.rule : 'B-MANIFEST-SYNTAX',
        message: refused
          ? `${dir}/${path}:${problem.line}: ${problem.message}; catalog-bot does not read a bundle opm could read differently`
          : `${dir}/${path}:${problem.line}: ${problem.message}, so opm cannot read the bundle`,
        file: `${dir}/${path}`,
        line: problem.line,
        hint: refused
          ? READ_REFUSAL_HINTS[problem.rule as ReadRefusal]
          : `Fix the ${/json$/i.test(path) ? 'JSON' : 'YAML'} at line ${problem.line} (\`opm render\` on the directory shows the same).`,
      };
    });
  const owned = /couldn't find (\S+), Kind=(\S+) \((\S+)\)/.exec(err.message);
  return [
    {
      rule: owned ? 'B-CRD-MISSING' : 'B-CSV',
      message: owned
        ? `${dir}: the CSV owns ${owned[2]} (${owned[3]}.${owned[1]!.split('/')[0]} ${owned[1]!.split('/')[1]}), but manifests/ has no CRD serving it`
        : `${dir} cannot be rendered as opm renders it: ${err.message}`,
      file: `${dir}/manifests`,
      line: 1,
      hint: owned
        ? 'Add the CustomResourceDefinition to manifests/, or remove it from spec.customresourcedefinitions.owned.'
        : 'Fix the manifests so that the bundle holds exactly one ClusterServiceVersion and the objects it names.',
    },
  ];
}

/** B-CSV-VERSION, B-CSV-NAME, B-DIRECTORY-VERSION: the CSV's version, name and directory. */
function csvVersionFindings(input: BundleCheckInput, { csv, name, file, text }: CsvRead): Finding[] {
  const spec = isObject(csv?.spec) ? csv.spec : {};
  const version = typeof spec.version === 'string' ? spec.version : '';
  const parsedVersion = tryParseVersion(version);
  if (!parsedVersion.ok)
    return [
      {
        rule: 'B-CSV-VERSION',
        message: `${file}: spec.version "${version}" is not a strict semantic version (${parsedVersion.error})`,
        file,
        line: lineOf(text, /^ {2}version:/m),
        hint: 'Use MAJOR.MINOR.PATCH with an optional -prerelease, without a leading v.',
      },
    ];
  const out: Finding[] = [];
  if (name !== `${input.package}.v${version}`)
    out.push({
      rule: 'B-CSV-NAME',
      message: `${file}: the CSV is named "${name}", but a bundle of ${input.package} at version ${version} must be named ${input.package}.v${version}`,
      file,
      line: lineOf(text, /^ {2}name:/m),
      hint: `Set metadata.name to ${input.package}.v${version}.`,
    });
  if (version !== input.version)
    out.push({
      rule: 'B-DIRECTORY-VERSION',
      message: `${input.dir}: the directory is named ${input.version}, but the CSV's version is ${version} (the directory name becomes the image tag)`,
      file,
      line: lineOf(text, /^ {2}version:/m),
      hint: `Rename the directory to ${version}, or set spec.version to ${input.version}.`,
    });
  return out;
}

/** B-MIN-KUBE-VERSION and B-MAX-OPENSHIFT-VERSION: the platform versions the CSV names. */
function csvPlatformFindings({ csv, file, text }: CsvRead): Finding[] {
  const out: Finding[] = [];
  const spec = isObject(csv?.spec) ? csv.spec : {};
  const minKube = spec.minKubeVersion;
  if (
    minKube !== undefined &&
    (typeof minKube !== 'string' || !tryParseVersion(minKube.replace(/^v/, '')).ok)
  )
    out.push({
      rule: 'B-MIN-KUBE-VERSION',
      message: `${file}: spec.minKubeVersion "${String(minKube)}" is not a version OLM can compare`,
      file,
      line: lineOf(text, /minKubeVersion:/),
      hint: 'Write it as MAJOR.MINOR.PATCH, like 1.25.0.',
    });
  const metadata = isObject(csv?.metadata) ? csv.metadata : {};
  const csvAnnotations = isObject(metadata.annotations) ? metadata.annotations : {};
  const props = csvAnnotations[CSV_PROPERTIES_ANNOTATION];
  if (typeof props !== 'string') return out;
  let list: unknown;
  try {
    list = JSON.parse(props);
  } catch {
    list = undefined;
  }
  const max = Array.isArray(list)
    ? (list as unknown[]).find((p) => isObject(p) && p.type === PROPERTY_MAX_OPENSHIFT_VERSION)
    : undefined;
  if (list === undefined || !Array.isArray(list))
    out.push({
      rule: 'B-MAX-OPENSHIFT-VERSION',
      message: `${file}: the olm.properties annotation is not a JSON list of properties`,
      file,
      line: lineOf(text, /olm\.properties:/),
      hint: 'Write it as a JSON list, like \'[{"type": "olm.maxOpenShiftVersion", "value": "4.18"}]\'.',
    });
  else if (isObject(max) && !/^\d+\.\d+$/.test(String(max.value)))
    out.push({
      rule: 'B-MAX-OPENSHIFT-VERSION',
      message: `${file}: olm.maxOpenShiftVersion is ${JSON.stringify(max.value)}, not MAJOR.MINOR`,
      file,
      line: lineOf(text, /olm\.maxOpenShiftVersion/),
      hint: 'Give the last OpenShift minor version the operator supports, like "4.18".',
    });
  return out;
}

function csvFieldFindings(input: BundleCheckInput, csv: CsvRead): Finding[] {
  return csv.csv ? [...csvVersionFindings(input, csv), ...csvPlatformFindings(csv)] : [];
}

/** A bundle the new one replaces or skips, and where it is named. */
interface UpgradeTarget {
  name: string;
  kind: 'replaces' | 'skips';
  where: string;
  line: number;
  template?: string;
}

/** What the bundle replaces and skips: release-config.yaml when it has one, else the CSV. */
function upgradeTargets(input: BundleCheckInput, { csv, path, text }: CsvRead): UpgradeTarget[] {
  const configText = textOf(input, 'release-config.yaml');
  if (configText !== undefined)
    return releaseEntries(configText).flatMap((e) => [
      ...(e.replaces
        ? [
            {
              name: e.replaces,
              kind: 'replaces' as const,
              where: 'release-config.yaml',
              line: e.line,
              template: e.template,
            },
          ]
        : []),
      ...e.skips.map((s) => ({
        name: s,
        kind: 'skips' as const,
        where: 'release-config.yaml',
        line: e.line,
        template: e.template,
      })),
    ]);
  if (!csv) return [];
  const spec = isObject(csv.spec) ? csv.spec : {};
  const where = path ?? 'manifests';
  const targets: UpgradeTarget[] = [];
  if (typeof spec.replaces === 'string' && spec.replaces !== '')
    targets.push({ name: spec.replaces, kind: 'replaces', where, line: lineOf(text, /^ {2}replaces:/m) });
  if (Array.isArray(spec.skips))
    for (const s of spec.skips)
      if (typeof s === 'string')
        targets.push({ name: s, kind: 'skips', where, line: lineOf(text, /^ {2}skips:/m) });
  return targets;
}

/** B-REPLACES-MISSING, B-SKIPS-MISSING: targets the mapped catalogs do not hold. */
function targetFindings(input: BundleCheckInput, csv: CsvRead): Finding[] {
  const catalogs = input.catalogs ?? [];
  if (catalogs.length === 0) return [];
  // Decoded only when a target is looked up, once per catalog.
  const known = new Map<string, ReadonlySet<string>>();
  const namesOf = (c: (typeof catalogs)[number]): ReadonlySet<string> => {
    let got = c.names ?? known.get(c.path);
    if (!got) known.set(c.path, (got = bundleNames(c.text)));
    return got;
  };
  const out: Finding[] = [];
  for (const t of upgradeTargets(input, csv)) {
    const missing = catalogs
      .filter((c) => t.template === undefined || c.template === undefined || c.template === t.template)
      .filter((c) => !namesOf(c).has(t.name))
      .map((c) => c.path);
    if (missing.length === 0) continue;
    out.push({
      rule: t.kind === 'replaces' ? 'B-REPLACES-MISSING' : 'B-SKIPS-MISSING',
      // Skipping a bundle a catalog lacks does no harm; replacing one leaves its users behind.
      level: t.kind === 'replaces' ? 'error' : 'warning',
      message: `${input.dir}/${t.where}: ${t.kind} ${t.name}, which ${missing.join(', ')} ${missing.length === 1 ? 'does' : 'do'} not hold`,
      file: `${input.dir}/${t.where}`,
      line: t.line,
      hint:
        t.kind === 'replaces'
          ? `Name a bundle those catalogs hold (usually the current channel head), or release ${t.name} first.`
          : `Drop ${t.name} from skips if it was never released there.`,
    });
  }
  return out;
}

/** B-RELEASE-CONFIG: a package rendered from templates needs the bundle's release-config.yaml. */
function releaseConfigFindings(input: BundleCheckInput): Finding[] {
  // Only the base's ci.yaml says the package is rendered from templates; the head's copy is
  // not read, so a pull request can neither silence the warning nor raise it.
  if (input.baseCiYaml === undefined || input.files.has('release-config.yaml')) return [];
  const ci = parseDocument(input.baseCiYaml);
  const fbc = isMap(ci.contents) ? (ci.contents.toJSON() as Record<string, unknown>).fbc : undefined;
  if (!isObject(fbc) || fbc.enabled !== true) return [];
  return [
    {
      rule: 'B-RELEASE-CONFIG',
      level: 'warning',
      message: `${input.dir} has no release-config.yaml, so nothing adds it to the catalogs: ${input.package}'s catalogs are rendered from templates (ci.yaml fbc.enabled)`,
      file: input.dir,
      line: 1,
      hint: `Add ${input.dir}/release-config.yaml naming the templates and channels (catalog_templates), or add the bundle to the templates by hand in the same pull request.`,
    },
  ];
}

/** The upstream suites' rules (docs/bundle-rules.md). */
function suiteFindings(input: BundleCheckInput): Diagnostic[] {
  if (!input.suites || input.suites.length === 0) return [];
  const ci = input.baseCiYaml === undefined ? undefined : parseDocument(input.baseCiYaml).toJS();
  return checkBundleRules(
    {
      dir: input.dir,
      package: input.package,
      version: input.version,
      files: input.files,
      ...(isObject(ci) ? { ciYaml: ci } : {}),
      ...(input.otherBundles ? { otherBundles: input.otherBundles } : {}),
      ...(input.organization !== undefined ? { organization: input.organization } : {}),
      ...(input.ocpIndexes ? { ocpIndexes: input.ocpIndexes } : {}),
    },
    input.suites,
  ).map((f) => ({ ...f, package: input.package }));
}
