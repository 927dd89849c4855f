// A bundle pull request for a package still on the bundle index (docs/bundles.md, "Packages
// still on the index"): `catalog-bot check` emulates the catalogs the index serves for every
// OpenShift version at the base and the head, runs the catalog checks on them, and points
// the findings at the bundle directory files. Real onboarding cases' repositories (the
// package's bundle directories as community-operators-prod had them), main without the
// newest bundle, a branch adding it: that bundle's pull request.
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeIndexRepo, ONBOARDING, type IndexRepo } from './helpers/cop-repo.js';
import { runCommand } from './helpers/cli.js';

interface Finding {
  rule: string;
  level: string;
  message: string;
  file: string | null;
  line: number | null;
}
interface Check {
  name: string;
  conclusion: string;
  title: string;
  findings: Finding[];
  notes?: string[];
}

async function check(
  repo: string,
  head: string,
  base = 'main',
): Promise<{ code: number; checks: Check[]; err: string }> {
  const got = await runCommand('check', ['--repo', repo, '--base', base, '--head', head, '--format', 'json']);
  const checks = got.out ? (JSON.parse(got.out) as { checks: Check[] }).checks : [];
  return { code: got.code, checks, err: got.err };
}

const named = (checks: Check[], name: string): Check => {
  const c = checks.find((x) => x.name === `catalog-bot/${name}`);
  if (!c) throw new Error(`no ${name} check among ${checks.map((x) => x.name).join(', ')}`);
  return c;
};

/** Checks `head` against main: exit 1 with nothing on stderr, the `name` check fails, and among
 * its findings is one of `rule` (returned with the check and all checks). */
async function failingCheck(
  r: IndexRepo,
  head: string,
  name: string,
  rule: string,
): Promise<{ checks: Check[]; failed: Check; finding: Finding }> {
  const { code, checks, err } = await check(r.repo, head);
  expect(err).toBe('');
  expect(code).toBe(1);
  const failed = named(checks, name);
  expect(failed.conclusion).toBe('failure');
  const finding = failed.findings.find((f) => f.rule === rule);
  if (!finding) throw new Error(`${name} has no ${rule} finding: ${JSON.stringify(failed.findings)}`);
  return { checks, failed, finding };
}

/** The 1-based line of the first line of `file` at `ref` that contains `text`. */
const lineOf = (r: IndexRepo, ref: string, file: string, text: string): number =>
  r
    .git('show', `${ref}:${file}`)
    .split('\n')
    .findIndex((l) => l.includes(text)) + 1;

const CATALOG_CHECKS = ['validate', 'upgrade-graph', 'dependencies', 'crd-upgrade', 'ocp-continuity'];

describe('catalog-bot check: a bundle of a replaces-mode package on the index (amd-gpu-operator)', () => {
  let r: IndexRepo;
  const csv = 'operators/amd-gpu-operator/0.0.4/manifests/amd-gpu-operator.clusterserviceversion.yaml';
  const annotations = 'operators/amd-gpu-operator/0.0.4/metadata/annotations.yaml';
  const edit = (repo: string, file: string, from: string, to: string): void => {
    const p = join(repo, file);
    const text = readFileSync(p, 'utf8');
    if (!text.includes(from)) throw new Error(`${file} has no ${from}`);
    writeFileSync(p, text.replace(from, to));
  };
  /** `finding` is an error at the first line of `file` on branch `head` that has `text`. */
  const expectErrorAt = (finding: Finding, head: string, file: string, text: string): void =>
    expect(finding).toMatchObject({ level: 'error', file, line: lineOf(r, head, file, text) });
  beforeAll(() => {
    r = makeIndexRepo('amd-gpu-operator', '0.0.4');
    r.branch('good');
    r.branch('wrong-replaces', (repo) =>
      edit(repo, csv, 'replaces: amd-gpu-operator.v0.0.3', 'replaces: amd-gpu-operator.v0.0.9'),
    );
    r.branch('comma-versions', (repo) =>
      edit(
        repo,
        annotations,
        'annotations:\n',
        'annotations:\n  com.redhat.openshift.versions: v4.12,v4.13\n',
      ),
    );
    // The attack: the broken bundle with a catalog file of the package written by hand, whose
    // graph is the right one. The pipeline still adds the bundle directory to the index.
    r.branch('wrong-replaces-with-catalog', (repo) => {
      edit(repo, csv, 'replaces: amd-gpu-operator.v0.0.3', 'replaces: amd-gpu-operator.v0.0.9');
      mkdirSync(join(repo, 'catalogs/v4.12/amd-gpu-operator'));
      cpSync(
        join(ONBOARDING, 'amd-gpu-operator/expected/catalogs/v4.12/amd-gpu-operator/catalog.yaml'),
        join(repo, 'catalogs/v4.12/amd-gpu-operator/catalog.yaml'),
      );
    });
    r.branch('narrow-versions', (repo) =>
      edit(
        repo,
        annotations,
        'annotations:\n',
        'annotations:\n  com.redhat.openshift.versions: v4.12-v4.13\n',
      ),
    );
  });
  afterAll(() => r.cleanup());

  it('the next version replacing the head passes every catalog check, run on the emulated index of every OpenShift version', async () => {
    const { code, checks, err } = await check(r.repo, 'good');
    expect(err).toBe('');
    expect(code).toBe(0);
    for (const name of CATALOG_CHECKS) {
      const c = named(checks, name);
      expect(c.conclusion, `${name}: ${c.title}`).toBe('success');
      expect(c.title).toMatch(/^On the bundle index: /);
    }
    // What ran: the package's channel in each of the repository's eight OpenShift catalogs, the new bundle in it.
    const notes = named(checks, 'upgrade-graph').notes ?? [];
    expect(notes.join('\n')).toContain(
      'amd-gpu-operator is on the bundle index (replaces-mode); checked on the catalogs the index will serve, emulated from operators/amd-gpu-operator: v4.12, v4.13, v4.14, v4.15, v4.16, v4.17, v4.18, v4.19: default channel alpha; channels alpha (4 bundles)',
    );
    expect(named(checks, 'validate').title).toBe('On the bundle index: 8 catalogs valid');
    expect(named(checks, 'crd-upgrade').title).toMatch(/\(([1-9]\d*) upgrade edges checked\)/);
    // Nothing points at a catalog file the repository does not have.
    for (const c of checks) for (const f of c.findings) expect(f.file ?? '').not.toMatch(/^catalogs\//);
  });

  it('a CSV that replaces a bundle the channel does not have fails upgrade-graph naming both, at spec.replaces', async () => {
    const got = await failingCheck(r, 'wrong-replaces', 'upgrade-graph', 'INDEX-REPLACES-MISSING');
    const { failed: graph, finding: missing } = got;
    expectErrorAt(missing, 'wrong-replaces', csv, 'replaces: amd-gpu-operator.v0.0.9');
    expect(missing.message).toContain('amd-gpu-operator.v0.0.4 replaces amd-gpu-operator.v0.0.9');
    expect(missing.message).toContain("the channel's head there is amd-gpu-operator.v0.0.3");
    // The graph the index would serve: the installed versions are stranded, said once for the eight catalogs.
    const stranded = graph.findings.filter((f) => f.rule === 'G12-NO-WAY-FORWARD');
    expect(stranded).toHaveLength(1);
    expect(stranded[0]!.message).toContain(
      'amd-gpu-operator.v0.0.3 (0.0.3; removed from the channel by this change, it was in the index before)',
    );
    expect(stranded[0]!.message).toContain(
      'as the bundle index will serve it for v4.12, v4.13, v4.14, v4.15, v4.16, v4.17, v4.18 and v4.19',
    );
    expect(stranded[0]!.file).toMatch(/^operators\/amd-gpu-operator\/0\.0\.4\//);
  });

  it('attack: a hand-written catalog of the package in the pull request does not stand in for the index the bundle goes into', async () => {
    const missing = (
      await failingCheck(r, 'wrong-replaces-with-catalog', 'upgrade-graph', 'INDEX-REPLACES-MISSING')
    ).finding;
    expect(missing.message).toContain('amd-gpu-operator.v0.0.4 replaces amd-gpu-operator.v0.0.9');
    // Every version's index, v4.12 (where the pull request wrote its own catalog) included.
    expect(missing.message).toContain('for v4.12, v4.13, v4.14, v4.15, v4.16, v4.17, v4.18 and v4.19');
  });

  it('an old bundle directory the index never took is left out of the emulation, not a reason to skip the checks', async () => {
    // A directory without manifests, from before: `opm index add` refused it when it came.
    r.git('checkout', '-q', '-b', 'old-broken', 'main');
    mkdirSync(join(r.repo, 'operators/amd-gpu-operator/0.0.0/metadata'), { recursive: true });
    cpSync(
      join(r.repo, 'operators/amd-gpu-operator/0.0.3/metadata/annotations.yaml'),
      join(r.repo, 'operators/amd-gpu-operator/0.0.0/metadata/annotations.yaml'),
    );
    r.git('add', '-A');
    r.git('commit', '-qm', 'an old broken bundle directory');
    r.git('checkout', '-q', '-b', 'good-after-broken');
    r.git('checkout', 'good', '--', r.bundleDir);
    r.git('commit', '-qm', 'the bundle');
    const { code, checks } = await check(r.repo, 'good-after-broken', 'old-broken');
    expect(code).toBe(0);
    const notes = (named(checks, 'upgrade-graph').notes ?? []).join('\n');
    expect(notes).toContain('channels alpha (4 bundles)');
    expect(notes).toContain(
      'left out as the index never took them: operators/amd-gpu-operator/0.0.0 (operators/amd-gpu-operator/0.0.0 is not a bundle: it has no manifests/ (the CSV and CRDs))',
    );
    for (const name of CATALOG_CHECKS) expect(named(checks, name).title).toMatch(/^On the bundle index: /);
  });

  it('an annotation the index cannot read is a failing finding at its line (exit 1, not a crash)', async () => {
    const { finding: refused } = await failingCheck(r, 'comma-versions', 'validate', 'INDEX-REFUSED');
    expect(refused).toMatchObject({ level: 'error', file: annotations, line: 2 });
    expect(refused.message).toContain('com.redhat.openshift.versions "v4.12,v4.13" is a comma list');
  });

  it('a bundle for v4.12-v4.13 only leaves its installs without a way forward on OpenShift 4.14: ocp-continuity fails at the annotation', async () => {
    const { checks, finding: f } = await failingCheck(
      r,
      'narrow-versions',
      'ocp-continuity',
      'OCP-NO-WAY-FORWARD',
    );
    expectErrorAt(f, 'narrow-versions', annotations, 'com.redhat.openshift.versions');
    expect(f.message).toContain('catalog v4.13 -> v4.14: bundle amd-gpu-operator.v0.0.4');
    expect(f.message).toContain('as the bundle index will serve it for v4.14');
    // The catalogs that keep the bundle are fine: the graph of v4.12 and v4.13 has it as the head.
    expect(named(checks, 'upgrade-graph').conclusion).toBe('success');
  });
});
