// `catalog-bot release` on bad input: the real oddities of community-operators-prod (a
// package-level release-config.yaml, a bundle under `bundle/manifests`) and broken bundle
// pull requests each get a refusal that says what to do (exit 1), with nothing written;
// usage and I/O problems exit 2.
import { spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { DirectorySource, validateCatalog } from '../src/catalog/index.js';
import { HISTORY, REAL_REPO } from './helpers/ocp-history.js';
import { tempTrees } from './helpers/oracle.js';
import { runCommand } from './helpers/cli.js';

const trees = tempTrees();

function copyPackage(pkg: string, into = trees.dir()): string {
  cpSync(join(REAL_REPO, 'operators', pkg), join(into, 'operators', pkg), { recursive: true });
  for (const v of readdirSync(join(REAL_REPO, 'catalogs'))) {
    const from = join(REAL_REPO, 'catalogs', v, pkg);
    if (existsSync(from)) cpSync(from, join(into, 'catalogs', v, pkg), { recursive: true });
  }
  return into;
}

/** Every file of a tree with its bytes, to show that nothing was written. */
function snapshot(dir: string, rel = '', out = new Map<string, string>()): Map<string, string> {
  for (const name of readdirSync(join(dir, rel))) {
    const p = rel ? `${rel}/${name}` : name;
    if (statSync(join(dir, p)).isDirectory()) snapshot(dir, p, out);
    else out.set(p, readFileSync(join(dir, p), 'latin1'));
  }
  return out;
}

async function release(args: string[]): Promise<{ code: number; output: string }> {
  const { code, out } = await runCommand('release', args);
  return { code, output: out };
}

/** Run a release that must be refused; the tree must be left as it was. */
async function refused(dir: string, bundle: string): Promise<{ error: string; file: string | null }> {
  const before = snapshot(dir);
  const { code, output } = await release([bundle, '--repo', dir, '--format', 'json']);
  expect(code, output).toBe(1);
  expect(snapshot(dir)).toEqual(before);
  const parsed = JSON.parse(output) as { released: boolean; error: string; file: string | null };
  expect(parsed.released).toBe(false);
  return parsed;
}

describe('catalog-bot release refuses what it cannot release', () => {
  // jumpstarter-operator just before its 0.9.0 release: a releasable bundle to break.
  let jumpstarter: string;
  beforeAll(() => {
    jumpstarter = copyPackage('jumpstarter-operator');
    for (const p of ['catalog', 'template'])
      spawnSync('git', ['apply', '-R', join(HISTORY, `jumpstarter-operator-0.9.0-${p}.patch`)], {
        cwd: jumpstarter,
      });
  });
  const fresh = (): string => {
    const dir = trees.dir();
    cpSync(jumpstarter, dir, { recursive: true });
    return dir;
  };
  const BUNDLE = 'operators/jumpstarter-operator/0.9.0';

  it('a package-level release-config.yaml (ecr-secret-operator): says to move it into the bundle', async () => {
    const dir = copyPackage('ecr-secret-operator');
    const { error, file } = await refused(dir, 'operators/ecr-secret-operator/0.6.0');
    expect(file).toBe('operators/ecr-secret-operator/release-config.yaml');
    expect(error).toContain('sits at the package level');
    expect(error).toContain('Move it to operators/ecr-secret-operator/0.6.0/release-config.yaml');
  });

  it('a bundle under bundle/manifests (rabbitmq 1.18.3): says how to move it', async () => {
    const dir = copyPackage('rabbitmq-messaging-topology-operator');
    const { error } = await refused(dir, 'operators/rabbitmq-messaging-topology-operator/1.18.3');
    expect(error).toContain('under operators/rabbitmq-messaging-topology-operator/1.18.3/bundle/manifests');
    expect(error).toContain(
      'git mv operators/rabbitmq-messaging-topology-operator/1.18.3/bundle/manifests operators/rabbitmq-messaging-topology-operator/1.18.3/bundle/metadata operators/rabbitmq-messaging-topology-operator/1.18.3/',
    );
  });

  it('a bundle already released (in the template and its catalogs): nothing to write, exit 0', async () => {
    // As the release bot does: an entry already in the template is left, the catalogs rendered.
    const dir = copyPackage('jumpstarter-operator');
    const before = snapshot(dir);
    const { code, output } = await release([BUNDLE, '--repo', dir, '--format', 'json']);
    expect(code, output).toBe(0);
    expect((JSON.parse(output) as { files: unknown[] }).files).toEqual([]);
    expect(snapshot(dir)).toEqual(before);
  });

  it('a channel the template lacks', async () => {
    const dir = fresh();
    const config = join(dir, BUNDLE, 'release-config.yaml');
    writeFileSync(config, readFileSync(config, 'utf8').replace('[alpha]', '[beta]'));
    const { error } = await refused(dir, BUNDLE);
    expect(error).toContain('has no channel "beta" of package jumpstarter-operator (it has: alpha)');
  });

  it('a template that ci.yaml does not map, naming the line of release-config.yaml', async () => {
    const dir = fresh();
    const config = join(dir, BUNDLE, 'release-config.yaml');
    writeFileSync(config, readFileSync(config, 'utf8').replace('basic.yaml', 'stable.yaml'));
    const { error, file } = await refused(dir, BUNDLE);
    expect(file).toBe(`${BUNDLE}/release-config.yaml`);
    expect(error).toMatch(/release-config\.yaml:\d+: template stable\.yaml is not in .*ci\.yaml/);
    expect(error).toContain('(basic.yaml)');
  });

  it('a malformed CSV: opm reason', async () => {
    const dir = fresh();
    const manifests = join(dir, BUNDLE, 'manifests');
    const csv = readdirSync(manifests).find((f) => f.includes('clusterserviceversion'))!;
    writeFileSync(join(manifests, csv), 'apiVersion: operators.coreos.com/v1alpha1\nkind: Deployment\n');
    const { error } = await refused(dir, BUNDLE);
    expect(error).toContain('cannot be rendered as opm renders it: no csv in bundle');
  });

  it('a missing annotations.yaml', async () => {
    const dir = fresh();
    unlinkSync(join(dir, BUNDLE, 'metadata', 'annotations.yaml'));
    const { error } = await refused(dir, BUNDLE);
    expect(error).toBe(
      'operators/jumpstarter-operator/0.9.0 is not a bundle: it has no operators/jumpstarter-operator/0.9.0/metadata/annotations.yaml',
    );
  });

  it('annotations naming another package', async () => {
    const dir = fresh();
    const path = join(dir, BUNDLE, 'metadata', 'annotations.yaml');
    writeFileSync(
      path,
      readFileSync(path, 'utf8').replace(
        'package.v1: jumpstarter-operator',
        'package.v1: someone-elses-operator',
      ),
    );
    const { error } = await refused(dir, BUNDLE);
    expect(error).toContain('names package "someone-elses-operator"');
  });

  it('a release-config.yaml that is not YAML, or lacks catalog_templates', async () => {
    const dir = fresh();
    const config = join(dir, BUNDLE, 'release-config.yaml');
    writeFileSync(config, 'catalog_templates: [\n');
    expect((await refused(dir, BUNDLE)).error).toContain('release-config.yaml is not valid YAML');
    writeFileSync(config, 'templates: []\n');
    expect((await refused(dir, BUNDLE)).error).toContain('has no catalog_templates list');
    writeFileSync(config, 'catalog_templates:\n- template_name: basic.yaml\n  channels: []\n');
    expect((await refused(dir, BUNDLE)).error).toMatch(/release-config\.yaml:2: channels must be/);
    writeFileSync(config, `# ${'x'.repeat(70_000)}\n`);
    expect((await refused(dir, BUNDLE)).error).toContain('release-config.yaml is larger than 64 KiB');
  });

  it('a directory that is not where bundles live, or a path out of the repository', async () => {
    const dir = fresh();
    expect((await refused(dir, 'operators/jumpstarter-operator')).error).toContain(
      'is not where bundles live in this repository (operators/{package}/{version}',
    );
    expect((await refused(dir, 'operators/jumpstarter-operator/9.9.9')).error).toContain(
      'is not a directory of the repository',
    );
    expect((await refused(dir, 'operators/../../etc')).error).toContain('cannot name a parent');
  });

  it('does not follow a symbolic link out of the repository', async () => {
    const dir = fresh();
    const outside = trees.dir();
    cpSync(join(dir, BUNDLE), join(outside, 'bundle'), { recursive: true });
    rmSync(join(dir, BUNDLE, 'manifests'), { recursive: true });
    symlinkSync(join(outside, 'bundle', 'manifests'), join(dir, BUNDLE, 'manifests'));
    expect((await refused(dir, BUNDLE)).error).toContain(
      'is not a bundle: it has no operators/jumpstarter-operator/0.9.0/manifests/',
    );
  });

  it('usage and I/O errors exit 2', async () => {
    expect((await release([])).code).toBe(2);
    expect((await release(['a', 'b'])).code).toBe(2);
    expect((await release(['x', '--format', 'xml'])).code).toBe(2);
    expect((await release(['x', '--repo', '/nonexistent/repo'])).code).toBe(2);
  });

  it('prints what it did in text form and exits 0', async () => {
    const dir = fresh();
    const { code, output } = await release([BUNDLE, '--repo', dir]);
    expect(code, output).toBe(0);
    expect(output).toContain(
      'added jumpstarter-operator.v0.9.0 to "alpha" of operators/jumpstarter-operator/catalog-templates/basic.yaml',
    );
    expect(output).toContain('wrote catalogs/v4.18/jumpstarter-operator/catalog.yaml (+214 -0)');
    expect(output).toMatch(
      /released jumpstarter-operator\.v0\.9\.0 \(quay\.io\/community-operator-pipeline-prod\/jumpstarter-operator:0\.9\.0\): 6 file\(s\) written\n$/,
    );
  });
});

describe('catalog-bot release with another layout', () => {
  it('follows bundles.path and bundles.imageTemplate, edits a JSON template, creates a catalog', async () => {
    const dir = trees.dir();
    const from = join(REAL_REPO, 'operators', 'jumpstarter-operator');
    for (const v of ['0.9.0-rc.2', '0.9.0'])
      cpSync(join(from, v), join(dir, 'bundles', 'jumpstarter-operator', v), { recursive: true });
    const write = (path: string, text: string): void => {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), text);
    };
    write(
      '.github/catalog-bot.yml',
      'bundles:\n  path: bundles/{package}/{version}\n  imageTemplate: "registry.example.com/{package}-bundle:v{version}"\n',
    );
    write(
      'bundles/jumpstarter-operator/ci.yaml',
      'fbc:\n  enabled: true\n  catalog_mapping:\n  - template_name: basic.json\n    type: olm.template.basic\n    catalog_names: [v4.20]\n',
    );
    const template = {
      schema: 'olm.template.basic',
      entries: [
        { schema: 'olm.package', name: 'jumpstarter-operator', defaultChannel: 'alpha' },
        {
          schema: 'olm.channel',
          package: 'jumpstarter-operator',
          name: 'alpha',
          entries: [{ name: 'jumpstarter-operator.v0.9.0-rc.2' }],
        },
        { schema: 'olm.bundle', image: 'registry.example.com/jumpstarter-operator-bundle:v0.9.0-rc.2' },
      ],
    };
    write(
      'bundles/jumpstarter-operator/catalog-templates/basic.json',
      JSON.stringify(template, null, 2) + '\n',
    );
    const config = 'bundles/jumpstarter-operator/0.9.0/release-config.yaml';
    write(config, readFileSync(join(dir, config), 'utf8').replace('basic.yaml', 'basic.json'));

    const { code, output } = await release([
      'bundles/jumpstarter-operator/0.9.0',
      '--repo',
      dir,
      '--format',
      'json',
    ]);
    expect(code, output).toBe(0);
    const result = JSON.parse(output) as { image: string; files: { path: string; status: string }[] };
    expect(result.image).toBe('registry.example.com/jumpstarter-operator-bundle:v0.9.0');
    expect(result.files).toEqual([
      expect.objectContaining({
        path: 'bundles/jumpstarter-operator/catalog-templates/basic.json',
        status: 'modified',
      }),
      expect.objectContaining({
        path: 'catalogs/v4.20/jumpstarter-operator/catalog.yaml',
        status: 'created',
      }),
    ]);
    const edited = JSON.parse(
      readFileSync(join(dir, 'bundles/jumpstarter-operator/catalog-templates/basic.json'), 'utf8'),
    ) as typeof template;
    expect(edited.entries[1]!.entries!.at(-1)).toEqual({
      name: 'jumpstarter-operator.v0.9.0',
      replaces: 'jumpstarter-operator.v0.9.0-rc.2',
      skipRange: '>=0.9.0-rc.2 <0.9.0',
    });
    expect(edited.entries.at(-1)).toEqual({
      schema: 'olm.bundle',
      image: 'registry.example.com/jumpstarter-operator-bundle:v0.9.0',
    });
    // The new catalog holds both bundles (the older one from its directory), migrated
    // to olm.csv.metadata (v4.20 is after bundles.renderer.csvMetadataFrom), and is valid.
    const root = join(dir, 'catalogs', 'v4.20');
    const report = await validateCatalog(new DirectorySource(root));
    expect(report.diagnostics.filter((d) => d.level === 'error')).toEqual([]);
    const catalog = readFileSync(join(root, 'jumpstarter-operator', 'catalog.yaml'), 'utf8');
    expect(catalog).toContain('image: registry.example.com/jumpstarter-operator-bundle:v0.9.0-rc.2\n');
    expect(catalog).toContain('image: registry.example.com/jumpstarter-operator-bundle:v0.9.0\n');
    expect(catalog).toContain('type: olm.csv.metadata');
    expect(catalog).not.toContain('type: olm.bundle.object');
  });
});
