// Files of a repository's commits, read from git's objects (no work tree): one file at a
// time through one `git cat-file --batch` process (GitFiles), or one file (readFileAt).
import { startGit, type GitProcess } from './helper.js';

/** The text of `path` at commit `rev`, or undefined when the commit has no such file. */
export async function readFileAt(repo: string, rev: string, path: string): Promise<string | undefined> {
  const files = new GitFiles(repo);
  try {
    return await files.read(rev, path);
  } finally {
    files.close();
  }
}

/** The most bytes GitFiles reads of one file: config, OWNERS, templates are far smaller. */
export const MAX_GIT_FILE_BYTES = 16 * 1024 * 1024;

interface PendingRead {
  resolve: (text: string | undefined) => void;
  reject: (error: Error) => void;
}

/**
 * The longest path GitFiles reads: PATH_MAX, as git on Linux can check out. A longer one (a
 * pull request can commit one) fails only its own read, with PathTooLongError.
 */
export const MAX_GIT_PATH_BYTES = 4096;

/** The longest revision GitFiles takes: the callers' own (object ids, branch names). */
const MAX_GIT_REV_BYTES = 256;

/** The longest answer line GitFiles reads: "<rev>:<path> missing" echoes the request. */
const MAX_HEADER_BYTES = MAX_GIT_REV_BYTES + MAX_GIT_PATH_BYTES + 64;

/** A path over MAX_GIT_PATH_BYTES: not read, and the reader goes on with the next. */
export class PathTooLongError extends Error {
  constructor(
    readonly path: string,
    readonly bytes: number,
  ) {
    super(
      `cannot read ${shortPath(path)}: its path is ${bytes} bytes, over the ${MAX_GIT_PATH_BYTES}-byte limit (PATH_MAX)`,
    );
    this.name = 'PathTooLongError';
  }
}

/** A path for a message: a long one by its start and end. */
export function shortPath(path: string): string {
  return path.length <= 120 ? path : `${path.slice(0, 60)}…${path.slice(-40)}`;
}

/**
 * Files of a repository's commits, read through one `git cat-file --batch` process however
 * many are asked for (a pull request's checks read dozens of OWNERS files; a process each
 * cost more than the checks). A missing path or one that is not a file reads as undefined;
 * a file over `maxBytes` is an error, and its bytes are skipped as they stream, never held.
 */
export class GitFiles {
  private child: GitProcess | undefined;
  private readonly pending: PendingRead[] = [];
  private buffered = Buffer.alloc(0);
  // The object being received: its type and the bytes still to come (+1 for the closing LF).
  private body: { type: string; size: number; parts: Buffer[]; left: number } | undefined;
  private failure: Error | undefined;

  constructor(
    private readonly repo: string,
    private readonly maxBytes = MAX_GIT_FILE_BYTES,
  ) {}

  read(rev: string, path: string): Promise<string | undefined> {
    // The request is one line: a line break in it would ask for something else.
    if (/[\n\0]/.test(rev + path))
      return Promise.reject(new Error(`cannot read ${JSON.stringify(path)}: its name has a line break`));
    // git takes a leading ./ or ../ as relative to a work tree and ends the whole process.
    if (/^\.\.?\//.test(path))
      return Promise.reject(
        new Error(`cannot read ${JSON.stringify(path)}: a path in a commit has no ./ or ../`),
      );
    // git answers a missing name by echoing it: the answer's line must fit the reader's bound.
    const pathBytes = Buffer.byteLength(path);
    if (pathBytes > MAX_GIT_PATH_BYTES) return Promise.reject(new PathTooLongError(path, pathBytes));
    if (Buffer.byteLength(rev) > MAX_GIT_REV_BYTES)
      return Promise.reject(new Error(`cannot read at a revision of ${Buffer.byteLength(rev)} bytes`));
    if (this.failure) return Promise.reject(this.failure);
    const child = this.start();
    return new Promise((resolve, reject) => {
      this.pending.push({ resolve, reject });
      child.stdin?.write(`${rev}:${path}\n`);
    });
  }

  /** Ends the git process; reads still waiting fail. */
  close(): void {
    this.child?.stdin?.end();
    this.child = undefined;
  }

  private start(): GitProcess {
    if (this.child) return this.child;
    const child = startGit(['-C', this.repo, 'cat-file', '--batch'], { stdin: true });
    const err: Buffer[] = [];
    child.stderr.on('data', (d: Buffer) => err.push(d));
    child.stdout.on('data', (d: Buffer) => {
      try {
        this.receive(d);
      } catch (e) {
        this.fail(e as Error);
        child.kill();
      }
    });
    child.on('error', (e) => this.fail(e));
    child.on('close', () => {
      const reason = Buffer.concat(err).toString('utf8').trim();
      this.fail(new Error(`git cat-file ended${reason ? `: ${reason}` : ''}`));
    });
    this.child = child;
    return child;
  }

  private fail(error: Error): void {
    this.failure ??= error;
    for (const p of this.pending.splice(0)) p.reject(error);
  }

  private receive(data: Buffer): void {
    let chunk = data;
    while (chunk.length > 0) {
      if (this.body) {
        const take = Math.min(this.body.left, chunk.length);
        // Bytes of a file over the limit, and of trees, are dropped as they come.
        if (this.body.type === 'blob' && this.body.size <= this.maxBytes)
          this.body.parts.push(chunk.subarray(0, take));
        this.body.left -= take;
        chunk = chunk.subarray(take);
        if (this.body.left === 0) this.finishBody();
        continue;
      }
      const nl = chunk.indexOf(0x0a);
      if (nl === -1) {
        this.buffered = Buffer.concat([this.buffered, chunk]);
        if (this.buffered.length > MAX_HEADER_BYTES) throw new Error('git cat-file: header line too long');
        return;
      }
      const header = Buffer.concat([this.buffered, chunk.subarray(0, nl)]).toString('utf8');
      this.buffered = Buffer.alloc(0);
      chunk = chunk.subarray(nl + 1);
      // "<object> <type> <size>", or "<request> missing" (the request may hold spaces).
      const match = /^[0-9a-f]+ (\w+) (\d+)$/.exec(header);
      if (!match) {
        this.pending.shift()?.resolve(undefined);
        continue;
      }
      const size = Number(match[2]);
      this.body = { type: match[1] as string, size, parts: [], left: size + 1 };
    }
  }

  private finishBody(): void {
    const { type, size, parts } = this.body as NonNullable<GitFiles['body']>;
    this.body = undefined;
    const request = this.pending.shift();
    if (!request) return;
    if (type !== 'blob') {
      request.resolve(undefined);
    } else if (size > this.maxBytes) {
      request.reject(
        new Error(`file is ${size} bytes, over the ${this.maxBytes}-byte limit for this file; not read`),
      );
    } else {
      request.resolve(Buffer.concat(parts).subarray(0, size).toString('utf8'));
    }
  }
}
