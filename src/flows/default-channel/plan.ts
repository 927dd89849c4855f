// `default-channel <package> <channel>`: set a package's `defaultChannel` where it is
// written (the olm.package blob of a plain catalog, or of an olm.template.basic template,
// whose outputs are then re-rendered), with the machinery of `promote`
// (src/catalog/edits/promote.ts, ../promote/plan.ts): edits keep comments and layout, and every
// result is validated and checked against the upgrade-graph rules before it is returned.
import { classicChannel } from '../../catalog/olm/classic.js';
import {
  packageSite,
  AlreadyDone,
  PromoteError,
  rootReport,
  rootFiles,
  type FileEdit,
  type PromoteInput,
  type PromoteResult,
} from '../../catalog/edits/promote.js';
import {
  addPair,
  applySplices,
  detectStyle,
  EditError,
  formatOfPath,
  pairOf,
  parseNodes,
  setScalar,
} from '../../catalog/edits/promote-edit.js';
import type { ModelPackage } from '../../catalog/fbc/model.js';
import { editWhereWritten, notFound, searchedRoots, type SingleEdit } from '../catalog-edit/plan.js';

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
  const single: SingleEdit = {
    edit: (path, text) => setDefaultChannelText(path, text, request.package, request.channel),
    what: 'setting the default channel',
    // opm derives an olm.semver catalog's default channel (templates/semver.ts): nothing to set.
    semverRefusal: (template) =>
      `${template} is an olm.semver template: opm derives the default channel itself (the channel of the most stable archetype with a bundle, Stable before Fast before Candidate, then the highest version; defaultChannelTypePreference picks major or minor channels), so there is no value to set. To change it, promote a bundle to a more stable archetype, set defaultChannelTypePreference, or convert the package to an olm.template.basic template`,
  };
  let seen = 0;
  for (const root of searched) {
    const files = rootFiles(tree, root);
    if (![...files.values()].some((text) => text.includes(request.package))) continue;
    const r = await rootReport(input, files, root);
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
    const done = await editWhereWritten(
      input,
      roots,
      { root, files, report: r },
      pkg,
      pkg.pos.file,
      single,
      doneTemplates,
    );
    if (!done) continue;
    edits.push(...done.edits);
    notes.push(installNote(root, pkg, request.channel));
    if (done.template !== undefined) notes.push(`edited ${done.template} and re-rendered its outputs`);
  }
  if (seen === 0) throw notFound(`package ${request.package}`, wanted, roots);
  if (edits.length === 0)
    throw already.length > 0 ? new AlreadyDone(already.join('; ')) : new PromoteError('nothing to change');
  notes.push(...already.map((a) => `${a} (left as it is)`));
  return { edits, notes };
}
