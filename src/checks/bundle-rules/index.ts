// The bundle rules that stand for the checks catalog repositories run today
// (operator-pipelines' static tests and `operator-sdk bundle validate`), one table of them,
// and how the `catalog-bot/bundle` check's own findings map to those upstream checks.
// docs/bundle-rules.md lists every upstream check and the rule that holds it.
import { BUNDLE_OBJECT_RULES } from './bundle-objects.js';
import {
  bundleContext,
  OSDK_FRAMEWORK,
  OSDK_OPERATORHUB,
  type BundleContext,
  type BundleContextInput,
  type BundleFinding,
  type BundleRule,
  type BundleSuite,
} from './context.js';
import { CRD_RULES } from './crds.js';
import { CSV_RULES } from './csv.js';
import { GOOD_PRACTICE_RULES } from './good-practices.js';
import { OPERATORHUB_RULES } from './operatorhub.js';
import { PIPELINES_BUNDLE_RULES } from './pipelines-bundle.js';
import { PIPELINES_PACKAGE_RULES } from './pipelines-package.js';
import { REMOVED_API_RULES } from './removed-apis.js';

export {
  BUNDLE_SUITES,
  bundleContext,
  type BundleFinding,
  type BundleSuite,
  type SiblingBundle,
} from './context.js';

export const BUNDLE_RULES: readonly BundleRule[] = [
  ...CSV_RULES,
  ...OPERATORHUB_RULES,
  ...REMOVED_API_RULES,
  ...BUNDLE_OBJECT_RULES,
  ...CRD_RULES,
  ...GOOD_PRACTICE_RULES,
  ...PIPELINES_BUNDLE_RULES,
  ...PIPELINES_PACKAGE_RULES,
];

/** Rules that read no CSV (the package's ci.yaml, release-config.yaml, the manifests). */
const WITHOUT_CSV = new Set([
  'B-NETWORK-POLICY',
  'B-RELEASE-CONFIG-CI',
  'B-RELEASE-CONFIG-SCHEMA',
  'B-CI-SCHEMA',
  'B-CI-CATALOG-MAPPING',
  'B-CI-UPDATE-GRAPH',
  'B-UPGRADE-GRAPH-LOOP',
  'B-OPERATOR-NAME-UNIQUE',
  'B-COMPRESSED-SIZE',
]);

/** The suite `bundle validate` runs when none is named: what community-operators-prod runs. */
export const DEFAULT_BUNDLE_SUITES: readonly BundleSuite[] = ['community'];

/** Every finding of the rules of these suites on one bundle. */
export function runBundleRules(ctx: BundleContext, suites: readonly BundleSuite[]): BundleFinding[] {
  const out: BundleFinding[] = [];
  const csvFile = ctx.csvPath ? `${ctx.dir}/${ctx.csvPath}` : `${ctx.dir}/manifests`;
  for (const rule of BUNDLE_RULES) {
    if (!rule.suites.some((s) => suites.includes(s))) continue;
    if (ctx.csv === undefined && !WITHOUT_CSV.has(rule.id)) continue;
    rule.run(ctx, (f) =>
      out.push({
        level: f.level,
        rule: rule.id,
        upstream: f.upstream ?? rule.upstream,
        message: f.message,
        file: f.file ?? csvFile,
        line: f.line ?? 1,
      }),
    );
  }
  return out;
}

/** bundleContext then runBundleRules. */
export function checkBundleRules(input: BundleContextInput, suites: readonly BundleSuite[]): BundleFinding[] {
  return runBundleRules(bundleContext(input), suites);
}

const OSDK = [OSDK_OPERATORHUB, OSDK_FRAMEWORK];

/**
 * The upstream checks the `catalog-bot/bundle` check's own rules (docs/bundles.md) stand for:
 * a bundle operator-sdk cannot load fails both of operator-pipelines' operator-sdk tests.
 */
export const BUNDLE_CHECK_UPSTREAM: Readonly<Record<string, string[]>> = {
  'B-LAYOUT': OSDK,
  'B-ANNOTATIONS': [...OSDK, 'operator-pipelines:check_operator_name'],
  'B-MANIFEST-SYNTAX': OSDK,
  'B-CSV': OSDK,
  'B-CRD-MISSING': [...OSDK, 'operator-sdk:BundleValidator'],
  'B-CSV-VERSION': ['operator-pipelines:check_required_fields', ...OSDK, 'operator-sdk:OperatorHubValidator'],
  'B-CSV-NAME': ['operator-pipelines:check_operator_name'],
  'B-DIRECTORY-VERSION': ['operator-pipelines:check_operator_version_directory_name'],
  'B-MIN-KUBE-VERSION': [
    ...OSDK,
    'operator-sdk:ClusterServiceVersionValidator',
    'operator-pipelines:check_api_version_constraints',
  ],
  'B-SIZE': [...OSDK, 'operator-sdk:BundleValidator'],
};
