// The Probot app: webhook events to queued jobs. Handlers stay thin (parse, decide,
// enqueue); the checks themselves live in src/checks.
import { probotGitHubApp } from './github/adapter.js';
import type { ApplicationFunction, Probot } from 'probot';
import { INSTALLATION_EVENTS, installationHandler } from './handlers/installation.js';
import { COMMENT_EVENTS, issueCommentHandler } from './handlers/issue-comment.js';
import { HEAD_EVENTS, headEventHandler } from './handlers/heads.js';
import { MERGE_EVENTS, mergeEventHandler } from './handlers/merge.js';
import { MERGE_GROUP_EVENTS, mergeGroupHandler } from './flows/merge-queue/flow.js';
import { PUSH_EVENTS, pushHandler } from './handlers/push.js';
import { PR_EVENTS, pullRequestHandler } from './handlers/pull-request.js';
import { RELEASE_EVENTS, releaseEventHandler } from './flows/release/flow.js';
import { RERUN_EVENTS, rerunHandler } from './handlers/rerun.js';
import { REVIEW_EVENTS, reviewHandler } from './handlers/reviews.js';
import type { AppMetrics } from './metrics.js';
import { jobRunner, loggedRunner } from './jobs.js';
import { checkImages, type RegistryPolicy } from './publish/exists.js';
import { appCredentialCeilingFromEnv, RegistryClient } from './publish/registry.js';
import { bundleManifests, bundleRenderer, type BundleRenderer } from './publish/bundle-render.js';
import { publishedCatalogReader } from './publish/published-catalog.js';
import {
  announceAfterMsFromEnv,
  approveGraceMsFromEnv,
  type PrHandlerOptions,
} from './handlers/pull-request.js';
import type { ObserveChecks, ObserveValidations } from './handlers/session.js';
import { InProcessQueue, type JobQueue } from './queue.js';
import { publicUrlFromEnv } from './flows/pages/urls.js';
import { startReconciler, type PublishWatchdog } from './reconcile.js';

export interface AppOptions {
  /** The job queue (default: a new in-process queue). */
  queue?: JobQueue;
  /** Where the git mirrors live (default: CATALOG_BOT_WORKDIR or the temp dir). */
  workDir?: string;
  /** Metrics for GET /metrics (the server passes one; without it nothing is counted). */
  metrics?: AppMetrics;
  /** Reconcile (queue what missed webhooks left undone) now and every this many ms; 0: never (default). */
  reconcileEveryMs?: number;
  /** Run queued jobs in this process (default true; false for a webhook-only replica). */
  runJobs?: boolean;
  /** The App's slug (default: asked from GitHub once). */
  appSlug?: () => Promise<string>;
  /** The registry client (default: one from REGISTRY_* in the environment, made when first needed). */
  registry?: () => RegistryClient;
  /** Bundle rendering (default: pulled through `registry`, cached by digest). */
  bundles?: PrHandlerOptions['bundles'];
  /** Image existence for `catalog-bot/images` (default: asked of the registries through `registry`). */
  images?: PrHandlerOptions['images'];
  /** Published catalogs for `catalog-bot/prune` (default: read through `registry`). */
  published?: PrHandlerOptions['published'];
  /** Checks slower than this show their runs in progress meanwhile (default CATALOG_BOT_ANNOUNCE_AFTER_SECONDS, 10 s). */
  announceAfterMs?: number;
  /** How long a head must be the head before a plain `/approve` counts for it (default CATALOG_BOT_APPROVE_GRACE_SECONDS, 60 s). */
  approveGraceMs?: number;
  /** Publish merges that land close together as one batch (default: on unless CATALOG_BOT_PUBLISH_BATCHES=off; docs/publishing.md). */
  publishBatches?: boolean;
  /** The reconciliation's publish watchdog (default: from CATALOG_BOT_PUBLISH_WATCHDOG_MINUTES; docs/publishing.md). */
  publishWatchdog?: PublishWatchdog | false;
  /** The App's public URL: check runs link to impact pages (default CATALOG_BOT_PUBLIC_URL; docs/site.md). */
  publicUrl?: string;
  /** Told which checks each flow ran and how many catalogs it validated (src/handlers/session.ts). */
  observeChecks?: ObserveChecks;
  /** Told which catalog trees a comment's edit validated (src/handlers/session.ts). */
  observeValidations?: ObserveValidations;
}

/** Renderers kept, one per credential scope (their caches hold what those credentials saw). */
const MAX_RENDERERS = 32;

export function createApp(options: AppOptions = {}): ApplicationFunction {
  return (app: Probot) => {
    const { metrics, workDir } = options;
    const queue = options.queue ?? new InProcessQueue();
    if (metrics) countWebhooks(app, metrics, queue);
    const handlerOptions = {
      queue,
      workDir,
      metrics,
      appSlug: options.appSlug ?? keptAppSlug(app),
      ...registryReaders(options),
      announceAfterMs: options.announceAfterMs ?? announceAfterMsFromEnv(),
      approveGraceMs: options.approveGraceMs ?? approveGraceMsFromEnv(),
      publicUrl: options.publicUrl ?? publicUrlFromEnv(),
      ...(options.observeChecks ? { observeChecks: options.observeChecks } : {}),
      ...(options.observeValidations ? { observeValidations: options.observeValidations } : {}),
      ...(options.publishBatches !== undefined ? { publishBatches: options.publishBatches } : {}),
    };
    listenToEvents(app, handlerOptions);
    if (options.reconcileEveryMs)
      startReconciler(
        app,
        {
          ...handlerOptions,
          ...(options.publishWatchdog !== undefined ? { publishWatchdog: options.publishWatchdog } : {}),
        },
        options.reconcileEveryMs,
      );
    // A `web` replica only answers webhooks and queues; `worker` replicas (or `all`) run jobs.
    if (options.runJobs ?? true) {
      const run = loggedRunner(jobRunner(app, handlerOptions), app.log);
      queue.start(metrics ? metrics.timed(run) : run, (error, job) =>
        app.log.error({ err: error, job: job.key }, 'job failed'),
      );
    }
  };
}

/** Every webhook counted by event and action, and the queue watched, for GET /metrics. */
function countWebhooks(app: Probot, metrics: AppMetrics, queue: JobQueue): void {
  metrics.watch(queue);
  app.onAny(async (context) => {
    const action = (context.payload as { action?: unknown }).action;
    metrics.webhooks.inc({
      event: typeof action === 'string' ? `${context.name}.${action}` : context.name,
    });
  });
}

/** The App's slug, asked once (app-level auth) and kept; a failure is asked again next time. */
function keptAppSlug(app: Probot): () => Promise<string> {
  let slug: Promise<string> | undefined;
  return () =>
    (slug ??= probotGitHubApp(app)
      .slug()
      .catch((error: unknown) => {
        slug = undefined;
        throw error;
      }));
}

/**
 * What the checks read from registries: one registry client for the process (credentials
 * from the environment, connections kept), used by each repository's checks only for the
 * hosts its base branch's config publishes to (docs/security.md, "Credentials stay home").
 */
function registryReaders(options: AppOptions) {
  let client: RegistryClient | undefined;
  const registry =
    options.registry ??
    (() =>
      (client ??= RegistryClient.fromEnv(process.env, {
        ...(process.env.CATALOG_BOT_CREDENTIAL_HOSTS !== undefined
          ? { credentialHostCeiling: appCredentialCeilingFromEnv() }
          : {}),
      })));
  const scoped = (policy: RegistryPolicy | undefined) => registry().scoped(policy?.credentialHosts ?? []);
  const images =
    options.images ??
    ((refs: string[], policy: RegistryPolicy) =>
      checkImages(refs, { client: scoped(policy), allowedRegistries: policy.allowedRegistries }));
  // The pruning guard reads published catalogs with the repository's own credential hosts.
  const published = options.published ?? publishedCatalogReader(scoped);
  const rendererFor = bundleRenderers(scoped);
  const bundles = options.bundles ?? {
    resolveBundle: (image: string, policy?: RegistryPolicy) => rendererFor(policy).resolver(image),
    manifests: (image: string, policy?: RegistryPolicy) => bundleManifests(rendererFor(policy))(image),
  };
  return { registry, images, published, bundles };
}

/** Bundle images rendered once per digest, for templates and for CRDs of csv-metadata catalogs: one renderer per credential scope. */
function bundleRenderers(
  scoped: (policy: RegistryPolicy | undefined) => RegistryClient,
): (policy: RegistryPolicy | undefined) => BundleRenderer {
  const renderers = new Map<string, BundleRenderer>();
  return (policy) => {
    const client = scoped(policy);
    let renderer = renderers.get(client.credentialScope);
    if (!renderer) {
      renderer = bundleRenderer(client);
      renderers.set(client.credentialScope, renderer);
      if (renderers.size > MAX_RENDERERS) renderers.delete(renderers.keys().next().value!);
    }
    return renderer;
  };
}

/** The webhook handlers, one per kind of event. */
function listenToEvents(app: Probot, handlerOptions: PrHandlerOptions): void {
  app.on([...PR_EVENTS], pullRequestHandler(handlerOptions));
  app.on([...RERUN_EVENTS], rerunHandler(handlerOptions));
  app.on([...INSTALLATION_EVENTS], installationHandler(handlerOptions));
  app.on([...COMMENT_EVENTS], issueCommentHandler(handlerOptions));
  app.on([...HEAD_EVENTS], headEventHandler(handlerOptions));
  app.on([...REVIEW_EVENTS], reviewHandler(handlerOptions));
  app.on([...MERGE_EVENTS], mergeEventHandler(handlerOptions));
  app.on([...MERGE_GROUP_EVENTS], mergeGroupHandler(handlerOptions));
  app.on([...PUSH_EVENTS], pushHandler(handlerOptions));
  app.on([...RELEASE_EVENTS], releaseEventHandler(handlerOptions));
}

export default createApp();
