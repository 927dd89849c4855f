// The helper thread of load-threads.ts: loads the files it claims and posts each result.
import { parentPort } from 'node:worker_threads';
import { loadOneFile, type LoadResult } from '../load.js';
import { loadClaimedFiles, type HelperMessage, type SharedLoadJob } from './load-threads.js';
import { DirectorySource } from '../source.js';

const port = parentPort;
if (!port) throw new Error('load-worker.js runs as a worker thread');

port.on('message', ({ id, job }: { id: number; job: SharedLoadJob }) => {
  const post = (m: HelperMessage<LoadResult>): void => port.postMessage(m);
  const source = DirectorySource.fromReadState(job.source);
  const joined = loadClaimedFiles(
    job,
    true,
    (path) => loadOneFile(source, path),
    (index, result) => post({ type: 'file', job: id, index, result }),
  );
  post({ type: 'done', job: id, joined });
});
