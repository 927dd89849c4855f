// What the App's publishing tests start from (docs/publishing.md): a real docker-registry on
// 127.0.0.1 holding the test base image, a catalog repository (a bare origin and its work
// tree) whose config publishes each catalog root to that registry, and the App serving it
// against the fake GitHub API server.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AppOptions } from '../../src/app.js';
import { readCatalogLayer } from '../../src/publish/published-catalog.js';
import { RegistryClient, type RegistryClientOptions } from '../../src/publish/registry.js';
import { InProcessQueue } from '../../src/queue.js';
import { startAppServer, type AppServer } from './app-server.js';
import { GitHubServer, type ServerRepo } from './github-server.js';
import { pushTestBase, startRegistry, type RunningRegistry } from './registry.js';

/** The valid catalog fixture, copied into each catalog root. */
export const VALID_CATALOG = fileURLToPath(new URL('../fixtures/valid-catalog/', import.meta.url));

/** git in `cwd` as a test author; its output trimmed. */
export function gitAt(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-C', cwd, '-c', 'user.name=T', '-c', 'user.email=t@example.com', ...args], {
    encoding: 'utf8',
  }).trim();
}

/** A package with one bundle (`k` makes its bundle image digest): what one release-bot pull request adds. */
export function onePackage(name: string, k: number): string {
  const digest = k.toString(16).padStart(64, '0');
  return [
    'schema: olm.package',
    `name: ${name}`,
    'defaultChannel: stable',
    '---',
    'schema: olm.channel',
    `package: ${name}`,
    'name: stable',
    'entries:',
    `  - name: ${name}.v1.0.0`,
    '---',
    'schema: olm.bundle',
    `package: ${name}`,
    `name: ${name}.v1.0.0`,
    `image: quay.io/example/${name}-bundle@sha256:${digest}`,
    'properties:',
    '  - type: olm.package',
    '    value:',
    `      packageName: ${name}`,
    '      version: 1.0.0',
    '',
  ].join('\n');
}

/**
 * The top-level entries of the catalog an image serves (`image` names it by tag or digest),
 * sorted: what `git ls-tree --name-only <commit>:<root>` lists for the root it was built from.
 */
export async function entriesInImage(client: RegistryClient, image: string): Promise<string[]> {
  const read = await readCatalogLayer(client, image);
  return [...new Set(read.files.map(([path]) => path.split('/')[0]!))].sort();
}

/** The top-level entries of `root` at `rev` in the repository `cwd`, sorted. */
export function entriesAt(cwd: string, rev: string, root: string): string[] {
  return gitAt(cwd, 'ls-tree', '--name-only', `${rev}:${root}`).split('\n').filter(Boolean).sort();
}

/** A registry with the test base image at `base:1`, and a client that may reach it (127.0.0.1 is private). */
export async function registryWithBase(
  options: RegistryClientOptions = {},
): Promise<{ registry: RunningRegistry; client: RegistryClient }> {
  const registry = await startRegistry();
  const client = new RegistryClient({
    insecureHosts: [registry.host],
    privateHosts: ['127.0.0.1'],
    ...options,
  });
  await pushTestBase(client, { registry: registry.host, repository: 'base', tag: '1' });
  return { registry, client };
}

/** .github/catalog-bot.yml publishing every root on `base:1` to `image:{root}` and `image:{root}-{sha}`. */
export function publishConfig(host: string, image: string, extra = ''): string {
  return [
    'catalogs: [catalogs/*]',
    'publish:',
    `  baseImage: ${host}/base:1`,
    '  images:',
    `    - ${host}/${image}:{root}`,
    `    - ${host}/${image}:{root}-{sha}`,
    extra,
  ].join('\n');
}

/**
 * Under `dir`: a bare origin (`origin.git`) and a work tree (`work`) holding the valid catalog
 * at each of `roots`; with `config`, it is committed as the config and pushed as main.
 */
export function catalogOrigin(dir: string, roots: string[], config?: string): { bare: string; work: string } {
  const bare = join(dir, 'origin.git');
  const work = join(dir, 'work');
  execFileSync('git', ['init', '-q', '--bare', '-b', 'main', bare]);
  execFileSync('git', ['init', '-q', '-b', 'main', work]);
  for (const root of roots) cpSync(VALID_CATALOG, join(work, root), { recursive: true });
  if (config !== undefined) {
    mkdirSync(join(work, '.github'));
    writeFileSync(join(work, '.github/catalog-bot.yml'), config);
    gitAt(work, 'add', '-A');
    gitAt(work, 'commit', '-qm', 'base');
    gitAt(work, 'push', '-q', bare, 'HEAD:refs/heads/main');
  }
  return { bare, work };
}

export interface PublishingApp {
  /** The temporary directory holding the origin, its work tree and the App's mirrors. */
  dir: string;
  registry: RunningRegistry;
  client: RegistryClient;
  bare: string;
  work: string;
  gh: GitHubServer;
  /** `<image>/catalog` on the fake GitHub, cloned from `bare`. */
  repo: ServerRepo;
  queue: InProcessQueue;
  app: AppServer;
  /** Merge pull request `number` on the fake GitHub (a real merge commit in `bare`); the merge's sha. */
  merge(number: number): Promise<string>;
  stop(): Promise<void>;
}

/**
 * The App publishing `roots` of `<image>/catalog` (repository id `id`) to `<registry>/<image>`,
 * with its own GitHub client (`env`: its write pacing) against the fake GitHub API server.
 */
export async function startPublishingApp(o: {
  image: string;
  id: number;
  roots: string[];
  client?: RegistryClientOptions;
  app?: Partial<AppOptions>;
  env?: NodeJS.ProcessEnv;
}): Promise<PublishingApp> {
  const dir = mkdtempSync(join(tmpdir(), `catalog-bot-${o.image}-`));
  const { registry, client } = await registryWithBase(o.client);
  const { bare, work } = catalogOrigin(dir, o.roots, publishConfig(registry.host, o.image));
  const gh = await GitHubServer.start();
  const repo = gh.addRepo({ owner: o.image, name: 'catalog', id: o.id, bare });
  const queue = new InProcessQueue();
  const app = await startAppServer(
    gh,
    { queue, workDir: join(dir, 'mirrors'), registry: () => client, ...o.app },
    o.env,
  );
  return {
    dir,
    registry,
    client,
    bare,
    work,
    gh,
    repo,
    queue,
    app,
    async merge(number) {
      const res = await fetch(`${gh.baseUrl}/repos/${o.image}/catalog/pulls/${number}/merge`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ merge_method: 'merge' }),
      });
      if (res.status !== 200) throw new Error(`merging #${number}: HTTP ${res.status}`);
      return ((await res.json()) as { sha: string }).sha;
    },
    async stop() {
      await app.stop();
      await gh.close();
      client.close();
      await registry.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
