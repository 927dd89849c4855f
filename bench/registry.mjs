// A real docker-registry on 127.0.0.1 for the publishing benches (serve.mjs, publish.mjs).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/** Start a registry with its storage in a temp directory; `stop()` removes it. */
export async function startRegistry(prefix = 'catalog-bot-bench-registry-') {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const port = await freePort();
  const config = join(dir, 'config.yml');
  writeFileSync(
    config,
    `version: 0.1\nlog:\n  level: error\n  accesslog:\n    disabled: true\nstorage:\n  filesystem:\n    rootdirectory: ${join(dir, 'data')}\nhttp:\n  addr: 127.0.0.1:${port}\n`,
  );
  const child = spawn('docker-registry', ['serve', config], { stdio: 'ignore' });
  for (let i = 0; ; i++) {
    try {
      await (await globalThis.fetch(`http://127.0.0.1:${port}/v2/`)).arrayBuffer();
      break;
    } catch (err) {
      if (i > 200) throw err;
      await sleep(50);
    }
  }
  return {
    host: `127.0.0.1:${port}`,
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', () => {
          rmSync(dir, { recursive: true, force: true });
          resolve();
        });
        child.kill('SIGTERM');
      }),
  };
}
