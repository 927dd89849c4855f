// Publishing in batches (docs/publishing.md, "Batches"): when merges land close together,
// one publish job builds each changed catalog once, from the newest merge, and every merge
// it covers gets a `catalog-bot/publish` run and a release comment naming the image that
// contains it. Here: the pure parts (which roots, what the runs and comments say).
import type { CheckResult } from '../checks/check.js';
import { cell, publishCheck, quoted, releaseMarker, short, type RootPublication } from './report.js';

/**
 * The external id of every run a batch writes. A later job for a merge the batch covered
 * finds it (on a run of this App only: anyone with `checks: write` can name a run anything)
 * and has nothing left to do.
 */
export const BATCH_EXTERNAL_ID = 'catalog-bot:publish-batch:';

export function batchExternalId(target: string): string {
  return `${BATCH_EXTERNAL_ID}${target}`;
}

/** The longest first-parent line one batch covers; a longer one is published merge by merge. */
export const MAX_BATCH_MERGES = 100;

/** How often one batch moves on to a newer branch head before it builds what it has. */
export const MAX_BATCH_RETARGETS = 5;

/** One merge (a first-parent commit of the branch) of a batch. */
export interface BatchMerge {
  sha: string;
  /** The catalog roots it changed (against its first parent). */
  roots: string[];
}

/** One root built in a batch: at which commit, and what was pushed. */
export interface RootBuild {
  commit: string;
  publication: RootPublication;
  /**
   * More builds of the root's moving tags when the branch had moved past the batch's head
   * and the batch took no more merges: from the newer head when its `commit` says so
   * (docs/publishing.md, "When main moves during a publish").
   */
  moving?: RootPublication[];
}

/** Every publication of a root's build: its own, then its moving tags' builds. */
const publicationsOf = (b: RootBuild): RootPublication[] => [b.publication, ...(b.moving ?? [])];

/**
 * The roots to build, oldest change first: every root a merge of the batch changed, once,
 * among `existing` (a root a later merge removed is not built).
 */
export function rootsToBuild(merges: BatchMerge[], existing: readonly string[]): string[] {
  const present = new Set(existing);
  return [...new Set(merges.flatMap((m) => m.roots))].filter((r) => present.has(r));
}

/** Whether a run is one a batch wrote, green, by this App (`slug`). */
export function isBatchRun(
  run: {
    name: string;
    status: string;
    conclusion: string | null;
    external_id?: string | null;
    app?: { slug?: string } | null;
  },
  name: string,
  slug: string,
): boolean {
  return (
    run.name === name &&
    run.app?.slug === slug &&
    run.status === 'completed' &&
    (run.conclusion === 'success' || run.conclusion === 'neutral') &&
    (run.external_id ?? '').startsWith(BATCH_EXTERNAL_ID)
  );
}

/**
 * The `catalog-bot/publish` run of one merge of a batch: the images that contain its change
 * and the commit each was built from (a newer merge's, for all but the batch's newest).
 */
export function batchCheck(merge: BatchMerge, builds: Map<string, RootBuild>, size: number): CheckResult {
  const mine = merge.roots.flatMap((r) => {
    const b = builds.get(r);
    return b ? [b] : [];
  });
  const result = publishCheck(mine.flatMap(publicationsOf));
  const from = [...new Set(mine.map((b) => b.commit))];
  const elsewhere = from.filter((c) => c !== merge.sha);
  if (mine.length === 0) {
    result.title = 'Nothing to publish';
    result.summary = 'The catalog roots this merge changed are no longer catalog roots.';
    result.conclusion = 'neutral';
    return result;
  }
  if (result.conclusion !== 'failure' && elsewhere.length > 0)
    result.title = `Published in the build of ${elsewhere.map(short).join(', ')}`;
  const builtFrom = (commit: string) => (commit === merge.sha ? 'this merge' : `\`${short(commit)}\``);
  const rows = mine.flatMap((b) => [
    `| \`${cell(b.publication.root)}\` | ${builtFrom(b.commit)} |`,
    ...(b.moving ?? [])
      .filter((p) => p.commit !== undefined)
      .map((p) => `| \`${cell(p.root)}\` (moving tags) | ${builtFrom(p.commit!)}, the branch head then |`),
  ]);
  result.summary = [
    `Published in a batch of ${size} merge${size === 1 ? '' : 's'}: each changed catalog was built once, from the newest merge at the time, and its image contains this merge (docs/publishing.md, "Batches").`,
    '',
    '| catalog | built from |',
    '|---|---|',
    ...rows,
    '',
    result.summary,
  ].join('\n');
  return result;
}

/**
 * The release comment of one merge of a batch: the image (tag and digest) of each catalog
 * it changed, and the commit the image was built from. Undefined when nothing was pushed.
 */
export function batchReleaseComment(merge: BatchMerge, builds: Map<string, RootBuild>): string | undefined {
  const mine = merge.roots.flatMap((r) => {
    const b = builds.get(r);
    return b ? [b] : [];
  });
  const pushed = mine.flatMap((b) =>
    publicationsOf(b).flatMap((p) =>
      (p.results ?? []).map((r) => ({ root: p.root, commit: p.commit ?? b.commit, ...r })),
    ),
  );
  if (pushed.length === 0) return undefined;
  const lines = [
    releaseMarker(merge.sha),
    `Published: merge commit ${merge.sha} is in these images.`,
    '',
    '| catalog | image | built from |',
    '|---|---|---|',
    ...pushed.map(
      (r) =>
        `| \`${quoted(r.root)}\` | \`${quoted(r.tag)}@${r.digest}\` | ${r.commit === merge.sha ? 'this merge' : `\`${short(r.commit)}\` (a later merge)`} |`,
    ),
  ];
  const failed = mine.filter((b) => publicationsOf(b).some((p) => p.error !== undefined));
  if (failed.length > 0)
    lines.push(
      '',
      `Not published yet: ${failed.map((b) => `\`${quoted(b.publication.root)}\``).join(', ')} (see the \`catalog-bot/publish\` check on the merge commit; catalog-bot tries again).`,
    );
  lines.push(
    '',
    'Merges that land close together are published as one batch, built from the newest of them. Each tag was read back from its registry after the push and names this digest. Check an image against a catalog with `catalog-bot verify-published <root> --image <image>`.',
  );
  return lines.join('\n');
}

/** `CATALOG_BOT_PUBLISH_BATCHES=off` publishes every merge on its own (the behaviour before batches). */
export function publishBatchesFromEnv(env: NodeJS.ProcessEnv = process.env): boolean {
  return !['off', '0', 'false'].includes((env.CATALOG_BOT_PUBLISH_BATCHES ?? '').trim().toLowerCase());
}
