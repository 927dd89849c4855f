// The catalog work of `/explain impact` (./flow.ts), in a check worker: both sides'
// catalogs are loaded whole, as big as a pull request makes them (docs/security.md,
// bounded work). Reads the mirror's git objects only.
import { impactOf } from './impact.js';
import { impactSection } from './section.js';

export interface ImpactWork {
  dir: string;
  /** The merge base: the change is what the pull request carries. */
  base: string;
  head: string;
}

/** Within a command's reply (src/handlers/command-worker.ts MAX_COMMAND_REPLY). */
const MAX_REPLY_SECTION = 18_000;

export async function impactInRepo(work: ImpactWork): Promise<{ ok: boolean; say: string }> {
  const catalogs = await impactOf(work.dir, work.base, work.head);
  return { ok: true, say: impactSection(catalogs, work.base, work.head, MAX_REPLY_SECTION) };
}
