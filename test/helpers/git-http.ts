// A private git host on 127.0.0.1: real `git http-backend` (smart HTTP, protocol v2,
// partial clone) behind a node:http server that answers 401 to any request without the
// installation token (x-access-token basic auth, as GitHub takes it). Repositories are
// served at paths that tests can change (a rename: the old path answers 404).
import { execFileSync, spawn } from 'node:child_process';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface GitHttpServer {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  /** Serve the bare repository at `path` (e.g. `/o/r.git`); returns its clone URL. */
  serve: (path: string, bare: string) => string;
  /** Stop serving `path`: it answers 404 from now on. */
  unserve: (path: string) => void;
  /** Every request: its path and whether it carried the token. */
  requests: { path: string; authorized: boolean }[];
  close: () => Promise<void>;
}

export async function startGitHttp(token: string): Promise<GitHttpServer> {
  const repos = new Map<string, string>();
  const requests: GitHttpServer['requests'] = [];
  const expected = `basic ${Buffer.from(`x-access-token:${token}`).toString('base64')}`.toLowerCase();
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const authorized = (req.headers.authorization ?? '').toLowerCase() === expected;
    requests.push({ path: url.pathname, authorized });
    if (!authorized) {
      res.writeHead(401, { 'www-authenticate': 'Basic realm="git"' }).end();
      return;
    }
    const path = [...repos.keys()].find((p) => url.pathname.startsWith(p + '/'));
    if (path === undefined) {
      res.writeHead(404).end();
      return;
    }
    const child = spawn('git', ['http-backend'], {
      env: {
        ...process.env,
        GIT_PROJECT_ROOT: repos.get(path)!,
        GIT_HTTP_EXPORT_ALL: '1',
        PATH_INFO: url.pathname.slice(path.length),
        QUERY_STRING: url.search.replace(/^\?/, ''),
        REQUEST_METHOD: req.method ?? 'GET',
        CONTENT_TYPE: req.headers['content-type'] ?? '',
        ...(req.headers['content-encoding']
          ? { HTTP_CONTENT_ENCODING: req.headers['content-encoding'] }
          : {}),
        ...(req.headers['git-protocol'] ? { GIT_PROTOCOL: String(req.headers['git-protocol']) } : {}),
        REMOTE_USER: 'x-access-token',
        REMOTE_ADDR: '127.0.0.1',
      },
    });
    req.pipe(child.stdin);
    let head = Buffer.alloc(0);
    let started = false;
    child.stdout.on('data', (chunk: Buffer) => {
      if (started) {
        res.write(chunk);
        return;
      }
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      started = true;
      let status = 200;
      const headers: Record<string, string> = {};
      for (const line of head.subarray(0, end).toString('latin1').split('\r\n')) {
        const i = line.indexOf(':');
        const name = line.slice(0, i).trim();
        const value = line.slice(i + 1).trim();
        if (name.toLowerCase() === 'status') status = Number(value.split(' ')[0]);
        else headers[name] = value;
      }
      res.writeHead(status, headers);
      res.write(head.subarray(end + 4));
    });
    child.on('close', () => {
      if (!started) res.writeHead(500);
      res.end();
    });
  };
  const server = createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    requests,
    serve: (path, bare) => {
      // What GitHub allows: partial clones, and fetching any commit or blob by id.
      execFileSync('git', ['-C', bare, 'config', 'uploadpack.allowFilter', 'true']);
      execFileSync('git', ['-C', bare, 'config', 'uploadpack.allowAnySHA1InWant', 'true']);
      repos.set(path, bare);
      return origin + path;
    },
    unserve: (path) => void repos.delete(path),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
