// The validation of a catalog root at a commit, as the checks make it (catalog-bot/validate
// and every check that reads validated catalogs), and the validations one piece of work has
// made, so that a comment's edit is planned and checked on one validation of each tree
// (docs/architecture.md, the `/promote` walk).
import { GitTreeSource, validateCatalog, type CatalogReport } from '../catalog/index.js';
import type { DecodedFile } from '../catalog/fbc/decode.js';
import { objectAt } from '../git/read.js';

/**
 * Validation findings kept per catalog root and commit (docs/security.md, bounded work);
 * the rest are counted, and `catalog-bot validate <root>` lists them all.
 */
export const MAX_FINDINGS_PER_ROOT = 1000;

/**
 * Catalog root `path` of `rev` validated as the checks validate it. `decodedFiles` is shared
 * with the other commit of the change: a file both have is decoded once.
 */
export function validateRootAt(
  repo: string,
  rev: string,
  path: string,
  decodedFiles?: Map<string, DecodedFile>,
): Promise<CatalogReport> {
  return validateCatalog(new GitTreeSource(repo, rev, path), {
    blobDigests: true,
    maxDiagnostics: MAX_FINDINGS_PER_ROOT,
    ...(decodedFiles ? { decodedFiles } : {}),
  });
}

/**
 * The roots one piece of work validated (a comment's edit: its plan, then its checks), by
 * the git tree each one is: a tree id names exactly the files it holds, so a report is only
 * ever given for the very tree it was made from; any other tree (an edit, a branch that
 * moved) is validated afresh. Lives as long as the work, never longer.
 */
export class RootValidations {
  private readonly made = new Map<
    string,
    Promise<{ report: CatalogReport; decoded: Map<string, DecodedFile> }>
  >();

  constructor(private readonly repo: string) {}

  /** validateRootAt, once per tree; the decoded files of a validation made before are shared too. */
  async validate(rev: string, path: string, decodedFiles?: Map<string, DecodedFile>): Promise<CatalogReport> {
    const tree = await objectAt(this.repo, rev, path);
    if (tree === undefined) return validateRootAt(this.repo, rev, path, decodedFiles);
    // The source's label (`<rev>:<path>`) may name the root in the report: the key holds it too.
    const key = `${tree}\0${rev}\0${path}`;
    let made = this.made.get(key);
    if (!made) {
      const decoded = decodedFiles ?? new Map<string, DecodedFile>();
      made = validateRootAt(this.repo, rev, path, decoded).then((report) => ({ report, decoded }));
      this.made.set(key, made);
      return (await made).report;
    }
    const { report, decoded } = await made;
    if (decodedFiles && decodedFiles !== decoded)
      for (const [id, file] of decoded) decodedFiles.set(id, file);
    return report;
  }
}
