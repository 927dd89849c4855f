// The `catalog-bot/publish` check run on a merge commit: which image each tag got.
import type { CheckResult } from '../checks/check.js';
import type { Diagnostic } from '../catalog/diagnostics.js';
import type { BundlePushResult } from './bundle-image.js';
import type { PublishResult } from './publish.js';

export const PUBLISH_CHECK = 'catalog-bot/publish';

export interface RootPublication {
  /** The catalog root's path in the repository. */
  root: string;
  results?: PublishResult[];
  /** Why it failed, when it did. */
  error?: string;
  /**
   * The commit it was built from when that is not the published merge: the newer branch
   * head its moving tags were built from (docs/publishing.md, "When main moves during a publish").
   */
  commit?: string;
}

/** A commit id as the tables show it. */
export const short = (sha: string): string => sha.slice(0, 12);

export const cell = (s: string): string => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

export function publishCheck(publications: RootPublication[]): CheckResult {
  const findings: Diagnostic[] = publications
    .filter((p) => p.error !== undefined)
    .map((p) => ({
      rule: 'PUBLISH-FAILED',
      level: 'error' as const,
      message: `publishing ${p.root} failed: ${p.error}`,
      hint: 'Fix the cause (credentials, registry, base image), then re-run the check to publish again.',
    }));
  // Warnings (an image without opm's pre-built cache) leave the check green but say why.
  const warnings = [
    ...new Set(publications.flatMap((p) => (p.results ?? []).flatMap((r) => r.warnings ?? []))),
  ];
  for (const w of warnings)
    findings.push({
      rule: 'PUBLISH-NO-CACHE',
      level: 'warning' as const,
      message: w,
      hint: 'Use a base image (publish.baseImage) whose /bin/opm runs on the machine catalog-bot runs on.',
    });
  const pushed = publications.flatMap((p) => (p.results ?? []).map((r) => ({ root: p.root, ...r })));
  const errors = findings.filter((f) => f.level === 'error');
  const failed = errors.length > 0;
  const title =
    publications.length === 0
      ? 'Nothing to publish'
      : failed
        ? `${errors.length} of ${publications.length} catalog image${publications.length === 1 ? '' : 's'} failed`
        : `${pushed.length} tag${pushed.length === 1 ? '' : 's'} pushed`;
  const lines: string[] = [];
  if (publications.length === 0) lines.push('No changed catalog root has `publish.images` configured.');
  if (pushed.length > 0) {
    lines.push('| catalog | tag | digest |', '|---|---|---|');
    for (const r of pushed) lines.push(`| \`${cell(r.root)}\` | \`${cell(r.tag)}\` | \`${r.digest}\` |`);
  }
  for (const f of errors) lines.push('', `**${cell(f.message)}**`);
  for (const w of warnings) lines.push('', `Warning: ${cell(w)}`);
  return {
    name: PUBLISH_CHECK,
    conclusion: failed ? 'failure' : publications.length === 0 ? 'neutral' : 'success',
    title,
    summary: lines.join('\n'),
    findings,
    annotations: [],
  };
}

/** Starts the release comment of one merge commit (docs/publishing.md, "Proof of publication"). */
export const RELEASE_MARKER = '<!-- catalog-bot:release ';

/** The first line of the release comment for a merge commit: what finds it again on a re-run. */
export function releaseMarker(sha: string): string {
  return `${RELEASE_MARKER}${sha} -->`;
}

// What a root's path or a tag could carry into the comment (they come from merged content
// and the base branch's config) never opens an HTML comment or breaks the table.
export const quoted = (s: string): string => cell(s).replace(/<!--/g, '<\u200b!--').replace(/`/g, "'");

/**
 * The comment on the merged pull request: each catalog and the image reference (tag and
 * digest) it was published as, or why it was not. Undefined when nothing was pushed: the
 * check run already says why, and a comment would cost a write for nothing new.
 */
export function releaseComment(sha: string, publications: RootPublication[]): string | undefined {
  const pushed = publications.flatMap((p) =>
    (p.results ?? []).map((r) => ({ root: p.root, commit: p.commit ?? sha, ...r })),
  );
  if (pushed.length === 0) return undefined;
  // A moving tag built from a newer branch head says so (docs/publishing.md, "When main moves during a publish").
  const newer = pushed.some((r) => r.commit !== sha);
  const lines = [
    releaseMarker(sha),
    `Published from merge commit ${sha}:`,
    '',
    ...(newer
      ? [
          '| catalog | image | built from |',
          '|---|---|---|',
          ...pushed.map(
            (r) =>
              `| \`${quoted(r.root)}\` | \`${quoted(r.tag)}@${r.digest}\` | ${r.commit === sha ? 'this merge' : `\`${short(r.commit)}\` (the branch head then)`} |`,
          ),
        ]
      : [
          '| catalog | image |',
          '|---|---|',
          ...pushed.map((r) => `| \`${quoted(r.root)}\` | \`${quoted(r.tag)}@${r.digest}\` |`),
        ]),
  ];
  const failed = publications.filter((p) => p.error !== undefined);
  if (failed.length > 0)
    lines.push(
      '',
      `Not published yet: ${failed.map((p) => `\`${quoted(p.root)}\``).join(', ')} (see the \`${PUBLISH_CHECK}\` check on the merge commit; catalog-bot tries again).`,
    );
  lines.push(
    '',
    'Each tag was read back from its registry after the push and names this digest. Check an image against a catalog with `catalog-bot verify-published <root> --image <image>`.',
  );
  return lines.join('\n');
}

// ---- bundle images ----------------------------------------------------------------------

export const BUNDLE_IMAGE_CHECK = 'catalog-bot/bundle-image';

export interface BundlePublication {
  /** The bundle directory's path in the repository. */
  dir: string;
  result?: BundlePushResult;
  /** Why it could not be built or pushed. */
  error?: string;
}

/** The `catalog-bot/bundle-image` check run on a merge commit: the image of each added bundle. */
export function bundleImageCheck(publications: BundlePublication[]): CheckResult {
  const findings: Diagnostic[] = [];
  for (const p of publications) {
    if (p.error !== undefined)
      findings.push({
        rule: 'BUNDLE-IMAGE-FAILED',
        level: 'error',
        message: `the bundle image of ${p.dir} was not pushed: ${p.error}`,
        hint: 'Fix the cause (credentials, registry, the bundle directory), then re-run this check to push again.',
      });
    else if (p.result?.status === 'conflict')
      findings.push({
        rule: 'BUNDLE-IMAGE-EXISTS',
        level: 'error',
        message: `${p.result.target} already holds ${p.result.existing}, not the image of ${p.dir} (${p.result.digest}); released bundle images never change, so it was left alone`,
        hint: 'Release the change as a new bundle version (a new directory and tag); if the tag was pushed by mistake, a registry admin must remove it before a re-run.',
      });
  }
  const done = publications.filter((p) => p.result && p.result.status !== 'conflict');
  const failed = findings.length > 0;
  const pushed = done.filter((p) => p.result?.status === 'pushed').length;
  const title = failed
    ? `${findings.length} of ${publications.length} bundle image${publications.length === 1 ? '' : 's'} not pushed`
    : pushed === done.length
      ? `${pushed} bundle image${pushed === 1 ? '' : 's'} pushed`
      : `${done.length} bundle image${done.length === 1 ? '' : 's'} in place (${pushed} pushed now)`;
  const lines: string[] = [];
  if (done.length > 0) {
    lines.push('| bundle | image | digest | |', '|---|---|---|---|');
    for (const p of done)
      lines.push(
        `| \`${cell(p.dir)}\` | \`${cell(p.result!.target)}\` | \`${p.result!.digest}\` | ${p.result!.status === 'pushed' ? 'pushed' : 'already there'} |`,
      );
  }
  for (const f of findings) lines.push('', `**${cell(f.message)}**`);
  return {
    name: BUNDLE_IMAGE_CHECK,
    conclusion: failed ? 'failure' : 'success',
    title,
    summary: lines.join('\n'),
    findings,
    annotations: [],
  };
}
