// A bundle pull request for a package still on the bundle index, through the real Probot
// server (docs/bundles.md, "Packages still on the index"): a signed pull_request webhook for
// a branch adding amd-gpu-operator 0.0.4 whose CSV replaces a bundle its channel does not
// have ends with `catalog-bot/upgrade-graph` failing on the emulated index, naming both
// bundles, its annotation at the CSV's spec.replaces line.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { FakeCheckRun } from './helpers/fake-github.js';
import { appWithPullForSuite } from './helpers/app-harness.js';
import { makeIndexRepo } from './helpers/cop-repo.js';

type Annotation = { path: string; start_line: number; message: string };
const annotationsOf = (run: FakeCheckRun | undefined) =>
  ((run?.output as { annotations?: Annotation[] } | undefined)?.annotations ?? []) as Annotation[];

describe('catalog-bot app: a bundle pull request for a package on the bundle index', () => {
  const csv = 'operators/amd-gpu-operator/0.0.4/manifests/amd-gpu-operator.clusterserviceversion.yaml';
  const suite = appWithPullForSuite(() => {
    const made = makeIndexRepo('amd-gpu-operator', '0.0.4');
    const head = made.branch('wrong-replaces', (repo) => {
      const p = join(repo, csv);
      writeFileSync(
        p,
        readFileSync(p, 'utf8').replace(
          'replaces: amd-gpu-operator.v0.0.3',
          'replaces: amd-gpu-operator.v0.0.9',
        ),
      );
    });
    return { made, head };
  });

  it('fails catalog-bot/upgrade-graph on the emulated index, naming both bundles at spec.replaces', async () => {
    const { app, made, head } = suite;
    await app.pullRequest(1, 'opened', head);
    const runs = app.gh.runsFor(head);
    const graph = app.gh.runsFor(head, 'catalog-bot/upgrade-graph')[0];
    expect(graph).toMatchObject({ status: 'completed', conclusion: 'failure' });
    expect(graph?.output?.title).toMatch(
      /^A new bundle replaces a bundle its channel does not have; On the bundle index: /,
    );
    expect(graph?.output?.summary).toContain('amd-gpu-operator.v0.0.4 replaces amd-gpu-operator.v0.0.9');
    expect(graph?.output?.summary).toContain('emulated from operators/amd-gpu-operator: v4.12, v4.13');
    const line =
      readFileSync(join(made.repo, csv), 'utf8')
        .split('\n')
        .findIndex((l) => l.includes('replaces: amd-gpu-operator.v0.0.9')) + 1;
    const at = annotationsOf(graph).find((a) => a.message.includes('replaces amd-gpu-operator.v0.0.9'));
    expect(at).toMatchObject({ path: csv, start_line: line });
    // No annotation points at a catalog file: the repository has none for this package.
    expect(runs.length).toBeGreaterThan(1);
    for (const run of runs) for (const a of annotationsOf(run)) expect(a.path).not.toMatch(/^catalogs\//);
  }, 60_000);
});
