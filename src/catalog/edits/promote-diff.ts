// A small line diff for showing edits: common prefix and suffix are cut first, and the
// rest is an LCS diff (edits are small; a huge middle is shown as replaced wholesale).

export interface DiffLine {
  op: ' ' | '-' | '+';
  text: string;
  /** 1-based line in the old text (for ' ' and '-') or the new text (for '+'). */
  line: number;
}

const LCS_LIMIT = 4_000_000;

function splitLines(text: string): string[] {
  const lines = text.split('\n');
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** The changed lines only (no context): removals and additions in order. */
export function lineDiff(before: string, after: string): DiffLine[] {
  const a = splitLines(before);
  const b = splitLines(after);
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
  const out: DiffLine[] = [];
  if (midA.length * midB.length > LCS_LIMIT) {
    midA.forEach((text, i) => out.push({ op: '-', text, line: start + i + 1 }));
    midB.forEach((text, i) => out.push({ op: '+', text, line: start + i + 1 }));
    return out;
  }
  // lcs[i][j]: length of the LCS of midA[i..] and midB[j..].
  const n = midA.length;
  const m = midB.length;
  const lcs: Uint32Array[] = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i]![j] = midA[i] === midB[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
    }
  }
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && midA[i] === midB[j]) {
      i++;
      j++;
    } else if (i < n && (j === m || lcs[i + 1]![j]! >= lcs[i]![j + 1]!)) {
      out.push({ op: '-', text: midA[i]!, line: start + i + 1 });
      i++;
    } else {
      out.push({ op: '+', text: midB[j]!, line: start + j + 1 });
      j++;
    }
  }
  return out;
}

/** The changes as `-text` / `+text` lines (what tests assert on). */
export function changedLines(before: string, after: string): string[] {
  return lineDiff(before, after).map((d) => `${d.op}${d.text}`);
}

/** A unified-style diff with `context` lines around each change, for people to read. */
export function unifiedDiff(path: string, before: string, after: string, context = 3): string {
  const a = splitLines(before);
  const b = splitLines(after);
  const changes = lineDiff(before, after);
  if (changes.length === 0) return '';
  // Walk both texts, marking which old and new lines changed.
  const removed = new Set(changes.filter((c) => c.op === '-').map((c) => c.line - 1));
  const added = new Set(changes.filter((c) => c.op === '+').map((c) => c.line - 1));
  interface Row {
    op: ' ' | '-' | '+';
    text: string;
    oldLine: number;
    newLine: number;
  }
  const rows: Row[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && removed.has(i)) {
      rows.push({ op: '-', text: a[i]!, oldLine: i, newLine: j });
      i++;
    } else if (j < b.length && added.has(j)) {
      rows.push({ op: '+', text: b[j]!, oldLine: i, newLine: j });
      j++;
    } else {
      rows.push({ op: ' ', text: a[i] ?? '', oldLine: i, newLine: j });
      i++;
      j++;
    }
  }
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
    out.push(`@@ -${hunk[0]!.oldLine + 1},${oldCount} +${hunk[0]!.newLine + 1},${newCount} @@`);
    for (const r of hunk) out.push(`${r.op}${r.text}`);
    k = end;
  }
  return out.join('\n') + '\n';
}
