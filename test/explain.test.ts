// `catalog-bot explain` on real catalogs; every answer is checked against the graph engines'
// own output as `catalog-bot graph --format json` prints it.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { explainMermaid, MAX_STARTS, type Explanation } from '../src/catalog/olm/explain.js';
import { longChannelJson } from './helpers/catalogs.js';
import { runCli as cli } from './helpers/cli.js';
import { removeTree, SHARED_DATA, writeTree } from './helpers/oracle.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach(removeTree));

const REPO_V421 = join(SHARED_DATA, 'real-repo/community-operators-prod/catalogs/v4.21');

async function explain(root: string, bundle: string, ...extra: string[]): Promise<Explanation> {
  const r = await cli(['explain', bundle, '--catalog', root, '--format', 'json', ...extra]);
  expect(r.err).toBe('');
  expect(r.code).toBe(0);
  return JSON.parse(r.out) as Explanation;
}

interface GraphJson {
  classicChain: string[];
  classicInstall: string | null;
  v1Install: string | null;
  entries: Record<string, { classicNext: string | null; v1Chosen: string | null }>;
}

/** The hops one OLM takes, one graph entry at a time, as graph --format json reports them. */
function walk(graph: GraphJson, start: string, olm: 'classicNext' | 'v1Chosen'): string[] {
  const path: string[] = [];
  const seen = new Set([start]);
  let at = start;
  for (;;) {
    const next = graph.entries[at]?.[olm] ?? null;
    if (next === null || next === at) return path;
    path.push(next);
    if (seen.has(next)) return path;
    seen.add(next);
    at = next;
  }
}

/** Every path, fresh install and chain fact of the explanation, read again off `graph`. */
async function checkAgainstGraph(root: string, e: Explanation): Promise<number> {
  let checked = 0;
  for (const c of e.channels) {
    const installed = c.from.filter((f) => !f.inCatalog).map((f) => `${f.installed}=${f.version}`);
    const r = await cli([
      'graph',
      root,
      e.package,
      '--channel',
      c.channel,
      '--format',
      'json',
      ...installed.flatMap((i) => ['--installed', i]),
    ]);
    expect(r.code).toBe(0);
    const graph = JSON.parse(r.out) as GraphJson;
    expect(c.freshInstall).toEqual({ classic: graph.classicInstall, v1: graph.v1Install });
    expect(c.onClassicChain).toBe(graph.classicChain.includes(e.bundle));
    for (const f of c.from) {
      const classic = walk(graph, f.installed, 'classicNext');
      const v1 = walk(graph, f.installed, 'v1Chosen');
      expect(f.classic.path, `${f.installed} classic`).toEqual(classic);
      expect(f.v1.path, `${f.installed} v1`).toEqual(v1);
      expect(f.classic.reaches).toBe(classic.includes(e.bundle));
      expect(f.v1.reaches).toBe(v1.includes(e.bundle));
      expect(f.classic.why === null).toBe(f.classic.reaches);
      expect(f.v1.why === null).toBe(f.v1.reaches);
      checked++;
    }
  }
  return checked;
}

describe('catalog-bot explain', () => {
  it('a bundle classic OLM cannot reach but OLM v1 can: clusterpulse.v0.2.3 (skipped by v0.3.0)', async () => {
    const e = await explain(REPO_V421, 'clusterpulse.v0.2.3');
    expect(await checkAgainstGraph(REPO_V421, e)).toBe(5);
    expect(e.defaultChannel).toBe('fast-v1');
    expect(e.channels.map((c) => [c.channel, c.default, c.onClassicChain])).toEqual([
      ['fast-v0', false, false],
    ]);
    const [c] = e.channels;
    expect(c!.offChainBecause).toMatch(
      /^clusterpulse\.v0\.3\.0 skips it, and classic OLM leaves skipped entries off/,
    );
    expect(c!.freshInstall).toEqual({ classic: 'clusterpulse.v0.3.0', v1: 'clusterpulse.v0.3.0' });
    const from = Object.fromEntries(c!.from.map((f) => [f.installed, f]));
    for (const old of [
      'clusterpulse.v0.1.1',
      'clusterpulse.v0.2.0',
      'clusterpulse.v0.2.1',
      'clusterpulse.v0.2.2',
    ]) {
      expect(from[old]!.classic).toMatchObject({ path: [], reaches: false });
      expect(from[old]!.classic.why).toContain("is off classic's chain: clusterpulse.v0.3.0 skips it");
      expect(from[old]!.v1).toEqual({
        path: ['clusterpulse.v0.2.3', 'clusterpulse.v0.3.0'],
        reaches: true,
        why: null,
      });
    }
    for (const olm of ['classic', 'v1'] as const)
      expect(from['clusterpulse.v0.3.0']![olm].why).toBe('already newer than clusterpulse.v0.2.3 (0.2.3)');
    expect(e.summary).toContain(
      "Classic OLM, channel fast-v0: not from clusterpulse.v0.1.1, clusterpulse.v0.2.0, clusterpulse.v0.2.1, clusterpulse.v0.2.2: clusterpulse.v0.2.3 is off classic's chain: clusterpulse.v0.3.0 skips it, and classic OLM leaves skipped entries off the channel's replaces chain, so it never installs or upgrades to it.",
    );
    expect(e.summary).toContain(
      'OLM v1, channel fast-v0: reached from clusterpulse.v0.1.1 via clusterpulse.v0.2.3; clusterpulse.v0.2.0 via clusterpulse.v0.2.3; clusterpulse.v0.2.1 via clusterpulse.v0.2.3; clusterpulse.v0.2.2 via clusterpulse.v0.2.3.',
    );
    expect(e.summary[0]).toBe(
      'clusterpulse.v0.2.3 (0.2.3) is in package clusterpulse, channel fast-v0; the default channel is fast-v1.',
    );
  });

  it('the head both OLMs reach, and where classic stops short of it', async () => {
    const e = await explain(REPO_V421, 'clusterpulse.v0.3.0');
    expect(await checkAgainstGraph(REPO_V421, e)).toBe(5);
    const from = Object.fromEntries(e.channels[0]!.from.map((f) => [f.installed, f]));
    expect(from['clusterpulse.v0.2.3']!.classic).toEqual({
      path: ['clusterpulse.v0.3.0'],
      reaches: true,
      why: null,
    });
    expect(from['clusterpulse.v0.1.1']!.classic.why).toBe(
      'classic OLM stops at clusterpulse.v0.1.1: no entry on the chain replaces or skips it, and no skipRange covers 0.1.1',
    );
    expect(from['clusterpulse.v0.1.1']!.v1.path).toEqual(['clusterpulse.v0.2.3', 'clusterpulse.v0.3.0']);
    expect(e.summary).toContain('New install, classic OLM: a Subscription to channel fast-v0 gets it.');
  });

  it('another candidate ranked higher, under each OLM (jumpstarter-operator, replaces + skipRange)', async () => {
    const e = await explain(REPO_V421, 'jumpstarter-operator.v0.8.1-rc.1');
    expect(await checkAgainstGraph(REPO_V421, e)).toBe(5);
    const from = e.channels[0]!.from.find((f) => f.installed === 'jumpstarter-operator.v0.8.0')!;
    expect(from.classic.path[0]).toBe('jumpstarter-operator.v0.8.1');
    expect(from.classic.why).toBe(
      'from jumpstarter-operator.v0.8.0, classic OLM could take jumpstarter-operator.v0.8.1-rc.1 but takes jumpstarter-operator.v0.8.1, the candidate nearest the channel head (candidates: jumpstarter-operator.v0.8.1, jumpstarter-operator.v0.8.1-rc.1)',
    );
    expect(from.v1.why).toBe(
      'from jumpstarter-operator.v0.8.0, OLM v1 ranks jumpstarter-operator.v0.8.1 above jumpstarter-operator.v0.8.1-rc.1 (non-deprecated first, then the highest version; successors: jumpstarter-operator.v0.8.1, jumpstarter-operator.v0.8.1-rc.1)',
    );
  });

  it('--from a version the catalog lacks, outside the skipRange, checked with graph --installed', async () => {
    const e = await explain(REPO_V421, 'jumpstarter-operator.v0.9.0-rc.1', '--from', 'v0.7.9');
    expect(await checkAgainstGraph(REPO_V421, e)).toBe(1);
    const [from] = e.channels[0]!.from;
    expect(from).toMatchObject({
      installed: 'jumpstarter-operator.v0.7.9',
      version: '0.7.9',
      inCatalog: false,
    });
    expect(from!.classic.why).toBe(
      'classic OLM stops at jumpstarter-operator.v0.7.9: no entry on the chain replaces or skips it, and no skipRange covers 0.7.9; 0.7.9 is outside jumpstarter-operator.v0.9.0-rc.1\'s skipRange ">=0.8.1 <0.9.0-rc.1"',
    );
    expect(from!.v1.why).toMatch(
      /^OLM v1 stops at jumpstarter-operator\.v0\.7\.9: .* outside jumpstarter-operator\.v0\.9\.0-rc\.1's skipRange/,
    );
    // From an installed version in the catalog, classic reaches it after skipping rc.1.
    const e2 = await explain(REPO_V421, 'jumpstarter-operator.v0.9.0-rc.1', '--from', '0.8.0');
    expect(await checkAgainstGraph(REPO_V421, e2)).toBe(1);
    expect(e2.channels[0]!.from[0]!.classic.path.slice(0, 2)).toEqual([
      'jumpstarter-operator.v0.8.1',
      'jumpstarter-operator.v0.9.0-rc.1',
    ]);
    expect(e2.channels[0]!.from[0]!.classic.reaches).toBe(true);
  });

  it('a deprecated successor: OLM v1 keeps the installed bundle, classic still upgrades', async () => {
    // The real clusterpulse catalog plus an olm.deprecations entry for its fast-v0 head.
    const root = writeTree({
      'clusterpulse/catalog.yaml': readFileSync(join(REPO_V421, 'clusterpulse/catalog.yaml'), 'utf8'),
      'clusterpulse/deprecations.yaml': [
        'schema: olm.deprecations',
        'package: clusterpulse',
        'entries:',
        '- reference: {schema: olm.bundle, name: clusterpulse.v0.3.0}',
        '  message: use fast-v1',
        '',
      ].join('\n'),
    });
    dirs.push(root);
    const e = await explain(root, 'clusterpulse.v0.3.0', '--from', '0.2.3');
    expect(await checkAgainstGraph(root, e)).toBe(1);
    expect(e.bundleDeprecated).toBe('use fast-v1');
    const [from] = e.channels[0]!.from;
    expect(from!.classic).toEqual({ path: ['clusterpulse.v0.3.0'], reaches: true, why: null });
    expect(from!.v1).toEqual({
      path: [],
      reaches: false,
      why: 'OLM v1 keeps clusterpulse.v0.2.3: it ranks above its successor clusterpulse.v0.3.0 (clusterpulse.v0.3.0 is deprecated, and OLM v1 ranks deprecated bundles last)',
    });
    expect(e.channels[0]!.freshInstall.v1).toBe('clusterpulse.v0.2.3');
  });

  it('dependencies nothing in the catalog meets, and long paths (rabbitmq-messaging-topology-operator)', async () => {
    const R = 'rabbitmq-messaging-topology-operator';
    const e = await explain(REPO_V421, `${R}.v1.17.4`);
    expect(await checkAgainstGraph(REPO_V421, e)).toBe(11);
    expect(e.declaresDependencies).toBe(true);
    expect(e.unmetDependencies).toEqual([
      {
        requirement: 'API RabbitmqCluster v1beta1 (rabbitmq.com)',
        why: 'no bundle in this catalog provides a RabbitmqCluster API at all',
      },
      {
        requirement: 'package rabbitmq-cluster-operator in range >2.0.0',
        why: 'no bundle of package "rabbitmq-cluster-operator" is in this catalog',
      },
    ]);
    expect(e.summary).toContain(
      'It declares dependencies, which OLM v1 does not resolve: v1 fails on it instead of picking another bundle.',
    );
    const classic = e.summary.find((l) => l.startsWith('Classic OLM, channel stable: reached from '))!;
    expect(classic).toContain(
      `reached from ${R}.v1.12.1 via ${R}.v1.12.2 -> ${R}.v1.13.0 -> … (4 more) -> ${R}.v1.17.4; `,
    );
    expect(e.summary).toContain(
      `OLM v1, channel stable: not from ${R}.v1.18.1, ${R}.v1.18.2, ${R}.v1.19.2, ${R}.v1.19.3: already newer than ${R}.v1.17.4 (1.17.4).`,
    );
  });

  it('text output is the summary and a Mermaid path', async () => {
    const r = await cli(['explain', 'clusterpulse.v0.2.3', '--catalog', REPO_V421]);
    expect(r.code).toBe(0);
    const id = (n: string): string => 'n' + Buffer.from(n).toString('hex');
    expect(r.out).toContain('```mermaid\nflowchart LR\n');
    expect(r.out).toContain(`  ${id('clusterpulse.v0.1.1')} -.->|v1 fast-v0| ${id('clusterpulse.v0.2.3')}\n`);
    expect(r.out).not.toContain('-->|classic');
  });

  it('names from the catalog cannot break out of the Mermaid label or a Markdown fence', () => {
    const hostile = 'evil.v1"]\n```\n<img src=x>';
    const diagram = explainMermaid({
      bundle: hostile,
      channels: [
        {
          channel: 'stable',
          from: [
            {
              installed: 'evil.v0',
              version: '0.0.0',
              inCatalog: true,
              classic: { path: [hostile], reaches: true, why: null },
              v1: { path: [], reaches: false, why: 'x' },
            },
          ],
        },
      ],
    } as unknown as Explanation);
    expect(diagram).not.toContain('```');
    expect(diagram).not.toContain('<img');
    expect(diagram.split('\n').filter((l) => l.includes('["'))).toEqual([
      `  n${Buffer.from(hostile).toString('hex')}["evil.v1#34;#93;#10;#96;#96;#96;#10;#60;img#32;src#61;x#62;"]:::target`,
      '  n6576696c2e7630["evil.v0"]',
    ]);
  });

  it('bad input: a clear message, exit 2', async () => {
    const unknown = await cli(['explain', 'clusterpulse.v9.9.9', '--catalog', REPO_V421]);
    expect(unknown.code).toBe(2);
    expect(unknown.err).toMatch(
      /^catalog-bot explain: no bundle "clusterpulse\.v9\.9\.9" in this catalog; package clusterpulse has: clusterpulse\.v0\.1\.1, /,
    );
    const pkg = await cli(['explain', 'clusterpulse', '--catalog', REPO_V421]);
    expect(pkg.code).toBe(2);
    expect(pkg.err).toMatch(
      /"clusterpulse" is a package, not a bundle; name one of its bundles: clusterpulse\.v0\.1\.1/,
    );
    const none = await cli(['explain', 'nothing.v1', '--catalog', REPO_V421]);
    expect(none.err).toContain('no package it could belong to (packages: clusterpulse, dotvirt-operator,');
    expect(
      (await cli(['explain', 'clusterpulse.v0.2.3', '--catalog', REPO_V421, '--from', 'x.y'])).code,
    ).toBe(2);
    expect(
      (await cli(['explain', 'clusterpulse.v0.2.3', '--catalog', join(REPO_V421, 'missing')])).code,
    ).toBe(2);
    expect((await cli(['explain', 'a', 'b', '--catalog', REPO_V421])).code).toBe(2);
  });
});

describe('catalog-bot explain on a long channel', () => {
  it(`explains from the ${MAX_STARTS} entries nearest the bundle, each hop asked once: 1,000 entries in seconds, not a minute`, async () => {
    const root = writeTree({ 'long/catalog.json': longChannelJson('long', 1000) });
    dirs.push(root);
    const started = performance.now();
    const e = await explain(root, 'long.v1.5.0');
    const [c] = e.channels;
    // The nearest below it (those above are newer: already past it).
    const installed = c!.from.map((f) => f.installed);
    expect(installed[0]).toBe('long.v1.4.0');
    expect(installed.at(-1)).toBe('long.v1.4.99');
    // Every path still runs to the channel head, as the engines walk it.
    const fromBelow = c!.from[0]!;
    expect(fromBelow.classic.path).toHaveLength(999 - 400);
    expect(fromBelow.v1.path.at(-1)).toBe('long.v1.9.99');
    expect(e.summary.at(-1)).toBe(
      `Channel stable: explained from the ${MAX_STARTS} entries nearest the bundle; ${999 - MAX_STARTS} more are not (ask from one of them with a version).`,
    );
    expect(performance.now() - started).toBeLessThan(15_000);
  }, 60_000);
});
