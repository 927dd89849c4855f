// `default-channel <package> <channel>`: set a package's `defaultChannel` where it is
// written (the olm.package blob of a plain catalog, or of an olm.template.basic template,
// whose outputs are then re-rendered), with the machinery of `promote`
// (src/catalog/edits/promote.ts, ./promote.ts): edits keep comments and layout, and every
// result is validated and checked against the upgrade-graph rules before it is returned.
import { classicChannel } from '../catalog/olm/classic.js';
import {
  packageSite,
  PromoteError,
  report,
  rootFiles,
  type FileEdit,
  type PromoteInput,
  type PromoteResult,
} from '../catalog/edits/promote.js';
import {
  addPair,
  applySplices,
  detectStyle,
  EditError,
  formatOfPath,
  pairOf,
  parseNodes,
  setScalar,
} from '../catalog/edits/promote-edit.js';
import type { ModelPackage } from '../catalog/fbc/model.js';
import type { TemplateMapping } from '../catalog/templates/ci-yaml.js';
import {
  describeProblems,
  editRefusal,
  editViaTemplate,
  fileEditProblems,
  notFound,
  searchedRoots,
} from './checked-edit.js';

export interface DefaultChannelRequest {
  package: string;
  channel: string;
  /** Only this catalog root; otherwise every root that has the package. */
  root?: string;
}

/** The text with the package's `defaultChannel` set, in the olm.package blob (or template entry). */
export function setDefaultChannelText(path: string, text: string, pkg: string, channel: string): string {
  const format = formatOfPath(path, text);
  const site = packageSite(parseNodes(text, format), pkg);
  if (!site) throw new EditError(`${path} has no olm.package object for ${pkg}`);
  const style = detectStyle(text, format);
  const pair = pairOf(site.map, 'defaultChannel');
  let splice = pair?.value
    ? setScalar(pair.value, channel, style)
    : addPair(text, site.map, 'defaultChannel', channel, style, 'name');
  // A YAML value written in quotes keeps its quotes (the new text is a channel name that
  // opm accepted, so it needs no escaping beyond the quote character itself).
  const quote = format === 'yaml' && pair?.value ? text[pair.value.start] : undefined;
  if (quote === '"') splice = { ...splice, ins: JSON.stringify(channel) };
  else if (quote === "'") splice = { ...splice, ins: `'${channel.replace(/'/g, "''")}'` };
  return applySplices(text, [splice]);
}

/** What a new Subscription without a channel installs before and after (classic OLM only). */
function installNote(root: string, pkg: ModelPackage, channel: string): string {
  const before = pkg.defaultChannel;
  const installOf = (name: string | undefined): string => {
    const c = name === undefined ? undefined : pkg.channels.get(name);
    if (!c) return 'nothing';
    const classic = classicChannel(c);
    return classic.install ?? `nothing (${classic.error})`;
  };
  return (
    `${root}: default channel of ${pkg.name}: ${before?.name ?? '(none)'} -> ${channel}. ` +
    `Classic OLM: a new Subscription without a channel installs ${installOf(channel)} ` +
    `(was ${installOf(before?.name)}). OLM v1 does not use the default channel: a ClusterExtension ` +
    `without channels still picks from every channel, so new OLM v1 installs do not change.`
  );
}

export async function setDefaultChannel(
  request: DefaultChannelRequest,
  input: PromoteInput,
): Promise<PromoteResult> {
  const { tree } = input;
  const { roots, wanted, searched } = searchedRoots(input, request.root);
  const edits: FileEdit[] = [];
  const notes: string[] = [];
  const already: string[] = [];
  const doneTemplates = new Set<string>();
  let seen = 0;
  for (const root of searched) {
    const files = rootFiles(tree, root);
    if (![...files.values()].some((text) => text.includes(request.package))) continue;
    const r = await report(files, root);
    const pkg = r.model.get(request.package);
    if (!pkg) continue;
    seen++;
    if (!pkg.channels.has(request.channel)) {
      throw new PromoteError(
        `package ${request.package} has no channel "${request.channel}" in ${root}; its channels: ${[...pkg.channels.keys()].sort().join(', ')} (add the channel first, e.g. with promote)`,
      );
    }
    if (pkg.defaultChannel?.name === request.channel) {
      already.push(`${root}: the default channel of ${request.package} is already "${request.channel}"`);
      continue;
    }
    const file = pkg.pos.file;
    const mapping = input.templates?.find((m) => m.outputs.includes(`${root}/${file}`));
    try {
      if (!mapping) {
        const before = files.get(file)!;
        const after = setDefaultChannelText(`${root}/${file}`, before, request.package, request.channel);
        const problems = await fileEditProblems(root, files, r, request.package, file, after);
        if (problems.length > 0)
          throw new PromoteError(`setting the default channel breaks ${root}: ${describeProblems(problems)}`);
        edits.push({ path: `${root}/${file}`, before, after });
        notes.push(installNote(root, pkg, request.channel));
      } else if (!doneTemplates.has(mapping.template)) {
        doneTemplates.add(mapping.template);
        edits.push(...(await viaTemplate(input, roots, mapping, request)));
        notes.push(
          installNote(root, pkg, request.channel),
          `edited ${mapping.template} and re-rendered its outputs`,
        );
      }
    } catch (err) {
      editRefusal(err, root);
    }
  }
  if (seen === 0) throw notFound(`package ${request.package}`, wanted, roots);
  if (edits.length === 0) throw new PromoteError(already.join('; '));
  notes.push(...already.map((a) => `${a} (left as it is)`));
  return { edits, notes };
}

/** The default channel set in the template the package is rendered from, and its outputs re-rendered. */
function viaTemplate(
  input: PromoteInput,
  roots: string[],
  mapping: TemplateMapping,
  request: DefaultChannelRequest,
): Promise<FileEdit[]> {
  return editViaTemplate(
    input.tree,
    roots,
    mapping,
    request.package,
    (path, text) => setDefaultChannelText(path, text, request.package, request.channel),
    {
      // opm derives an olm.semver catalog's default channel (templates/semver.ts): nothing to set.
      semver: `${mapping.template} is an olm.semver template: opm derives the default channel itself (the channel of the most stable archetype with a bundle, Stable before Fast before Candidate, then the highest version; defaultChannelTypePreference picks major or minor channels), so there is no value to set. To change it, promote a bundle to a more stable archetype, set defaultChannelTypePreference, or convert the package to an olm.template.basic template`,
      what: 'setting the default channel',
    },
  );
}
