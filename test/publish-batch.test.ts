// The pure parts of publishing in batches (src/publish/batch.ts, docs/publishing.md
// "Batches"): which roots a batch builds, which runs tell a later job that a batch already
// published its merge (only green ones of this App: anyone with `checks: write` can name a
// run), and what the runs and release comments say for a merge built from a later one, or
// whose moving tags were built from a newer branch head.
import { describe, expect, it } from 'vitest';
import {
  batchCheck,
  batchExternalId,
  batchReleaseComment,
  isBatchRun,
  publishBatchesFromEnv,
  rootsToBuild,
  type RootBuild,
} from '../src/publish/batch.js';
import { releaseComment } from '../src/publish/report.js';

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
const C = 'c'.repeat(40);
const digest = (c: string) => `sha256:${c.repeat(64)}`;
const build = (root: string, commit: string, d: string): RootBuild => ({
  commit,
  publication: {
    root,
    results: [
      { tag: `quay.io/x/cat:${root.split('/')[1]}`, digest: d },
      { tag: `quay.io/x/cat:${root.split('/')[1]}-${commit.slice(0, 12)}`, digest: d },
    ],
  },
});

describe('rootsToBuild', () => {
  it('builds every root any merge changed once, oldest change first, only roots still there', () => {
    const merges = [
      { sha: A, roots: ['catalogs/v4.21'] },
      { sha: B, roots: ['catalogs/v4.20', 'catalogs/v4.21'] },
      { sha: C, roots: ['catalogs/gone'] },
    ];
    expect(rootsToBuild(merges, ['catalogs/v4.20', 'catalogs/v4.21'])).toEqual([
      'catalogs/v4.21',
      'catalogs/v4.20',
    ]);
    expect(rootsToBuild([], ['catalogs/v4.21'])).toEqual([]);
  });
});

describe('isBatchRun: what counts as "an earlier batch published this merge"', () => {
  const run = {
    name: 'catalog-bot/publish',
    status: 'completed',
    conclusion: 'success',
    external_id: batchExternalId(B),
    app: { slug: 'catalog-bot' },
  };
  it('a green batch run of this App', () => {
    expect(isBatchRun(run, 'catalog-bot/publish', 'catalog-bot')).toBe(true);
    expect(isBatchRun({ ...run, conclusion: 'neutral' }, 'catalog-bot/publish', 'catalog-bot')).toBe(true);
  });
  it('not a run another App or a workflow wrote with the same name and external id (the attack)', () => {
    expect(
      isBatchRun({ ...run, app: { slug: 'github-actions' } }, 'catalog-bot/publish', 'catalog-bot'),
    ).toBe(false);
    expect(isBatchRun({ ...run, app: null }, 'catalog-bot/publish', 'catalog-bot')).toBe(false);
  });
  it('not a failed or unfinished batch run, a run of a merge published alone, another check', () => {
    expect(isBatchRun({ ...run, conclusion: 'failure' }, 'catalog-bot/publish', 'catalog-bot')).toBe(false);
    expect(
      isBatchRun({ ...run, status: 'in_progress', conclusion: null }, 'catalog-bot/publish', 'catalog-bot'),
    ).toBe(false);
    expect(isBatchRun({ ...run, external_id: null }, 'catalog-bot/publish', 'catalog-bot')).toBe(false);
    expect(
      isBatchRun({ ...run, external_id: 'x' + run.external_id }, 'catalog-bot/publish', 'catalog-bot'),
    ).toBe(false);
    expect(isBatchRun(run, 'catalog-bot/bundle-image', 'catalog-bot')).toBe(false);
  });
});

describe('what a merge of a batch is told', () => {
  const builds = new Map([
    ['catalogs/v4.21', build('catalogs/v4.21', C, digest('1'))],
    ['catalogs/v4.20', build('catalogs/v4.20', B, digest('2'))],
  ]);
  it("its run names the commit its catalog's image was built from", () => {
    const check = batchCheck({ sha: A, roots: ['catalogs/v4.21'] }, builds, 3);
    expect(check.conclusion).toBe('success');
    expect(check.title).toBe(`Published in the build of ${C.slice(0, 12)}`);
    expect(check.summary).toContain('batch of 3 merges');
    expect(check.summary).toContain(`| \`catalogs/v4.21\` | \`${C.slice(0, 12)}\` |`);
    expect(check.summary).toContain(digest('1'));
    expect(check.summary).not.toContain('catalogs/v4.20');
    // The newest merge: built from itself.
    expect(batchCheck({ sha: C, roots: ['catalogs/v4.21'] }, builds, 3).summary).toContain('this merge');
  });
  it('its release comment: marker of its own commit, the image and digest of its catalog only', () => {
    const body = batchReleaseComment({ sha: A, roots: ['catalogs/v4.21'] }, builds)!;
    expect(body.startsWith(`<!-- catalog-bot:release ${A} -->`)).toBe(true);
    expect(body).toContain(
      `| \`catalogs/v4.21\` | \`quay.io/x/cat:v4.21@${digest('1')}\` | \`${C.slice(0, 12)}\` (a later merge) |`,
    );
    expect(body).not.toContain(digest('2'));
  });
  it('a failed build fails the run of every merge it holds; nothing pushed, no comment', () => {
    const failed = new Map([
      ['catalogs/v4.21', { commit: C, publication: { root: 'catalogs/v4.21', error: 'registry down' } }],
    ]);
    const check = batchCheck({ sha: A, roots: ['catalogs/v4.21'] }, failed, 2);
    expect(check.conclusion).toBe('failure');
    expect(check.summary).toContain('registry down');
    expect(batchReleaseComment({ sha: A, roots: ['catalogs/v4.21'] }, failed)).toBeUndefined();
  });
  it('moving tags built from a newer head name that head in the run and the comment', () => {
    const D = 'd'.repeat(40);
    const behind: RootBuild = {
      commit: C,
      publication: {
        root: 'catalogs/v4.21',
        results: [{ tag: `quay.io/x/cat:v4.21-${C.slice(0, 12)}`, digest: digest('4') }],
      },
      moving: [
        { root: 'catalogs/v4.21', commit: D, results: [{ tag: 'quay.io/x/cat:v4.21', digest: digest('5') }] },
      ],
    };
    const merge = { sha: A, roots: ['catalogs/v4.21'] };
    const one = new Map([['catalogs/v4.21', behind]]);
    const check = batchCheck(merge, one, 2);
    expect(check.summary).toContain(`| \`catalogs/v4.21\` | \`${C.slice(0, 12)}\` |`);
    expect(check.summary).toContain(
      `| \`catalogs/v4.21\` (moving tags) | \`${D.slice(0, 12)}\`, the branch head then |`,
    );
    expect(check.summary).toContain(digest('5'));
    const body = batchReleaseComment(merge, one)!;
    expect(body).toContain(
      `| \`quay.io/x/cat:v4.21@${digest('5')}\` | \`${D.slice(0, 12)}\` (a later merge) |`,
    );
    expect(body).toContain(`@${digest('4')}\` | \`${C.slice(0, 12)}\` (a later merge) |`);
    // A failed build of the moving tags is not published yet.
    behind.moving![0] = { root: 'catalogs/v4.21', commit: D, error: 'registry down' };
    expect(batchCheck(merge, one, 2).conclusion).toBe('failure');
    expect(batchReleaseComment(merge, one)).toContain('Not published yet');
  });
  it('a root name from merged content cannot open an HTML comment or break the table', () => {
    const root = 'catalogs/x|<!--`y';
    const odd = new Map([[root, build(root, C, digest('3'))]]);
    const body = batchReleaseComment({ sha: A, roots: [root] }, odd)!;
    expect(body.split('<!--')).toHaveLength(2); // the marker only
    expect(body).toContain('x\\|');
    expect(batchCheck({ sha: A, roots: [root] }, odd, 2).summary).toContain('x\\|');
  });
});

describe('a merge published on its own while main moved on', () => {
  it('its release comment names the newer head its moving tag was built from', () => {
    const D = 'd'.repeat(40);
    const body = releaseComment(A, [
      {
        root: 'catalogs/v4.21',
        results: [{ tag: `quay.io/x/cat:v4.21-${A.slice(0, 12)}`, digest: digest('6') }],
      },
      { root: 'catalogs/v4.21', commit: D, results: [{ tag: 'quay.io/x/cat:v4.21', digest: digest('7') }] },
    ])!;
    expect(body).toContain(
      `| \`catalogs/v4.21\` | \`quay.io/x/cat:v4.21-${A.slice(0, 12)}@${digest('6')}\` | this merge |`,
    );
    expect(body).toContain(
      `| \`catalogs/v4.21\` | \`quay.io/x/cat:v4.21@${digest('7')}\` | \`${D.slice(0, 12)}\` (the branch head then) |`,
    );
    // Built from the merge alone: the table as before.
    expect(releaseComment(A, [build('catalogs/v4.21', A, digest('8')).publication])).not.toContain(
      'built from',
    );
  });
});

describe('CATALOG_BOT_PUBLISH_BATCHES', () => {
  it('on unless off', () => {
    expect(publishBatchesFromEnv({})).toBe(true);
    expect(publishBatchesFromEnv({ CATALOG_BOT_PUBLISH_BATCHES: 'off' })).toBe(false);
    expect(publishBatchesFromEnv({ CATALOG_BOT_PUBLISH_BATCHES: 'on' })).toBe(true);
  });
});
