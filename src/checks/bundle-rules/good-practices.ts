// operator-sdk's GoodPracticesValidator (operator-framework/api
// pkg/validation/internal/good_practices.go), run by `suite=operatorframework`: resource
// requests, CRD descriptions, channel names, permission to create CRDs, the CSV name's
// convention; and the one error it has, a CSV with no deployment (docs/bundle-rules.md).
import {
  at,
  csvKeyLine,
  FRAMEWORK_SUITES,
  list,
  map,
  OSDK_FRAMEWORK,
  str,
  type BundleRule,
} from './context.js';

const GOOD = [OSDK_FRAMEWORK, 'operator-sdk:GoodPracticesValidator'];

const deploymentsRule: BundleRule = {
  id: 'B-NO-DEPLOYMENT',
  upstream: GOOD,
  suites: FRAMEWORK_SUITES,
  run(ctx, report) {
    const d = at(ctx.csv, 'spec.install.spec.deployments');
    if (d === undefined || d === null)
      report({
        level: 'error',
        message: 'the CSV has no spec.install.spec.deployments: OLM would install no operator',
        line: csvKeyLine(ctx, 'install'),
      });
  },
};

const resourceRequestsRule: BundleRule = {
  id: 'B-RESOURCE-REQUESTS',
  upstream: GOOD,
  suites: FRAMEWORK_SUITES,
  run(ctx, report) {
    for (const d of list(at(ctx.csv, 'spec.install.spec.deployments')))
      for (const c of list(at(d, 'spec.template.spec.containers'))) {
        const requests = at(c, 'resources.requests');
        if (requests === undefined || requests === null)
          report({
            level: 'warning',
            message: `container "${str(map(c).name)}" of deployment "${str(map(d).name)}" has no resource requests: some clusters refuse pods without CPU and memory requests`,
            line: csvKeyLine(ctx, 'deployments'),
          });
      }
  },
};

const crdDescriptionRule: BundleRule = {
  id: 'B-CRD-DESCRIPTION',
  upstream: GOOD,
  suites: FRAMEWORK_SUITES,
  run(ctx, report) {
    for (const field of ['owned', 'required'])
      for (const d of list(at(ctx.csv, `spec.customresourcedefinitions.${field}`)))
        if (str(map(d).description) === '')
          report({
            level: 'warning',
            message: `${field} CRD "${str(map(d).name)}" has an empty description in the CSV`,
            line: csvKeyLine(ctx, field),
          });
  },
};

const channelNamingRule: BundleRule = {
  id: 'B-CHANNEL-NAMING',
  upstream: GOOD,
  suites: FRAMEWORK_SUITES,
  run(ctx, report) {
    const channels = str(ctx.annotations['operators.operatorframework.io.bundle.channels.v1']).split(',');
    channels.push(str(ctx.annotations['operators.operatorframework.io.bundle.channel.default.v1']));
    const odd = [...new Set(channels.map((c) => c.trim()))]
      .filter((c) => c !== '' && !/^(candidate|stable|fast)/.test(c))
      .sort();
    if (odd.length > 0)
      report({
        level: 'warning',
        message: `channel(s) ${odd.map((c) => JSON.stringify(c)).join(', ')} do not follow the recommended naming (candidate, fast, stable, with an optional suffix)`,
        file: `${ctx.dir}/metadata/annotations.yaml`,
        line: 1,
      });
  },
};

const CRD_RESOURCES = ['customresourcedefinitions', '*', '[*]'];
const CRD_VERBS = ['create', '*', '[*]', 'patch'];

const crdPermissionRule: BundleRule = {
  id: 'B-CRD-PERMISSION',
  upstream: GOOD,
  suites: FRAMEWORK_SUITES,
  run(ctx, report) {
    const perms = [
      ...list(at(ctx.csv, 'spec.install.spec.permissions')),
      ...list(at(ctx.csv, 'spec.install.spec.clusterPermissions')),
    ];
    const grants = perms.some((p) =>
      list(map(p).rules).some(
        (r) =>
          list(map(r).apiGroups).includes('apiextensions.k8s.io') &&
          list(map(r).resources).some((x) => CRD_RESOURCES.includes(x as string)) &&
          list(map(r).verbs).some((v) => CRD_VERBS.includes(v as string)),
      ),
    );
    if (grants)
      report({
        level: 'warning',
        message:
          'the CSV grants the operator permission to create CRDs: an operator should not install other operators or CRDs; OLM does that (dependencies)',
        line: csvKeyLine(ctx, 'apiextensions.k8s.io'),
      });
  },
};

const NAME_SEMVER =
  /([0-9]+)\.([0-9]+)\.([0-9]+)(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+[0-9A-Za-z-]+)?$/;
const SEMVER_NO_LEADING_ZERO =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-(0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*)(\.(0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*))*)?(\+[0-9A-Za-z-]+)?$/;

const csvNameConventionRule: BundleRule = {
  id: 'B-CSV-NAME-CONVENTION',
  upstream: GOOD,
  suites: FRAMEWORK_SUITES,
  run(ctx, report) {
    const name = str(at(ctx.csv, 'metadata.name'));
    const line = csvKeyLine(ctx, 'name');
    const m = NAME_SEMVER.exec(name);
    if (!m || !SEMVER_NO_LEADING_ZERO.test(m[0]))
      report({
        level: 'warning',
        message: `the CSV name "${name}" does not end in a semantic version (MAJOR.MINOR.PATCH)`,
        line,
      });
    if (name.split('.v').length !== 2)
      report({
        level: 'warning',
        message: `the CSV name "${name}" does not follow <operator-name>.v<semver>`,
        line,
      });
  },
};

export const GOOD_PRACTICE_RULES: BundleRule[] = [
  deploymentsRule,
  resourceRequestsRule,
  crdDescriptionRule,
  channelNamingRule,
  crdPermissionRule,
  csvNameConventionRule,
];
