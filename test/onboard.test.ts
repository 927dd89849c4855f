// The old bundle index emulated (replaces-mode and semver-mode rules on small packages), and
// `catalog-bot onboard` as a maintainer runs it on a real repository: the JSON report, the
// files it writes (templates that opm renders to the written catalogs, ci.yaml with its
// comments), --dry-run, and every refusal leaving the tree as it was.
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { legacyIndexGraph, type LegacyBundle } from '../src/catalog/legacy/index-graph.js';
import { parseOpenShiftVersions } from '../src/catalog/legacy/openshift-versions.js';
import { parseVersion } from '../src/catalog/versions/semver.js';
import { runCommand } from './helpers/cli.js';
import { ocpCatalogs } from './helpers/ocp-history.js';
import { haveOpm, OPM } from './helpers/oracle.js';
import { ONBOARDING } from './helpers/onboarding-cases.js';

function bundle(
  name: string,
  version: string,
  channels: string[],
  extra: Partial<LegacyBundle> = {},
): LegacyBundle {
  return {
    name,
    version: parseVersion(version),
    channels,
    defaultChannel: '',
    replaces: '',
    skips: [],
    skipRange: '',
    openshift: { kind: 'all' },
    maxOpenShiftVersion: null,
    ...extra,
  };
}

/** The bundle index's graph of `bundles` in replaces-mode, for OpenShift v4.16. */
const replacesModeOn416 = (bundles: LegacyBundle[]) => legacyIndexGraph(bundles, 'replaces-mode', 'v4.16')!;

const entries = (g: ReturnType<typeof legacyIndexGraph>, channel: string): string[] =>
  (g?.channels.get(channel) ?? []).map(
    (e) => `${e.name}${e.replaces ? `<${e.replaces}` : ''}${e.skips ? ` skips ${e.skips.join(',')}` : ''}`,
  );

describe('the bundle index, emulated', () => {
  it('replaces-mode: a channel holds every bundle its head reaches by replaces, annotated there or not', () => {
    const g = replacesModeOn416([
      bundle('op.v1.0.0', '1.0.0', ['alpha'], { defaultChannel: 'alpha' }),
      bundle('op.v1.1.0', '1.1.0', ['alpha'], { replaces: 'op.v1.0.0' }),
      bundle('op.v2.0.0', '2.0.0', ['stable'], { replaces: 'op.v1.1.0', defaultChannel: 'stable' }),
    ]);
    expect(entries(g, 'alpha')).toEqual(['op.v1.0.0', 'op.v1.1.0<op.v1.0.0']);
    expect(entries(g, 'stable')).toEqual(['op.v1.0.0', 'op.v1.1.0<op.v1.0.0', 'op.v2.0.0<op.v1.1.0']);
    expect(g.defaultChannel).toBe('stable');
  });

  it('replaces-mode: a skipped bundle of the index is an entry (no edge of its own); a missing one only a skip', () => {
    const g = replacesModeOn416([
      bundle('op.v1.0.0', '1.0.0', ['stable']),
      bundle('op.v1.0.1', '1.0.1', ['candidate']),
      bundle('op.v1.1.0', '1.1.0', ['stable'], {
        replaces: 'op.v1.0.0',
        skips: ['op.v1.0.1', 'op.v0.9.0'],
        skipRange: '<1.1.0',
      }),
    ]);
    expect(entries(g, 'stable')).toEqual([
      'op.v1.0.0',
      'op.v1.0.1',
      'op.v1.1.0<op.v1.0.0 skips op.v1.0.1,op.v0.9.0',
    ]);
    expect(g.channels.get('stable')!.find((e) => e.name === 'op.v1.1.0')!.skipRange).toBe('<1.1.0');
    expect(entries(g, 'candidate')).toEqual(['op.v1.0.1']);
  });

  it('replaces-mode: the head is the highest version annotating the channel; the default the last annotation', () => {
    const g = replacesModeOn416([
      bundle('op.v1.0.0', '1.0.0', ['alpha', 'beta'], { defaultChannel: 'beta' }),
      bundle('op.v1.2.0', '1.2.0', ['alpha'], { replaces: 'op.v1.0.0' }),
      // A backport: lower than alpha's head, it heads nothing there.
      bundle('op.v1.1.0', '1.1.0', ['beta'], { replaces: 'op.v1.0.0', defaultChannel: 'alpha' }),
    ]);
    expect(entries(g, 'alpha')).toEqual(['op.v1.0.0', 'op.v1.2.0<op.v1.0.0']);
    expect(entries(g, 'beta')).toEqual(['op.v1.0.0', 'op.v1.1.0<op.v1.0.0']);
    // v1.1.0 came after v1.2.0 in version order? No: version order is 1.0.0, 1.1.0, 1.2.0,
    // and 1.2.0 carries no default annotation, so 1.1.0's "alpha" stands.
    expect(g.defaultChannel).toBe('alpha');
  });

  it('a single channel is the default without an annotation; OpenShift ranges and maxOpenShiftVersion pick the bundles', () => {
    const range = (s: string): LegacyBundle['openshift'] => {
      const r = parseOpenShiftVersions(s);
      if (!r.ok) throw new Error(r.error);
      return r.range;
    };
    const all = [
      bundle('op.v1.0.0', '1.0.0', ['stable'], { openshift: range('v4.12-v4.13') }),
      bundle('op.v1.1.0', '1.1.0', ['stable'], { replaces: 'op.v1.0.0', openshift: range('v4.12') }),
      bundle('op.v1.2.0', '1.2.0', ['stable'], {
        replaces: 'op.v1.1.0',
        maxOpenShiftVersion: { major: 4, minor: 14 },
      }),
      bundle('op.v1.3.0', '1.3.0', ['stable'], { replaces: 'op.v1.1.0', openshift: range('=v4.15') }),
    ];
    const at = (v: string): string[] => entries(legacyIndexGraph(all, 'replaces-mode', v), 'stable');
    expect(at('v4.13')).toEqual(['op.v1.0.0', 'op.v1.1.0<op.v1.0.0', 'op.v1.2.0<op.v1.1.0']);
    // v1.0.0 is not in v4.14's index; v1.1.0 still replaces it there.
    expect(at('v4.14')).toEqual(['op.v1.1.0<op.v1.0.0', 'op.v1.2.0<op.v1.1.0']);
    expect(at('v4.15')).toEqual(['op.v1.1.0<op.v1.0.0', 'op.v1.3.0<op.v1.1.0']);
    expect(at('v4.16')).toEqual(['op.v1.1.0<op.v1.0.0']);
    expect(legacyIndexGraph(all, 'replaces-mode', 'v4.16')!.defaultChannel).toBe('stable');
    expect(legacyIndexGraph(all.slice(0, 1), 'replaces-mode', 'v4.14')).toBeUndefined();
  });

  it('semver-mode: each channel is its annotated bundles in version order, CSV replaces and skips ignored', () => {
    const g = legacyIndexGraph(
      [
        bundle('op.v0.10.0', '0.10.0', ['fast'], { replaces: 'op.v0.1.0', skips: ['op.v0.9.0'] }),
        bundle('op.v0.9.0', '0.9.0', ['fast', 'candidate'], { defaultChannel: 'candidate' }),
        bundle('op.v0.1.0', '0.1.0', ['fast'], { skipRange: '<0.1.0' }),
      ],
      'semver-mode',
      'v4.16',
    )!;
    expect(entries(g, 'fast')).toEqual(['op.v0.1.0', 'op.v0.10.0<op.v0.9.0', 'op.v0.9.0<op.v0.1.0']);
    expect(entries(g, 'candidate')).toEqual(['op.v0.9.0']);
    expect(g.channels.get('fast')!.find((e) => e.name === 'op.v0.1.0')!.skipRange).toBe('<0.1.0');
    expect(g.defaultChannel).toBe('candidate');
  });

  it('com.redhat.openshift.versions: the forms the catalog service takes, and a clear error for others', () => {
    const ok = (s: string): string => JSON.stringify(parseOpenShiftVersions(s));
    expect(ok('v4.12')).toContain('"from"');
    expect(ok('"4.12"'.replaceAll('"', ''))).toContain('"from"');
    expect(ok('=v4.14')).toContain('"only"');
    expect(ok('v4.12-v4.15')).toContain('"between"');
    expect(ok('v4.6,v4.5')).toContain('"minor":5');
    const bad = parseOpenShiftVersions('v4.6,v4.8');
    expect(bad.ok).toBe(false);
    expect(!bad.ok && bad.error).toMatch(/comma list/);
    expect(parseOpenShiftVersions('v4.15-v4.12').ok).toBe(false);
    expect(parseOpenShiftVersions('latest').ok).toBe(false);
  });
});

// ---- the command, on a real repository

const temps: string[] = [];
afterAll(() => {
  for (const t of temps) rmSync(t, { recursive: true, force: true });
});

const git = (cwd: string, ...args: string[]): string =>
  execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

/** A git repository holding a case's `before/`, the layout of community-operators-prod. */
function caseRepo(name: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'onboard-'));
  temps.push(dir);
  cpSync(join(ONBOARDING, name, 'before'), dir, { recursive: true });
  mkdirSync(join(dir, '.github'));
  writeFileSync(
    join(dir, '.github', 'catalog-bot.yml'),
    'catalogs: [catalogs/*]\nbundles:\n  renderer:\n    opmVersion: v1.46.0\n    csvMetadataFrom: v4.17\n',
  );
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'add', '-A');
  git(dir, '-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-qm', 'before');
  return dir;
}

const clean = (dir: string): string => git(dir, 'status', '--porcelain');
const IMAGES = (name: string): string => join(ONBOARDING, name, 'bundle-images.txt');

/** `catalog-bot onboard <name>` on `repo` with the case's recorded bundle images. */
const onboardCase = (name: string, repo: string, ...more: string[]) =>
  runCommand('onboard', [name, '--repo', repo, '--bundle-images', IMAGES(name), ...more]);

describe('catalog-bot onboard', () => {
  it('--dry-run reports the graph as JSON and writes nothing; then it writes templates, catalogs and ci.yaml', async () => {
    const repo = caseRepo('amd-gpu-operator');
    const dry = await onboardCase('amd-gpu-operator', repo, '--dry-run', '--format', 'json');
    expect(dry.err).toBe('');
    expect(dry.code).toBe(0);
    expect(clean(repo)).toBe('');
    const report = JSON.parse(dry.out);
    expect(report.package).toBe('amd-gpu-operator');
    expect(report.mode).toBe('replaces-mode');
    expect(Object.keys(report.catalogs)).toEqual(ocpCatalogs(12, 19));
    expect(report.catalogs['v4.19'].defaultChannel).toBe('alpha');
    expect(report.catalogs['v4.19'].channels.alpha.map((e: { name: string }) => e.name)).toEqual([
      'amd-gpu-operator.v0.0.1',
      'amd-gpu-operator.v0.0.2',
      'amd-gpu-operator.v0.0.3',
      'amd-gpu-operator.v0.0.4',
    ]);
    expect(report.catalogs['v4.19'].channels.alpha[3]).toEqual({
      name: 'amd-gpu-operator.v0.0.4',
      replaces: 'amd-gpu-operator.v0.0.3',
      skips: [],
      skipRange: null,
    });
    expect(report.written).toEqual([]);
    expect(report.differences).toEqual([]);

    const run = await onboardCase('amd-gpu-operator', repo, '--format', 'json');
    expect(run.code).toBe(0);
    const written: string[] = JSON.parse(run.out).written;
    // One template: every catalog has the same graph and images.
    expect(written).toContain('operators/amd-gpu-operator/catalog-templates/basic.yaml');
    expect(written.filter((p) => p.endsWith('/catalog.yaml'))).toHaveLength(8);
    const status = clean(repo);
    expect(status).toContain(' M operators/amd-gpu-operator/ci.yaml');
    expect(status).toContain('?? catalogs/v4.12/amd-gpu-operator/');
    // ci.yaml: updateGraph and its comment gone, fbc in, the rest byte for byte.
    const ci = readFileSync(join(repo, 'operators/amd-gpu-operator/ci.yaml'), 'utf8');
    expect(ci).not.toMatch(/updateGraph|replaces-mode/);
    expect(ci).toBe(
      [
        '---',
        'addReviewers: true',
        'fbc:',
        '  enabled: true',
        '  catalog_mapping:',
        '    - template_name: basic.yaml',
        '      type: olm.template.basic',
        '      catalog_names:',
        ...['v4.12', 'v4.13', 'v4.14', 'v4.15', 'v4.16', 'v4.17', 'v4.18', 'v4.19'].map(
          (v) => `        - ${v}`,
        ),
        'reviewers:',
        '  - yevgeny-shnaidman',
        '',
      ].join('\n'),
    );
    expect(ci).toMatch(/template_name: basic.yaml/);
    // The repository's checks accept the result.
    const validate = await runCommand('validate', [
      join(repo, 'catalogs/v4.12'),
      join(repo, 'catalogs/v4.19'),
    ]);
    expect(validate.code, validate.out + validate.err).toBe(0);
  }, 60_000);

  it.skipIf(!haveOpm)(
    'opm validates the written catalogs, with bundle objects (v4.16) and CSV metadata (v4.17)',
    async () => {
      const repo = caseRepo('amd-gpu-operator');
      const run = await onboardCase('amd-gpu-operator', repo);
      expect(run.code).toBe(0);
      const opm = spawnSync(OPM, ['validate', join(repo, 'catalogs/v4.16')], { encoding: 'utf8' });
      expect(opm.status, opm.stderr).toBe(0);
      const opm17 = spawnSync(OPM, ['validate', join(repo, 'catalogs/v4.17')], { encoding: 'utf8' });
      expect(opm17.status, opm17.stderr).toBe(0);
    },
    60_000,
  );

  describe('refusals: exit 1, the reason, nothing written', () => {
    const refused = async (
      name: string,
      edit: (repo: string) => void,
      args: string[],
      reason: RegExp,
    ): Promise<void> => {
      const repo = caseRepo(name);
      edit(repo);
      git(repo, 'add', '-A');
      git(
        repo,
        '-c',
        'user.name=t',
        '-c',
        'user.email=t@example.com',
        'commit',
        '-qm',
        'edit',
        '--allow-empty',
      );
      const r = await runCommand('onboard', [...args, '--repo', repo]);
      expect(r.code, r.out + r.err).toBe(1);
      expect(r.err).toMatch(reason);
      expect(clean(repo)).toBe('');
    };
    const ci = (repo: string): string => join(repo, 'operators/amd-gpu-operator/ci.yaml');

    it('an unknown updateGraph value', () =>
      refused(
        'amd-gpu-operator',
        (repo) => writeFileSync(ci(repo), '---\nupdateGraph: fancy-mode\n'),
        ['amd-gpu-operator'],
        /updateGraph: "fancy-mode", which is none of replaces-mode, semver-mode/,
      ));
    it('a package already on FBC', () =>
      refused(
        'amd-gpu-operator',
        (repo) => writeFileSync(ci(repo), '---\nfbc:\n  enabled: true\n'),
        ['amd-gpu-operator'],
        /on file-based catalogs already/,
      ));
    it('a bundle directory without a CSV', () =>
      refused(
        'amd-gpu-operator',
        (repo) => rmSync(join(repo, 'operators/amd-gpu-operator/0.0.2/manifests'), { recursive: true }),
        ['amd-gpu-operator'],
        /operators\/amd-gpu-operator\/0\.0\.2 is not a bundle: it has no manifests/,
      ));
    it('a broken annotation', () =>
      refused(
        'amd-gpu-operator',
        (repo) => {
          const p = join(repo, 'operators/amd-gpu-operator/0.0.3/metadata/annotations.yaml');
          writeFileSync(p, `${readFileSync(p, 'utf8')}  com.redhat.openshift.versions: v4.6,v4.8\n`);
        },
        ['amd-gpu-operator'],
        /0\.0\.3\/metadata\/annotations\.yaml: com\.redhat\.openshift\.versions "v4\.6,v4\.8" is a comma list/,
      ));
    it('a --bundle-images file that misses a bundle', () => {
      const list = join(mkdtempSync(join(tmpdir(), 'onboard-images-')), 'images.txt');
      temps.push(list);
      writeFileSync(
        list,
        readFileSync(IMAGES('amd-gpu-operator'), 'utf8')
          .split('\n')
          .filter((l) => !l.startsWith('amd-gpu-operator.v0.0.3 '))
          .join('\n'),
      );
      return refused(
        'amd-gpu-operator',
        () => {},
        ['amd-gpu-operator', '--bundle-images', list],
        /--bundle-images has no line for amd-gpu-operator\.v0\.0\.3/,
      );
    });
    it('a package name that is a path', () =>
      refused('amd-gpu-operator', () => {}, ['../amd-gpu-operator'], /is not a package name/));
    it('a bundle directory that is a symbolic link out of the repository is not read', async () => {
      const outside = mkdtempSync(join(tmpdir(), 'onboard-outside-'));
      temps.push(outside);
      cpSync(
        join(ONBOARDING, 'amd-gpu-operator/before/operators/amd-gpu-operator/0.0.4'),
        join(outside, '0.0.5'),
        {
          recursive: true,
        },
      );
      await refused(
        'amd-gpu-operator',
        (repo) => {
          rmSync(join(repo, 'operators/amd-gpu-operator'), { recursive: true });
          mkdirSync(join(repo, 'operators/amd-gpu-operator'));
          writeFileSync(ci(repo), '---\nupdateGraph: replaces-mode\n');
          symlinkSync(join(outside, '0.0.5'), join(repo, 'operators/amd-gpu-operator/0.0.5'));
        },
        ['amd-gpu-operator'],
        /holds no bundle directory of amd-gpu-operator/,
      );
    });
  });
});
