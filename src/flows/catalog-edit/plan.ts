// What `promote`, `default-channel` and `deprecate` share: the catalog roots a request
// searches, the check of an edited file against validation and the upgrade-graph rules, and
// the re-render of a template's committed outputs after the template is edited (each output
// as it was rendered before: its opm behaviour, its own bundles).
import type { Diagnostic } from '../../catalog/diagnostics.js';
import {
  outputBehaviour,
  packageFiles,
  PromoteError,
  report,
  rootOf,
  type FileEdit,
  type PromoteInput,
  type ValidateFiles,
} from '../../catalog/edits/promote.js';
import { EditError } from '../../catalog/edits/promote-edit.js';
import type { CatalogReport } from '../../catalog/index.js';
import type { ModelPackage } from '../../catalog/fbc/model.js';
import type { TemplateMapping } from '../../catalog/templates/ci-yaml.js';
import {
  bundleResolverFromCatalog,
  parseTemplate,
  renderTemplateText,
  templateKind,
  TemplateError,
  type SemverOptions,
} from '../../catalog/templates/index.js';
import { upgradeGraphCheck } from '../../checks/upgrade-graph/index.js';
import { SCHEMA_SEMVER_TEMPLATE } from '../../catalog/property.js';

/**
 * What the promotion broke: validation errors and upgrade-graph errors of the package
 * that the old files did not have.
 */
export async function promotionProblems(
  root: string,
  oldFiles: Map<string, string>,
  newFiles: Map<string, string>,
  pkg: string,
  validate: ValidateFiles = report,
): Promise<Diagnostic[]> {
  const before = await validate(oldFiles, root);
  const after = await validate(newFiles, root);
  const known = new Set(
    before.diagnostics.filter((d) => d.level === 'error').map((d) => `${d.rule}\0${d.message}`),
  );
  const validation = after.diagnostics.filter(
    (d) => d.level === 'error' && !known.has(`${d.rule}\0${d.message}`),
  );
  const graph = upgradeGraphCheck([{ path: root, base: before, head: after, packages: new Set([pkg]) }]);
  return [...validation, ...graph.findings.filter((d) => d.level === 'error')];
}

/** The first problems, for a refusal. */
export function describeProblems(problems: Diagnostic[]): string {
  return problems
    .slice(0, 3)
    .map((d) => `${d.rule}: ${d.message}`)
    .join('; ');
}

/**
 * The catalog roots of the input, and the ones a request searches: only `root` when it is
 * given (it must be one of them), otherwise all.
 */
export function searchedRoots(
  input: PromoteInput,
  root: string | undefined,
): { roots: string[]; wanted?: string; searched: string[] } {
  const roots = input.roots.map((r) => r.replace(/\/+$/, ''));
  const wanted = root?.replace(/\/+$/, '');
  if (wanted === undefined) return { roots, searched: roots };
  if (!roots.includes(wanted))
    throw new PromoteError(`${wanted} is not a catalog root (the roots are: ${roots.join(', ') || 'none'})`);
  return { roots, wanted, searched: [wanted] };
}

/** The refusal when no searched root has `what` (e.g. `bundle x.v1`). */
export function notFound(what: string, wanted: string | undefined, roots: string[]): PromoteError {
  return new PromoteError(
    wanted !== undefined
      ? `${what} is not in catalog root ${wanted}`
      : `${what} is in no catalog root (searched ${roots.join(', ') || 'nothing'})`,
  );
}

/** An edit or a template that cannot be worked on, as a refusal that names the root; anything else is thrown on. */
export function editRefusal(err: unknown, root: string): never {
  if (err instanceof EditError || err instanceof TemplateError)
    throw new PromoteError(`cannot edit the files of ${root}: ${err.message}`);
  throw err;
}

/**
 * What replacing `file` of a catalog root with `after` breaks for the package, judged on
 * the package's own files before and after.
 */
export function fileEditProblems(
  root: string,
  files: Map<string, string>,
  r: CatalogReport,
  pkg: string,
  file: string,
  after: string,
  validate: ValidateFiles = report,
): Promise<Diagnostic[]> {
  const mine = packageFiles(r, pkg);
  const subset = new Map([...files].filter(([p]) => mine.has(p)));
  return promotionProblems(root, subset, new Map([...subset, [file, after]]), pkg, validate);
}

/**
 * One committed output of a template re-rendered from the edited template text with the
 * output's own behaviour and bundles, and what that broke for the package. A template opm
 * cannot render throws its TemplateError.
 */
export async function reRenderOutput(
  roots: string[],
  output: string,
  before: string,
  templateText: string,
  behaviour: SemverOptions | undefined,
  pkg: string,
  validate: ValidateFiles = report,
): Promise<{ edit: FileEdit; problems: Diagnostic[] }> {
  const after = await renderTemplateText(templateText, /\.json$/.test(output) ? 'json' : 'yaml', {
    resolveBundle: bundleResolverFromCatalog([before]),
    ...behaviour,
  });
  const root = rootOf(output, roots) ?? output.slice(0, output.lastIndexOf('/', output.lastIndexOf('/') - 1));
  const inRoot = output.slice(root.length + 1);
  const problems = await promotionProblems(
    root,
    new Map([[inRoot, before]]),
    new Map([[inRoot, after]]),
    pkg,
    validate,
  );
  return { edit: { path: output, before, after }, problems };
}

/** An edit with one way to write it (`default-channel`, `deprecate`), and how it refuses. */
export interface SingleEdit {
  /** The edited text of a catalog file or template. */
  edit: (path: string, text: string) => string;
  /** What the edit is doing, for a refusal (`<what> breaks <file>: ...`). */
  what: string;
  /** The refusal for an olm.semver template (it has no place for the edit). */
  semverRefusal: (template: string) => string;
}

/** A catalog root as loaded: its files (paths inside it) and their report. */
export interface LoadedRoot {
  root: string;
  files: Map<string, string>;
  report: CatalogReport;
}

/**
 * A single edit made where one catalog root writes the package: in `file` of the root, or,
 * when the package's file is rendered from a template, in the template (once: `doneTemplates`
 * holds the ones edited already) with its committed outputs re-rendered. Any file the edit
 * breaks refuses it. Returns the edits and the template they went through, or nothing when
 * that template was edited already.
 */
export async function editWhereWritten(
  input: PromoteInput,
  roots: string[],
  at: LoadedRoot,
  pkg: ModelPackage,
  file: string,
  single: SingleEdit,
  doneTemplates: Set<string>,
): Promise<{ edits: FileEdit[]; template?: string } | undefined> {
  const { root, files, report: r } = at;
  const mapping = input.templates?.find((m) => m.outputs.includes(`${root}/${pkg.pos.file}`));
  try {
    if (!mapping) {
      const before = files.get(file)!;
      const after = single.edit(`${root}/${file}`, before);
      const problems = await fileEditProblems(root, files, r, pkg.name, file, after, input.validateFiles);
      if (problems.length > 0)
        throw new PromoteError(`${single.what} breaks ${root}: ${describeProblems(problems)}`);
      return { edits: [{ path: `${root}/${file}`, before, after }] };
    }
    if (doneTemplates.has(mapping.template)) return undefined;
    doneTemplates.add(mapping.template);
    return {
      edits: await editViaTemplate(input, roots, mapping, pkg.name, single),
      template: mapping.template,
    };
  } catch (err) {
    return editRefusal(err, root);
  }
}

/** The single edit made in the template a package is rendered from, then each committed output re-rendered. */
async function editViaTemplate(
  { tree, validateFiles }: PromoteInput,
  roots: string[],
  mapping: TemplateMapping,
  pkg: string,
  single: SingleEdit,
): Promise<FileEdit[]> {
  const templateText = tree.read(mapping.template);
  if (templateText === undefined) throw new PromoteError(`template ${mapping.template} is missing`);
  const kind = templateKind(parseTemplate(templateText));
  if (kind === SCHEMA_SEMVER_TEMPLATE) throw new PromoteError(single.semverRefusal(mapping.template));
  mapping = { ...mapping, kind };
  const after = single.edit(mapping.template, templateText);
  const edits: FileEdit[] = [{ path: mapping.template, before: templateText, after }];
  for (const o of mapping.outputs) {
    const before = tree.read(o);
    if (before === undefined) continue;
    const behaviour = await outputBehaviour(mapping, templateText, o, before);
    const { edit: rendered, problems } = await reRenderOutput(
      roots,
      o,
      before,
      after,
      behaviour,
      pkg,
      validateFiles,
    );
    if (problems.length > 0)
      throw new PromoteError(`${single.what} breaks ${o}: ${describeProblems(problems)}`);
    edits.push(rendered);
  }
  return edits;
}
