// The deployment files: the Dockerfile runs the built server as a non-root user, and the
// Kubernetes manifests run 2+ replicas that share the Redis queue and stop gracefully.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';

const root = (path: string) => fileURLToPath(new URL(`../${path}`, import.meta.url));

describe('Dockerfile', () => {
  const text = readFileSync(root('Dockerfile'), 'utf8');
  it('builds with the lock file and runs dist/server.js as a non-root user, with git', () => {
    expect(text).toMatch(/RUN npm ci\b/);
    expect(text).toMatch(/^USER (?!root)\S+$/m);
    expect(text).toContain('ENTRYPOINT ["node", "dist/server.js"]');
    expect(text).toMatch(/apt-get install[^\n]*\bgit\b/);
    // What it copies exists (dist/server.js is built from src/server.ts).
    for (const path of [
      'package.json',
      'package-lock.json',
      'tsconfig.json',
      'tsconfig.build.json',
      'src/server.ts',
    ])
      expect(existsSync(root(path))).toBe(true);
  });
});

describe('Kubernetes manifests', () => {
  const docs = parseAllDocuments(readFileSync(root('deploy/kubernetes/catalog-bot.yaml'), 'utf8')).map(
    (d) => d.toJS() as Record<string, any>, // eslint-disable-line @typescript-eslint/no-explicit-any
  );
  const find = (kind: string, name: string) => docs.find((d) => d.kind === kind && d.metadata.name === name)!;

  it('runs two or more non-root replicas on the shared Redis queue, probed on /healthz', () => {
    const app = find('Deployment', 'catalog-bot');
    expect(app.spec.replicas).toBeGreaterThanOrEqual(2);
    const pod = app.spec.template.spec;
    expect(pod.securityContext.runAsNonRoot).toBe(true);
    const [container] = pod.containers;
    const env = Object.fromEntries(
      container.env.map((e: { name: string; value: string }) => [e.name, e.value]),
    );
    const redisService = find('Service', 'catalog-bot-redis');
    expect(env.REDIS_URL).toBe(`redis://${redisService.metadata.name}:${redisService.spec.ports[0].port}`);
    expect(container.envFrom[0].secretRef.name).toBe('catalog-bot');
    expect(container.readinessProbe.httpGet.path).toBe('/healthz');
    expect(container.securityContext.readOnlyRootFilesystem).toBe(true);
    // Writable places: the mirrors (CATALOG_BOT_WORKDIR in the image) and /tmp.
    expect(container.volumeMounts.map((m: { mountPath: string }) => m.mountPath).sort()).toEqual([
      '/tmp',
      '/var/lib/catalog-bot',
    ]);
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(60);
  });

  it('serves metrics on their own port, which the Service (the webhook endpoint) does not expose', () => {
    const app = find('Deployment', 'catalog-bot');
    const [container] = app.spec.template.spec.containers;
    const env = Object.fromEntries(
      container.env.map((e: { name: string; value: string }) => [e.name, e.value]),
    );
    const ports = Object.fromEntries(
      container.ports.map((p: { name: string; containerPort: number }) => [p.name, p.containerPort]),
    );
    expect(Number(env.CATALOG_BOT_METRICS_PORT)).toBe(ports.metrics);
    expect(ports.metrics).not.toBe(ports.http);
    expect(app.spec.template.metadata.annotations['prometheus.io/port']).toBe(String(ports.metrics));
    const service = find('Service', 'catalog-bot');
    for (const p of service.spec.ports) expect([ports.http, 'http']).toContain(p.targetPort);
  });

  it('keeps Redis data across restarts and the Secret example names what the app reads', () => {
    const redis = find('StatefulSet', 'catalog-bot-redis');
    expect(redis.spec.template.spec.containers[0].args).toContain('--appendonly');
    const secret = parseAllDocuments(
      readFileSync(root('deploy/kubernetes/secret.example.yaml'), 'utf8'),
    )[0]!.toJS();
    expect(Object.keys(secret.stringData)).toEqual(
      expect.arrayContaining(['APP_ID', 'WEBHOOK_SECRET', 'PRIVATE_KEY']),
    );
  });
});
