// Issue 30, item 9 ("Installing it"): what `npm pack` ships runs as a CLI, the GitHub
// Action's entry point run with the environment GitHub Actions sets, and the README's
// environment table against what the code reads.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { haveRealRepo, makeCopRepo, type CopRepo } from './helpers/cop-repo.js';
import { webhookExample } from './helpers/github.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const at = (path: string) => join(root, path);
const dirs: string[] = [];
const temp = (prefix: string) => {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
};
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('npm pack', () => {
  const manifest = JSON.parse(readFileSync(at('package.json'), 'utf8'));
  let unpacked: string;
  let files: string[];

  // The tarball of this tree (built before the tests, as `npm pack` builds it through
  // prepack; the build takes minutes on a busy machine, so it is not run again here).
  beforeAll(() => {
    const out = temp('catalog-bot-pack-out-');
    const pack = spawnSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', out], {
      cwd: root,
      encoding: 'utf8',
    });
    expect(pack.status, pack.stderr).toBe(0);
    const json = JSON.parse(pack.stdout);
    files = json[0].files.map((f: { path: string }) => f.path);
    unpacked = temp('catalog-bot-pack-');
    spawnSync('tar', ['-xzf', join(out, json[0].filename), '-C', unpacked]);
    // The package's dependencies, as `npm install catalog-bot` would put them beside it.
    symlinkSync(at('node_modules'), join(unpacked, 'package', 'node_modules'));
  }, 30_000);

  it('builds before packing: prepack runs the build, whose output the package ships', () => {
    // A clean checkout has no dist/: without prepack the tarball had no CLI at all.
    expect(manifest.scripts.prepack).toMatch(/^npm run build\b/);
    expect(manifest.scripts.build).toMatch(/^tsc -p tsconfig\.build\.json/);
    const outDir =
      JSON.parse(readFileSync(at('tsconfig.build.json'), 'utf8')).compilerOptions?.outDir ?? 'dist';
    expect(manifest.files).toContain(outDir.replace(/^\.\//, ''));
    expect(manifest.bin['catalog-bot']).toBe('dist/cli.js');
  });

  it('ships the built CLI and server, and no sources, tests or deploy secrets', () => {
    expect(files).toEqual(expect.arrayContaining(['dist/cli.js', 'dist/server.js', 'package.json']));
    expect(files.filter((f) => /^(src|test|deploy|\.ci|\.github)\//.test(f))).toEqual([]);
    expect(files.filter((f) => /\.env|secret|\.pem$/i.test(f))).toEqual([]);
  });

  it("the packed package's bin answers --help and validates the example catalogs", () => {
    const bin = join(unpacked, 'package', manifest.bin['catalog-bot']);
    const help = spawnSync(process.execPath, [bin, '--help'], { encoding: 'utf8' });
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/validate/);
    const examples = at('examples/catalog-repo/base/catalogs');
    const valid = spawnSync(process.execPath, [bin, 'validate', `${examples}/v4.20/`, `${examples}/v4.21/`], {
      encoding: 'utf8',
    });
    expect(valid.stderr).toBe('');
    expect(valid.status).toBe(0);
    expect(valid.stdout.match(/^valid: /gm)).toHaveLength(2);
  });
});

describe('the GitHub Action (action.yml)', () => {
  const action = parse(readFileSync(at('action.yml'), 'utf8'));
  const entry = at('action/entry.mjs');

  it('is a composite action whose last step runs the entry point with every input as INPUT_*', () => {
    expect(action.runs.using).toBe('composite');
    const last = action.runs.steps.at(-1);
    expect(last.run).toContain('action/entry.mjs');
    for (const name of Object.keys(action.inputs))
      expect(last.env[`INPUT_${name.toUpperCase()}`]).toBe(`\${{ inputs.${name} }}`);
  });

  /** The entry point as GitHub Actions starts it: the workspace, the event file and the inputs. */
  const runAction = (workspace: string, inputs: Record<string, string>, eventPayload?: unknown) => {
    let eventPath = '';
    if (eventPayload) {
      eventPath = join(temp('catalog-bot-event-'), 'event.json');
      writeFileSync(eventPath, JSON.stringify(eventPayload));
    }
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      GITHUB_ACTIONS: 'true',
      GITHUB_WORKSPACE: workspace,
      GITHUB_EVENT_NAME: 'pull_request',
      GITHUB_EVENT_PATH: eventPath,
      GITHUB_BASE_REF: 'main',
      GITHUB_HEAD_REF: 'pr',
      ...Object.fromEntries(Object.entries(inputs).map(([k, v]) => [`INPUT_${k.toUpperCase()}`, v])),
    };
    return spawnSync(process.execPath, [entry], { cwd: tmpdir(), env, encoding: 'utf8' });
  };

  describe.skipIf(!haveRealRepo)('on a community-operators-prod repository', () => {
    let cop: CopRepo;
    let baseSha: string;
    beforeAll(() => {
      cop = makeCopRepo('clusterpulse/1.0.2');
      baseSha = cop.git('rev-parse', 'main');
      cop.branch('pr');
    }, 60_000);
    afterAll(() => cop?.cleanup());

    /** A pull_request.opened payload (webhooks-examples) for the bundle PR by `author`. */
    const event = (author: string) => {
      const payload = webhookExample('pull_request', 'opened');
      payload.pull_request.base.sha = baseSha;
      payload.pull_request.base.ref = 'main';
      payload.pull_request.head.sha = cop.git('rev-parse', 'pr');
      payload.pull_request.user.login = author;
      return payload;
    };

    it('check: the bundle PR by someone who owns nothing fails, with annotations on its files', () => {
      const run = runAction(cop.repo, { command: 'check' }, event('a-stranger'));
      expect(run.stderr).toBe('');
      expect(run.status).toBe(1);
      const lines = run.stdout.split('\n').filter(Boolean);
      expect(lines.length).toBeGreaterThan(0);
      // Nothing but workflow commands: GitHub turns each into an annotation.
      for (const line of lines) expect(line).toMatch(/^::(error|warning|notice) /);
      expect(run.stdout).toMatch(/^::error file=operators\/clusterpulse\/1\.0\.2\/[^,]+,/m);
    }, 30_000);
  });

  it('its own errors are one workflow command: a line break in an input cannot start another', () => {
    const run = runAction(temp('catalog-bot-action-'), {
      command: 'lint\n::add-mask::x\r\n::stop-commands::y',
    });
    expect(run.status).toBe(2);
    expect(run.stdout.split('\n').filter(Boolean)).toEqual([
      '::error::input command must be check or validate; got lint%0A::add-mask::x%0D%0A::stop-commands::y',
    ]);
  });

  it('validate: a broken catalog gets an error annotation on its file; a valid one none', () => {
    const workspace = temp('catalog-bot-action-');
    cpSync(at('examples/catalog-repo/base/catalogs'), join(workspace, 'catalogs'), { recursive: true });
    const good = runAction(workspace, { command: 'validate', paths: 'catalogs/*/' });
    expect(good.stderr).toBe('');
    expect(good.status).toBe(0);
    mkdirSync(join(workspace, 'catalogs', 'v4.99'));
    writeFileSync(
      join(workspace, 'catalogs', 'v4.99', 'catalog.yaml'),
      'schema: olm.channel\nname: stable\npackage: missing\nentries: []\n',
    );
    const bad = runAction(workspace, { command: 'validate', paths: 'catalogs/*/' });
    expect(bad.status).toBe(1);
    expect(bad.stdout).toMatch(/^::error file=catalogs\/v4\.99\/catalog\.yaml/m);
  });
});

describe('README and code agree on the environment', () => {
  /** Names the code reads: process.env.X, env.X and env['X'] (assignments are not reads). */
  function namesReadIn(dir: string): Set<string> {
    const names = new Set<string>();
    const list = spawnSync(
      'git',
      ['-C', root, 'ls-files', '--cached', '--others', '--exclude-standard', dir],
      {
        encoding: 'utf8',
      },
    ).stdout;
    for (const file of list.split('\n').filter((f) => f.endsWith('.ts'))) {
      const text = readFileSync(at(file), 'utf8');
      for (const m of text.matchAll(
        /\benv\??\.([A-Z][A-Z0-9_]+)\b(?!\s*=[^=])|\benv\[['"]([A-Z][A-Z0-9_]+)['"]\]/g,
      ))
        names.add((m[1] ?? m[2])!);
    }
    return names;
  }
  // Probot's own settings (read by Probot and its key loader, not by src/): from their
  // source, not a list kept here.
  const probotNames = new Set(
    [
      'node_modules/probot/lib/bin/read-env-options.js',
      'node_modules/@probot/get-private-key/dist-src/index.js',
    ].flatMap((file) =>
      [...readFileSync(at(file), 'utf8').matchAll(/env\.([A-Z][A-Z0-9_]+)/g)].map((m) => m[1]!),
    ),
  );
  /** Every backticked UPPER_CASE name in the first cell of a README table row. */
  const readmeNames = new Set<string>();
  for (const line of readFileSync(at('README.md'), 'utf8').split('\n')) {
    const cell = /^\s*\|([^|]+)\|/.exec(line)?.[1] ?? '';
    for (const m of cell.matchAll(/`([A-Z][A-Z0-9_]{2,})`/g)) readmeNames.add(m[1]!);
  }

  it('every environment variable read in src/ is in a README table', () => {
    const read = namesReadIn('src');
    expect(read.size).toBeGreaterThan(20);
    expect([...read].filter((n) => !readmeNames.has(n)).sort()).toEqual([]);
  });

  it('every variable in the README tables is read by src/ or by Probot', () => {
    const read = namesReadIn('src');
    expect(probotNames.has('WEBHOOK_SECRET')).toBe(true);
    expect([...readmeNames].filter((n) => !read.has(n) && !probotNames.has(n)).sort()).toEqual([]);
  });
});

describe('the Probot manifest flow of `npm start` (app.yml)', () => {
  it('registers the webhook at WEBHOOK_PROXY_URL (the public URL), never at a URL written in app.yml', async () => {
    // Probot's own manifest builder, as its setup page uses it (not exported by name).
    const { ManifestCreation } = await import(
      pathToFileURL(at('node_modules/probot/lib/manifest-creation.js')).href
    );
    const saved = process.env.WEBHOOK_PROXY_URL;
    process.env.WEBHOOK_PROXY_URL = 'https://bot.catalogs.internal/api/github/webhooks';
    try {
      const manifest = JSON.parse(
        new ManifestCreation({ updateEnv: () => undefined }).getManifest({
          pkg: JSON.parse(readFileSync(at('package.json'), 'utf8')),
          baseUrl: 'http://localhost:3000',
          readFileSync: () => readFileSync(at('app.yml'), 'utf8'),
        }),
      );
      expect(manifest.hook_attributes.url).toBe('https://bot.catalogs.internal/api/github/webhooks');
      expect(manifest.default_permissions.checks).toBe('write');
    } finally {
      if (saved === undefined) delete process.env.WEBHOOK_PROXY_URL;
      else process.env.WEBHOOK_PROXY_URL = saved;
    }
  });
});
