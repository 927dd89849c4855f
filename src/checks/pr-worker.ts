// The worker thread that runs the checks of one pull request at a time, or a comment
// command's catalog work, off the App's event loop (docs/security.md, bounded work). What
// needs the network or GitHub (registry lookups, team members) stays on the main thread:
// the worker asks for it by message.
import { parentPort } from 'node:worker_threads';
import { runPrChecksInProcess, type PrCheckInput } from './pr.js';
import { fromPlainError, toPlainError, type CallbackName, type ToMain, type ToWorker } from './isolate.js';

const port = parentPort;
if (!port) throw new Error('pr-worker.js runs as a worker thread');

const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: unknown) => void }>();
let calls = 0;

function post(message: ToMain): void {
  port!.postMessage(message);
}

/** A main-thread callback, called from here. */
function remote(fn: CallbackName) {
  return (...args: unknown[]): Promise<never> =>
    new Promise((resolve, reject) => {
      const callId = ++calls;
      pending.set(callId, { resolve: resolve as (v: unknown) => void, reject });
      post({ type: 'call', callId, fn, args });
    });
}

port.on('message', (message: ToWorker) => {
  if (message.type === 'reply') {
    const waiting = pending.get(message.callId);
    pending.delete(message.callId);
    if (message.ok) waiting?.resolve(message.value);
    else waiting?.reject(fromPlainError(message.error));
    return;
  }
  if (message.type === 'task') {
    // Other catalog work (a comment command's): the module's export, called with plain data
    // and the main-thread callbacks it was given.
    const input = { ...(message.input as object) };
    for (const fn of message.callbacks) Object.assign(input, { [fn]: remote(fn) });
    import(message.module)
      .then((module: Record<string, (input: unknown) => Promise<unknown>>) => module[message.fn]!(input))
      .then(
        (result) => post({ type: 'done', ok: true, result }),
        (error: unknown) => post({ type: 'done', ok: false, error: toPlainError(error) }),
      );
    return;
  }
  const input: PrCheckInput = { ...message.input };
  for (const fn of message.callbacks) Object.assign(input, { [fn]: remote(fn) });
  runPrChecksInProcess(input).then(
    (result) =>
      post({
        type: 'done',
        ok: true,
        // The reports (whole catalog models) stay here: callers read the checks.
        result: {
          roots: result.roots.map((r) => ({ path: r.path, packages: r.packages })),
          checks: result.checks,
          ...(result.subjects ? { subjects: result.subjects } : {}),
          ...(result.agreed ? { agreed: result.agreed } : {}),
          ...(result.pruned ? { pruned: result.pruned } : {}),
          ...(result.ran ? { ran: result.ran } : {}),
          ...(result.release ? { release: result.release } : {}),
          ...(result.mergedRelease ? { mergedRelease: result.mergedRelease } : {}),
          ...(result.causes ? { causes: result.causes } : {}),
          ...(result.releasedRoots ? { releasedRoots: result.releasedRoots } : {}),
          ...(result.indexed ? { indexed: result.indexed } : {}),
          ...(result.impact ? { impact: result.impact } : {}),
        },
      }),
    (error: unknown) => post({ type: 'done', ok: false, error: toPlainError(error) }),
  );
});

post({ type: 'ready' });
