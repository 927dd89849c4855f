// The catalog work of `/explain` (./flow.ts), run in a check worker, off the App's event
// loop and under its deadline and heap cap (docs/security.md, bounded work): it loads whole
// catalogs, as big as a pull request makes them. Reads the mirror's git objects only.
import { explainBundle, explainMermaid, findBundle, type Explanation } from '../../catalog/olm/explain.js';
import { GitTreeSource } from '../../catalog/fbc/source.js';
import { filesMentioning } from '../../git/read.js';
import { validateCatalog } from '../../catalog/index.js';
import { tryParseVersion, type Version } from '../../catalog/versions/semver.js';
import { catalogRoots, changedFiles, readRepoConfig } from '../../checks/changes.js';
import { mergeBase } from '../../git/mirror.js';
import type { CommandOutcome } from '../../handlers/commands/command.js';
import { bounded, codeBlock, inlineCode } from '../../handlers/quote.js';

export interface ExplainRequest {
  bundle: string;
  /** An installed version (`1.2.3` or `v1.2.3`). */
  from?: string;
  /** A catalog root, by its path or its last segment (`catalogs/v4.21` or `v4.21`). */
  root?: string;
}

/** What the worker gets: the mirror, the pull request's commits, the question. */
export interface ExplainWork {
  dir: string;
  base: string;
  head: string;
  request: ExplainRequest;
}

/** How much of the answer a reply carries (GitHub takes 65 536 characters per comment). */
const MAX_SUMMARY = 8000;
const MAX_MERMAID = 8000;
const MAX_ROOTS_LISTED = 20;

const listRoots = (roots: string[]): string =>
  roots.length === 0
    ? '(none)'
    : roots.slice(0, MAX_ROOTS_LISTED).join(', ') +
      (roots.length > MAX_ROOTS_LISTED ? ` and ${roots.length - MAX_ROOTS_LISTED} more` : '');

/** Catalog roots in version order: `v4.9` before `v4.10`. */
const byVersion = (a: string, b: string): number => a.localeCompare(b, 'en', { numeric: true });

/** The roots of `rev` whose files mention `text` (a quick filter before a root is loaded). */
async function rootsMentioning(dir: string, rev: string, roots: string[], text: string): Promise<string[]> {
  if (roots.length === 0) return [];
  const files = await filesMentioning(
    dir,
    rev,
    text,
    roots.map((r) => `${r}/`),
  );
  return roots.filter((r) => files.some((f) => f.startsWith(r + '/')));
}

/** The answer to `/explain` on a mirror's commits; never writes anything. */
export async function explainInRepo(work: ExplainWork): Promise<CommandOutcome> {
  const { dir, base, head, request } = work;
  const command = '`/explain`';
  let from: Version | undefined;
  if (request.from !== undefined) {
    const parsed = tryParseVersion(request.from.replace(/^v(?=\d)/, ''));
    if (!parsed.ok) throw new Error(`${request.from} is not a version`); // refused before the worker
    from = parsed.version;
  }
  // The rules (which directories are catalogs) come from the base, as for every check.
  const { config } = await readRepoConfig(dir, base);
  const sides = [
    { rev: head, label: `the head of this pull request (${head.slice(0, 12)})` },
    { rev: base, label: `the base branch (${base.slice(0, 12)}): the head does not have it` },
  ];
  const headRoots = (await catalogRoots(dir, head, config.catalogs)).sort(byVersion);
  let wanted: string | undefined;
  if (request.root !== undefined) {
    const name = request.root.replace(/\/+$/, '');
    const baseRoots = await catalogRoots(dir, base, config.catalogs);
    const all = [...new Set([...headRoots, ...baseRoots])].sort(byVersion);
    const matches = all.filter((r) => r === name || r.endsWith(`/${name}`));
    if (matches.length !== 1)
      return {
        ok: false,
        say: `${command}: ${inlineCode(request.root, 100)} is ${matches.length === 0 ? 'not a catalog root' : 'more than one catalog root'}; the catalog roots are ${inlineCode(listRoots(all), 2000)} (write ${inlineCode(`in ${all.at(-1)?.split('/').pop() ?? '<root>'}`, 200)}).`,
      };
    wanted = matches[0]!;
  }
  for (const side of sides) {
    const roots =
      side.rev === head ? headRoots : (await catalogRoots(dir, side.rev, config.catalogs)).sort(byVersion);
    const candidates = await rootsMentioning(
      dir,
      side.rev,
      wanted !== undefined ? roots.filter((r) => r === wanted) : roots,
      request.bundle,
    );
    if (candidates.length === 0) continue;
    // The roots the pull request changes first, then the newest.
    const changed = await changedFiles(dir, await mergeBase(dir, base, head), head);
    const touched = candidates.filter((r) => changed.some((f) => f.startsWith(r + '/')));
    const ordered = [...(touched.length > 0 ? touched : candidates)].reverse();
    for (const root of ordered) {
      const report = await validateCatalog(new GitTreeSource(dir, side.rev, root));
      const found = findBundle(report.model, request.bundle);
      if ('error' in found) continue;
      const explanation = explainBundle(report.model, found.pkg, request.bundle, { from });
      const others = candidates.filter((r) => r !== root);
      return { ok: true, say: answer(request, root, side.label, explanation, others, report.valid) };
    }
  }
  // Not found: what would work, from the newest root that has something like it.
  const pkgGuess = request.bundle.split('.')[0]!;
  const near = await rootsMentioning(
    dir,
    head,
    wanted !== undefined ? headRoots.filter((r) => r === wanted) : headRoots,
    pkgGuess,
  );
  const where = wanted ?? near.at(-1);
  if (where !== undefined && (wanted !== undefined || near.length > 0)) {
    const report = await validateCatalog(new GitTreeSource(dir, head, where));
    const found = findBundle(report.model, request.bundle);
    const why = 'error' in found ? found.error : `no bundle "${request.bundle}" here`;
    return {
      ok: false,
      say: `${command} in ${inlineCode(where)}: ${inlineCode(why, 3000)}`,
    };
  }
  return {
    ok: false,
    say: `${command}: no catalog root of this pull request has a bundle ${inlineCode(request.bundle)} (the roots: ${inlineCode(listRoots(headRoots), 2000)}). Name a bundle as the catalog's \`olm.bundle\` or channel entry does, like \`<package>.v1.2.3\`.`,
  };
}

function answer(
  request: ExplainRequest,
  root: string,
  side: string,
  explanation: Explanation,
  others: string[],
  valid: boolean,
): string {
  const asked = `${inlineCode(request.bundle)}${request.from !== undefined ? ` from ${inlineCode(request.from, 50)}` : ''}`;
  const lines = [`${asked} in ${inlineCode(root)}, on ${side}:`, ''];
  const summary = [
    ...explanation.summary,
    ...(valid ? [] : ['Note: this catalog fails validation; classic OLM cannot serve it at all.']),
  ];
  lines.push(codeBlock(bounded(summary.join('\n'), MAX_SUMMARY)));
  const mermaid = explainMermaid(explanation);
  lines.push(
    '',
    mermaid.length <= MAX_MERMAID
      ? codeBlock(mermaid, 'mermaid')
      : `The diagram is too large for a comment (${mermaid.length} characters): ${inlineCode(`catalog-bot explain ${request.bundle} --catalog ${root} --format mermaid`, 500)} prints it.`,
  );
  if (others.length > 0)
    lines.push(
      '',
      `Also in ${inlineCode(listRoots(others), 1000)}: add \`in <catalog>\` to ask about another one.`,
    );
  return lines.join('\n');
}
