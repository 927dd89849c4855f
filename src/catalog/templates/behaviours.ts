// Which opm release rendered a committed output: opm's template behaviour changed between
// releases (README, Templates), so a template is rendered as each release would until one
// reproduces the committed bytes. The templates check, `/promote`, `default-channel`,
// `ocp-promote` and `release` all ask here.
import { renderTemplateText, type TemplateKind, type TemplateRenderOptions } from './index.js';
import { semverOptionsForOpm } from './semver.js';
import { SCHEMA_SEMVER_TEMPLATE } from '../property.js';

/**
 * opm releases whose template behaviour differs (semver edges: v1.57.0, v1.61.0; package
 * icon and description: v1.65.0), newest first: the first that reproduces a committed
 * output is the one it was rendered with.
 */
export const OPM_BEHAVIOURS = ['v1.73.0', 'v1.64.0', 'v1.60.0', 'v1.46.0'];

/** The releases worth trying for a kind: only olm.semver templates render differently. */
export function opmBehavioursFor(kind: TemplateKind): string[] {
  return kind === SCHEMA_SEMVER_TEMPLATE ? OPM_BEHAVIOURS : OPM_BEHAVIOURS.slice(0, 1);
}

export type MigrateLevel = 'bundle-object-to-csv-metadata' | undefined;

/** An output whose bundles carry `olm.csv.metadata` and no `olm.bundle.object` was migrated. */
export function migrateLevelOf(committed: string | undefined): MigrateLevel {
  if (!committed) return undefined;
  const metadata = /"?type"?:\s*"?olm\.csv\.metadata"?/.test(committed);
  const objects = /"?type"?:\s*"?olm\.bundle\.object"?/.test(committed);
  return metadata && !objects ? 'bundle-object-to-csv-metadata' : undefined;
}

export interface BehaviourMatch {
  /** The opm release whose behaviour gave `rendered`. */
  opm: string;
  rendered: string;
  /** How far `rendered` is from the committed output: 0 when it reproduces it. */
  changes: number;
}

/**
 * Render `template` as each release of `order` does, in turn, until one reproduces
 * `committed` (with nothing committed, the first render). Without `distance` only a
 * reproduction counts (else undefined); with it, the render nearest to `committed` is
 * returned when none reproduces it. Render errors are thrown to the caller.
 */
export async function renderAsCommitted(
  template: string,
  format: 'json' | 'yaml',
  committed: string | undefined,
  options: Omit<TemplateRenderOptions, 'edgeRule' | 'packageMetadata'>,
  order: readonly string[],
  distance?: (committed: string, rendered: string) => number,
): Promise<BehaviourMatch | undefined> {
  let best: BehaviourMatch | undefined;
  for (const opm of order) {
    const rendered = await renderTemplateText(template, format, { ...options, ...semverOptionsForOpm(opm) });
    if (committed === undefined || rendered === committed) return { opm, rendered, changes: 0 };
    if (!distance) continue;
    const changes = distance(committed, rendered);
    if (!best || changes < best.changes) best = { opm, rendered, changes };
  }
  return best;
}
