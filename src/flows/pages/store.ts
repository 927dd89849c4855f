// Pull-request impacts kept for their pages (docs/site.md, "The pull-request impact page"):
// the checks compute the impact once (src/checks/pr.ts) and the checks job stores it here,
// under the work directory, one file per pull request head; the page reads it back and
// never computes it again. Names are the repository id, the pull request number and the
// head sha, checked to be what they say: nothing from a request reaches a file name as text.
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isObjectId } from '../../git/object-id.js';
import type { CatalogsImpact } from '../../catalog/olm/impact-report.js';

export interface StoredImpact {
  number: number;
  head: string;
  base: string;
  catalogs: CatalogsImpact;
}

/** Impacts kept per repository; older ones are removed first. */
const KEPT_PER_REPO = 200;

function fileOf(workDir: string, repoId: number, number: number, head: string): string | undefined {
  if (!Number.isSafeInteger(repoId) || !Number.isSafeInteger(number) || number <= 0 || !isObjectId(head))
    return undefined;
  return join(workDir, 'pages', 'impact', String(repoId), `${number}-${head}.json`);
}

export async function storeImpact(workDir: string, repoId: number, impact: StoredImpact): Promise<void> {
  const file = fileOf(workDir, repoId, impact.number, impact.head);
  if (!file) return;
  const dir = join(file, '..');
  await mkdir(dir, { recursive: true });
  // Written aside and renamed: a page never reads half a file.
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, JSON.stringify(impact));
  await rename(tmp, file);
  const names = (await readdir(dir)).filter((n) => n.endsWith('.json'));
  if (names.length <= KEPT_PER_REPO) return;
  const dated = await Promise.all(names.map(async (n) => ({ n, t: (await stat(join(dir, n))).mtimeMs })));
  dated.sort((a, b) => a.t - b.t);
  for (const { n } of dated.slice(0, names.length - KEPT_PER_REPO)) await rm(join(dir, n), { force: true });
}

/** The stored impact of a head, or undefined (never computed here, or removed since). */
export async function loadImpact(
  workDir: string,
  repoId: number,
  number: number,
  head: string,
): Promise<StoredImpact | undefined> {
  const file = fileOf(workDir, repoId, number, head);
  if (!file) return undefined;
  try {
    return JSON.parse(await readFile(file, 'utf8')) as StoredImpact;
  } catch {
    return undefined;
  }
}
