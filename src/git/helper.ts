// Git started by a small helper process (docs/architecture.md, "src/git/"). Starting a
// process copies the starter's page tables: from the App, holding decoded catalogs in
// hundreds of megabytes, each git costs 10-100 ms with its event loop blocked; from a
// helper of a few tens of megabytes, about one. The helper runs git with the arguments and
// environment each run sends (never a shell), one socket connection a run, in a directory
// only this user can enter, and ends when the process that started it goes away.
import { createRequire } from 'node:module';
import type { ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';
import { EventEmitter } from 'node:events';

const require = createRequire(import.meta.url);

/** What a caller sees of one git run: the shape of a ChildProcess's parts it uses. */
export interface GitProcess {
  /** git's standard input, when the run was started with `stdin: true`. */
  readonly stdin: { write(data: Buffer | string): boolean; end(data?: Buffer | string): void } | null;
  readonly stdout: DataSource;
  readonly stderr: DataSource;
  /** Stops the run; 'close' follows. */
  kill(): void;
  on(event: 'close', listener: (code: number | null) => void): this;
  on(event: 'error', listener: (error: Error) => void): this;
}

interface DataSource {
  on(event: 'data', listener: (data: Buffer) => void): unknown;
}

// Frames from the helper: one byte of kind, four of length, then the payload.
const FRAME = {
  out: 1,
  err: 2,
  exit: 3, // JSON { code }
  failed: 4, // git could not be started: the message
} as const;

/**
 * The helper's program. It runs in another process from its source text (`node -e`), so it
 * names nothing outside itself: `require`, the socket's directory and the frame kinds are its
 * arguments.
 */
export function serveGitRuns(require: NodeJS.Require, dir: string, frame: typeof FRAME): void {
  const net = require('node:net') as typeof import('node:net');
  const { spawn } = require('node:child_process') as typeof import('node:child_process');
  const { rmSync } = require('node:fs') as typeof import('node:fs');
  const socketPath = `${dir}/git.sock`;
  const serve = (socket: Socket): void => {
    let head = Buffer.alloc(0);
    let child: ChildProcess | undefined;
    let done = false;
    const send = (kind: number, payload: Buffer): boolean => {
      const header = Buffer.alloc(5);
      header[0] = kind;
      header.writeUInt32BE(payload.length, 1);
      socket.write(header);
      return socket.write(payload);
    };
    const finish = (kind: number, payload: Buffer): void => {
      if (done) return;
      done = true;
      send(kind, payload);
      socket.end();
    };
    const start = (request: { args: string[]; env: NodeJS.ProcessEnv; stdin: boolean }, rest: Buffer) => {
      const run = spawn('git', request.args, {
        env: request.env,
        stdio: [request.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'],
      });
      child = run;
      const stdout = run.stdout!;
      stdout.on('data', (d: Buffer) => {
        // The caller reads slower than git writes: hold git back rather than the bytes.
        if (!send(frame.out, d)) {
          stdout.pause();
          socket.once('drain', () => stdout.resume());
        }
      });
      run.stderr!.on('data', (d: Buffer) => send(frame.err, d));
      run.on('error', (e) => finish(frame.failed, Buffer.from(e.message)));
      run.on('close', (code) => finish(frame.exit, Buffer.from(JSON.stringify({ code }))));
      if (run.stdin) {
        run.stdin.on('error', () => undefined); // git may exit before reading its input
        if (rest.length > 0) run.stdin.write(rest);
        if (socket.readableEnded) run.stdin.end();
      }
    };
    socket.on('data', (d: Buffer) => {
      if (child) {
        if (child.stdin && !child.stdin.write(d)) {
          socket.pause();
          child.stdin.once('drain', () => socket.resume());
        }
        return;
      }
      head = Buffer.concat([head, d]);
      const nl = head.indexOf(0x0a);
      if (nl === -1) return;
      try {
        start(JSON.parse(head.subarray(0, nl).toString('utf8')), head.subarray(nl + 1));
      } catch (e) {
        finish(frame.failed, Buffer.from(`the git helper could not read a request: ${(e as Error).message}`));
      }
    });
    socket.on('end', () => child?.stdin?.end());
    socket.on('close', () => {
      if (!done) child?.kill();
    });
    socket.on('error', () => undefined);
  };
  const server = net.createServer({ allowHalfOpen: true }, serve);
  server.listen(socketPath, () => process.stdout.write(`${socketPath}\n`));
  const stop = (): void => {
    rmSync(dir, { recursive: true, force: true });
    process.exit(0);
  };
  // The starter's end closes this pipe: the helper never outlives it.
  process.stdin.on('end', stop).on('error', stop).resume();
}

// One helper a thread (a check worker is a thread of its own), kept on the thread's global
// object so a module loaded twice (tests) shares it.
const HELPER = Symbol.for('catalog-bot.git-helper');
type Holder = { [HELPER]?: { ready: Promise<Helper>; running?: Helper } };

/** A running helper: where it listens, and its process id. */
export interface Helper {
  socket: string;
  pid: number;
}

/** This thread's helper, started on first use. */
export function helper(): Promise<Helper> {
  const holder = globalThis as Holder;
  if (holder[HELPER] === undefined) {
    const entry: NonNullable<Holder[typeof HELPER]> = {
      ready: startHelper().then(
        (running) => (entry.running = running),
        (error: unknown) => {
          delete holder[HELPER]; // the next run tries again
          throw error;
        },
      ),
    };
    holder[HELPER] = entry;
  }
  return holder[HELPER].ready;
}

/** Forget a helper that has gone (not a newer one): the next run starts another. */
function forget(gone: Helper): void {
  const holder = globalThis as Holder;
  if (holder[HELPER]?.running === gone) delete holder[HELPER];
}

async function startHelper(): Promise<Helper> {
  const { spawn } = require('node:child_process') as typeof import('node:child_process');
  const { mkdtempSync, rmSync } = require('node:fs') as typeof import('node:fs');
  const { tmpdir } = require('node:os') as typeof import('node:os');
  const { join } = require('node:path') as typeof import('node:path');
  const dir = mkdtempSync(join(tmpdir(), 'catalog-bot-git-')); // mode 0700
  // `__name` is defined for the case a compiler wrapped the program's functions to keep names.
  const program = `var __name = (f) => f; (${serveGitRuns.toString()})(require, process.argv[1], ${JSON.stringify(FRAME)});`;
  const child = spawn(process.execPath, ['-e', program, dir], {
    env: {},
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const socketPath = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString('utf8');
      if (out.endsWith('\n')) resolve(out.trim());
    });
    child.on('error', (e) => reject(new Error(`cannot start the git helper: ${e.message}`)));
    child.on('exit', (code) => reject(new Error(`the git helper stopped as it started (exit ${code})`)));
  });
  child.stdout.destroy();
  const started = { socket: socketPath, pid: child.pid as number };
  child.on('exit', () => {
    rmSync(dir, { recursive: true, force: true }); // a killed helper cannot clean up itself
    forget(started);
  });
  // The helper never keeps this process alive.
  (child.stdin as unknown as Socket).unref();
  child.unref();
  return started;
}

/** One git run through the helper. */
class HelperRun extends EventEmitter implements GitProcess {
  readonly stdout = new EventEmitter();
  readonly stderr = new EventEmitter();
  readonly stdin: GitProcess['stdin'];
  /** The connection once made: what stdin writes go to. */
  private socket: Socket | undefined;
  /** The connection being made or made. */
  private connection: Socket | undefined;
  private pendingInput: (Buffer | string)[] = [];
  private inputEnded = false;
  private killed = false;
  private closed = false;
  /** The frame being read: its kind, the bytes still to come, and (exit, failed) what came. */
  private frame: { kind: number; left: number; parts: Buffer[] } | undefined;
  /** A frame header split between two reads. */
  private header: Buffer = Buffer.alloc(0);
  private readonly request: { args: string[]; env: NodeJS.ProcessEnv; stdin: boolean };

  constructor(args: string[], env: NodeJS.ProcessEnv, withStdin: boolean) {
    super();
    this.request = { args, env, stdin: withStdin };
    this.stdin = withStdin
      ? {
          write: (data) => {
            if (this.socket) return this.socket.write(data);
            this.pendingInput.push(data);
            return true;
          },
          end: (data) => {
            if (data !== undefined) this.stdin?.write(data);
            this.inputEnded = true;
            this.socket?.end();
          },
        }
      : null;
    this.start(true);
  }

  private start(mayRetry: boolean): void {
    helper().then(
      (running) => this.connect(running, mayRetry),
      (error: Error) => this.fail(error),
    );
  }

  kill(): void {
    this.killed = true;
    // A connection still being made is dropped too: its request is never sent.
    this.connection?.destroy();
    this.close(null);
  }

  private connect(running: Helper, mayRetry: boolean): void {
    if (this.killed) return;
    const net = require('node:net') as typeof import('node:net');
    const socket = net.createConnection(running.socket);
    this.connection = socket;
    socket.on('connect', () => {
      this.socket = socket;
      socket.write(`${JSON.stringify(this.request)}\n`);
      for (const data of this.pendingInput.splice(0)) socket.write(data);
      if (!this.request.stdin || this.inputEnded) socket.end();
    });
    socket.on('data', (d: Buffer) => this.receive(d));
    socket.on('error', (e: NodeJS.ErrnoException) => {
      // A helper that has just died refuses the connection before git was asked for
      // anything: forget it, and start this run on a new one.
      if (this.socket === undefined && mayRetry && (e.code === 'ECONNREFUSED' || e.code === 'ENOENT')) {
        forget(running);
        return this.start(false);
      }
      this.fail(
        new Error(
          this.socket === undefined
            ? `cannot reach the git helper: ${e.message}`
            : `the git helper stopped during a run (${e.message})`,
        ),
      );
    });
    socket.on('close', () => {
      if (this.socket === socket) this.fail(new Error('the git helper stopped during a run'));
    });
  }

  // Output payloads are passed on as slices of what the socket read, never copied: a
  // listing of 10 MB goes through in the socket's chunks (test/indexignore-size.test.ts).
  private receive(data: Buffer): void {
    let at = 0;
    while (at < data.length) {
      if (this.frame === undefined) {
        const need = 5 - this.header.length;
        this.header = Buffer.concat([this.header, data.subarray(at, at + need)]);
        at += Math.min(need, data.length - at);
        if (this.header.length < 5) return;
        this.frame = { kind: this.header.readUInt8(0), left: this.header.readUInt32BE(1), parts: [] };
        this.header = Buffer.alloc(0);
      }
      const frame = this.frame;
      const part = data.subarray(at, at + frame.left);
      at += part.length;
      frame.left -= part.length;
      if (frame.kind === FRAME.out) this.stdout.emit('data', part);
      else if (frame.kind === FRAME.err) this.stderr.emit('data', part);
      else frame.parts.push(part);
      if (frame.left > 0) return;
      this.frame = undefined;
      const payload = () => Buffer.concat(frame.parts).toString('utf8');
      if (frame.kind === FRAME.exit) this.close((JSON.parse(payload()) as { code: number | null }).code);
      else if (frame.kind === FRAME.failed) this.fail(new Error(payload()));
    }
  }

  private fail(error: Error): void {
    if (this.closed) return;
    this.closed = true;
    this.emit('error', error);
  }

  private close(code: number | null): void {
    if (this.closed) return;
    this.closed = true;
    this.emit('close', code);
  }
}

/** Start git with `args` (never a shell) through this thread's helper. */
export function startGit(
  args: string[],
  options: { env?: NodeJS.ProcessEnv; stdin?: boolean } = {},
): GitProcess {
  return new HelperRun(args, options.env ?? process.env, options.stdin ?? false);
}
