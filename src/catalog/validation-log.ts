// Which catalog trees a piece of work validated: a flow can say how much it did, and a test
// can see that no tree is validated twice (docs/architecture.md, the `/promote` walk). Only
// recorded inside `withValidationLog`; validation itself does not change.
import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash, randomUUID } from 'node:crypto';
import type { CatalogSource } from './fbc/source.js';

const log = new AsyncLocalStorage<CatalogSource[]>();

/** Called by validateCatalog for each tree it validates. */
export function noteValidation(source: CatalogSource): void {
  log.getStore()?.push(source);
}

/**
 * `work`'s result, and the identity (`treeIdentity`) of each tree it validated, in the order
 * they were validated: the same tree validated twice shows twice.
 */
export async function withValidationLog<T>(
  work: () => Promise<T>,
): Promise<{ result: T; validated: string[] }> {
  const sources: CatalogSource[] = [];
  const result = await log.run(sources, work);
  const validated: string[] = [];
  for (const source of sources) validated.push(await treeIdentity(source));
  return { result, validated };
}

/**
 * What a catalog source holds, whatever reads it (files in memory or a commit's tree): a
 * digest of each entry's kind, path and content (the git blob id of a file), so the same
 * files give the same identity. A source with anything but plain files it can read (a
 * symlink, a name that is not UTF-8) is only ever itself.
 */
export async function treeIdentity(source: CatalogSource): Promise<string> {
  const entries = [...(await source.list())].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const files = entries.filter((e) => e.kind === 'file' && e.problem === undefined);
  if (files.length !== entries.length) return randomUUID();
  const unknown = files.filter((e) => source.contentId?.(e.path) === undefined).map((e) => e.path);
  const read = unknown.length > 0 ? await source.read(unknown) : new Map<string, Buffer | Error>();
  const digest = createHash('sha256');
  for (const { path } of files) {
    const data = read.get(path);
    const id = source.contentId?.(path) ?? (Buffer.isBuffer(data) ? blobId(data) : randomUUID());
    digest.update(`${path}\0${id}\n`);
  }
  return digest.digest('hex');
}

/** The id git gives a blob of these bytes. */
function blobId(data: Buffer): string {
  return createHash('sha1').update(`blob ${data.length}\0`).update(data).digest('hex');
}
