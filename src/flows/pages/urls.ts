// Where the App serves catalog pages (docs/site.md, "Served by the App"):
// /catalog-bot/pages/<owner>/<repo>/<site path>, the site path being the static site's
// (src/site/pages.ts) or the pull-request impact page's (src/site/impact-page.ts).

export const PAGES_PREFIX = '/catalog-bot/pages/';

/**
 * The App's public URL (CATALOG_BOT_PUBLIC_URL, like https://catalog-bot.example.com), without
 * a trailing slash; undefined when unset or not an http(s) URL: then no link points at pages.
 */
export function publicUrlFromEnv(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const value = env.CATALOG_BOT_PUBLIC_URL?.trim();
  if (!value) return undefined;
  try {
    const url = new URL(value);
    if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
    return url.href.replace(/\/+$/, '');
  } catch {
    return undefined;
  }
}

/** The absolute URL of a repository's page. */
export function pageUrl(publicUrl: string, owner: string, repo: string, sitePath: string): string {
  return `${publicUrl}${PAGES_PREFIX}${encodeURIComponent(owner)}/${encodeURIComponent(repo)}/${sitePath}`;
}
