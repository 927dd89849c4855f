// `com.redhat.openshift.versions`: which OpenShift versions' indexes a bundle goes into
// (docs/legacy-index.md). The pipeline asks Red Hat's catalog service with the value as it
// is; these are that service's rules: `v4.12` is 4.12 and later, `=v4.14` only 4.14,
// `v4.12-v4.15` a range, and the two historical comma forms `v4.5,v4.6` / `v4.6,v4.5`
// mean 4.5 and later. A bundle without the annotation goes into every index.
import { ocpCatalogVersion, parseOcpMinor, rankOcp, type OcpMinor } from '../olm/ocp-continuity.js';

export const OPENSHIFT_VERSIONS_ANNOTATION = 'com.redhat.openshift.versions';

export type OpenShiftRange =
  | { kind: 'all' }
  | { kind: 'from'; from: OcpMinor }
  | { kind: 'only'; only: OcpMinor }
  | { kind: 'between'; from: OcpMinor; to: OcpMinor };

export type OpenShiftRangeResult = { ok: true; range: OpenShiftRange } | { ok: false; error: string };

/** `v4.12` or `4.12` (the service takes both) as a minor version. */
function minor(s: string): OcpMinor | null {
  return parseOcpMinor(s.trim().replace(/^v/, ''));
}

/** The annotation's value (undefined or empty: no annotation) as a range of OpenShift versions. */
export function parseOpenShiftVersions(value: string | undefined): OpenShiftRangeResult {
  const text = (value ?? '').trim();
  if (text === '') return { ok: true, range: { kind: 'all' } };
  const bad = (why: string): OpenShiftRangeResult => ({
    ok: false,
    error: `${OPENSHIFT_VERSIONS_ANNOTATION} "${text}" ${why}; write "v4.12" (4.12 and later), "=v4.14" (only 4.14) or "v4.12-v4.15" (a range)`,
  });
  if (text.includes(',')) {
    const parts = text.split(',').map((p) => p.trim());
    const sorted = [...parts].sort();
    // Only these two comma forms are accepted, for history's sake; both mean 4.5 and later.
    if (parts.length === 2 && sorted[0] === 'v4.5' && sorted[1] === 'v4.6')
      return { ok: true, range: { kind: 'from', from: { major: 4, minor: 5 } } };
    return bad('is a comma list, which the catalog service refuses (only "v4.5,v4.6" is allowed)');
  }
  if (text.startsWith('=')) {
    const only = minor(text.slice(1));
    return only ? { ok: true, range: { kind: 'only', only } } : bad('does not name a version after "="');
  }
  const dash = text.indexOf('-');
  if (dash >= 0) {
    const from = minor(text.slice(0, dash));
    const to = minor(text.slice(dash + 1));
    if (!from || !to) return bad('is not a range of two versions');
    if (rankOcp(from) > rankOcp(to)) return bad('ends before it starts');
    return { ok: true, range: { kind: 'between', from, to } };
  }
  const from = minor(text);
  return from ? { ok: true, range: { kind: 'from', from } } : bad('is not a version');
}

/** Whether the range admits a catalog (`v4.12`); a name that is no OpenShift version is admitted by none. */
export function admitsCatalog(range: OpenShiftRange, catalog: string): boolean {
  const v = ocpCatalogVersion(catalog);
  if (!v) return false;
  const r = rankOcp(v);
  switch (range.kind) {
    case 'all':
      return true;
    case 'from':
      return r >= rankOcp(range.from);
    case 'only':
      return r === rankOcp(range.only);
    case 'between':
      return r >= rankOcp(range.from) && r <= rankOcp(range.to);
  }
}

/** The range as people write it, for messages. */
export function formatOpenShiftRange(range: OpenShiftRange): string {
  const f = (m: OcpMinor): string => `v${m.major}.${m.minor}`;
  switch (range.kind) {
    case 'all':
      return 'every OpenShift version';
    case 'from':
      return `${f(range.from)} and later`;
    case 'only':
      return `only ${f(range.only)}`;
    case 'between':
      return `${f(range.from)} to ${f(range.to)}`;
  }
}
