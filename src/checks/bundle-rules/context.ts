// What every bundle rule reads: one bundle directory decoded once (its CSV, its manifest
// objects, its annotations), the other bundles of its package and the package's ci.yaml,
// and what a rule reports (docs/bundle-rules.md). Pure: the files are given.
import { decodeBundleFile } from '../../catalog/bundle.js';

/**
 * Which upstream runs a rule stands for (docs/bundle-rules.md "Suites"): `community` is what
 * community-operators-prod runs on a bundle pull request (operator-pipelines' common and
 * community static tests, which run `operator-sdk bundle validate` twice: `name=operatorhub`
 * and `suite=operatorframework`); `isv` is the common and isv static tests; `operatorhub` and
 * `operatorframework` are the two `operator-sdk bundle validate` runs alone.
 */
export const BUNDLE_SUITES = ['community', 'isv', 'operatorhub', 'operatorframework'] as const;
export type BundleSuite = (typeof BUNDLE_SUITES)[number];

export interface BundleFinding {
  level: 'error' | 'warning';
  rule: string;
  /** The upstream checks that report the same problem (docs/design.md "CLI contract"). */
  upstream: string[];
  message: string;
  /** Path relative to the repository (or to the directory the bundle was given from). */
  file: string;
  line: number;
}

export type JsonMap = Record<string, unknown>;

export const isMap = (v: unknown): v is JsonMap => typeof v === 'object' && v !== null && !Array.isArray(v);

/** One manifest object of the bundle. */
export interface ManifestObject {
  /** Path relative to the bundle directory, like `manifests/foo.crd.yaml`. */
  path: string;
  value: JsonMap;
  /** 1-based line where the object starts in its file. */
  line: number;
}

/** Another bundle of the same package, as the package-wide rules read it. */
export interface SiblingBundle {
  /** The directory name (the version the repository layout gives it). */
  version: string;
  csv: JsonMap | undefined;
  annotations: JsonMap;
}

export interface BundleContext {
  /** The bundle directory as reported in findings, like `operators/etcd/0.9.4`. */
  dir: string;
  /** The package the directory's place names (its parent directory). */
  package: string;
  /** The directory's own name. */
  version: string;
  files: ReadonlyMap<string, Buffer>;
  objects: ManifestObject[];
  csv: JsonMap | undefined;
  csvPath: string | undefined;
  csvText: string | undefined;
  /** metadata/annotations.yaml `annotations` (empty when absent). */
  annotations: JsonMap;
  /** The package's ci.yaml, when there is one. */
  ciYaml: JsonMap | undefined;
  /**
   * Every bundle of the package, this one included, when the package directory is known;
   * undefined when the bundle is checked alone (the package-wide rules then say nothing).
   */
  packageBundles: SiblingBundle[] | undefined;
  /** The repository's config.yaml `organization` (community-operators, redhat-marketplace...). */
  organization: string | undefined;
  /**
   * The OpenShift versions the repository has catalogs for (like `4.12`), newest last: the
   * indexes a `com.redhat.openshift.versions` range can select.
   */
  ocpIndexes: string[];
}

/** The 1-based line of the first match of `pattern` in a text (1 when absent). */
export function lineOf(text: string | undefined, pattern: RegExp): number {
  if (text === undefined) return 1;
  const m = pattern.exec(text);
  return m ? text.slice(0, m.index).split('\n').length : 1;
}

export const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The line of a key of the CSV (its first occurrence as `key:`), 1 when absent. */
export function csvKeyLine(ctx: BundleContext, key: string): number {
  // Spaces and tabs only: `\s*` would run over blank lines, quadratic on a padded file.
  return lineOf(ctx.csvText, new RegExp(`^[ \\t]*-?[ \\t]*["']?${escapeRegExp(key)}["']?[ \\t]*:`, 'm'));
}

/** The value at a dotted path of a JSON value (undefined where a step is not a map). */
export function at(value: unknown, path: string): unknown {
  let v = value;
  for (const step of path.split('.')) {
    if (!isMap(v)) return undefined;
    v = v[step];
  }
  return v;
}

export const str = (v: unknown): string => (typeof v === 'string' ? v : '');
export const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
export const map = (v: unknown): JsonMap => (isMap(v) ? v : {});

/** Every object in the bundle's manifests/ (each YAML document of each file), in path order. */
function manifestObjects(files: ReadonlyMap<string, Buffer>): ManifestObject[] {
  const out: ManifestObject[] = [];
  const paths = [...files.keys()]
    .filter((p) => /^manifests\/[^/]+$/.test(p) && /\.(ya?ml|json)$/i.test(p))
    .sort();
  for (const path of paths) {
    const decoded = decodeBundleFile(files.get(path)!);
    for (const { value, line } of decoded.values) if (isMap(value)) out.push({ path, value, line });
  }
  return out;
}

/** metadata/annotations.yaml's `annotations` map (first document). */
export function annotationsOf(files: ReadonlyMap<string, Buffer>): JsonMap {
  const data = files.get('metadata/annotations.yaml') ?? files.get('metadata/annotations.yml');
  if (!data) return {};
  const first = decodeBundleFile(data).values[0]?.value;
  return isMap(first) && isMap(first.annotations) ? first.annotations : {};
}

/** The bundle's CSV: the first ClusterServiceVersion object of manifests/. */
export function csvOf(objects: readonly ManifestObject[]): ManifestObject | undefined {
  return objects.find((o) => o.value.kind === 'ClusterServiceVersion');
}

export interface BundleContextInput {
  dir: string;
  package: string;
  version: string;
  files: ReadonlyMap<string, Buffer>;
  ciYaml?: JsonMap;
  /** The other bundles of the package (this one is added from `files`). */
  otherBundles?: SiblingBundle[];
  organization?: string;
  ocpIndexes?: string[];
}

/**
 * The OpenShift catalogs community-operators-prod publishes when the repository does not say
 * (its catalogs/ directory): what `com.redhat.openshift.versions` is resolved against.
 */
export const DEFAULT_OCP_INDEXES = [
  '4.12',
  '4.13',
  '4.14',
  '4.15',
  '4.16',
  '4.17',
  '4.18',
  '4.19',
  '4.20',
  '4.21',
  '4.22',
];

export function bundleContext(input: BundleContextInput): BundleContext {
  const objects = manifestObjects(input.files);
  const csvObject = csvOf(objects);
  const annotations = annotationsOf(input.files);
  const self: SiblingBundle = { version: input.version, csv: csvObject?.value, annotations };
  return {
    dir: input.dir,
    package: input.package,
    version: input.version,
    files: input.files,
    objects,
    csv: csvObject?.value,
    csvPath: csvObject?.path,
    csvText: csvObject ? input.files.get(csvObject.path)?.toString('utf8') : undefined,
    annotations,
    ciYaml: input.ciYaml,
    packageBundles: input.otherBundles ? [...input.otherBundles, self] : undefined,
    organization: input.organization,
    ocpIndexes: input.ocpIndexes ?? DEFAULT_OCP_INDEXES,
  };
}

/** A finding of a rule, with the CSV as its file unless told. */
export type RuleReport = (f: {
  level: BundleFinding['level'];
  message: string;
  file?: string;
  line?: number;
  upstream?: string[];
}) => void;

export interface BundleRule {
  /** Our rule id (one rule id may stand for several upstream checks). */
  id: string;
  /** The upstream checks the rule stands for. */
  upstream: string[];
  suites: readonly BundleSuite[];
  run(ctx: BundleContext, report: RuleReport): void;
}

// ---- upstream names ------------------------------------------------------------------

/** operator-pipelines runs `operator-sdk bundle validate` under these two static tests. */
export const OSDK_OPERATORHUB = 'operator-pipelines:check_osdk_bundle_validate_operatorhub';
export const OSDK_FRAMEWORK = 'operator-pipelines:check_osdk_bundle_validate_operator_framework';
/** Suites of operator-sdk's default validators: every `operator-sdk bundle validate` runs them. */
export const DEFAULT_VALIDATOR_SUITES: readonly BundleSuite[] = [
  'community',
  'operatorhub',
  'operatorframework',
];
/** Suites of what only `--select-optional suite=operatorframework` runs. */
export const FRAMEWORK_SUITES: readonly BundleSuite[] = ['community', 'operatorframework'];
/** Suites of what only `--select-optional name=operatorhub` runs. */
export const OPERATORHUB_SUITES: readonly BundleSuite[] = ['community', 'operatorhub'];
/** operator-pipelines' common static tests run in both the community and the isv pipelines. */
export const COMMON_SUITES: readonly BundleSuite[] = ['community', 'isv'];
