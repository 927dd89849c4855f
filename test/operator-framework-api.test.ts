// operator-framework/api's own validator test data (test/fixtures/operator-framework-api: its
// testdata CSVs, CRDs and bundle directories, and the verdicts its *_test.go files expect, in
// verdicts.json) run through catalog-bot's bundle rules: each case gives the verdict the
// upstream test expects from the validator it tests, but for the differences listed below,
// each explained (docs/bundle-rules.md "operator-framework/api's own test data").
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { checkBundle } from '../src/checks/bundle.js';
import { crdProblems } from '../src/checks/bundle-rules/crds.js';

const FIXTURE = fileURLToPath(new URL('./fixtures/operator-framework-api/', import.meta.url));

interface Case {
  test: string;
  case: string;
  path: string;
  validator: string;
  /** Whether the upstream test asserts errors / warnings of the validator; null: not asserted. */
  errors: boolean | null;
  warnings: boolean | null;
  k8sVersion?: string;
  minKubeVersion?: string;
}

const { cases } = JSON.parse(readFileSync(join(FIXTURE, 'verdicts.json'), 'utf8')) as { cases: Case[] };

/**
 * The OpenShift range whose newest index runs the Kubernetes version a test passes as
 * `k8s-version` (operator-pipelines passes it that way); none: a range no index has.
 */
const RANGE_FOR_K8S: Record<string, string> = {
  '': '=v4.1',
  '1.22': '=v4.9',
  '1.25': '=v4.12',
  '1.26': '=v4.13',
};
const OCP_INDEXES = ['4.9', '4.12', '4.13', '4.14'];

const ANNOTATION = 'operators.operatorframework.io.bundle.';

/**
 * A case's files as a bundle directory: the test data's flat directories and single CSVs go
 * to manifests/, and (operator-sdk reads the package and channels from there)
 * metadata/annotations.yaml names the CSV's operator and channel `stable`.
 */
function bundleOf(c: Case): { files: Map<string, Buffer>; pkg: string; version: string } {
  const at = join(FIXTURE, c.path);
  const files = new Map<string, Buffer>();
  const walk = (dir: string, prefix: string): void => {
    for (const name of readdirSync(dir).sort()) {
      const full = join(dir, name);
      if (statSync(full).isDirectory()) walk(full, `${prefix}${name}/`);
      else files.set(`${prefix}${name}`, readFileSync(full));
    }
  };
  if (statSync(at).isDirectory()) {
    const layered = readdirSync(at).includes('manifests');
    walk(at, layered ? '' : 'manifests/');
  } else files.set(`manifests/${c.path.split('/').pop()!}`, readFileSync(at));
  const csvPath = [...files.keys()].find((p) =>
    /^kind: ClusterServiceVersion$/m.test(files.get(p)!.toString('utf8')),
  )!;
  const csv = parse(files.get(csvPath)!.toString('utf8')) as {
    metadata: { name: string };
    spec: { version?: string; minKubeVersion?: string };
  };
  if (c.minKubeVersion !== undefined) {
    // As the test does: bundle.CSV.Spec.MinKubeVersion = tt.args.minKubeVersion.
    csv.spec.minKubeVersion = c.minKubeVersion;
    files.set(csvPath, Buffer.from(stringify(csv)));
  }
  const name = csv.metadata.name;
  const pkg = name.includes('.v') ? name.slice(0, name.indexOf('.v')) : name;
  const version = csv.spec.version ?? '0.0.0';
  const range = RANGE_FOR_K8S[c.k8sVersion ?? '']!;
  const metadata = files.get('metadata/annotations.yaml');
  const annotations = metadata
    ? (parse(metadata.toString('utf8')) as { annotations: Record<string, string> }).annotations
    : {
        [`${ANNOTATION}mediatype.v1`]: 'registry+v1',
        [`${ANNOTATION}manifests.v1`]: 'manifests/',
        [`${ANNOTATION}metadata.v1`]: 'metadata/',
        [`${ANNOTATION}package.v1`]: pkg,
        [`${ANNOTATION}channels.v1`]: 'stable',
        [`${ANNOTATION}channel.default.v1`]: 'stable',
      };
  annotations['com.redhat.openshift.versions'] = range;
  files.set('metadata/annotations.yaml', Buffer.from(stringify({ annotations })));
  return { files, pkg: annotations[`${ANNOTATION}package.v1`] ?? pkg, version };
}

/** Whether our findings that stand for the case's validator hold errors and warnings. */
function ourVerdict(c: Case): { errors: boolean; warnings: boolean; rules: string[] } {
  if (c.validator === 'CustomResourceDefinitionValidator') {
    // The test validates one CRD alone, as the rule does each CRD of a bundle.
    const problems = crdProblems(
      parse(readFileSync(join(FIXTURE, c.path), 'utf8')) as Record<string, unknown>,
    );
    return {
      errors: problems.length > 0,
      warnings: false,
      rules: problems.length > 0 ? ['B-CRD-DEFINITION'] : [],
    };
  }
  const { files, pkg, version } = bundleOf(c);
  const findings = checkBundle({
    dir: `operators/${pkg}/${version}`,
    package: pkg,
    version,
    files,
    suites: ['operatorhub', 'operatorframework'],
    ocpIndexes: OCP_INDEXES,
  }).filter((f) => f.upstream?.includes(`operator-sdk:${c.validator}`));
  return {
    errors: findings.some((f) => f.level === 'error'),
    warnings: findings.some((f) => f.level === 'warning'),
    rules: [...new Set(findings.map((f) => `${f.rule}:${f.level}`))].sort(),
  };
}

const agrees = (c: Case, ours: { errors: boolean; warnings: boolean }): boolean =>
  (c.errors === null || c.errors === ours.errors) && (c.warnings === null || c.warnings === ours.warnings);

/**
 * The cases where our verdict differs, with why, and the verdict we give: each is checked to
 * still differ that way, so a change of either side shows here.
 */
const KNOWN_DIFFERENCES: Record<string, { why: string; ours: { errors: boolean; warnings: boolean } }> = {
  'crd_test.go TestValidateCRD: registryv1 bundle/valid v1 CRD': {
    why:
      'a v1 CRD with no schema: operator-sdk drops every error under openAPIV3Schema, but the API server ' +
      'refuses a v1 CRD without one ("schemas are required"), so OLM could not install it (stricter)',
    ours: { errors: true, warnings: false },
  },
  'bundle_test.go TestValidateBundle: registryv1 valid bundle with multiple versions in CRD': {
    why:
      'the CSV owns TestTwos.test.example.com while the CRD is testtwos.test.example.com: operator-sdk ' +
      'compares group, version and kind only; opm also compares the name and refuses to render the ' +
      'bundle, and the pipeline renders every bundle with opm, so B-CRD-MISSING is an error (stricter)',
    ours: { errors: true, warnings: false },
  },
  'operatorhub_test.go TestCustomCategories: valid bundle custom categories': {
    why:
      'the test sets OPERATOR_BUNDLE_CATEGORIES to a custom list; operator-pipelines never sets it, so ' +
      'on catalog repositories only the standard categories pass, which is what B-CATEGORIES checks',
    ours: { errors: true, warnings: true },
  },
};

describe("operator-framework/api's validator test data through catalog-bot's rules", () => {
  const results = cases.map((c) => ({ c, ours: ourVerdict(c) }));

  it.each(results.map((r) => [`${r.c.test}: ${r.c.case}`, r] as const))('%s', (_, { c, ours }) => {
    const key = `${c.test}: ${c.case}`;
    const known = KNOWN_DIFFERENCES[key];
    if (known) {
      expect(agrees(c, ours), `${key} now agrees: drop it from KNOWN_DIFFERENCES`).toBe(false);
      expect({ errors: ours.errors, warnings: ours.warnings }).toEqual(known.ours);
    } else
      expect(
        { errors: c.errors ?? ours.errors, warnings: c.warnings ?? ours.warnings },
        `${key}: ours ${ours.rules.join(', ') || 'none'}`,
      ).toEqual({ errors: ours.errors, warnings: ours.warnings });
  });

  it('agrees on all cases but the known differences (N/M in docs/bundle-rules.md)', () => {
    const agreeing = results.filter((r) => agrees(r.c, r.ours)).length;
    expect(cases.length).toBe(34);
    expect(agreeing).toBe(cases.length - Object.keys(KNOWN_DIFFERENCES).length);
    const doc = readFileSync(new URL('../docs/bundle-rules.md', import.meta.url), 'utf8');
    expect(doc).toContain(`**${agreeing} of ${cases.length} give the verdict the test expects**`);
  });
});
