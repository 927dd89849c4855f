// Catalog pod start: time from starting `opm serve` to a SERVING gRPC health answer, for
// catalog-bot's image (pre-built cache) against an image built the way `opm generate
// dockerfile` does (`opm serve /configs --cache-dir=/tmp/cache --cache-only` at build
// time), same base (the real opm as /bin/opm), same run, alternating; plus today's
// cache-less command for scale, and the build time with and without the cache step.
// catalog-bot's image is pushed to a local docker-registry and unpacked with skopeo +
// umoci; each image's entrypoint + command runs as a process with its absolute paths
// taken inside the unpacked root (no container runtime needed).
// Imports ../dist: run `npx tsc -p tsconfig.build.json` first.
// `node bench/serve.mjs [runs] [catalog dir...]` prints the markdown section.
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { connect } from 'node:http2';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { DirectorySource } from '../dist/catalog/fbc/source.js';
import { clearCacheLayers, hostPlatform } from '../dist/publish/cache.js';
import { clearLayerCache } from '../dist/publish/layer.js';
import { createTar } from '../dist/publish/tar.js';
import { blob, OCI_CONFIG, OCI_LAYER_TAR, OCI_MANIFEST, sha256 } from '../dist/publish/oci.js';
import { publishCatalog } from '../dist/publish/publish.js';
import { RegistryClient } from '../dist/publish/registry.js';
import { freePort, startRegistry } from './registry.mjs';

// The bench names its base by tag on a local registry: trust it (docs/publishing.md).
process.env.CATALOG_BOT_OPM_CACHE ??= 'on';

const here = fileURLToPath(new URL('.', import.meta.url));
const OPM = join(here, '..', '..', 'shared', 'tools', 'opm', 'opm');
const OPM_CMD = ['serve', '/configs', '--cache-dir=/tmp/cache']; // opm generate dockerfile's CMD

/** The base both images share: one uncompressed layer holding the real opm as /bin/opm. */
async function pushOpmBase(client, ref) {
  const tar = createTar([
    { path: 'bin', type: 'dir' },
    { path: 'bin/opm', type: 'file', data: readFileSync(OPM), mode: 0o755 },
  ]);
  const layer = blob(OCI_LAYER_TAR, tar);
  const config = blob(
    OCI_CONFIG,
    Buffer.from(
      JSON.stringify({
        ...hostPlatform(),
        config: { Env: ['PATH=/bin'] },
        rootfs: { type: 'layers', diff_ids: [sha256(tar)] },
      }),
    ),
  );
  for (const b of [layer, config]) await client.ensureBlob(ref, b.descriptor.digest, b.data);
  const manifest = {
    schemaVersion: 2,
    mediaType: OCI_MANIFEST,
    config: config.descriptor,
    layers: [layer.descriptor],
  };
  await client.putManifest(ref, ref.tag, OCI_MANIFEST, Buffer.from(JSON.stringify(manifest)));
}

/** One gRPC health Check over HTTP/2: true when the answer is SERVING (status field 1 = 1). */
function healthServing(port) {
  return new Promise((resolve) => {
    const session = connect(`http://127.0.0.1:${port}`);
    const done = (ok) => {
      session.destroy();
      resolve(ok);
    };
    session.on('error', () => done(false));
    const stream = session.request({
      ':method': 'POST',
      ':path': '/grpc.health.v1.Health/Check',
      'content-type': 'application/grpc',
      te: 'trailers',
    });
    const chunks = [];
    stream.on('data', (c) => chunks.push(c));
    stream.on('error', () => done(false));
    stream.on('close', () => {
      const body = Buffer.concat(chunks);
      // 5-byte frame header, then field 1 (varint) = 1
      done(body.length >= 7 && body[5] === 0x08 && body[6] === 0x01);
    });
    stream.end(Buffer.alloc(5));
  });
}

/** Start argv (paths inside `root`), poll health until SERVING; the milliseconds it took. */
async function timeToServing(root, argv) {
  const inRoot = (a) =>
    a.startsWith('/') ? join(root, a) : a.replace(/^(--[^=]+=)(\/.*)$/, (_, f, p) => f + join(root, p));
  const [command, ...args] = argv.map(inRoot);
  const port = await freePort();
  const started = performance.now();
  const child = spawn(command, [...args, '-p', String(port), '--pprof-addr='], {
    cwd: root,
    stdio: 'ignore',
    env: {},
  });
  let exited = false;
  child.once('exit', () => (exited = true));
  try {
    for (;;) {
      if (exited) throw new Error(`${argv.join(' ')} exited before serving`);
      if (await healthServing(port)) return performance.now() - started;
      if (performance.now() - started > 300_000) throw new Error('not SERVING within 300 s');
      await sleep(10);
    }
  } finally {
    // SIGTERM: opm closes its cache cleanly (a killed one leaves its lock file behind).
    if (!exited) {
      const gone = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await gone;
      clearTimeout(timer);
    }
  }
}

function sizeOf(dir) {
  let total = 0;
  for (const e of readdirSync(dir, { recursive: true, withFileTypes: true }))
    if (e.isFile()) total += statSync(join(e.parentPath, e.name)).size;
  return total;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};

function run(cmd, args) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 * 2 ** 20 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

export async function benchServe({ catalogs, runs = 3, noCacheRuns }) {
  const registry = await startRegistry('catalog-bot-bench-serve-registry-');
  const client = new RegistryClient({ insecureHosts: ['127.0.0.1'] });
  const work = mkdtempSync(join(tmpdir(), 'catalog-bot-bench-serve-'));
  const rows = [];
  try {
    const baseImage = `${registry.host}/base/opm:real`;
    await pushOpmBase(client, { registry: registry.host, repository: 'base/opm', tag: 'real' });
    for (const [i, catalog] of catalogs.entries()) {
      const publish = async (opmCache, tag) => {
        clearLayerCache();
        clearCacheLayers();
        const started = performance.now();
        const [result] = await publishCatalog({
          source: new DirectorySource(catalog.path),
          root: `catalogs/${basename(catalog.path)}`,
          tags: [tag],
          baseImage,
          client,
          opmCache,
        });
        if (opmCache && result.warnings) throw new Error(result.warnings.join('; '));
        return performance.now() - started;
      };
      const tag = `${registry.host}/catalogs/c${i}:cached`;
      const buildNoCacheMs = await publish(false, `${registry.host}/catalogs/c${i}:plain`);
      const buildCacheMs = await publish(true, tag);

      // catalog-bot's image, as a cluster gets it.
      const layout = join(work, `layout-${i}`);
      const bundle = join(work, `bundle-${i}`);
      run('skopeo', ['copy', '--src-tls-verify=false', `docker://${tag}`, `oci:${layout}:img`]);
      run('umoci', ['unpack', '--rootless', '--image', `${layout}:img`, bundle]);
      const botRoot = join(bundle, 'rootfs');
      const botArgs = JSON.parse(readFileSync(join(bundle, 'config.json'), 'utf8')).process.args;

      // opm's own: /configs plus the cache its `--cache-only` step writes at build time.
      const refRoot = join(work, `ref-${i}`);
      cpSync(catalog.path, join(refRoot, 'configs'), { recursive: true });
      cpSync(join(botRoot, 'bin'), join(refRoot, 'bin'), { recursive: true });
      const refCacheStarted = performance.now();
      run(join(refRoot, 'bin/opm'), [
        'serve',
        join(refRoot, 'configs'),
        `--cache-dir=${join(refRoot, 'tmp/cache')}`,
        '--cache-only',
        '--pprof-addr=',
      ]);
      const refCacheMs = performance.now() - refCacheStarted;

      const bot = [];
      const ref = [];
      const none = [];
      // One unmeasured start each first: each root has its own copy of opm to read from disk.
      await timeToServing(botRoot, botArgs);
      await timeToServing(refRoot, ['/bin/opm', ...OPM_CMD]);
      for (let r = 0; r < runs; r++) {
        // Which goes first alternates, so neither always follows the other's page-cache work.
        if (r % 2 === 0) {
          bot.push(await timeToServing(botRoot, botArgs));
          ref.push(await timeToServing(refRoot, ['/bin/opm', ...OPM_CMD]));
        } else {
          ref.push(await timeToServing(refRoot, ['/bin/opm', ...OPM_CMD]));
          bot.push(await timeToServing(botRoot, botArgs));
        }
      }
      // Today's cache-less command builds the cache at start, into a fresh directory each time;
      // after the pairs, so its writes do not slow whichever start came next.
      for (let r = 0; r < (noCacheRuns ?? runs); r++) {
        const scratch = `/scratch-${r}`;
        mkdirSync(join(refRoot, scratch), { recursive: true });
        none.push(
          await timeToServing(refRoot, [
            '/bin/opm',
            'serve',
            '/configs',
            `--cache-dir=${scratch}`,
            '--cache-enforce-integrity=false',
          ]),
        );
        rmSync(join(refRoot, scratch), { recursive: true, force: true });
      }
      const row = {
        name: catalog.name,
        bytes: sizeOf(catalog.path),
        botMs: bot,
        refMs: ref,
        noCacheMs: none,
        ratio: median(bot) / median(ref),
        buildCacheMs,
        buildNoCacheMs,
        refCacheMs,
      };
      rows.push(row);
      process.stderr.write(
        `serve ${catalog.name}: catalog-bot ${median(bot).toFixed(0)} ms, opm's ${median(ref).toFixed(0)} ms (${row.ratio.toFixed(2)}), no cache ${median(none).toFixed(0)} ms; runs ${JSON.stringify({ bot: bot.map(Math.round), ref: ref.map(Math.round) })}\n`,
      );
      rmSync(refRoot, { recursive: true, force: true });
      rmSync(bundle, { recursive: true, force: true });
      rmSync(layout, { recursive: true, force: true });
    }
  } finally {
    client.close();
    await registry.stop();
    rmSync(work, { recursive: true, force: true });
  }
  return { runs, rows };
}

export function serveMarkdown({ runs, rows }) {
  return [
    '## Catalog image start (pre-built opm cache)',
    '',
    "Time from starting the image's entrypoint + command to a SERVING gRPC health answer (median of",
    `${runs} after one unmeasured start each, alternating which goes first), catalog-bot's image against one built the way \`opm generate dockerfile\` does`,
    '(`opm serve /configs --cache-dir=/tmp/cache --cache-only` at build time), same base (the real opm as',
    '`/bin/opm`), same run; "no cache" is the command catalog-bot\'s images had before (the cache is built',
    'at every start). Build = `publishCatalog` cold (nothing cached in the process) to a local registry,',
    "with and without the cache step; opm's own `--cache-only` step alone for scale. `node bench/serve.mjs`.",
    '',
    "| catalog | size MB | catalog-bot (ms) | opm's pre-built (ms) | ratio | no cache (ms) | build with cache (ms) | build without (ms) | opm --cache-only alone (ms) |",
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.map(
      (r) =>
        `| ${r.name} | ${(r.bytes / 1e6).toFixed(1)} | ${median(r.botMs).toFixed(0)} | ${median(r.refMs).toFixed(0)} | ${r.ratio.toFixed(2)} | ${median(r.noCacheMs).toFixed(0)} | ${r.buildCacheMs.toFixed(0)} | ${r.buildNoCacheMs.toFixed(0)} | ${r.refCacheMs.toFixed(0)} |`,
    ),
    '',
  ];
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const runs = Number(process.argv[2] ?? 3);
  const dirs = process.argv.slice(3);
  const catalogs = dirs.map((path) => ({ name: path.split('/').slice(-3).join('/'), path }));
  const noCacheRuns = process.env.BENCH_NO_CACHE_RUNS ? Number(process.env.BENCH_NO_CACHE_RUNS) : undefined;
  const result = await benchServe({ catalogs, runs, noCacheRuns });
  process.stdout.write(serveMarkdown(result).join('\n') + '\n');
}
