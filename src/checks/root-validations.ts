// The validation of a catalog root as the checks make it (catalog-bot/validate and every
// check that reads validated catalogs), and the validations one piece of work has made, so
// that a comment's edit is planned and checked on one validation of each tree
// (docs/architecture.md, the `/promote` walk).
import { GitTreeSource, validateCatalog, type CatalogReport } from '../catalog/index.js';
import type { DecodedFile } from '../catalog/fbc/decode.js';
import type { CatalogSource } from '../catalog/fbc/source.js';
import { treeSource } from '../catalog/edits/promote.js';
import { treeIdentity } from '../catalog/validation-log.js';

/**
 * Validation findings kept per catalog root and commit (docs/security.md, bounded work);
 * the rest are counted, and `catalog-bot validate <root>` lists them all.
 */
export const MAX_FINDINGS_PER_ROOT = 1000;

/**
 * A catalog source validated as the checks validate a root. `decodedFiles` is shared with
 * the other commit of the change: a file both have is decoded once.
 */
export function validateRoot(
  source: CatalogSource,
  decodedFiles?: Map<string, DecodedFile>,
): Promise<CatalogReport> {
  return validateCatalog(source, {
    blobDigests: true,
    maxDiagnostics: MAX_FINDINGS_PER_ROOT,
    ...(decodedFiles ? { decodedFiles } : {}),
  });
}

/**
 * The trees one piece of work validated (a comment's edit: its plan, then its checks), by
 * what they hold (`treeIdentity`: every entry's path, kind and content id), so a report is
 * only ever given for the very files it was made from, whoever reads them (a commit's root
 * or the plan's files in memory); other files (the edit, a branch that moved) are validated
 * afresh. Every validation here is the checks' own (`validateRoot`). Lives as long as the
 * work, never longer.
 */
export class RootValidations {
  private readonly made = new Map<
    string,
    Promise<{ report: CatalogReport; decoded: Map<string, DecodedFile> }>
  >();

  constructor(private readonly repo: string) {}

  /** Catalog root `path` at `rev`; the decoded files of the validation are shared too. */
  validate(rev: string, path: string, decodedFiles?: Map<string, DecodedFile>): Promise<CatalogReport> {
    return this.once(new GitTreeSource(this.repo, rev, path), decodedFiles);
  }

  /** Files of a catalog root (paths inside it), as a plan holds them. */
  validateFiles(files: Map<string, string>, label: string): Promise<CatalogReport> {
    return this.once(treeSource(files, label));
  }

  private async once(source: CatalogSource, decodedFiles?: Map<string, DecodedFile>): Promise<CatalogReport> {
    const key = await treeIdentity(source);
    let made = this.made.get(key);
    if (!made) {
      const decoded = decodedFiles ?? new Map<string, DecodedFile>();
      made = validateRoot(source, decoded).then((report) => ({ report, decoded }));
      this.made.set(key, made);
      return (await made).report;
    }
    const { report, decoded } = await made;
    if (decodedFiles && decodedFiles !== decoded)
      for (const [id, file] of decoded) decodedFiles.set(id, file);
    return report;
  }
}
