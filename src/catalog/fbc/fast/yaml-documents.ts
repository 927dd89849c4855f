// The YAML documents of a file's bytes, split as decode.ts's splitYamlDocuments splits its
// text (apimachinery's YAMLReader), with the same documents, lines and separators in the same
// order. Each document's text is made on its own: V8 makes a string over 128 KiB (a whole
// catalog file) in its large-object space at many times the cost per byte of a small one
// (README, "Benchmarks"), and real documents are smaller.

const SEPARATOR_AFTER_LINE = Buffer.from('\n---');

/**
 * Call `onSeparator` with what follows each `---` line and its 0-based line, and `onDocument`
 * with each document's text and the 0-based line of its first line, in the file's order.
 * A `---` at the start of the buffer stays in the next document, as in apimachinery.
 */
export function forEachYamlDocument(
  buffer: Buffer,
  encoding: 'latin1' | 'utf8',
  onSeparator: (rest: string, line: number) => void,
  onDocument: (text: string, firstLine: number) => void,
): void {
  const length = buffer.length;
  let docStart = 0;
  let docLine = 0;
  let bufferNonEmpty = false; // a `---` at the start of the buffer stays in the next document
  let line = 0; // 0-based line of byte `counted`
  let counted = 0;
  let sep = buffer[0] === 0x2d && buffer[1] === 0x2d && buffer[2] === 0x2d ? 0 : nextSeparator(buffer, 0);
  while (sep >= 0) {
    let eol = buffer.indexOf(0x0a, sep);
    if (eol < 0) eol = length;
    let text: string | undefined;
    if (sep > docStart || bufferNonEmpty) {
      text = buffer.toString(encoding, docStart, sep);
      // Lines from `counted` on: the document's, less the `---` line it may start with.
      line += countLineBreaks(text) - (docStart < counted ? 1 : 0);
    }
    onSeparator(buffer.toString(encoding, sep + 3, eol), line);
    if (text !== undefined) {
      onDocument(text, docLine);
      docStart = eol + 1;
      docLine = line + 1;
      bufferNonEmpty = false;
    } else {
      bufferNonEmpty = true;
    }
    counted = eol + 1;
    line++;
    sep = nextSeparator(buffer, eol);
  }
  if (docStart < length || bufferNonEmpty) onDocument(buffer.toString(encoding, docStart), docLine);
}

/** The start of the next line at or after `from` that begins with `---`, or -1. */
function nextSeparator(buffer: Buffer, from: number): number {
  const at = buffer.indexOf(SEPARATOR_AFTER_LINE, from);
  return at < 0 ? -1 : at + 1;
}

export function countLineBreaks(text: string): number {
  let n = 0;
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) n++;
  return n;
}
