// The suites on a pull request: a community-operators-prod repository whose base sets
// `bundles.suites: [community]` and waives check_required_fields for the package in its
// config.yaml, and the real clusterpulse 1.0.2 bundle pull request, checked by the
// pull-request checks as the App runs them (`catalog-bot check`, the built CLI). The
// findings are those bundle-validate.test.ts reasons for that bundle, the waived one a notice.
// Without the setting the check runs its own rules only (bundle-rules.test.ts).
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COP_CONFIG, makeCopRepo, type CopRepo } from './helpers/cop-repo.js';

const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));

interface CheckJson {
  checks: {
    name: string;
    conclusion: string;
    findings: { level: string; rule: string; message: string }[];
  }[];
}

let cop: CopRepo;
beforeAll(() => {
  cop = makeCopRepo('clusterpulse/1.0.2');
  cop.branch(
    'suites',
    () => {
      writeFileSync(
        join(cop.repo, '.github', 'catalog-bot.yml'),
        `${COP_CONFIG}bundles:\n  suites: [community]\n`,
      );
      const config = join(cop.repo, 'config.yaml');
      writeFileSync(
        config,
        readFileSync(config, 'utf8').replace(
          'tests:\n',
          'tests:\n  - name: check_required_fields\n    ignore_operators:\n      - ^clusterpulse$\n',
        ),
      );
      // An older bundle under another operator name: check_operator_name reads the package's bundles.
      const older = join(
        cop.repo,
        'operators',
        'clusterpulse',
        '1.0.1',
        'manifests',
        'clusterpulse.clusterserviceversion.yaml',
      );
      writeFileSync(
        older,
        readFileSync(older, 'utf8').replace('name: clusterpulse.v1.0.1', 'name: clusterpulse-next.v1.0.1'),
      );
    },
    false,
  );
  cop.branch('pr-suites', undefined, true, 'suites');
  // The attack: a waiver pattern that git would read as an option if it were passed as one.
  cop.branch(
    'suites-option',
    () => {
      const config = join(cop.repo, 'config.yaml');
      writeFileSync(
        config,
        readFileSync(config, 'utf8').replace(
          '^clusterpulse$',
          `^clusterpulse$|--output=${join(cop.repo, 'pwned')}`,
        ),
      );
    },
    false,
    'suites',
  );
  cop.branch('pr-suites-option', undefined, true, 'suites-option');
}, 60_000);
afterAll(() => cop.cleanup());

function bundleCheck(base: string, head: string): CheckJson['checks'][number] {
  const r = spawnSync(
    process.execPath,
    [CLI, 'check', '--base', base, '--head', head, '--repo', cop.repo, '--format', 'json'],
    {
      encoding: 'utf8',
      timeout: 90_000,
    },
  );
  const json = JSON.parse(r.stdout) as CheckJson;
  return json.checks.find((c) => c.name === 'catalog-bot/bundle')!;
}

describe('bundles.suites on a pull request', () => {
  it('runs the community suite, with the repository waiver as a notice', () => {
    const check = bundleCheck('suites', 'pr-suites');
    const verdicts = check.findings.map((f) => `${f.rule}:${f.level}`).sort();
    // clusterpulse 1.0.2: MetricSource has no example and no description (operator-sdk
    // warnings), containerImage has no tag (check_required_fields, waived here); the package's
    // other bundles now use two operator names (check_operator_name warns).
    expect(verdicts).toEqual([
      'B-ALM-EXAMPLES:warning',
      'B-CRD-DESCRIPTION:warning',
      'B-OPERATOR-NAME:warning',
      'B-REQUIRED-FIELDS:notice',
    ]);
    expect(check.findings.find((f) => f.rule === 'B-OPERATOR-NAME')!.message).toMatch(
      /clusterpulse, clusterpulse-next/,
    );
    expect(check.findings.find((f) => f.rule === 'B-REQUIRED-FIELDS')!.message).toMatch(
      /containerImage.*waived for clusterpulse: config\.yaml tests check_required_fields ignore_operators "\^clusterpulse\$"/,
    );
    // Who waived and why: the base's commit that added the pattern to config.yaml.
    const added = cop.git('log', '-1', '--format=%h', 'suites', '--', 'config.yaml');
    expect(check.findings.find((f) => f.rule === 'B-REQUIRED-FIELDS')!.message).toContain(
      `The waiver came with t's commit ${added} (suites).`,
    );
    expect(check.conclusion).toBe('success');
  }, 120_000);

  it('looks the waiver up with its pattern as a literal string, never as a git option', () => {
    const check = bundleCheck('suites-option', 'pr-suites-option');
    const added = cop.git('log', '-1', '--format=%h', 'suites-option', '--', 'config.yaml');
    expect(check.findings.find((f) => f.rule === 'B-REQUIRED-FIELDS')!.message).toContain(
      `The waiver came with t's commit ${added} (suites-option).`,
    );
    expect(existsSync(join(cop.repo, 'pwned'))).toBe(false);
  }, 120_000);
});
