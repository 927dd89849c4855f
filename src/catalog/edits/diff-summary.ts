// A change of many files as a person reads it: one line per file with its added and removed
// line counts, files changed the same way grouped into one line (a template usually renders
// to several byte-identical catalogs), and one bounded diff per group, ending with the
// command that shows the rest (docs/bundles.md "What the bundle check shows").
import { diffStat, unifiedDiff } from './promote-diff.js';

export interface ChangedFile {
  path: string;
  /** The text before; undefined: the file is created. */
  before?: string | undefined;
  after: string;
}

export interface ChangeGroup {
  /** The files changed exactly alike (same text before, same after), in the order given. */
  paths: string[];
  /** The paths in one: `catalogs/v4.17-v4.21/pkg/catalog.yaml` when they differ in one segment. */
  label: string;
  created: boolean;
  added: number;
  removed: number;
}

/** The paths of a group in one: the one differing segment as `first-last`, else the first and a count. */
function labelOf(paths: string[]): string {
  if (paths.length === 1) return paths[0]!;
  const split = paths.map((p) => p.split('/'));
  const length = split[0]!.length;
  if (split.every((s) => s.length === length)) {
    const differing = [...Array(length).keys()].filter((i) => split.some((s) => s[i] !== split[0]![i]));
    if (differing.length === 1) {
      const at = differing[0]!;
      const parts = [...split[0]!];
      parts[at] = `${split[0]![at]}-${split[split.length - 1]![at]}`;
      return parts.join('/');
    }
  }
  return `${paths[0]} and ${paths.length - 1} more`;
}

/** Files changed alike, grouped; groups in the order of their first file. */
export function groupChanges(files: readonly ChangedFile[]): (ChangeGroup & { first: ChangedFile })[] {
  const groups = new Map<string, { first: ChangedFile; paths: string[] }>();
  for (const f of files) {
    const key = `${f.before === undefined ? '\0new' : f.before}\0\0${f.after}`;
    const group = groups.get(key);
    if (group) group.paths.push(f.path);
    else groups.set(key, { first: f, paths: [f.path] });
  }
  return [...groups.values()].map(({ first, paths }) => ({
    first,
    paths,
    label: labelOf(paths),
    created: first.before === undefined,
    ...diffStat(first.before ?? '', first.after),
  }));
}

/** `path +a -r`, with `(N identical files)` for a group and `(new file)` for a created one. */
export function statLine(group: ChangeGroup): string {
  const notes = [
    ...(group.paths.length > 1 ? [`${group.paths.length} identical files`] : []),
    ...(group.created ? ['new file'] : []),
  ];
  return `${group.label} +${group.added} -${group.removed}${notes.length > 0 ? ` (${notes.join(', ')})` : ''}`;
}

export interface BoundedDiff {
  /** The stat lines, one per group. */
  stats: string[];
  /** One diff per group (of its first file), cut at the bound; ends with how to see the rest. */
  diff: string;
  /** Diff lines left out. */
  omitted: number;
}

/**
 * The stat lines and a diff of at most `maxLines` lines and `maxChars` characters: each
 * group's diff once, shown for its first file. `rest` is the command that shows everything.
 */
export function boundedDiff(
  files: readonly ChangedFile[],
  options: { maxLines: number; maxChars: number; rest: string },
): BoundedDiff {
  const groups = groupChanges(files);
  const shown: string[] = [];
  let chars = 0;
  let omitted = 0;
  for (const g of groups) {
    const lines = unifiedDiff(g.first.path, g.first.before ?? '', g.first.after)
      .trimEnd()
      .split('\n');
    if (g.paths.length > 1)
      lines.unshift(`# the same change in ${g.paths.length - 1} more: ${g.paths.slice(1).join(', ')}`);
    for (const line of lines) {
      if (omitted > 0 || shown.length >= options.maxLines || chars + line.length + 1 > options.maxChars) {
        omitted++;
        continue;
      }
      shown.push(line);
      chars += line.length + 1;
    }
  }
  if (omitted > 0)
    shown.push(
      `... (${omitted} more diff line${omitted === 1 ? '' : 's'} not shown: ${options.rest} shows them all)`,
    );
  return { stats: groups.map(statLine), diff: shown.length > 0 ? `${shown.join('\n')}\n` : '', omitted };
}
