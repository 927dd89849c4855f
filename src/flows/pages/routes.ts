// The catalog pages the App serves (docs/site.md, "Served by the App"), on the webhook
// server: GET /catalog-bot/pages/<owner>/<repo>/ and below, the static site's pages for the
// catalogs of the repository's default branch, and pull/<n>/<head>, a pull request's impact.
// Only for public repositories the App is installed on: a private one, one the App is not
// installed on and one that does not exist all answer the same 404, so nothing is told about
// a private repository and there is no access check to get wrong.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { workModule } from '../../handlers/command-worker.js';
import { runTaskIsolated } from '../../checks/isolate.js';
import { revParse, withMirror } from '../../git/mirror.js';
import { SEARCH_JS, SEARCH_SCRIPT, SITE_CSS, STYLESHEET } from '../../site/html.js';
import { impactPage } from '../../site/impact-page.js';
import { INDEX } from '../../site/pages.js';
import { loadImpact } from './store.js';
import { PAGES_PREFIX } from './urls.js';
import type { PageWork, RenderedPage } from './work.js';

/** A repository whose pages may be shown, as GitHub describes it now. */
export interface PagesRepository {
  repoId: number;
  private: boolean;
  cloneUrl: string;
  defaultBranch: string;
  /** The default branch's commit. */
  sha: string;
  token?: string;
}

export interface PagesOptions {
  /** The App's work directory: stored impacts, and the pages' own mirrors under pages/. */
  workDir: string;
  /** The repository, or undefined when the App is not installed on it (or it does not exist). */
  repository(owner: string, repo: string): Promise<PagesRepository | undefined>;
  /** One site page at a commit of the pages mirror (default: in a check worker, ./work.ts). */
  render?: (work: PageWork) => Promise<RenderedPage>;
  /** How long a repository's lookup (and so its default branch's commit) is kept (default 60 s). */
  lookupTtlMs?: number;
  /** Told why a page could not be made (the answer itself says only that). */
  onError?: (error: unknown) => void;
  /** Repositories not seen in the last minute that may be asked of GitHub per minute (default 60). */
  lookupsPerMinute?: number;
}

const OWNER = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$/;
const REPO = /^[A-Za-z0-9._-]{1,100}$/;
// Site paths are made of plain or hex segments only (src/site/html.ts pathSegment).
const SITE_PATH = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,254}(?:\/[A-Za-z0-9_][A-Za-z0-9._-]{0,254}){0,3}$/;
const PULL = /^pull\/([1-9][0-9]{0,9})\/([0-9a-f]{40}|[0-9a-f]{64})$/;

/** Rendered pages kept, by repository, commit and path (bytes, about). */
const CACHE_BYTES = 64 * 1024 * 1024;
const MAX_LOOKUPS = 1000;
/** Commits whose site's paths are kept (what the catalogs hold: a few thousand names each). */
const MAX_KNOWN = 64;

const SECURITY_HEADERS = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  // The pages' own meta tag says the same; the header also covers the site's own files.
  'content-security-policy':
    "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:; frame-ancestors 'none'",
};

export function pagesRoutes(options: PagesOptions) {
  const render =
    options.render ??
    ((work: PageWork) =>
      // Not commandInWorker: a page is no comment, and bounding it to a comment's size would cut it.
      runTaskIsolated<RenderedPage>({
        module: workModule(import.meta.url, 'work'),
        fn: 'renderPage',
        input: work,
        what: 'a catalog page',
      }));
  const lookup = repositoryLookups(options);
  const sitePage = sitePages(render, pagesMirrors(join(options.workDir, 'pages')));
  return (req: IncomingMessage, res: ServerResponse): Promise<boolean> =>
    answerPagesRequest(req, res, options, lookup, sitePage);
}

type Lookup = (owner: string, repo: string) => Promise<PagesRepository | undefined>;
type SitePage = (r: PagesRepository, path: string) => Promise<string | undefined>;

/**
 * Repositories as GitHub describes them, each kept `lookupTtlMs`; repositories not looked up
 * in the last minute cost a GitHub request each: at most `lookupsPerMinute` a minute.
 */
function repositoryLookups(options: PagesOptions): Lookup {
  const ttl = options.lookupTtlMs ?? 60_000;
  const perMinute = options.lookupsPerMinute ?? 60;
  const lookups = new Map<string, { at: number; value: Promise<PagesRepository | undefined> }>();
  let lookupWindow = { start: Date.now(), count: 0 };
  return (owner, repo) => {
    const key = `${owner}/${repo}`.toLowerCase();
    const hit = lookups.get(key);
    if (hit && Date.now() - hit.at < ttl) return hit.value;
    if (Date.now() - lookupWindow.start >= 60_000) lookupWindow = { start: Date.now(), count: 0 };
    if (++lookupWindow.count > perMinute) return Promise.reject(new Error('too many repositories looked up'));
    const value = options.repository(owner, repo);
    lookups.delete(key);
    lookups.set(key, { at: Date.now(), value });
    if (lookups.size > MAX_LOOKUPS) lookups.delete(lookups.keys().next().value!);
    // A failed lookup is asked again next time.
    value.catch(() => lookups.delete(key));
    return value;
  };
}

/** The pages mirror of a repository with its default branch's commit, one fetch at a time per repository. */
function pagesMirrors(pagesWorkDir: string): (r: PagesRepository) => Promise<string> {
  /** Commits each repository's pages mirror has, and the mirror work queued per repository. */
  const fetched = new Set<string>();
  const mirrorTurns = new Map<number, Promise<unknown>>();
  return (r) => {
    const turn = (mirrorTurns.get(r.repoId) ?? Promise.resolve())
      .catch(() => undefined)
      .then(() =>
        withMirror(
          {
            cloneUrl: r.cloneUrl,
            repoId: r.repoId,
            ...(r.token ? { token: r.token } : {}),
            fetch: fetched.has(`${r.repoId}:${r.sha}`) ? [] : [`refs/heads/${r.defaultBranch}`],
          },
          async (dir) => {
            // The branch may have moved since GitHub was asked: the commit asked for must be here.
            if ((await revParse(dir, `${r.sha}^{commit}`)) !== r.sha) throw new Error('commit not fetched');
            if (fetched.size >= 10_000) fetched.clear();
            fetched.add(`${r.repoId}:${r.sha}`);
            return dir;
          },
          { workDir: pagesWorkDir },
        ),
      );
    mirrorTurns.set(r.repoId, turn);
    return turn;
  };
}

/**
 * A site page of a repository's default branch: from the cache of rendered pages, or rendered
 * (one at a time, however many are asked for: pages take at most one of the check workers'
 * turns, docs/security.md, bounded work); undefined when the site has no such page.
 */
function sitePages(
  render: (work: PageWork) => Promise<RenderedPage>,
  mirror: (r: PagesRepository) => Promise<string>,
): SitePage {
  const pages = new Map<string, string>();
  let cachedBytes = 0;
  const rendering = new Map<string, Promise<RenderedPage>>();
  let renderTurn: Promise<unknown> = Promise.resolve();
  // What each commit's site holds, once a page of it was made: unknown paths answer 404
  // without a worker.
  const known = new Map<string, { segments: Set<string>; paths: Map<string, Set<string>> }>();

  const renderOnce = (r: PagesRepository, path: string, key: string): Promise<RenderedPage> => {
    let running = rendering.get(key);
    if (!running) {
      const started = mirror(r).then((dir) => {
        const turn = renderTurn.catch(() => undefined).then(() => render({ dir, sha: r.sha, path }));
        renderTurn = turn;
        return turn;
      });
      rendering.set(key, started);
      void started.finally(() => rendering.delete(key)).catch(() => undefined);
      running = started;
    }
    return running;
  };
  const remember = (key: string, html: string): void => {
    if (pages.has(key)) return;
    pages.set(key, html);
    cachedBytes += html.length;
    for (const [k, v] of pages) {
      if (cachedBytes <= CACHE_BYTES) break;
      pages.delete(k);
      cachedBytes -= v.length;
    }
  };

  return async (r, path) => {
    const commit = `${r.repoId}\0${r.sha}`;
    const key = `${commit}\0${path}`;
    const site = known.get(commit);
    const segment = path.split('/')[0]!;
    if (site && path.includes('/') && !site.segments.has(segment)) return undefined;
    if (site?.paths.has(segment) && !site.paths.get(segment)!.has(path)) return undefined;
    const hit = pages.get(key);
    if (hit !== undefined) {
      pages.delete(key);
      pages.set(key, hit);
      return hit;
    }
    const outcome = await renderOnce(r, path, key);
    const entry = known.get(commit) ?? { segments: new Set(outcome.segments), paths: new Map() };
    for (const [seg, paths] of Object.entries(outcome.paths)) entry.paths.set(seg, new Set(paths));
    known.delete(commit);
    known.set(commit, entry);
    if (known.size > MAX_KNOWN) known.delete(known.keys().next().value!);
    if (!outcome.ok) return outcome.say ? Promise.reject(new Error(outcome.say)) : undefined;
    remember(key, outcome.say);
    return outcome.say;
  };
}

/** One request under PAGES_PREFIX answered (false: not a pages request). */
async function answerPagesRequest(
  req: IncomingMessage,
  res: ServerResponse,
  options: PagesOptions,
  lookup: Lookup,
  sitePage: SitePage,
): Promise<boolean> {
  const url = req.url ?? '';
  if (!url.startsWith(PAGES_PREFIX)) return false;
  const send = (status: number, type: string, body: string, extra: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': type, ...SECURITY_HEADERS, ...extra });
    res.end(req.method === 'HEAD' ? undefined : body);
    return true;
  };
  const notFound = (why = 'No catalog pages here.') => send(404, 'text/plain; charset=utf-8', `${why}\n`);
  if (req.method !== 'GET' && req.method !== 'HEAD')
    return send(405, 'text/plain; charset=utf-8', 'GET only.\n', { allow: 'GET, HEAD' });
  const rawPath = url.split('?')[0]!.slice(PAGES_PREFIX.length);
  const [owner = '', repo = '', ...rest] = rawPath.split('/');
  if (!OWNER.test(owner) || !REPO.test(repo) || repo === '.' || repo === '..') return notFound();
  // Relative links need the repository's directory to end in a slash.
  if (rest.length === 0) return send(301, 'text/plain; charset=utf-8', '', { location: `${repo}/` });
  let path = rest.join('/');
  if (path === '' || path.endsWith('/')) path += INDEX;
  if (!SITE_PATH.test(path) || path.split('/').some((s) => s === '.' || s === '..')) return notFound();
  try {
    const r = await lookup(owner, repo);
    // A private repository gets the answer of one that does not exist (docs/site.md).
    if (!r || r.private) return notFound();
    if (path === STYLESHEET) return send(200, 'text/css; charset=utf-8', SITE_CSS);
    if (path === SEARCH_SCRIPT) return send(200, 'text/javascript; charset=utf-8', SEARCH_JS);
    const pull = PULL.exec(path);
    if (pull) {
      const stored = await loadImpact(options.workDir, r.repoId, Number(pull[1]), pull[2]!);
      if (!stored)
        return notFound(
          'No impact is known here for this head: its checks have not run on this server yet, or it was removed since.',
        );
      return send(200, 'text/html; charset=utf-8', impactPage(stored));
    }
    const html = await sitePage(r, path);
    return html === undefined
      ? notFound('No such page on the default branch.')
      : send(200, 'text/html; charset=utf-8', html, { 'cache-control': 'public, max-age=60' });
  } catch (error) {
    // Names no path or repository detail: the reason is the operator's, in the logs.
    options.onError?.(error);
    return send(503, 'text/plain; charset=utf-8', 'The page could not be made just now; try again later.\n', {
      'retry-after': '30',
    });
  }
}
