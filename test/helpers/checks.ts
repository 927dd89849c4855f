// Which check runs the App writes for a change (docs/github-limits.md, "Checks that do not
// apply"): one per check that applies, named in the record every run carries; none for
// the others.
import { PR_CHECK_NAMES, readChecked } from '../../src/handlers/check-runs.js';

/**
 * The checks of a change to OpenShift catalogs (`catalogs/v4.N`) only, in a repository that
 * publishes nothing: no template, no bundle directory, no published image to compare with.
 */
export const CATALOG_CHANGE_CHECKS: readonly string[] = PR_CHECK_NAMES.filter(
  (name) => !['catalog-bot/templates', 'catalog-bot/bundle', 'catalog-bot/prune'].includes(name),
);

/** The checks each run's record names as applying (sorted), one list per distinct record. */
export function recordedChecks(runs: { output?: { text?: string } }[]): string[][] {
  const lists = runs.map((r) => JSON.stringify([...(readChecked(r.output?.text)?.checks ?? [])].sort()));
  return [...new Set(lists)].map((l) => JSON.parse(l) as string[]);
}
