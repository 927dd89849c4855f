// Which templates render to which catalogs in community-operators style repositories:
// `operators/<package>/ci.yaml` `fbc.catalog_mapping`. The templates check, the bundle
// check, `/promote` and the release command all read it here.
import { parseNodes, scalarOf, valueOf, type TNode } from '../edits/promote-edit.js';
import type { TemplateKind } from './index.js';
import { SCHEMA_BASIC_TEMPLATE, SCHEMA_SEMVER_TEMPLATE } from '../property.js';

export interface TemplateMapping {
  /** Path of the template file. */
  template: string;
  kind: TemplateKind;
  /** Paths of the rendered catalog files made from it. */
  outputs: string[];
}

/** A ci.yaml that is not YAML. */
export class CiYamlError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CiYamlError';
  }
}

/**
 * `operators/<package>/ci.yaml` `fbc.catalog_mapping`: each template under
 * `operators/<package>/catalog-templates/` renders to `catalogs/<name>/<package>/catalog.yaml`.
 */
const isSegment = (name: string): boolean => name !== '.' && name !== '..' && /^[^/\\\0]+$/.test(name);

export function templateMappingsFromCiYaml(ciPath: string, text: string): TemplateMapping[] {
  const dir = ciPath.slice(0, ciPath.lastIndexOf('/'));
  const pkg = dir.slice(dir.lastIndexOf('/') + 1);
  let nodes: TNode[];
  try {
    nodes = parseNodes(text, 'yaml');
  } catch (err) {
    throw new CiYamlError(`${ciPath}: ${(err as Error).message}`);
  }
  const top = nodes[0];
  const fbc = top?.kind === 'map' ? valueOf(top, 'fbc') : undefined;
  const list = fbc?.kind === 'map' ? valueOf(fbc, 'catalog_mapping') : undefined;
  if (list?.kind !== 'seq') return [];
  const out: TemplateMapping[] = [];
  for (const item of list.items) {
    if (item.kind !== 'map') continue;
    const name = scalarOf(item, 'template_name');
    const names = valueOf(item, 'catalog_names');
    const type = scalarOf(item, 'type');
    // Names are one path segment each: a mapping never reaches another package's template or
    // catalog directory (whose owners did not approve this ci.yaml).
    if (typeof name !== 'string' || !isSegment(name) || names?.kind !== 'seq') continue;
    out.push({
      template: `${dir}/catalog-templates/${name}`,
      kind: type === SCHEMA_SEMVER_TEMPLATE ? SCHEMA_SEMVER_TEMPLATE : SCHEMA_BASIC_TEMPLATE,
      outputs: names.items.flatMap((n) =>
        n.kind === 'scalar' && isSegment(String(n.value))
          ? [`catalogs/${String(n.value)}/${pkg}/catalog.yaml`]
          : [],
      ),
    });
  }
  return out;
}
