// `catalog-bot bundle validate <bundle-dir>... [--suite <name>]... [--format text|json]`: the
// `catalog-bot/bundle` check with the rules of the upstream suites (docs/bundle-rules.md) on
// bundle directories of the working tree, for an operator author before a pull request, as
// `operator-sdk bundle validate` and operator-pipelines' static tests would judge them. Its JSON
// form is part of the CLI contract (docs/design.md). Reading is bounded: no symbolic link is
// followed and a directory over the size a bundle may have is reported, not read.
import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { decodeBundleFile } from '../catalog/bundle.js';
import { checkBundle, MAX_BUNDLE_BYTES, tooLarge } from '../checks/bundle.js';
import {
  BUNDLE_SUITES,
  DEFAULT_BUNDLE_SUITES,
  type BundleFinding,
  type BundleSuite,
  type SiblingBundle,
} from '../checks/bundle-rules/index.js';
import { annotationsOf, isMap } from '../checks/bundle-rules/context.js';
import { parseWaivers, type Waiver } from '../checks/bundle-rules/waivers.js';
import type { Diagnostic } from '../catalog/diagnostics.js';
import { defineCliCommand, requireDirectory, UsageError } from './command.js';
import { writeJson } from './output.js';
import { parseDocument } from 'yaml';

const BUNDLE_USAGE = `catalog-bot bundle validate <bundle-dir>... [--suite <name>]... [--format text|json]
  Check bundle directories (manifests/, metadata/, release-config.yaml) as the
  catalog-bot/bundle check does, with the rules that stand for the checks catalog
  repositories run today (docs/bundle-rules.md). Suites: community (default: what
  community-operators-prod runs: operator-pipelines' common and community static tests and
  operator-sdk bundle validate with name=operatorhub and suite=operatorframework), isv
  (operator-pipelines' common and isv tests), operatorhub and operatorframework (one
  operator-sdk run each). When the bundle's parent directory has a ci.yaml, it is read as
  the package directory (operators/<package>/<version>): the package-wide rules see its
  other bundles, and the repository's config.yaml and catalogs/ give the organization and
  the OpenShift versions; config.yaml's tests waivers (ignore_operators) apply: a waived
  finding is a warning that names its waiver. Each finding names the upstream checks it
  stands for.
  Exit 0 no bundle has an error, 1 one has, 2 usage or I/O error.
`;

/** At most this many files and directories are listed in one bundle directory. */
const MAX_ENTRIES = 5000;
/** ci.yaml and config.yaml are a few lines: more is not read. */
const MAX_CONFIG_BYTES = 256 * 1024;

interface Listing {
  files: { path: string; abs: string; size: number }[];
  bytes: number;
  overflow: boolean;
}

/** Regular files under a directory (relative `/` paths), symbolic links left out. */
function listFiles(root: string): Listing {
  const out: Listing = { files: [], bytes: 0, overflow: false };
  let entries = 0;
  const walk = (abs: string, rel: string): void => {
    for (const name of readdirSync(abs).sort()) {
      if (++entries > MAX_ENTRIES) {
        out.overflow = true;
        return;
      }
      const child = join(abs, name);
      const info = lstatSync(child);
      const path = rel === '' ? name : `${rel}/${name}`;
      if (info.isDirectory()) walk(child, path);
      else if (info.isFile()) {
        out.files.push({ path, abs: child, size: info.size });
        out.bytes += info.size;
      }
    }
  };
  walk(root, '');
  return out;
}

/** A small regular file's bytes; undefined when absent, a link, or too large. */
function readSmall(path: string, max: number): Buffer | undefined {
  const info = lstatSync(path, { throwIfNoEntry: false });
  if (!info?.isFile() || info.size > max) return undefined;
  return readFileSync(path);
}

const isDirectoryAt = (path: string): boolean =>
  lstatSync(path, { throwIfNoEntry: false })?.isDirectory() === true;

/** Another bundle of the package: its annotations and its CSV, as operator-pipelines finds them. */
function siblingBundle(abs: string, version: string): SiblingBundle | undefined {
  if (!isDirectoryAt(join(abs, 'manifests')) || !isDirectoryAt(join(abs, 'metadata'))) return undefined;
  const files = new Map<string, Buffer>();
  const annotations = readSmall(join(abs, 'metadata', 'annotations.yaml'), MAX_BUNDLE_BYTES);
  if (annotations) files.set('metadata/annotations.yaml', annotations);
  let csv: SiblingBundle['csv'];
  for (const name of readdirSync(join(abs, 'manifests')).sort())
    if (/\.clusterserviceversion\.ya?ml$/.test(name) && csv === undefined) {
      const data = readSmall(join(abs, 'manifests', name), MAX_BUNDLE_BYTES);
      const value = data ? decodeBundleFile(data).values[0]?.value : undefined;
      if (isMap(value)) csv = value;
    }
  return { version, csv, annotations: annotationsOf(files) };
}

const yamlMap = (data: Buffer | undefined): Record<string, unknown> | undefined => {
  if (!data) return undefined;
  const value: unknown = parseDocument(data.toString('utf8')).toJS();
  return isMap(value) ? value : undefined;
};

export interface BundleReport {
  dir: string;
  package: string;
  name: string | null;
  findings: (BundleFinding & { waived?: { test: string; pattern: string } })[];
}

/**
 * One bundle directory validated with these suites. `siblings` keeps the package's other
 * bundles read once for a run over many bundles of a package.
 */
export function validateBundleDirectory(
  given: string,
  suites: readonly BundleSuite[],
  siblings = new Map<string, SiblingBundle | null>(),
): BundleReport {
  const abs = resolve(given);
  const dir = given.replace(/\\/g, '/').replace(/\/+$/, '') || '.';
  const listing = listFiles(abs);
  const packageDir = dirname(abs);
  const ciText = readSmall(join(packageDir, 'ci.yaml'), MAX_CONFIG_BYTES);
  const inPackage = ciText !== undefined;
  const report = (pkg: string, name: string | null, diagnostics: Diagnostic[]): BundleReport => ({
    dir,
    package: pkg,
    name,
    findings: diagnostics.map((d) => ({
      // A waived finding is reported, as a warning that says which waiver holds it.
      level: d.level === 'error' ? 'error' : 'warning',
      rule: d.rule,
      upstream: d.upstream ?? [],
      message: d.message,
      file: d.file ?? dir,
      line: d.line ?? 1,
      ...(d.waived ? { waived: d.waived } : {}),
    })),
  });
  if (listing.overflow || listing.bytes > MAX_BUNDLE_BYTES) {
    const finding = tooLarge(dir, listing.bytes);
    if (listing.overflow)
      finding.message = `${dir} holds over ${MAX_ENTRIES} files and directories (a bundle is a few manifests); it was not read`;
    return report(inPackage ? basename(packageDir) : basename(abs), null, [
      { ...finding, upstream: ['operator-sdk:BundleValidator'] },
    ]);
  }
  const files = new Map(listing.files.map((f) => [f.path, readFileSync(f.abs)] as const));
  const annotations = annotationsOf(files);
  const csvValue = [...files]
    .filter(([p]) => /^manifests\/[^/]+\.(ya?ml|json)$/i.test(p))
    .flatMap(([, data]) => decodeBundleFile(data).values.map((v) => v.value))
    .find((v) => isMap(v) && v.kind === 'ClusterServiceVersion');
  const csv = isMap(csvValue) ? csvValue : undefined;
  const csvName =
    csv && isMap(csv.metadata) && typeof csv.metadata.name === 'string' ? csv.metadata.name : null;
  const annotatedPackage = annotations['operators.operatorframework.io.bundle.package.v1'];
  const csvVersion =
    csv && isMap(csv.spec) && typeof csv.spec.version === 'string' ? csv.spec.version : undefined;
  // Alone (no package directory), the bundle names its own package and version.
  const pkg = inPackage
    ? basename(packageDir)
    : typeof annotatedPackage === 'string' && annotatedPackage !== ''
      ? annotatedPackage
      : basename(packageDir);
  const version = inPackage ? basename(abs) : (csvVersion ?? basename(abs));
  let otherBundles: SiblingBundle[] | undefined;
  let organization: string | undefined;
  let ocpIndexes: string[] | undefined;
  let waivers: Waiver[] | undefined;
  if (inPackage) {
    otherBundles = readdirSync(packageDir)
      .sort()
      .filter((name) => name !== basename(abs) && isDirectoryAt(join(packageDir, name)))
      .flatMap((name) => {
        const path = join(packageDir, name);
        if (!siblings.has(path)) siblings.set(path, siblingBundle(path, name) ?? null);
        return siblings.get(path) ?? [];
      });
    const repoRoot = dirname(dirname(packageDir));
    const config = yamlMap(readSmall(join(repoRoot, 'config.yaml'), MAX_CONFIG_BYTES));
    if (typeof config?.organization === 'string') organization = config.organization;
    waivers = parseWaivers(config).waivers;
    if (isDirectoryAt(join(repoRoot, 'catalogs'))) {
      const found = readdirSync(join(repoRoot, 'catalogs'))
        .filter((n) => /^v\d+\.\d+$/.test(n))
        .map((n) => n.slice(1));
      if (found.length > 0) ocpIndexes = found;
    }
  }
  const diagnostics = checkBundle({
    dir,
    package: pkg,
    version,
    files,
    ...(ciText ? { baseCiYaml: ciText.toString('utf8') } : {}),
    suites,
    ...(otherBundles ? { otherBundles } : {}),
    ...(organization !== undefined ? { organization } : {}),
    ...(ocpIndexes ? { ocpIndexes } : {}),
    ...(waivers ? { waivers } : {}),
  });
  return report(pkg, csvName, diagnostics);
}

export const command = defineCliCommand({
  usage: BUNDLE_USAGE,
  options: {
    suite: { type: 'string', multiple: true },
    format: { type: 'string', default: 'text' },
  },
  positionals: {
    min: 1,
    max: 100_000,
    message: 'bundle needs a subcommand: bundle validate <bundle-dir>...',
  },
  formats: ['text', 'json'],
  async run({ values, positionals }, { out }) {
    const [sub, ...dirs] = positionals;
    if (sub !== 'validate') throw new UsageError(`unknown bundle subcommand "${sub}" (expected: validate)`);
    if (dirs.length === 0) throw new UsageError('bundle validate needs at least one bundle directory');
    const suites = (values.suite ?? []).flatMap((s) => s.split(',')).map((s) => s.trim());
    for (const s of suites)
      if (!(BUNDLE_SUITES as readonly string[]).includes(s))
        throw new UsageError(`unknown suite "${s}" (known: ${BUNDLE_SUITES.join(', ')})`);
    const chosen = suites.length > 0 ? (suites as BundleSuite[]) : DEFAULT_BUNDLE_SUITES;
    for (const d of dirs) await requireDirectory(d);
    const siblings = new Map<string, SiblingBundle | null>();
    const reports = dirs.map((d) => validateBundleDirectory(d, chosen, siblings));
    const errors = reports.reduce((n, r) => n + r.findings.filter((f) => f.level === 'error').length, 0);
    const warnings = reports.reduce((n, r) => n + r.findings.filter((f) => f.level === 'warning').length, 0);
    if (values.format === 'json') writeJson(out, { bundles: reports });
    else {
      for (const r of reports) {
        out.write(
          `${r.dir} (${r.name ?? 'no CSV'}, package ${r.package}): ${r.findings.length === 0 ? 'ok' : `${r.findings.length} finding(s)`}\n`,
        );
        for (const f of r.findings)
          out.write(
            `  ${f.file}:${f.line}: ${f.level} ${f.rule}: ${f.message}${f.upstream.length > 0 ? `\n      upstream: ${f.upstream.join(', ')}` : ''}\n`,
          );
      }
      out.write(
        `${reports.length} bundle(s): ${errors} error(s), ${warnings} warning(s) (suites: ${chosen.join(', ')})\n`,
      );
    }
    return errors > 0 ? 1 : 0;
  },
});
