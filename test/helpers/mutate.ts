// Seeded mutations of catalog text for the fuzz tests: the same seed gives the same mutants,
// so a failing case can be run again from its seed.

/** A random whole number below n. */
export type Rnd = (n: number) => number;

/** A linear congruential generator from `seed`. */
export function random(seed: number): Rnd {
  let s = seed;
  return (n) => {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    return s % n;
  };
}

type LineMutation = (lines: string[], i: number, line: string, rnd: Rnd, tokens: readonly string[]) => void;

/** What one edit does to line i (`line` is its text before the edit). */
const LINE_MUTATIONS = {
  drop: (lines, i) => void lines.splice(i, 1),
  duplicate: (lines, i, _line, rnd) => void lines.splice(i, 0, lines[rnd(lines.length)] ?? ''),
  swap: (lines, i, line, rnd) => {
    const j = rnd(lines.length);
    [lines[i], lines[j]] = [lines[j] ?? '', line];
  },
  indent: (lines, i, line, rnd) => void (lines[i] = (rnd(2) ? '  ' : '') + line.replace(/^ {0,2}/, '')),
  retype: (lines, i, line, rnd, tokens) =>
    void (lines[i] = line.replace(/: .*$/, ': ' + tokens[rnd(tokens.length)])),
  split: (lines, i) => void lines.splice(i, 0, '---'),
  rename: (lines, i, line, rnd) =>
    void (lines[i] = line.replace(/(\w+):/, (_m, w: string) => (rnd(2) ? w.toUpperCase() : w + 'x') + ':')),
} satisfies Record<string, LineMutation>;

export type LineMutationKind = keyof typeof LINE_MUTATIONS;

/**
 * `text` with 1 to `maxEdits` lines edited, each by one of `kinds` chosen by `rnd` (the order
 * of `kinds` is part of the seed's meaning); `retype` puts one of `tokens` after a key.
 */
export function mutateLines(
  text: string,
  rnd: Rnd,
  options: { maxEdits: number; kinds: readonly LineMutationKind[]; tokens: readonly string[] },
): string {
  const lines = text.split('\n');
  for (let k = 1 + rnd(options.maxEdits); k > 0; k--) {
    const i = rnd(lines.length);
    const line = lines[i] ?? '';
    LINE_MUTATIONS[options.kinds[rnd(options.kinds.length)]!](lines, i, line, rnd, options.tokens);
  }
  return lines.join('\n');
}
