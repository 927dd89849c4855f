// `/promote <bundle> <channel> [<root>]`: add a bundle that a catalog already has to a
// channel. The core plans candidate edits (src/catalog/edits/promote.ts); each candidate
// is checked with the real validation and upgrade-graph checks before it is chosen, which
// is why this lives above the checks and not in the core. Pure: it reads a virtual file
// tree and returns the edited files. Where a package is rendered from a template, the
// template is edited and the outputs are re-rendered (bundles come from the committed
// outputs).
import type { Diagnostic } from '../../catalog/diagnostics.js';
import {
  AlreadyThere,
  applyChannelEdit,
  applySemverPromotion,
  bundleVersion,
  outputBehaviour,
  planChannelEdits,
  AlreadyDone,
  PromoteError,
  rootReport,
  rootFiles,
  type FileEdit,
  type PromoteInput,
  type PromoteRequest,
  type PromoteResult,
} from '../../catalog/edits/promote.js';
import type { CatalogReport } from '../../catalog/index.js';
import {
  parseTemplate,
  templateKind,
  TemplateError,
  type SemverOptions,
} from '../../catalog/templates/index.js';
import type { TemplateMapping } from '../../catalog/templates/ci-yaml.js';
import type { Version } from '../../catalog/versions/semver.js';
import { SCHEMA_SEMVER_TEMPLATE } from '../../catalog/property.js';
import {
  describeProblems,
  editRefusal,
  fileEditProblems,
  notFound,
  reRenderOutput,
  searchedRoots,
} from '../catalog-edit/plan.js';

interface Found {
  root: string;
  report: CatalogReport;
  file: string;
  pkg: string;
  version: Version;
  image: string;
}

export async function promote(request: PromoteRequest, input: PromoteInput): Promise<PromoteResult> {
  const { tree } = input;
  const { roots, wanted, searched } = searchedRoots(input, request.root);
  const found: Found[] = [];
  for (const root of searched) {
    const files = rootFiles(tree, root);
    // Only roots whose text mentions the bundle are loaded.
    if (![...files.values()].some((text) => text.includes(request.bundle))) continue;
    const r = await rootReport(input, files, root);
    const blob = r.config.bundles.find((b) => b.name === request.bundle);
    if (!blob) continue;
    const version = bundleVersion(r, request.bundle);
    if (!version)
      throw new PromoteError(`bundle ${request.bundle} in ${root} has no valid olm.package version`);
    found.push({ root, report: r, file: blob.pos.file, pkg: blob.package, version, image: blob.image });
  }
  if (found.length === 0) throw notFound(`bundle ${request.bundle}`, wanted, roots);

  const edits: FileEdit[] = [];
  const notes: string[] = [];
  const already: string[] = [];
  const doneTemplates = new Set<string>();
  for (const f of found) {
    const mapping = input.templates?.find((m) => m.outputs.includes(`${f.root}/${f.file}`));
    try {
      if (!mapping) {
        const result = await promotePlain(input, f, request);
        edits.push(result.edit);
        notes.push(`${f.root}: ${result.note}`);
      } else if (!doneTemplates.has(mapping.template)) {
        doneTemplates.add(mapping.template);
        const result = await promoteTemplate(input, roots, f, mapping, request);
        edits.push(...result.edits);
        notes.push(...result.notes);
      }
    } catch (err) {
      if (err instanceof AlreadyThere) already.push(`${f.root}: ${err.message}`);
      else editRefusal(err, f.root);
    }
  }
  if (edits.length === 0)
    throw already.length > 0 ? new AlreadyDone(already.join('; ')) : new PromoteError('nothing to change');
  notes.push(...already.map((a) => `${a} (left as it is)`));
  return { edits, notes };
}

async function promotePlain(
  { tree, validateFiles }: PromoteInput,
  f: Found,
  request: PromoteRequest,
): Promise<{ edit: FileEdit; note: string }> {
  const pkg = f.report.model.get(f.pkg);
  if (!pkg) throw new PromoteError(`package "${f.pkg}" of ${request.bundle} does not load in ${f.root}`);
  const candidates = planChannelEdits(pkg, request.channel, request.bundle, f.version);
  const files = rootFiles(tree, f.root);
  const channelFile = pkg.channels.get(request.channel)?.pos?.file ?? pkg.pos.file;
  const versionOf = (name: string): Version | undefined => bundleVersion(f.report, name);
  const rejected: string[] = [];
  for (const edit of candidates) {
    const before = files.get(channelFile)!;
    const after = applyChannelEdit(`${f.root}/${channelFile}`, before, edit, versionOf);
    const problems = await fileEditProblems(
      f.root,
      files,
      f.report,
      f.pkg,
      channelFile,
      after,
      validateFiles,
    );
    if (problems.length === 0)
      return { edit: { path: `${f.root}/${channelFile}`, before, after }, note: edit.note };
    rejected.push(`${edit.note} — rejected: ${describeProblems(problems)}`);
  }
  throw new PromoteError(
    `no safe way to add ${request.bundle} to "${request.channel}" in ${f.root}: ${rejected.join(' | ')}`,
  );
}

async function promoteTemplate(
  { tree, validateFiles }: PromoteInput,
  roots: string[],
  f: Found,
  mapping: TemplateMapping,
  request: PromoteRequest,
): Promise<{ edits: FileEdit[]; notes: string[] }> {
  const templateText = tree.read(mapping.template);
  if (templateText === undefined) throw new PromoteError(`template ${mapping.template} is missing`);
  // The template says what it is (a ci.yaml `type` can be missing or stale).
  mapping = { ...mapping, kind: templateKind(parseTemplate(templateText)) };
  const outputs = mapping.outputs.filter((o) => tree.read(o) !== undefined);
  // Each output renders as it was rendered before (its opm behaviour, its own bundles).
  const behaviours = new Map<string, SemverOptions>();
  for (const o of outputs) behaviours.set(o, await outputBehaviour(mapping, templateText, o, tree.read(o)!));

  let candidates: { text: string; note: string }[];
  if (mapping.kind === SCHEMA_SEMVER_TEMPLATE) {
    const versionOfImage = (image: string): Version | undefined => {
      const b = f.report.config.bundles.find((x) => x.image === image);
      return b ? bundleVersion(f.report, b.name) : undefined;
    };
    candidates = [
      applySemverPromotion(
        mapping.template,
        templateText,
        request.channel,
        f.image,
        f.version,
        versionOfImage,
      ),
    ];
  } else {
    const pkg = f.report.model.get(f.pkg);
    if (!pkg) throw new PromoteError(`package "${f.pkg}" does not load in ${f.root}`);
    const versionOf = (name: string): Version | undefined => bundleVersion(f.report, name);
    candidates = planChannelEdits(pkg, request.channel, request.bundle, f.version).map((edit) => ({
      text: applyChannelEdit(mapping.template, templateText, edit, versionOf),
      note: `${edit.note} (in ${mapping.template})`,
    }));
  }
  const rejected: string[] = [];
  for (const candidate of candidates) {
    const edits: FileEdit[] = [{ path: mapping.template, before: templateText, after: candidate.text }];
    const problems: Diagnostic[] = [];
    for (const o of outputs) {
      let rendered: Awaited<ReturnType<typeof reRenderOutput>>;
      try {
        rendered = await reRenderOutput(
          roots,
          o,
          tree.read(o)!,
          candidate.text,
          behaviours.get(o),
          f.pkg,
          validateFiles,
        );
      } catch (err) {
        if (err instanceof TemplateError) {
          problems.push({ rule: 'TEMPLATE', level: 'error', message: `${o}: ${err.message}` });
          continue;
        }
        throw err;
      }
      edits.push(rendered.edit);
      problems.push(...rendered.problems);
    }
    if (problems.length === 0) {
      return {
        edits,
        notes: [candidate.note, `re-rendered ${outputs.join(', ')} from ${mapping.template}`],
      };
    }
    rejected.push(`${candidate.note} — rejected: ${describeProblems(problems)}`);
  }
  throw new PromoteError(
    `no safe way to promote ${request.bundle} via ${mapping.template}: ${rejected.join(' | ')}`,
  );
}
