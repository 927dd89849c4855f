// Opening a new OpenShift version (docs/ocp-lifecycle.md): copy every package of catalog
// `<from>` whose `fbc.version_promotion_strategy` allows it to catalog `<to>`, and add `<to>`
// to the package's `ci.yaml` `catalog_mapping`. Pure: it reads a file tree and returns
// the edits. The new catalog is what clusters on `<from>` already see (a byte copy), unless
// `<to>` needs another migrate level (`olm.csv.metadata` from a configured version on),
// in which case it is the render of the template that reproduces `<from>`.
import { migrateLevelOf, opmBehavioursFor, renderAsCommitted } from '../templates/behaviours.js';
import type { FileEdit, FileTree } from './promote.js';
import {
  applySplices,
  detectStyle,
  EditError,
  insertSeqItem,
  parseNodes,
  scalarOf,
  valueOf,
  type TMap,
  type TNode,
  type TSeq,
} from './promote-edit.js';
import {
  bundleResolverFromCatalog,
  parseTemplate,
  renderTemplateText,
  semverOptionsForOpm,
  templateKind,
  TemplateError,
} from '../templates/index.js';

export type PromotionStrategy = 'always' | 'review-needed' | 'never';
export type OcpPackageStatus = 'promoted' | 'needs-review' | 'skipped' | 'refused';

export interface OcpPromoteRequest {
  from: string;
  to: string;
  /** Packages promoted whatever their strategy. */
  packages?: string[];
  /** First OpenShift catalog rendered with `olm.csv.metadata` (default v4.17). */
  csvMetadataFrom?: string;
  /**
   * Promote `review-needed` packages too (their results keep that strategy): the App opens
   * one pull request per such package for its owners to review (docs/ocp-lifecycle.md).
   */
  includeReviewNeeded?: boolean;
}

export interface OcpPackageResult {
  package: string;
  status: OcpPackageStatus;
  strategy: PromotionStrategy | string;
  /** Why, in a sentence a person reads. */
  reason: string;
  /** Paths this package's promotion writes. */
  files: string[];
  /** Things worth knowing that do not stop the promotion. */
  notes: string[];
}

export interface OcpPromoteResult {
  from: string;
  to: string;
  packages: OcpPackageResult[];
  edits: FileEdit[];
}

/** A request that cannot be carried out at all (bad version names, unknown catalog). */
export class OcpPromoteError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OcpPromoteError';
  }
}

export const CATALOGS_DIR = 'catalogs';
export const DEFAULT_CSV_METADATA_FROM = 'v4.17';

/** `v4.21` -> [4, 21]; undefined for anything else. */
export function parseOcpVersion(name: string): [number, number] | undefined {
  const m = /^v(\d{1,3})\.(\d{1,3})$/.exec(name);
  return m ? [Number(m[1]), Number(m[2])] : undefined;
}

export function compareOcpVersions(a: [number, number], b: [number, number]): number {
  return a[0] - b[0] || a[1] - b[1];
}

const PACKAGE_NAME = /^[a-z0-9][a-z0-9._-]*$/i;

interface CiYaml {
  path: string;
  text: string;
  top: TMap;
  strategy: string;
  /** The `catalog_mapping` entries, when the file has any. */
  mapping: TMap[] | undefined;
}

function readCiYaml(tree: FileTree, pkg: string): CiYaml | undefined {
  const path = `operators/${pkg}/ci.yaml`;
  const text = tree.read(path);
  if (text === undefined) return undefined;
  let nodes: TNode[];
  try {
    nodes = parseNodes(text, 'yaml');
  } catch (err) {
    throw new EditError(`${path}: ${(err as Error).message}`);
  }
  const top = nodes[0];
  if (top?.kind !== 'map') throw new EditError(`${path}: not a mapping`);
  const fbc = valueOf(top, 'fbc');
  const strategy = fbc?.kind === 'map' ? scalarOf(fbc, 'version_promotion_strategy') : undefined;
  const list = fbc?.kind === 'map' ? valueOf(fbc, 'catalog_mapping') : undefined;
  return {
    path,
    text,
    top,
    strategy: strategy === undefined || strategy === null ? 'never' : String(strategy),
    mapping: list?.kind === 'seq' ? list.items.filter((i): i is TMap => i.kind === 'map') : undefined,
  };
}

const namesOf = (entry: TMap): TSeq | undefined => {
  const v = valueOf(entry, 'catalog_names');
  return v?.kind === 'seq' ? v : undefined;
};
const holds = (entry: TMap, name: string): boolean =>
  namesOf(entry)?.items.some((n) => n.kind === 'scalar' && String(n.value) === name) ?? false;

/** `ci.yaml` with `<to>` added to the `catalog_names` of the entry that holds `<from>`. */
export function addCatalogName(ci: CiYaml, from: string, to: string): string {
  const entry = ci.mapping?.find((e) => holds(e, from));
  const names = entry && namesOf(entry);
  if (!entry || !names) throw new EditError(`${ci.path}: no catalog_mapping entry lists ${from}`);
  if (holds(entry, to)) return ci.text;
  // In version order: before the first later version the list names, else at the end.
  const target = parseOcpVersion(to)!;
  const later = names.items.findIndex((n) => {
    const v = n.kind === 'scalar' ? parseOcpVersion(String(n.value)) : undefined;
    return v !== undefined && compareOcpVersions(v, target) > 0;
  });
  const at = later < 0 ? names.items.length : later;
  return applySplices(ci.text, [insertSeqItem(ci.text, names, to, detectStyle(ci.text, 'yaml'), at)]);
}

type Migrate = 'bundle-object-to-csv-metadata' | undefined;

/**
 * The catalog file of `<to>`: `<from>`'s bytes when both take the same migrate level;
 * otherwise the template rendered as it reproduces `<from>`, at `<to>`'s level.
 */
async function promotedCatalog(
  tree: FileTree,
  ci: CiYaml,
  pkg: string,
  request: Required<Pick<OcpPromoteRequest, 'from' | 'to' | 'csvMetadataFrom'>>,
  notes: string[],
): Promise<string> {
  const fromPath = `${CATALOGS_DIR}/${request.from}/${pkg}/catalog.yaml`;
  const committed = tree.read(fromPath);
  if (committed === undefined) throw new EditError(`${fromPath} does not exist`);
  const entry = ci.mapping!.find((e) => holds(e, request.from))!;
  const templateName = scalarOf(entry, 'template_name');
  if (typeof templateName !== 'string' || !PACKAGE_NAME.test(templateName)) {
    throw new EditError(
      `${ci.path}: the catalog_mapping entry of ${request.from} has no usable template_name`,
    );
  }
  const templatePath = `operators/${pkg}/catalog-templates/${templateName}`;
  const fromLevel = migrateLevelOf(committed);
  const threshold = parseOcpVersion(request.csvMetadataFrom);
  const hasObjects = /"?type"?:\s*"?olm\.bundle\.object"?/.test(committed);
  const toLevel: Migrate =
    fromLevel ??
    (hasObjects && threshold && compareOcpVersions(parseOcpVersion(request.to)!, threshold) >= 0
      ? 'bundle-object-to-csv-metadata'
      : undefined);

  const template = tree.read(templatePath);
  let reproduced: string | undefined;
  let problem = '';
  if (template === undefined) problem = `${templatePath} does not exist`;
  else {
    // Bundles come from the catalogs this template already renders (no registry).
    const outputs = (namesOf(entry)?.items ?? []).flatMap((n) =>
      n.kind === 'scalar' ? [`${CATALOGS_DIR}/${String(n.value)}/${pkg}/catalog.yaml`] : [],
    );
    const texts = [fromPath, ...outputs.filter((o) => o !== fromPath)].flatMap((o) => tree.read(o) ?? []);
    const resolveBundle = bundleResolverFromCatalog(texts);
    try {
      const kind = templateKind(parseTemplate(template));
      const match = await renderAsCommitted(
        template,
        'yaml',
        committed,
        { resolveBundle, ...(fromLevel ? { migrateLevel: fromLevel } : {}) },
        opmBehavioursFor(kind),
      );
      if (match)
        reproduced =
          toLevel === fromLevel
            ? committed
            : await renderTemplateText(template, 'yaml', {
                resolveBundle,
                ...semverOptionsForOpm(match.opm),
                migrateLevel: toLevel!,
              });
      if (reproduced === undefined) problem = `${fromPath} is not the render of ${templatePath}`;
    } catch (err) {
      if (!(err instanceof TemplateError)) throw err;
      problem = `${templatePath} cannot be rendered: ${err.message}`;
    }
  }
  if (reproduced !== undefined) return reproduced;
  if (toLevel === fromLevel) {
    // What clusters on <from> run is what clusters on <to> must find: copy it as committed.
    notes.push(`${problem}; copied ${fromPath} as committed (catalog-bot/templates reports the difference)`);
    return committed;
  }
  throw new EditError(
    `${request.to} needs olm.csv.metadata but ${request.from} does not carry it, and ${problem}: fix the template so that it renders ${fromPath}, then promote again`,
  );
}

/** Every package directory of catalog `<name>`. */
function packagesOf(tree: FileTree, name: string): Map<string, string[]> {
  const prefix = `${CATALOGS_DIR}/${name}/`;
  const out = new Map<string, string[]>();
  for (const p of tree.list()) {
    if (!p.startsWith(prefix)) continue;
    const rest = p.slice(prefix.length);
    const slash = rest.indexOf('/');
    if (slash < 0) continue;
    const pkg = rest.slice(0, slash);
    out.set(pkg, [...(out.get(pkg) ?? []), p]);
  }
  return new Map([...out].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** Promote catalog `<from>` to `<to>` (docs/ocp-lifecycle.md). */
export async function ocpPromote(tree: FileTree, request: OcpPromoteRequest): Promise<OcpPromoteResult> {
  const from = parseOcpVersion(request.from);
  const to = parseOcpVersion(request.to);
  for (const [name, v] of [
    [request.from, from],
    [request.to, to],
  ] as const) {
    if (!v) throw new OcpPromoteError(`"${name}" is not an OpenShift catalog name like v4.21`);
  }
  if (compareOcpVersions(to!, from!) <= 0) {
    throw new OcpPromoteError(`${request.to} is not a later OpenShift version than ${request.from}`);
  }
  const inFrom = packagesOf(tree, request.from);
  if (inFrom.size === 0) throw new OcpPromoteError(`${CATALOGS_DIR}/${request.from} holds no packages`);
  const named = new Set(request.packages ?? []);
  for (const p of named) {
    if (!inFrom.has(p)) throw new OcpPromoteError(`package ${p} is not in ${CATALOGS_DIR}/${request.from}`);
  }
  const inTo = packagesOf(tree, request.to);
  const full = {
    from: request.from,
    to: request.to,
    csvMetadataFrom: request.csvMetadataFrom ?? DEFAULT_CSV_METADATA_FROM,
  };
  const results: OcpPackageResult[] = [];
  const edits: FileEdit[] = [];
  for (const [pkg, files] of inFrom) {
    const notes: string[] = [];
    const result = (
      status: OcpPackageStatus,
      strategy: string,
      reason: string,
      written: string[] = [],
    ): OcpPackageResult => ({ package: pkg, status, strategy, reason, files: written, notes });
    let ci: CiYaml | undefined;
    try {
      ci = readCiYaml(tree, pkg);
    } catch (err) {
      results.push(result('refused', 'unknown', (err as Error).message));
      continue;
    }
    const strategy = ci?.strategy ?? 'never';
    const why = ci
      ? `fbc.version_promotion_strategy is ${strategy}${ci.strategy === 'never' && !/version_promotion_strategy/.test(ci.text) ? ' (the default)' : ''}`
      : `operators/${pkg}/ci.yaml does not exist, so its strategy is never`;
    if (inTo.has(pkg)) {
      results.push(result('skipped', strategy, `already in ${CATALOGS_DIR}/${request.to}`));
      continue;
    }
    if (!named.has(pkg) && !(request.includeReviewNeeded && strategy === 'review-needed')) {
      if (strategy === 'review-needed') {
        results.push(
          result('needs-review', strategy, `${why}: promote it with --package ${pkg} after review`),
        );
        continue;
      }
      if (strategy !== 'always') {
        results.push(
          result(
            'skipped',
            strategy,
            strategy === 'never' ? why : `${why}, which is not always, review-needed or never`,
          ),
        );
        continue;
      }
    }
    const reason = named.has(pkg) ? `named with --package (${why})` : why;
    try {
      const pkgEdits: FileEdit[] = [];
      if (ci?.mapping?.some((e) => holds(e, request.from))) {
        const after = await promotedCatalog(tree, ci, pkg, full, notes);
        pkgEdits.push({ path: `${CATALOGS_DIR}/${request.to}/${pkg}/catalog.yaml`, before: '', after });
        const ciAfter = addCatalogName(ci, request.from, request.to);
        if (ciAfter !== ci.text) pkgEdits.push({ path: ci.path, before: ci.text, after: ciAfter });
      } else {
        // Not rendered from a template for <from>: the package's files are copied as they are.
        if (ci?.mapping)
          notes.push(`${ci.path} maps no template to ${request.from}; files copied as they are`);
        for (const f of files) {
          pkgEdits.push({
            path: `${CATALOGS_DIR}/${request.to}/${f.slice(`${CATALOGS_DIR}/${request.from}/`.length)}`,
            before: '',
            after: tree.read(f) ?? '',
          });
        }
      }
      edits.push(...pkgEdits);
      results.push(
        result(
          'promoted',
          strategy,
          reason,
          pkgEdits.map((e) => e.path),
        ),
      );
    } catch (err) {
      if (!(err instanceof EditError)) throw err;
      results.push(result('refused', strategy, err.message));
    }
  }
  return { from: request.from, to: request.to, packages: results, edits };
}
