// operator-sdk's BundleValidator (operator-framework/api pkg/validation/internal/bundle.go),
// which every `operator-sdk bundle validate` runs: CRDs the CSV does not own, the same CRD
// twice, a ServiceAccount manifest the CSV's deployments already name, relatedImages that are
// no pull spec, the bundle's compressed size, and the name of a bundle with a release
// (docs/bundle-rules.md).
import { gzipSync } from 'node:zlib';
import { validatePullSpec } from '../../catalog/image-ref.js';
import {
  at,
  csvKeyLine,
  DEFAULT_VALIDATOR_SUITES,
  list,
  map,
  OSDK_FRAMEWORK,
  OSDK_OPERATORHUB,
  str,
  type BundleRule,
} from './context.js';

const BUNDLE = [OSDK_OPERATORHUB, OSDK_FRAMEWORK, 'operator-sdk:BundleValidator'];

const crdsRule: BundleRule = {
  id: 'B-CRD-NOT-OWNED',
  upstream: BUNDLE,
  suites: DEFAULT_VALIDATOR_SUITES,
  run(ctx, report) {
    const owned = new Set<string>();
    const ownedKinds = new Set<string>();
    for (const d of list(at(ctx.csv, 'spec.customresourcedefinitions.owned'))) {
      const name = str(map(d).name);
      const group = name.includes('.') ? name.slice(name.indexOf('.') + 1) : name;
      owned.add(`${group}/${str(map(d).version)}, Kind=${str(map(d).kind)}`);
      ownedKinds.add(`${group}, Kind=${str(map(d).kind)}`);
    }
    const seen = new Map<string, string>();
    for (const { value: o, path } of ctx.objects) {
      if (o.kind !== 'CustomResourceDefinition') continue;
      const spec = map(o.spec);
      const group = str(spec.group);
      const kind = str(map(spec.names).kind);
      const versions = list(spec.versions).map((v) => str(map(v).name));
      if (versions.length === 0 && str(spec.version) !== '') versions.push(str(spec.version));
      for (const version of versions) {
        const key = `${group}/${version}, Kind=${kind}`;
        if (seen.has(key))
          report({
            level: 'error',
            message: `the bundle has the CRD ${key} twice (${seen.get(key)} and ${path})`,
            file: `${ctx.dir}/${path}`,
          });
        seen.set(key, path);
      }
      if (!ownedKinds.has(`${group}, Kind=${kind}`))
        report({
          level: 'error',
          message: `${path} is the CRD of ${kind} (${group}), which the CSV does not list in spec.customresourcedefinitions.owned`,
          file: `${ctx.dir}/${path}`,
        });
    }
  },
};

const serviceAccountRule: BundleRule = {
  id: 'B-SERVICE-ACCOUNT',
  upstream: BUNDLE,
  suites: DEFAULT_VALIDATOR_SUITES,
  run(ctx, report) {
    const names = new Set(
      list(at(ctx.csv, 'spec.install.spec.deployments')).map((d) =>
        str(at(d, 'spec.template.spec.serviceAccountName')),
      ),
    );
    for (const { value: o, path } of ctx.objects)
      if (o.kind === 'ServiceAccount' && o.apiVersion === 'v1' && names.has(str(map(o.metadata).name)))
        report({
          level: 'error',
          message: `${path} is the ServiceAccount "${str(map(o.metadata).name)}", which a deployment of the CSV already names: OLM creates that account itself; remove the manifest or rename one of them`,
          file: `${ctx.dir}/${path}`,
        });
  },
};

const relatedImagesRule: BundleRule = {
  id: 'B-RELATED-IMAGES',
  upstream: BUNDLE,
  suites: DEFAULT_VALIDATOR_SUITES,
  run(ctx, report) {
    const line = csvKeyLine(ctx, 'relatedImages');
    for (const [i, r] of list(at(ctx.csv, 'spec.relatedImages')).entries()) {
      const image = str(map(r).image);
      const problem = image === '' ? 'is empty' : validatePullSpec(image);
      if (problem !== null)
        report({
          level: 'error',
          message: `spec.relatedImages[${i}].image ${image === '' ? 'is empty' : `"${image}" is not an image pull spec: ${problem}`}`,
          line,
        });
    }
  },
};

/** What OLM can stage in one ConfigMap, compressed (operator-framework/api max_bundle_size). */
export const MAX_COMPRESSED_BUNDLE_BYTES = 2 ** 20;

const sizeRule: BundleRule = {
  id: 'B-COMPRESSED-SIZE',
  upstream: BUNDLE,
  suites: DEFAULT_VALIDATOR_SUITES,
  run(ctx, report) {
    // The manifests as one gzip stream: the archive operator-sdk measures less its tar headers.
    const manifests = [...ctx.files].filter(([p]) => p.startsWith('manifests/') || p.startsWith('metadata/'));
    const raw = manifests.reduce((n, [, b]) => n + b.length, 0);
    if (raw < MAX_COMPRESSED_BUNDLE_BYTES * 0.85) return; // gzip never grows text this much
    const size = gzipSync(Buffer.concat(manifests.map(([, b]) => b))).length;
    const kb = (n: number): string => `${(n / 1000).toFixed(1)} kB`;
    if (size > MAX_COMPRESSED_BUNDLE_BYTES)
      report({
        level: 'error',
        message: `the bundle is ${kb(size)} compressed, over the ${kb(MAX_COMPRESSED_BUNDLE_BYTES)} OLM can stage (${kb(raw)} uncompressed)`,
        file: ctx.dir,
      });
    else if (size > MAX_COMPRESSED_BUNDLE_BYTES * 0.85)
      report({
        level: 'warning',
        message: `the bundle is ${kb(size)} compressed, near the ${kb(MAX_COMPRESSED_BUNDLE_BYTES)} OLM can stage (${kb(raw)} uncompressed)`,
        file: ctx.dir,
      });
  },
};

/**
 * Why a CSV's `spec.release` is not a release version, as operator-framework/api's
 * OperatorRelease decodes it (dot-separated semver pre-release identifiers); null when it is.
 */
export function releaseProblem(release: unknown): string | null {
  if (typeof release !== 'string') return `is ${JSON.stringify(release)}, not a string`;
  for (const part of release.split('.')) {
    if (part === '') return 'has an empty identifier';
    if (!/^[0-9A-Za-z-]+$/.test(part))
      return `has the identifier "${part}": only letters, digits and '-' are allowed`;
    if (/^0[0-9]+$/.test(part)) return `has the number "${part}" with a leading zero`;
  }
  return null;
}

const PACKAGE_ANNOTATION = 'operators.operatorframework.io.bundle.package.v1';

const releaseNameRule: BundleRule = {
  id: 'B-RELEASE-NAME',
  upstream: BUNDLE,
  suites: DEFAULT_VALIDATOR_SUITES,
  run(ctx, report) {
    const release = at(ctx.csv, 'spec.release');
    // omitzero: an absent or empty release is no release.
    if (release === undefined || release === null || release === '') return;
    const line = csvKeyLine(ctx, 'release');
    const problem = releaseProblem(release);
    if (problem !== null) {
      report({ level: 'error', message: `spec.release ${problem}: operator-sdk cannot read the CSV`, line });
      return;
    }
    // The bundle is named after its CSV; the package comes from annotations.yaml, as upstream loads it.
    const pkg = str(ctx.annotations[PACKAGE_ANNOTATION]);
    const expected = `${pkg}-v${str(at(ctx.csv, 'spec.version'))}-${String(release)}`;
    const name = str(at(ctx.csv, 'metadata.name'));
    if (name !== expected)
      report({
        level: 'error',
        message: `the CSV has spec.release "${String(release)}", so it must be named "${expected}" (<package>-v<version>-<release>), not "${name}"`,
        line: csvKeyLine(ctx, 'name'),
      });
  },
};

export const BUNDLE_OBJECT_RULES: BundleRule[] = [
  crdsRule,
  serviceAccountRule,
  relatedImagesRule,
  sizeRule,
  releaseNameRule,
];
