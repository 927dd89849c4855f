// The planning of `/ocp-promote` (./flow.ts): it loads the default branch's
// catalogs, so it runs in a check worker, off the App's event loop and under its deadline
// and heap cap (docs/security.md, bounded work). Reads and writes only the mirror's git
// objects; the pull requests it plans are written by the main thread's jobs.
import { createHash } from 'node:crypto';
import {
  DEFAULT_CSV_METADATA_FROM,
  ocpPromote,
  OcpPromoteError,
  type OcpPackageResult,
} from '../../catalog/edits/ocp-promote.js';
import type { FileEdit } from '../../catalog/edits/promote.js';
import { blobIdsUnder, treeOf } from '../../git/read.js';
import { readRepoConfig } from '../../checks/changes.js';
import { parsePackageOwners } from '../../checks/owners.js';
import { commitFiles } from '../../git/tree.js';
import { gitFileTree } from '../catalog-edit/work.js';
import { inlineCode } from '../../handlers/quote.js';
import type { PullTarget, RepoTarget } from '../../handlers/session.js';

export const REVIEW_NEEDED_LABEL = 'catalog-promotion/review-needed';

/** One pull request to open or update (plain JSON: it may travel through Redis). */
export interface EditPullJob extends RepoTarget {
  /** The branch it goes into (the default branch). */
  base: string;
  /** The commit the edit was computed on, and its tree. */
  parent: string;
  baseTree: string;
  /** The tree the branch must hold (computed in the mirror): an equal branch is left alone. */
  tree: string;
  branch: string;
  title: string;
  body: string;
  message: string;
  labels: string[];
  /** Each file by the blob GitHub already has (`sha`), or its text. */
  files: { path: string; sha?: string; content?: string }[];
}

const PACKAGE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,200}$/;
// A GitHub login, or org/team: anything else from an owners file is not mentioned.
const MENTIONABLE = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:\/[A-Za-z0-9][A-Za-z0-9_.-]{0,99})?$/;
const MAX_MENTIONS = 10;
export const MAX_LISTED = 60;

/** The branch of a promotion: one name per (from, to) and package, so a repeat finds it. */
export function promotionBranch(from: string, to: string, pkg?: string): string {
  return `catalog-bot/ocp-promote-${from}-${to}${pkg === undefined ? '' : `-${pkg}`}`;
}

const gitBlobSha = (text: string): string =>
  createHash('sha1')
    .update(`blob ${Buffer.byteLength(text)}\0`)
    .update(text)
    .digest('hex');

/** What the worker gets: the mirror, the default branch's tip, who asked for what. */
export interface OcpPromoteWork {
  dir: string;
  /** The default branch's tip and its tree. */
  parent: string;
  baseTree: string;
  /** The default branch. */
  base: string;
  target: PullTarget & { commenter: string };
  request: { from: string; to: string };
}

export type OcpPlanned =
  { refused: string } | { result: Awaited<ReturnType<typeof ocpPromote>>; pulls: EditPullJob[] };

/** The pull requests of a promotion, planned and committed in the mirror. */
export async function planOcpPromote(work: OcpPromoteWork): Promise<OcpPlanned> {
  const { dir, parent, baseTree, base, target, request } = work;
  const { config } = await readRepoConfig(dir, parent);
  const tree = await gitFileTree(
    dir,
    parent,
    (p) => p.startsWith('catalogs/') || p.startsWith('operators/') || p.startsWith('.github/'),
  );
  let result;
  try {
    result = await ocpPromote(tree, {
      from: request.from,
      to: request.to,
      csvMetadataFrom: config.bundles.renderer.csvMetadataFrom ?? DEFAULT_CSV_METADATA_FROM,
      includeReviewNeeded: true,
    });
  } catch (error) {
    if (error instanceof OcpPromoteError) return { refused: error.message };
    throw error;
  }
  // Blobs the default branch already has are named, not sent again (a copied catalog).
  const known = await blobIdsUnder(dir, parent, ['catalogs/', 'operators/']);
  const ownersPath = config.ownership.packageOwners ?? 'operators/{package}/ci.yaml';
  const promoted = result.packages.filter((p) => p.status === 'promoted');
  const always = promoted.filter((p) => p.strategy !== 'review-needed');
  const review = promoted.filter((p) => p.strategy === 'review-needed');
  const pulls: EditPullJob[] = [];
  const requested = `Requested by @${target.commenter} in #${target.number} (\`/ocp-promote ${request.from} ${request.to}\`).`;
  const makePull = async (packages: OcpPackageResult[], pkg: string | undefined): Promise<void> => {
    const edits = result.edits.filter((e) => packages.some((p) => p.files.includes(e.path)));
    const branch = promotionBranch(request.from, request.to, pkg);
    const title =
      pkg === undefined
        ? `Promote ${packages.length} package${packages.length === 1 ? '' : 's'} from ${request.from} to ${request.to}`
        : `Promote ${pkg} from ${request.from} to ${request.to} (review needed)`;
    const message = `${title}\n\n${requested}`;
    const commit = await commitFiles(
      dir,
      parent,
      edits.map((e) => ({ path: e.path, text: e.after })),
      message,
    );
    const treeSha = await treeOf(dir, commit);
    const lines = [
      `Opens OpenShift catalog \`${request.to}\` for ${pkg === undefined ? 'these packages' : 'this package'}, as \`catalog-bot ocp-promote ${request.from} ${request.to}\` does (docs/ocp-lifecycle.md). ${requested}`,
      '',
      ...packages.map(
        (p) =>
          `- ${inlineCode(p.package)}: ${inlineCode(p.reason, 300)}${p.notes.length > 0 ? ` (${inlineCode(p.notes.join('; '), 500)})` : ''}`,
      ),
    ];
    if (pkg !== undefined) {
      const file = ownersPath.replaceAll('{package}', pkg);
      const text = tree.read(file);
      const owners = text ? parsePackageOwners(text, file).approvers.filter((o) => MENTIONABLE.test(o)) : [];
      lines.push(
        '',
        owners.length > 0
          ? `${owners
              .slice(0, MAX_MENTIONS)
              .map((o) => `@${o}`)
              .join(
                ' ',
              )}: \`${file}\` asks for a review before the package is promoted (\`version_promotion_strategy: review-needed\`). Please check that it works on OpenShift ${request.to.slice(1)}, then approve.`
          : `\`${file}\` names no owners to ask; a maintainer should review it.`,
      );
    }
    pulls.push({
      ...target,
      base,
      parent,
      baseTree,
      tree: treeSha,
      branch,
      title,
      body: lines.join('\n'),
      message,
      labels: pkg === undefined ? [] : [REVIEW_NEEDED_LABEL],
      files: edits.map((e: FileEdit) => {
        const sha = gitBlobSha(e.after);
        return known.has(sha) ? { path: e.path, sha } : { path: e.path, content: e.after };
      }),
    });
  };
  if (always.length > 0) await makePull(always, undefined);
  for (const p of review) if (PACKAGE_NAME.test(p.package)) await makePull([p], p.package);
  return { result, pulls };
}
