// The checks of a pull request run in a worker thread with a wall-clock deadline and a
// heap cap (docs/security.md, bounded work): a pull request that makes them slow (a costly
// CEL rule, a pathological regex) or big stalls its own worker, never the event loop that
// answers webhooks, renews queue locks and runs other repositories' checks. A check run
// over a limit fails naming the limit; the job still completes.
import { availableParallelism } from 'node:os';
import { getHeapStatistics } from 'node:v8';
import { parentPort, Worker } from 'node:worker_threads';
import type { PrCheckInput, PrCheckResult } from './pr-input.js';

/** The callbacks of PrCheckInput: functions cannot cross to the worker, calls to them can. */
export const CALLBACKS = ['images', 'resolveBundle', 'bundleManifests', 'teams', 'published'] as const;
export type CallbackName = (typeof CALLBACKS)[number];

export type PlainError = {
  message: string;
  name?: string;
  status?: number;
  headers?: Record<string, string>;
};

export type ToWorker =
  | { type: 'run'; input: Omit<PrCheckInput, CallbackName>; callbacks: CallbackName[] }
  | { type: 'task'; module: string; fn: string; input: unknown; callbacks: CallbackName[] }
  | { type: 'reply'; callId: number; ok: true; value: unknown }
  | { type: 'reply'; callId: number; ok: false; error: PlainError };

export type ToMain =
  | { type: 'ready' }
  | { type: 'subject'; subject: Subject }
  | { type: 'call'; callId: number; fn: CallbackName; args: unknown[] }
  | { type: 'done'; ok: true; result: unknown }
  | { type: 'done'; ok: false; error: PlainError };

/** What survives the trip: the message, and what tells a transient GitHub error (isTransient). */
export function toPlainError(error: unknown): PlainError {
  const e = error as {
    message?: unknown;
    name?: unknown;
    status?: unknown;
    response?: { headers?: unknown };
  };
  const headers = e?.response?.headers;
  return {
    message: typeof e?.message === 'string' ? e.message : String(error),
    ...(typeof e?.name === 'string' ? { name: e.name } : {}),
    ...(typeof e?.status === 'number' ? { status: e.status } : {}),
    ...(headers && typeof headers === 'object'
      ? {
          headers: Object.fromEntries(
            Object.entries(headers).filter((kv): kv is [string, string] => typeof kv[1] === 'string'),
          ),
        }
      : {}),
  };
}

export function fromPlainError(plain: PlainError): Error {
  const error = new Error(plain.message) as Error & { status?: number; response?: { headers: object } };
  if (plain.name) error.name = plain.name;
  if (plain.status !== undefined) error.status = plain.status;
  if (plain.headers) error.response = { headers: plain.headers };
  return error;
}

/** The checks of one pull request went over a limit; the message names it and its setting. */
export class CheckLimitError extends Error {
  override readonly name = 'CheckLimitError';
  constructor(
    message: string,
    /** What was stopped (a task's `what`, or the checks after `nowRunning(CHECKS_SUBJECT)`). */
    readonly subject?: string,
  ) {
    super(message);
  }
}

export interface CheckLimits {
  /** Wall-clock deadline for all checks of one pull request, from when its worker starts. */
  timeoutMs: number;
  /** Heap cap of the worker (old generation), in MiB. */
  memoryMb: number;
  /** Check workers running at once in this process; more pull requests wait their turn. */
  workers?: number;
}

/**
 * CATALOG_BOT_CHECK_TIMEOUT_MS (default 120 000), CATALOG_BOT_CHECK_MEMORY_MB (default
 * 1024, never more than the process's own heap limit) and CATALOG_BOT_CHECK_WORKERS (default:
 * the CPUs this process may use; a burst of pull requests would otherwise start a worker,
 * and its heap, for each).
 */
export function checkLimits(env: NodeJS.ProcessEnv = process.env): CheckLimits {
  const positive = (v: string | undefined, fallback: number) =>
    Number.isFinite(Number(v)) && Number(v) > 0 ? Number(v) : fallback;
  const ownHeapMb = Math.floor(getHeapStatistics().heap_size_limit / (1024 * 1024));
  return {
    timeoutMs: positive(env.CATALOG_BOT_CHECK_TIMEOUT_MS, 120_000),
    memoryMb: positive(env.CATALOG_BOT_CHECK_MEMORY_MB, Math.min(1024, ownHeapMb)),
    workers: Math.floor(positive(env.CATALOG_BOT_CHECK_WORKERS, availableParallelism())) || 1,
  };
}

// Idle workers, kept warm (loaded modules, compiled code) for the next pull request. A
// worker that hit a limit is terminated, never reused.
const MAX_IDLE = 2;
const idle: { worker: Worker; memoryMb: number }[] = [];

function spawn(memoryMb: number): Promise<Worker> {
  const resourceLimits = { maxOldGenerationSizeMb: memoryMb };
  const here = import.meta.url;
  // Run from the TypeScript sources (the tests), the worker loads them through hooks that
  // strip the types; the built App runs dist/checks/pr-worker.js.
  const worker = here.endsWith('.ts')
    ? new Worker(
        `require('node:module').register(${JSON.stringify(new URL('./worker-ts-hooks.mjs', here).href)});` +
          `import(${JSON.stringify(new URL('./pr-worker.ts', here).href)});`,
        { eval: true, resourceLimits },
      )
    : new Worker(new URL('./pr-worker.js', here), { resourceLimits });
  return new Promise((resolve, reject) => {
    const fail = (error: unknown) => {
      worker.off('message', ready);
      reject(error instanceof Error ? error : new Error(`the check worker did not start (exit ${error})`));
    };
    const ready = (m: ToMain) => {
      if (m.type !== 'ready') return;
      worker.off('error', fail).off('exit', fail).off('message', ready);
      // A worker that fails while idle is dropped, never a crash of the App (runIsolated
      // handles errors while it runs checks).
      worker.on('error', () => undefined);
      worker.once('exit', () => {
        const at = idle.findIndex((w) => w.worker === worker);
        if (at >= 0) idle.splice(at, 1);
      });
      resolve(worker);
    };
    worker.on('message', ready).once('error', fail).once('exit', fail);
  });
}

async function acquire(memoryMb: number): Promise<Worker> {
  const i = idle.findIndex((w) => w.memoryMb === memoryMb);
  if (i >= 0) {
    const { worker } = idle.splice(i, 1)[0]!;
    worker.ref();
    return worker;
  }
  return spawn(memoryMb);
}

function release(worker: Worker, memoryMb: number): void {
  if (idle.length >= MAX_IDLE) {
    void worker.terminate();
    return;
  }
  // An idle worker must not keep the process (the CLI, a test run) alive.
  worker.unref();
  idle.push({ worker, memoryMb });
}

// Runs holding a turn, and those waiting for one (first come, first served).
let busy = 0;
const waiting: (() => void)[] = [];

/** How many check runs hold a worker and how many wait for one (for /metrics). */
export function checkWorkerUse(): { busy: number; waiting: number } {
  return { busy, waiting: waiting.length };
}

async function takeTurn(workers: number): Promise<void> {
  if (busy < workers) {
    busy++;
    return;
  }
  // The finishing run hands its turn over: `busy` stays the same.
  await new Promise<void>((resolve) => waiting.push(resolve));
}

function giveTurnBack(): void {
  const next = waiting.shift();
  if (next) next();
  else busy--;
}

/**
 * runPrChecks in a worker thread, within `limits`. Resolves with the checks (the roots
 * without their reports); rejects with a CheckLimitError naming the limit that was hit.
 */
export async function runIsolated(
  input: PrCheckInput,
  limits: CheckLimits = checkLimits(),
): Promise<PrCheckResult> {
  const callbacks = CALLBACKS.filter((name) => input[name] !== undefined);
  const data = { ...input };
  for (const name of CALLBACKS) delete data[name];
  const run: ToWorker = { type: 'run', input: data, callbacks };
  return (await inTurn(run, input, CHECKS_SUBJECT, limits)) as PrCheckResult;
}

/**
 * Other catalog work (a comment command's: docs/security.md, bounded work) in a check
 * worker, with the checks' turns, deadline and heap cap: the worker imports `module` and
 * calls its export `fn` with `input`, plus `callbacks` (called on this thread, like the
 * checks' registry lookups). Input and result are plain data. Rejects with a
 * CheckLimitError naming the limit, `what` (like "`/explain`") saying what was stopped.
 */
export async function runTaskIsolated<T>(
  task: { module: URL; fn: string; input: unknown; what: string; callbacks?: Callbacks },
  limits: CheckLimits = checkLimits(),
): Promise<T> {
  const callbacks = task.callbacks ?? {};
  const names = CALLBACKS.filter((name) => callbacks[name] !== undefined);
  const run: ToWorker = {
    type: 'task',
    module: task.module.href,
    fn: task.fn,
    input: task.input,
    callbacks: names,
  };
  return (await inTurn(run, callbacks, { what: task.what, were: 'was' }, limits)) as T;
}

/** What a limit message says was stopped: "the checks of this pull request … were stopped". */
export interface Subject {
  what: string;
  were: 'was' | 'were';
}

/** The checks of a pull request, as a limit message names them. */
export const CHECKS_SUBJECT: Subject = { what: 'the checks of this pull request', were: 'were' };

/**
 * Called by a task in a check worker when it moves on to other work (a comment's edit from
 * its plan to the checks of the edit): a limit from now on is that work's, named as such, and
 * the wall-clock deadline starts again, as for work in a worker of its own. Does nothing
 * outside a worker.
 */
export function nowRunning(subject: Subject): void {
  parentPort?.postMessage({ type: 'subject', subject } satisfies ToMain);
}

export type Callbacks = Partial<Pick<PrCheckInput, CallbackName>>;

async function inTurn(run: ToWorker, callbacks: Callbacks, subject: Subject, limits: CheckLimits) {
  await takeTurn(limits.workers ?? checkLimits().workers ?? 1);
  try {
    return await runInWorker(run, callbacks, subject, limits);
  } finally {
    giveTurnBack();
  }
}

async function runInWorker(
  run: ToWorker,
  callbacks: Callbacks,
  first: Subject,
  limits: CheckLimits,
): Promise<unknown> {
  let subject = first;
  const worker = await acquire(limits.memoryMb);
  return new Promise<unknown>((resolve, reject) => {
    let settled = false;
    const finish = (outcome: { result: unknown } | { error: Error }, reuse: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      worker.off('message', onMessage).off('error', onError).off('exit', onExit);
      if (reuse) release(worker, limits.memoryMb);
      else void worker.terminate();
      if ('result' in outcome) resolve(outcome.result);
      else reject(outcome.error);
    };
    const deadline = () =>
      setTimeout(
        () =>
          finish(
            {
              error: new CheckLimitError(
                `${subject.what} ran longer than catalog-bot's wall-clock limit of ${limits.timeoutMs / 1000} s (CATALOG_BOT_CHECK_TIMEOUT_MS) and ${subject.were} stopped`,
                subject.what,
              ),
            },
            false,
          ),
        limits.timeoutMs,
      );
    let timer = deadline();
    const onMessage = (m: ToMain) => {
      if (m.type === 'subject') {
        subject = m.subject;
        clearTimeout(timer);
        timer = deadline();
      } else if (m.type === 'done') {
        if (m.ok) finish({ result: m.result }, true);
        else finish({ error: fromPlainError(m.error) }, true);
      } else if (m.type === 'call') {
        const fn = callbacks[m.fn] as ((...args: unknown[]) => Promise<unknown>) | undefined;
        if (!fn) return;
        fn(...m.args).then(
          (value) => {
            if (!settled)
              worker.postMessage({ type: 'reply', callId: m.callId, ok: true, value } satisfies ToWorker);
          },
          (error: unknown) => {
            if (!settled)
              worker.postMessage({
                type: 'reply',
                callId: m.callId,
                ok: false,
                error: toPlainError(error),
              } satisfies ToWorker);
          },
        );
      }
    };
    const onError = (error: Error & { code?: string }) =>
      finish(
        {
          error:
            error.code === 'ERR_WORKER_OUT_OF_MEMORY'
              ? new CheckLimitError(
                  `${subject.what} needed more than catalog-bot's memory limit of ${limits.memoryMb} MiB (CATALOG_BOT_CHECK_MEMORY_MB) and ${subject.were} stopped`,
                  subject.what,
                )
              : error,
        },
        false,
      );
    const onExit = (code: number) =>
      finish({ error: new Error(`the check worker stopped (exit code ${code})`) }, false);
    worker.on('message', onMessage).on('error', onError).on('exit', onExit);
    worker.postMessage(run);
  });
}
