// A second thread for `catalog-bot validate`: opm decodes files in parallel, and so does the
// bot, on a worker thread that claims files from the same list as the main thread
// (loadShared). Only validationOnly loads use it, so what it hands back is small.
// This module loads no catalog code itself, so the command can start the thread first.
import { Worker } from 'node:worker_threads';
import type { DirectoryReadState, DirectorySource } from '../source.js';

/**
 * Another thread that loads files of the same catalog: it claims files from the job's
 * shared counter as the main thread does, and hands back what it loaded.
 */
export interface LoadHelper<Result = unknown> {
  start(job: SharedLoadJob): { finish(): Promise<Map<number, Result>> };
}

export interface SharedLoadJob {
  source: DirectoryReadState;
  paths: string[];
  /** Indices into `paths` in the order files are claimed: the largest first, so both threads end together. */
  order: number[];
  /** Int32Array [next claim, helper state] shared by both threads. */
  claims: SharedArrayBuffer;
}

const NEXT_CLAIM = 0;
const HELPER_STATE = 1;
const OPEN = 0;
const JOINED = 1;
const CLOSED = 2;

/** The next position in `order` to load (past its end: nothing is left). */
export function claimNext(job: SharedLoadJob): number {
  return Atomics.add(new Int32Array(job.claims), NEXT_CLAIM, 1);
}

/** The helper joins the job; false when the main thread has already closed it. */
export function joinLoadJob(job: SharedLoadJob): boolean {
  return Atomics.compareExchange(new Int32Array(job.claims), HELPER_STATE, OPEN, JOINED) === OPEN;
}

/** Close the job to the helper; true when it had joined (its results are to be waited for). */
export function closeLoadJob(job: SharedLoadJob): boolean {
  return Atomics.compareExchange(new Int32Array(job.claims), HELPER_STATE, OPEN, CLOSED) === JOINED;
}

/**
 * Load files of the job with `loadOne` until none is left to claim, handing each result to
 * `each`. The helper thread first joins the job; false when the job was already over.
 */
export function loadClaimedFiles<Result>(
  job: SharedLoadJob,
  asHelper: boolean,
  loadOne: (path: string) => Result,
  each: (index: number, result: Result) => void,
): boolean {
  if (asHelper && !joinLoadJob(job)) return false;
  for (;;) {
    const k = claimNext(job);
    if (k >= job.order.length) return true;
    const index = job.order[k] as number;
    each(index, loadOne(job.paths[index] as string));
  }
}

/**
 * Load `paths` on this thread and the helper's, each claiming the next file when done with
 * one; the results come in the order of `paths`, as one thread would have made them. A file
 * the helper claimed but did not hand back (it failed) is loaded here.
 */
export async function loadShared<Result>(
  source: DirectorySource,
  paths: string[],
  sizes: Map<string, number>,
  helper: LoadHelper<Result>,
  loadOne: (path: string) => Result,
): Promise<Result[]> {
  const order = paths
    .map((_, i) => i)
    .sort((a, b) => (sizes.get(paths[b]!) ?? 0) - (sizes.get(paths[a]!) ?? 0));
  const job: SharedLoadJob = {
    source: source.readState(),
    paths,
    order,
    claims: new SharedArrayBuffer(2 * Int32Array.BYTES_PER_ELEMENT),
  };
  const running = helper.start(job);
  const results: (Result | undefined)[] = new Array(paths.length);
  loadClaimedFiles(job, false, loadOne, (i, r) => (results[i] = r));
  const helped = await running.finish();
  return paths.map((path, i) => results[i] ?? helped.get(i) ?? loadOne(path));
}

let startedEarly: LoadHelper | undefined;

/**
 * Start the helper thread before anything else is loaded (the command line does this for
 * `validate`, first thing): the thread starts and loads its code while the main thread loads
 * its own, instead of after it (README, "Benchmarks").
 */
export function startLoadHelperEarly(): void {
  startedEarly ??= startLoadHelper();
}

/** The helper started early, if any (once), or a new one. */
export function takeLoadHelper<Result>(): LoadHelper<Result> {
  const helper = startedEarly as LoadHelper<Result> | undefined;
  startedEarly = undefined;
  return helper ?? startLoadHelper<Result>();
}

/** Worker to main thread. */
export type HelperMessage<Result = unknown> =
  | { type: 'file'; job: number; index: number; result: Result }
  | { type: 'done'; job: number; joined: boolean };

/**
 * Start the helper thread now (it takes a moment to start, while the main thread lists the
 * catalog). It never keeps the process alive; a helper that fails only leaves its files to
 * the main thread.
 */
// Generic in what a file's result is, so this module needs nothing of load.ts (no import cycle).
export function startLoadHelper<Result>(): LoadHelper<Result> {
  const here = import.meta.url;
  // From the TypeScript sources (the tests), the worker loads them through hooks that strip
  // the types; the built command runs dist/catalog/fbc/fast/load-worker.js.
  const worker = here.endsWith('.ts')
    ? new Worker(
        `require('node:module').register(${JSON.stringify(new URL('../../../checks/worker-ts-hooks.mjs', here).href)});` +
          `import(${JSON.stringify(new URL('./load-worker.ts', here).href)});`,
        { eval: true },
      )
    : new Worker(new URL('./load-worker.js', here));
  let failed = false;
  let jobs = 0;
  const listeners = new Set<(m: HelperMessage<Result> | undefined) => void>();
  worker.on('message', (m: HelperMessage<Result>) => listeners.forEach((l) => l(m)));
  const fail = (): void => {
    failed = true;
    listeners.forEach((l) => l(undefined));
  };
  worker.on('error', fail);
  worker.on('exit', fail);
  // After the listeners: adding a 'message' listener refs the worker again.
  worker.unref();
  return {
    start(job: SharedLoadJob) {
      const id = ++jobs;
      const results = new Map<number, Result>();
      let finished: (() => void) | undefined;
      let done = failed;
      const listener = (m: HelperMessage<Result> | undefined): void => {
        if (m === undefined) done = true;
        else if (m.job !== id) return;
        else if (m.type === 'file') results.set(m.index, m.result);
        else done = true;
        if (done) {
          listeners.delete(listener);
          finished?.();
        }
      };
      if (!failed) {
        listeners.add(listener);
        worker.postMessage({ id, job });
      }
      return {
        finish: () =>
          new Promise<Map<number, Result>>((resolve) => {
            // A helper that has not joined yet never will: nothing to wait for.
            if (done || !closeLoadJob(job)) {
              listeners.delete(listener);
              resolve(results);
              return;
            }
            worker.ref();
            finished = () => {
              worker.unref();
              resolve(results);
            };
          }),
      };
    },
  };
}
