// Line diffs for showing edits and counting changed lines: Myers' algorithm (the npm
// package `diff`, which git's default diff also uses), so an append is counted as an
// append. The edit distance it may search is bounded (docs/security.md: checks are bounded
// work); past it, the differing middle is shown as replaced wholesale.
import { diffArrays } from 'diff';

export interface DiffLine {
  op: ' ' | '-' | '+';
  text: string;
  /** 1-based line in the old text (for ' ' and '-') or the new text (for '+'). */
  line: number;
}

/** Lines times edit distance searched at most (about a second of work). */
const DIFF_WORK_LIMIT = 50_000_000;
/** The edit distance searched even in a large file. */
const MIN_EDIT_LENGTH = 2_000;

function splitLines(text: string): string[] {
  const lines = text.split('\n');
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

interface Row {
  op: ' ' | '-' | '+';
  text: string;
  /** 0-based positions in the old and new texts where the row sits. */
  oldLine: number;
  newLine: number;
}

/** Every line of both texts in diff order: kept, removed and added. */
function diffRows(before: string, after: string): Row[] {
  const a = splitLines(before);
  const b = splitLines(after);
  // The common ends are cut first so that the bound applies to the differing middle.
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const midA = a.slice(start, endA);
  const midB = b.slice(start, endB);
  const rows: Row[] = [];
  for (let k = 0; k < start; k++) rows.push({ op: ' ', text: a[k]!, oldLine: k, newLine: k });
  let i = start;
  let j = start;
  const maxEditLength = Math.max(
    MIN_EDIT_LENGTH,
    Math.floor(DIFF_WORK_LIMIT / (midA.length + midB.length + 1)),
  );
  const changes =
    midA.length === 0 || midB.length === 0 ? undefined : diffArrays(midA, midB, { maxEditLength });
  const parts = changes ?? [
    { value: midA, removed: true, added: false },
    { value: midB, removed: false, added: true },
  ];
  for (const part of parts) {
    for (const text of part.value) {
      if (part.removed) rows.push({ op: '-', text, oldLine: i++, newLine: j });
      else if (part.added) rows.push({ op: '+', text, oldLine: i, newLine: j++ });
      else rows.push({ op: ' ', text, oldLine: i++, newLine: j++ });
    }
  }
  for (let k = endA; k < a.length; k++) rows.push({ op: ' ', text: a[k]!, oldLine: i++, newLine: j++ });
  return rows;
}

/** The changed lines only (no context): removals and additions in order. */
export function lineDiff(before: string, after: string): DiffLine[] {
  return diffRows(before, after)
    .filter((r) => r.op !== ' ')
    .map((r) => ({ op: r.op, text: r.text, line: (r.op === '+' ? r.newLine : r.oldLine) + 1 }));
}

/** Lines added and removed, as `git diff --numstat` counts them. */
export function diffStat(before: string, after: string): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  for (const d of lineDiff(before, after)) {
    if (d.op === '+') added++;
    else removed++;
  }
  return { added, removed };
}

/** The changes as `-text` / `+text` lines (what tests assert on). */
export function changedLines(before: string, after: string): string[] {
  return lineDiff(before, after).map((d) => `${d.op}${d.text}`);
}

/** A unified diff with `context` lines around each change, for people to read. */
export function unifiedDiff(path: string, before: string, after: string, context = 3): string {
  const rows = diffRows(before, after);
  if (!rows.some((r) => r.op !== ' ')) return '';
  const keep = rows.map(() => false);
  rows.forEach((r, k) => {
    if (r.op === ' ') return;
    for (let x = Math.max(0, k - context); x <= Math.min(rows.length - 1, k + context); x++) keep[x] = true;
  });
  const out = [`--- a/${path}`, `+++ b/${path}`];
  for (let k = 0; k < rows.length;) {
    if (!keep[k]) {
      k++;
      continue;
    }
    let end = k;
    while (end < rows.length && keep[end]) end++;
    const hunk = rows.slice(k, end);
    const oldCount = hunk.filter((r) => r.op !== '+').length;
    const newCount = hunk.filter((r) => r.op !== '-').length;
    // As diff -u writes an empty side: the line before it, count 0.
    const oldStart = oldCount === 0 ? hunk[0]!.oldLine : hunk[0]!.oldLine + 1;
    const newStart = newCount === 0 ? hunk[0]!.newLine : hunk[0]!.newLine + 1;
    out.push(`@@ -${oldStart},${oldCount} +${newStart},${newCount} @@`);
    for (const r of hunk) out.push(`${r.op}${r.text}`);
    k = end;
  }
  return out.join('\n') + '\n';
}
