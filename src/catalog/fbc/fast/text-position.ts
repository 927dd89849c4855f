// Line lookups in a JSON stream walk forward through the text (decode.ts asks in order):
// remember where the last one ended, so a file of many values is not scanned again for each.
let cachedText = '';
let cachedOffset = 0;
let cachedLine = 1;
let cachedLineStart = 0;

/** The 1-based line and column of `offset` in `text`. */
export function lineAndColumnCached(text: string, offset: number): { line: number; column: number } {
  if (text !== cachedText || offset < cachedOffset) {
    cachedText = text;
    cachedOffset = 0;
    cachedLine = 1;
    cachedLineStart = 0;
  }
  for (let i = text.indexOf('\n', cachedOffset); i >= 0 && i < offset; i = text.indexOf('\n', i + 1)) {
    cachedLine++;
    cachedLineStart = i + 1;
  }
  cachedOffset = offset;
  return { line: cachedLine, column: offset - cachedLineStart + 1 };
}
