// What a fresh install pulls in (`catalog-bot deps`): the chosen provider for each
// requirement in OLM's order of preference, and the command's formats and exit codes.
import { afterAll, describe, expect, it } from 'vitest';
import { depsMermaid, depsText, depsTree } from '../src/catalog/olm/deps-tree.js';
import { DirectorySource, validateCatalog } from '../src/catalog/index.js';
import { bundle, channel, olmPackageProp, pkg, yamlStream, type Obj } from './helpers/catalogs.js';
import { removeTree, writeTree } from './helpers/oracle.js';
import { runCommand } from './helpers/cli.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach(removeTree));

const gvk = (kind: string): Obj => ({
  type: 'olm.gvk',
  value: { group: 'example.com', version: 'v1', kind },
});
const gvkReq = (kind: string): Obj => ({
  type: 'olm.gvk.required',
  value: { group: 'example.com', version: 'v1', kind },
});
const b = (name: string, version: string, ...props: Obj[]): Obj =>
  bundle(version, { properties: [olmPackageProp(version, name), ...props] }, name);

/** One package, channel `stable` (default) chaining the bundles, or other channels given. */
function operator(
  name: string,
  bundles: Obj[],
  channels?: Record<string, string[]>,
  defaultChannel = 'stable',
) {
  const chans = channels ?? { [defaultChannel]: bundles.map((x) => x.name as string) };
  return [
    pkg(name, { defaultChannel }),
    ...Object.entries(chans).map(([ch, names]) =>
      channel(
        names.map((n, i) => (i === 0 ? { name: n } : { name: n, replaces: names[i - 1] })),
        { package: name, name: ch },
      ),
    ),
    ...bundles,
  ];
}

async function write(...packages: Obj[][]): Promise<string> {
  const files: Record<string, string> = {};
  for (const objs of packages) files[`${objs[0]!.name as string}/catalog.yaml`] = yamlStream(...objs);
  const dir = writeTree(files);
  dirs.push(dir);
  return dir;
}

async function tree(packageName: string, ...packages: Obj[][]) {
  const dir = await write(...packages);
  const report = await validateCatalog(new DirectorySource(dir));
  return depsTree(report.model, packageName);
}

describe('depsTree', () => {
  it('installs the default channel head and, per requirement, the most preferred provider', async () => {
    const t = await tree(
      'app',
      operator('app', [b('app', '0.9.0'), b('app', '1.0.0', gvkReq('X'), gvkReq('Y'))]),
      // alpha offers X only outside its default channel: zeta's default channel wins.
      operator('alpha', [b('alpha', '0.1.0'), b('alpha', '1.0.0', gvk('X'))], {
        stable: ['alpha.v0.1.0'],
        fast: ['alpha.v1.0.0'],
      }),
      operator('zeta', [b('zeta', '1.0.0', gvk('X')), b('zeta', '2.0.0', gvk('X'), gvk('Y'))]),
    );
    expect(t.error).toBeNull();
    expect(t.root!.bundle).toBe('app.v1.0.0');
    expect(t.root!.reason).toContain('the head of channel stable (the default channel)');
    const [x, y] = t.root!.requirements;
    expect(x).toMatchObject({ status: 'installed', alternatives: ['zeta.v1.0.0', 'alpha.v1.0.0'] });
    expect(x!.provider!.bundle).toBe('zeta.v2.0.0');
    expect(x!.provider!.reason).toContain(
      'the most preferred candidate: channel stable of zeta (its default channel)',
    );
    // zeta 2.0.0 also provides Y: one bundle per package, so it is reused.
    expect(y).toMatchObject({ status: 'shared', sharedWith: 'zeta.v2.0.0' });
    expect(t.installs.map((i) => i.bundle)).toEqual(['app.v1.0.0', 'zeta.v2.0.0']);
    expect(t.unsatisfied).toBe(0);
  });

  it('skips a preferred candidate that cannot be installed itself', async () => {
    const t = await tree(
      'app',
      operator('app', [b('app', '1.0.0', gvkReq('X'))]),
      operator('aaa', [b('aaa', '1.0.0', gvk('X'), gvkReq('Missing'))]),
      operator('bbb', [b('bbb', '1.0.0', gvk('X'))]),
    );
    const [x] = t.root!.requirements;
    expect(x!.provider!.bundle).toBe('bbb.v1.0.0');
    expect(x!.provider!.reason).toContain('candidate 2');
    expect(t.unsatisfied).toBe(0);
  });

  it('follows requirements of providers, and reports what cannot be met', async () => {
    const t = await tree(
      'app',
      operator('app', [b('app', '1.0.0', gvkReq('Db'), gvkReq('Nope'))]),
      operator('db', [b('db', '1.0.0', gvk('Db'), gvkReq('Storage'))]),
      operator('storage', [b('storage', '1.0.0', gvk('Storage'))]),
    );
    expect(t.installs.map((i) => i.bundle)).toEqual(['app.v1.0.0', 'db.v1.0.0', 'storage.v1.0.0']);
    expect(t.root!.requirements[0]!.provider!.requirements[0]!.provider!.bundle).toBe('storage.v1.0.0');
    expect(t.root!.requirements[1]).toMatchObject({ status: 'unsatisfied' });
    expect(t.unsatisfied).toBe(1);
    const text = depsText(t);
    expect(text).toContain('requires API Db v1 (example.com): db.v1.0.0 (db 1.0.0)');
    expect(text).toContain('    requires API Storage v1 (example.com): storage.v1.0.0');
    expect(text).toContain(
      'requires API Nope v1 (example.com): UNSATISFIED: no bundle in this catalog provides a Nope API',
    );
    const diagram = depsMermaid(t);
    expect(diagram).toMatch(/^graph TD\n/);
    expect(diagram).toContain('n0 -->|"API Db v1 (example.com)"| n1');
    expect(diagram).toContain('style x0 fill:#fdd');
  });

  it('names an unknown package or channel', async () => {
    const dir = await write(operator('app', [b('app', '1.0.0')]));
    const report = await validateCatalog(new DirectorySource(dir));
    expect(depsTree(report.model, 'nope').error).toBe('package "nope" is not in this catalog');
    expect(depsTree(report.model, 'app', { channel: 'fast' }).error).toContain(
      'has no channel "fast" (channels: stable)',
    );
    expect(depsTree(report.model, 'app').installs).toHaveLength(1);
  });
});

describe('catalog-bot deps', () => {
  const run = (...args: string[]) => runCommand('deps', args);

  it('exits 0 when every requirement is met, 1 when one is not, 2 on usage errors', async () => {
    const dir = await write(
      operator('app', [b('app', '1.0.0', gvkReq('X'), gvkReq('Cluster'))]),
      operator('prov', [b('prov', '1.0.0', gvk('X'))]),
    );
    const missing = await run(dir, 'app');
    expect(missing.code).toBe(1);
    expect(missing.out).toContain('UNSATISFIED');
    const ok = await run(dir, 'app', '--external-gvk', 'example.com/v1/Cluster', '--format', 'json');
    expect(ok.code).toBe(0);
    const json = JSON.parse(ok.out);
    expect(json.installs.map((i: { bundle: string }) => i.bundle)).toEqual(['app.v1.0.0', 'prov.v1.0.0']);
    expect(json.root.requirements[1].status).toBe('external');
    const mermaid = await run(dir, 'app', '--format', 'mermaid', '--external-gvk', 'example.com/v1/Cluster');
    expect(mermaid.out).toMatch(/^graph TD/);
    expect((await run(dir, 'nope')).code).toBe(2);
    expect((await run(dir)).err).toContain('deps needs a catalog root and a package name');
    expect((await run(dir, 'app', '--format', 'dot')).code).toBe(2);
    expect((await run(dir + '/absent', 'app')).code).toBe(2);
    expect((await run(dir, 'app', '--external-gvk', 'Cluster')).err).toContain('--external-gvk takes');
  });

  it('exits 1 when classic OLM cannot sort the channel (two heads)', async () => {
    const dir = await write([
      pkg('app'),
      channel(['app.v1.0.0', 'app.v2.0.0'], { package: 'app' }),
      b('app', '1.0.0'),
      b('app', '2.0.0'),
    ]);
    const r = await run(dir, 'app');
    expect(r.code).toBe(1);
    expect(r.out).toContain('classic OLM cannot install from channel "stable": a unique replacement chain');
  });
});
