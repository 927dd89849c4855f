// operator-sdk's OperatorHub validators (operator-framework/api
// pkg/validation/internal/operatorhub.go, operatorhubv2.go, standardcapabilities.go,
// standardcategories.go): provider, maintainers, links, version, icon, capabilities and
// categories. `name=operatorhub` and `suite=operatorframework` both run them, so each finding
// stands for both of operator-pipelines' operator-sdk tests (docs/bundle-rules.md).
import {
  at,
  csvKeyLine,
  DEFAULT_VALIDATOR_SUITES,
  isMap,
  list,
  map,
  OSDK_FRAMEWORK,
  OSDK_OPERATORHUB,
  str,
  type BundleRule,
} from './context.js';

const HUB = [
  OSDK_OPERATORHUB,
  OSDK_FRAMEWORK,
  'operator-sdk:OperatorHubValidator',
  'operator-sdk:OperatorHubV2Validator',
];

export const ICON_MEDIATYPES = ['image/gif', 'image/jpeg', 'image/png', 'image/svg+xml'];

export const CAPABILITIES = [
  'Basic Install',
  'Seamless Upgrades',
  'Full Lifecycle',
  'Deep Insights',
  'Auto Pilot',
];

/** operator-sdk's standard categories (operator-pipelines' own list lacks Observability). */
export const OPERATORHUB_CATEGORIES = [
  'AI/Machine Learning',
  'Application Runtime',
  'Big Data',
  'Cloud Provider',
  'Developer Tools',
  'Database',
  'Integration & Delivery',
  'Logging & Tracing',
  'Monitoring',
  'Modernization & Migration',
  'Networking',
  'OpenShift Optional',
  'Security',
  'Storage',
  'Streaming & Messaging',
  'Observability',
];

/** net/mail.ParseAddress, for the forms a maintainer's email takes: `a@b` or `Name <a@b>`. */
export function isMailAddress(s: string): boolean {
  const addr = /^[^<>]*<([^<>]+)>\s*$/.exec(s)?.[1] ?? s.trim();
  return (
    /^[^\s@"(),:;<>[\]\\]+@[^\s@"(),:;<>[\]\\]+$/.test(addr) && !addr.startsWith('.') && !addr.includes('..')
  );
}

/** net/url.ParseRequestURI: an absolute URI (with a scheme) or an absolute path, no spaces or controls. */
export function isRequestUri(s: string): boolean {
  // eslint-disable-next-line no-control-regex
  if (/[\s\x00-\x1f\x7f]/.test(s)) return false;
  return /^[A-Za-z][A-Za-z0-9+.-]*:/.test(s) || s.startsWith('/');
}

const providerRule: BundleRule = {
  id: 'B-PROVIDER',
  upstream: HUB,
  suites: DEFAULT_VALIDATOR_SUITES,
  run(ctx, report) {
    if (str(at(ctx.csv, 'spec.provider.name')).trim() === '')
      report({
        level: 'error',
        message: 'the CSV has no spec.provider.name: OperatorHub shows who provides the operator',
        line: csvKeyLine(ctx, 'provider'),
      });
  },
};

const maintainersRule: BundleRule = {
  id: 'B-MAINTAINERS',
  upstream: HUB,
  suites: DEFAULT_VALIDATOR_SUITES,
  run(ctx, report) {
    const line = csvKeyLine(ctx, 'maintainers');
    for (const [i, m] of list(at(ctx.csv, 'spec.maintainers')).entries()) {
      const name = str(map(m).name);
      const email = str(map(m).email);
      if (name === '' || email === '')
        report({
          level: 'error',
          message: `spec.maintainers[${i}] must have both a name and an email`,
          line,
        });
      if (email !== '' && !isMailAddress(email))
        report({
          level: 'error',
          message: `spec.maintainers[${i}] email "${email}" is not an email address`,
          line,
        });
    }
  },
};

const linksRule: BundleRule = {
  id: 'B-LINKS',
  upstream: HUB,
  suites: DEFAULT_VALIDATOR_SUITES,
  run(ctx, report) {
    const line = csvKeyLine(ctx, 'links');
    for (const [i, l] of list(at(ctx.csv, 'spec.links')).entries()) {
      const name = str(map(l).name);
      const url = str(map(l).url);
      if (name === '' || url === '')
        report({ level: 'error', message: `spec.links[${i}] must have both a name and a url`, line });
      if (url !== '' && !isRequestUri(url))
        report({ level: 'error', message: `spec.links[${i}] url "${url}" is not an absolute URL`, line });
    }
  },
};

const versionRule: BundleRule = {
  id: 'B-VERSION-MISSING',
  upstream: HUB,
  suites: DEFAULT_VALIDATOR_SUITES,
  run(ctx, report) {
    const v = str(at(ctx.csv, 'spec.version'));
    // operator-sdk compares the parsed version with the zero version: 0.0.0 counts as unset.
    if (v === '' || /^0\.0\.0$/.test(v))
      report({
        level: 'error',
        message: `the CSV's spec.version ${v === '' ? 'is not set' : 'is 0.0.0, which counts as not set'}`,
        line: csvKeyLine(ctx, 'spec'),
      });
  },
};

const iconRule: BundleRule = {
  id: 'B-ICON',
  upstream: HUB,
  suites: DEFAULT_VALIDATOR_SUITES,
  run(ctx, report) {
    const icon = at(ctx.csv, 'spec.icon');
    const line = csvKeyLine(ctx, 'icon');
    if (icon === undefined || icon === null) {
      report({
        level: 'warning',
        message: 'the CSV has no spec.icon: OperatorHub shows a placeholder',
        line: csvKeyLine(ctx, 'spec'),
      });
      return;
    }
    const icons = list(icon);
    if (icons.length !== 1)
      report({
        level: 'error',
        message: `spec.icon has ${icons.length} elements; it must have exactly one`,
        line,
      });
    const first = icons[0];
    if (first === undefined) return;
    const data = str(map(first).base64data);
    const mediatype = str(map(first).mediatype);
    if (data === '' || mediatype === '')
      report({ level: 'error', message: 'spec.icon[0] must have both base64data and mediatype', line });
    if (mediatype !== '' && !ICON_MEDIATYPES.includes(mediatype))
      report({
        level: 'error',
        message: `spec.icon[0] mediatype "${mediatype}" is not one of ${ICON_MEDIATYPES.join(', ')}`,
        line,
      });
  },
};

const capabilitiesRule: BundleRule = {
  id: 'B-CAPABILITIES',
  upstream: [
    OSDK_OPERATORHUB,
    OSDK_FRAMEWORK,
    'operator-sdk:OperatorHubValidator',
    'operator-sdk:StandardCapabilitiesValidator',
  ],
  suites: DEFAULT_VALIDATOR_SUITES,
  run(ctx, report) {
    const annotations = at(ctx.csv, 'metadata.annotations');
    if (!isMap(annotations) || !('capabilities' in annotations)) return;
    const value = annotations.capabilities;
    if (typeof value === 'string' && !CAPABILITIES.includes(value))
      report({
        level: 'error',
        message: `the capabilities annotation "${value}" is not a capability level (${CAPABILITIES.join(', ')})`,
        line: csvKeyLine(ctx, 'capabilities'),
      });
  },
};

const categoriesRule: BundleRule = {
  id: 'B-CATEGORIES',
  upstream: [
    OSDK_OPERATORHUB,
    OSDK_FRAMEWORK,
    'operator-sdk:OperatorHubValidator',
    'operator-sdk:StandardCategoriesValidator',
  ],
  suites: DEFAULT_VALIDATOR_SUITES,
  run(ctx, report) {
    const annotations = at(ctx.csv, 'metadata.annotations');
    if (!isMap(annotations) || typeof annotations.categories !== 'string') return;
    for (const category of annotations.categories.split(','))
      if (!OPERATORHUB_CATEGORIES.includes(category.trim()))
        report({
          level: 'error',
          message: `the categories annotation has "${category}", which is not a standard category (${OPERATORHUB_CATEGORIES.join(', ')})`,
          line: csvKeyLine(ctx, 'categories'),
        });
  },
};

export const OPERATORHUB_RULES: BundleRule[] = [
  providerRule,
  maintainersRule,
  linksRule,
  versionRule,
  iconRule,
  capabilitiesRule,
  categoriesRule,
];
