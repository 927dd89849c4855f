// `deprecate` / `undeprecate <bundle|channel|package> <name>`: write or remove the package's
// `olm.deprecations` entry where the repository keeps it (the catalog file beside the
// package, or the olm.template.basic template its catalogs are rendered from, whose
// outputs are then re-rendered), with the machinery of `default-channel` and `promote`:
// the core decides and edits (src/catalog/edits/deprecate.ts), and every result is
// validated and checked against the upgrade-graph rules before it is returned.
import {
  addDeprecationText,
  DeprecationRefused,
  planDeprecation,
  removeDeprecationText,
  type DeprecationKind,
  type DeprecationPlan,
} from '../../catalog/edits/deprecate.js';
import {
  AlreadyDone,
  PromoteError,
  rootReport,
  rootFiles,
  type FileEdit,
  type PromoteInput,
  type PromoteResult,
} from '../../catalog/edits/promote.js';
import { editWhereWritten, notFound, searchedRoots, type SingleEdit } from '../catalog-edit/plan.js';

export interface DeprecateRequest {
  kind: DeprecationKind;
  /** The bundle or channel (`<package>/<channel>` also names the package), or the package. */
  name: string;
  package?: string;
  /** The entry's message; otherwise one that names the way forward. */
  message?: string;
  /** Remove the entry instead (undeprecate). */
  undo?: boolean;
  /** Only this catalog root; otherwise every root that has the target. */
  root?: string;
}

/** The request with its package named, where the name alone does not need a catalog to tell. */
function named(request: DeprecateRequest): { name: string; package?: string } {
  if (request.kind === 'package') return { name: request.name, package: request.package ?? request.name };
  if (request.kind === 'channel' && request.package === undefined) {
    const slash = request.name.indexOf('/');
    if (slash > 0) return { name: request.name.slice(slash + 1), package: request.name.slice(0, slash) };
    throw new PromoteError(
      `channel names are not unique across packages: name the package of channel "${request.name}" (\`<package>/${request.name}\`, or --package <package>)`,
    );
  }
  return { name: request.name, ...(request.package !== undefined ? { package: request.package } : {}) };
}

export async function deprecate(request: DeprecateRequest, input: PromoteInput): Promise<PromoteResult> {
  const { tree } = input;
  const undo = request.undo === true;
  const verb = undo ? 'undeprecating' : 'deprecating';
  const { roots, wanted, searched } = searchedRoots(input, request.root);
  const { name, package: knownPackage } = named(request);
  const edits: FileEdit[] = [];
  const notes: string[] = [];
  const already: string[] = [];
  const unknown: string[] = [];
  const doneTemplates = new Set<string>();
  const single = (plan: DeprecationPlan): SingleEdit => ({
    edit: (path, text) => editText(path, text, plan, undo),
    what: verb,
    // An olm.semver template has no place for other objects: opm renders only its bundles
    // and the channels it derives (docs/deprecate.md).
    semverRefusal: (template) =>
      `${template} is an olm.semver template, and opm alpha render-template renders nothing but its bundles and derived channels from it, so an olm.deprecations entry cannot be written there (one written into the rendered catalogs would be lost at the next render). Convert the package to an olm.template.basic template (it can carry olm.deprecations entries), then deprecate`,
  });
  for (const root of searched) {
    const files = rootFiles(tree, root);
    const needle = knownPackage ?? name;
    if (![...files.values()].some((text) => text.includes(needle))) continue;
    const r = await rootReport(input, files, root);
    const pkgName = knownPackage ?? r.config.bundles.find((b) => b.name === name)?.package;
    if (pkgName === undefined) continue;
    const pkg = r.model.get(pkgName);
    if (!pkg) continue;
    const target = {
      kind: request.kind,
      name: request.kind === 'package' ? pkgName : name,
      package: pkgName,
    };
    let plan: DeprecationPlan;
    try {
      plan = planDeprecation(r.config, pkg, target, {
        undo,
        where: root,
        ...(request.message !== undefined ? { message: request.message } : {}),
      });
    } catch (err) {
      if (!(err instanceof DeprecationRefused)) throw err;
      // Absent here, or already as asked: other roots may still need the edit.
      if (err.reason === 'unknown') unknown.push(err.message);
      else if (err.reason === 'already') already.push(err.message);
      else throw err;
      continue;
    }
    // The package's entries are kept where it has its olm.deprecations blob, or beside the package.
    const file = r.config.deprecations.find((d) => d.package === pkgName)?.pos.file ?? pkg.pos.file;
    const done = await editWhereWritten(
      input,
      roots,
      { root, files, report: r },
      pkg,
      file,
      single(plan),
      doneTemplates,
    );
    if (!done) continue;
    edits.push(...done.edits);
    notes.push(noteOf(plan, undo));
    if (done.template !== undefined) notes.push(`edited ${done.template} and re-rendered its outputs`);
  }
  if (edits.length === 0) {
    if (already.length > 0)
      throw new AlreadyDone(
        already[0]! +
          (already.length > 1 ? ` (and likewise in ${already.length - 1} other catalog roots)` : ''),
      );
    if (unknown.length > 0) throw new PromoteError(unknown[0]!);
    throw notFound(
      knownPackage !== undefined ? `package ${knownPackage}` : `${request.kind} ${name}`,
      wanted,
      roots,
    );
  }
  notes.push(...already.map((a) => `${a} (left as it is)`));
  return { edits, notes };
}

/** What changes, and the entry's message. */
const noteOf = (plan: DeprecationPlan, undo: boolean): string =>
  undo ? plan.note : `${plan.note}. Message: "${plan.message}"`;

function editText(path: string, text: string, plan: DeprecationPlan, undo: boolean): string {
  return undo
    ? removeDeprecationText(path, text, plan.target.package, plan.reference)
    : addDeprecationText(path, text, plan.target.package, plan.reference, plan.message);
}
