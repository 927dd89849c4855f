// The description of a `/remove` pull request (src/flows/remove/body.ts, docs/remove.md "In
// the App"): identical catalogs told once, every name in a code span, and within GitHub's
// 65,536 characters however large the removal. The losses are built here, not planned.
import { describe, expect, it } from 'vitest';
import type { CatalogLoss, RemovalResult } from '../src/catalog/edits/remove.js';
import { groupedLosses, MAX_BODY, removalPullBody } from '../src/flows/remove/body.js';

type Removal = Omit<RemovalResult, 'edits' | 'deletedFiles'>;

const loss = (bundles: string[], more: Partial<CatalogLoss> = {}): CatalogLoss => ({
  bundlesRemoved: bundles,
  channelsRemoved: [],
  headsRemoved: [],
  defaultChannelRemoved: null,
  dangling: [],
  stranded: [],
  ...more,
});

const removal = (catalogs: Record<string, CatalogLoss>, bundle = 'foo.v1.0.0'): Removal => ({
  package: 'foo',
  bundle,
  directory: 'operators/foo/1.0.0',
  mode: 'fbc',
  removed: ['operators/foo/1.0.0'],
  catalogs,
  allowPrune: [`/allow-prune ${bundle}`],
  notes: [],
});

/** Text outside code spans and fenced blocks: what GitHub renders as Markdown. */
const rendered = (markdown: string): string =>
  markdown.replace(/^(`{3,})[^\n]*\n[\s\S]*?\n\1$/gm, '').replace(/(`+)(?!`)[\s\S]*?(?<!`)\1(?!`)/g, '');

describe('the /remove pull request description', () => {
  it('tells catalogs that lose the same once, and the others apart', () => {
    const same = loss(['foo.v1.0.0'], {
      dangling: [{ channel: 'stable', entry: 'foo.v1.1.0', replaces: 'foo.v1.0.0' }],
    });
    const other = loss(['foo.v1.0.0'], { stranded: [{ channel: 'stable', bundles: ['foo.v1.0.0'] }] });
    const catalogs = { 'v4.12': same, 'v4.13': { ...same }, 'v4.14': other, 'v4.15': { ...same } };
    const groups = groupedLosses(catalogs);
    expect(groups.map((g) => g.catalogs)).toEqual([['v4.12', 'v4.13', 'v4.15'], ['v4.14']]);
    const body = removalPullBody(removal(catalogs), { by: 'alice', in: 7 });
    expect(body).toContain('**`v4.12`, `v4.13`, `v4.15`** (the same for each):');
    expect(body).toContain('**`v4.14`**:');
    expect(body).toContain('- `foo.v1.1.0` in channel `stable` replaces `foo.v1.0.0`, which is gone');
    expect(body).toContain(
      '- installed versions stranded in channel `stable` (no way to its head any more): `foo.v1.0.0`',
    );
    expect(body).toContain('Requested by @alice in #7.');
    expect(body).toContain('/allow-prune foo.v1.0.0');
  });

  it('renders no Markdown, HTML, link or mention of a name, backticks in it included', () => {
    const evil = 'x`<img src=x onerror=alert(1)>`**b**[l](https://evil.example)@someone<!-- c -->';
    const body = removalPullBody(
      removal(
        { 'v4.12': loss([evil], { channelsRemoved: [`${evil}-ch`], defaultChannelRemoved: `${evil}-ch` }) },
        evil,
      ),
      { by: 'alice', in: 7 },
    );
    const outside = rendered(body);
    for (const piece of ['<img', 'evil.example', '@someone', '<!--', 'onerror'])
      expect(outside).not.toContain(piece);
  });

  it('stays within what GitHub takes for 40 catalogs that each lose something else, with long names', () => {
    const long = (i: number, j: number) => `${'p'.repeat(200)}.v${i}.${j}.0`;
    const catalogs: Record<string, CatalogLoss> = {};
    for (let v = 0; v < 40; v++)
      catalogs[`v4.${v}`] = loss(
        Array.from({ length: 300 }, (_, j) => long(v, j)),
        {
          channelsRemoved: Array.from({ length: 100 }, (_, j) => `channel-${v}-${j}`),
          stranded: Array.from({ length: 100 }, (_, j) => ({
            channel: `channel-${v}-${j}`,
            bundles: [long(v, j)],
          })),
        },
      );
    const body = removalPullBody(removal(catalogs), { by: 'alice', in: 7 });
    expect(body.length).toBeLessThanOrEqual(65_536);
    expect(body.length).toBeGreaterThan(MAX_BODY / 2);
    expect(body).toMatch(/… and \d+ more catalogs: `catalog-bot remove --dry-run` lists them all\./);
    expect(body).toContain('and 260 more');
    // The end (what it needs to merge) is never cut.
    expect(body).toContain('### Before it merges');
    expect(body).toContain('/allow-prune foo.v1.0.0');
  });
});
