// Which YAML documents the fast reader (fastyaml.ts) reads: what opm and the renderers write,
// which is nearly every document of a real catalog; it gives what the full reader gives, or
// nothing, and the full reader (decode.ts) reads the rest (README, "Benchmarks").
import { OUTSIDE_SUBSET, readFastYamlDocument, type CheckedValues, type FastDocument } from './fastyaml.js';
import { LONE_CR } from '../yaml-screen.js';

/**
 * How many YAML documents each reader has read on this thread, and the characters of those
 * the full reader read (for tests and benchmarks, and for short-run.ts).
 */
export const yamlDocumentsRead = { fast: 0, full: 0, fullChars: 0 };

export interface SubsetOptions {
  /** Read every YAML document with the full reader (the fast reader's reference, in tests). */
  fullReaderOnly?: boolean;
  /** Property values to check and not build, in what the fast reader reads (fastyaml.ts). */
  checkedValues?: CheckedValues;
}

/**
 * The document read by the fast reader, or undefined when it is the full reader's to read
 * (then counted as such). CRLF line ends read as LF: the same lines, and for go-yaml the
 * same values (a lone CR is refused, by the full reader).
 */
export function readInSubset(
  text: string,
  recordedDepth: number,
  options: SubsetOptions,
): FastDocument | undefined {
  let fastText = text;
  let unusual = OUTSIDE_SUBSET.test(text);
  if (unusual && text.includes('\r\n') && !LONE_CR.test(text)) {
    fastText = text.replaceAll('\r\n', '\n');
    unusual = OUTSIDE_SUBSET.test(fastText);
  }
  const fast =
    options.fullReaderOnly || unusual
      ? undefined
      : readFastYamlDocument(fastText, recordedDepth, true, options.checkedValues);
  if (fast) {
    yamlDocumentsRead.fast++;
  } else {
    yamlDocumentsRead.full++;
    yamlDocumentsRead.fullChars += text.length;
  }
  return fast;
}
