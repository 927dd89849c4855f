// The deployment files: the Dockerfile runs the built server as a non-root user, and the
// Kubernetes manifests run 2+ replicas that share the Redis queue and stop gracefully.
// Container builds cannot run here: the Dockerfile is checked statically.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { shutdownGraceMs } from '../src/server.js';

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

describe('Dockerfile, statically', () => {
  const text = readFileSync(root('Dockerfile'), 'utf8');
  const pkg = JSON.parse(readFileSync(root('package.json'), 'utf8'));

  it('takes its base image from the NODE_IMAGE build argument, a Node LTS by default', () => {
    const arg = /^ARG NODE_IMAGE=(\S+)$/m.exec(text);
    expect(arg).not.toBeNull();
    expect(arg![1]).toMatch(/^[\w.-]+(\/[\w.-]+)+:(22|24)[\w.-]*(@sha256:[0-9a-f]{64})?$/);
    const froms = [...text.matchAll(/^FROM (\S+)/gm)].map((m) => m[1]);
    expect(froms.length).toBeGreaterThan(0);
    for (const from of froms) expect(from).toBe('${NODE_IMAGE}');
  });

  it('copies only what exists, and runs the file `npm start` runs', () => {
    const stages = [...text.matchAll(/^FROM \S+ AS (\S+)$/gm)].map((m) => m[1]);
    for (const m of text.matchAll(/^COPY (?!--from=)(.+)$/gm)) {
      const sources = m[1]!.trim().split(/\s+/).slice(0, -1);
      for (const source of sources) expect(existsSync(root(source)), source).toBe(true);
    }
    for (const m of text.matchAll(/^COPY --from=(\S+)/gm)) expect(stages).toContain(m[1]);
    const entry = JSON.parse(/^ENTRYPOINT (\[.*\])$/m.exec(text)![1]!) as string[];
    expect(entry.join(' ')).toBe(pkg.scripts.start);
    // dist/server.js is built from src/server.ts (tsconfig.build.json: src -> dist).
    expect(existsSync(root(entry[1]!.replace(/^dist\//, 'src/').replace(/\.js$/, '.ts')))).toBe(true);
  });
});

const load = (file: string) =>
  parseAllDocuments(readFileSync(root(`deploy/kubernetes/${file}`), 'utf8')).map(
    (d) => d.toJS() as Record<string, any>, // eslint-disable-line @typescript-eslint/no-explicit-any
  );

describe('Kubernetes manifests', () => {
  const docs = load('catalog-bot.yaml');
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
    // Liveness does not ask Redis (/livez): a Redis outage must not restart every replica.
    expect(container.livenessProbe.httpGet.path).toBe('/livez');
    expect(container.securityContext.readOnlyRootFilesystem).toBe(true);
    // Writable places: the mirrors (CATALOG_BOT_WORKDIR in the image) and /tmp.
    expect(container.volumeMounts.map((m: { mountPath: string }) => m.mountPath).sort()).toEqual([
      '/tmp',
      '/var/lib/catalog-bot',
    ]);
    // SIGTERM is done within 30 s (shutdownGraceMs is capped at 25 s): the grace period covers it.
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(30);
    expect(shutdownGraceMs(env) / 1000 + 5).toBeLessThanOrEqual(pod.terminationGracePeriodSeconds);
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

describe('Kubernetes: reaching the App, image and monitoring', () => {
  const docs = load('catalog-bot.yaml');
  const find = (kind: string, name: string) => docs.find((d) => d.kind === kind && d.metadata.name === name)!;
  const app = find('Deployment', 'catalog-bot');
  const [container] = app.spec.template.spec.containers;
  const service = find('Service', 'catalog-bot');
  const kustomization = load('kustomization.yaml')[0]!;

  it('names no placeholder image: kustomization.yaml sets it (images:), and lists files that exist', () => {
    expect(container.image).not.toMatch(/example|latest/);
    const override = kustomization.images.find((i: { name: string }) => i.name === container.image);
    expect(override?.newName).toBeTruthy();
    const listed = [
      ...kustomization.resources,
      ...readFileSync(root('deploy/kubernetes/kustomization.yaml'), 'utf8')
        .split('\n')
        .map((l) => /^\s*#\s*-\s*(\S+\.yaml)/.exec(l)?.[1])
        .filter(Boolean),
    ];
    for (const file of listed) expect(existsSync(root(`deploy/kubernetes/${file}`)), file).toBe(true);
    expect(listed).toEqual(
      expect.arrayContaining(['ingress.yaml', 'openshift-route.yaml', 'servicemonitor.yaml']),
    );
  });

  it('an Ingress and an OpenShift Route publish only the webhook path, to the webhook Service', () => {
    const [ingress] = load('ingress.yaml');
    const paths = ingress!.spec.rules.flatMap((r: { http: { paths: unknown[] } }) => r.http.paths);
    expect(paths).toEqual([
      {
        path: '/api/github/webhooks',
        pathType: 'Exact',
        backend: { service: { name: service.metadata.name, port: { name: 'http' } } },
      },
    ]);
    const [route] = load('openshift-route.yaml');
    expect(route!.kind).toBe('Route');
    expect(route!.spec.path).toBe('/api/github/webhooks');
    expect(route!.spec.to.name).toBe(service.metadata.name);
    expect(route!.spec.tls.termination).toBe('edge');
  });

  it('a ServiceMonitor scrapes the metrics port through a Service of its own, not the webhook Service', () => {
    const [monitor] = load('servicemonitor.yaml');
    const metricsServices = docs.filter(
      (d) =>
        d.kind === 'Service' &&
        Object.entries(monitor!.spec.selector.matchLabels).every(([k, v]) => d.metadata.labels?.[k] === v),
    );
    expect(metricsServices.map((d) => d.metadata.name)).toEqual(['catalog-bot-metrics']);
    const port = metricsServices[0]!.spec.ports.find(
      (p: { name: string }) => p.name === monitor!.spec.endpoints[0].port,
    );
    expect(port.targetPort).toBe('metrics');
    expect(container.ports.map((p: { name: string }) => p.name)).toContain('metrics');
    expect(monitor!.spec.endpoints[0].path).toBe('/metrics');
  });
});
