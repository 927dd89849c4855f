// How loadCatalog (load.ts) gets its files decoded, fast and in bounded memory: files are
// read in batches of at most READ_BATCH_BYTES, a file decoded by an earlier load of the same
// content is not read again (LoadOptions.decodedFiles), a validation-only load hands each
// blob over as it is decoded and checks values it does not keep as it reads them, and
// `catalog-bot validate` loads half of the files on a second thread (load-threads.ts). What a
// file means is load.ts's: it sees each file once, in the order of the listing, whichever
// way it was decoded.
import { decodeFile, yamlDocumentsRead, type DecodedFile, type DecodedValue } from '../decode.js';
import { DirectorySource, READ_BATCH_BYTES, type CatalogSource } from '../source.js';
import { CHECKED_WHEN_READ } from './checked-values.js';
import { loadShared, type LoadHelper } from './load-threads.js';
import { noteFullReaderChars } from './short-run.js';

/** The loader's options about speed and memory (LoadOptions has them all). */
export interface SpeedOptions<Result> {
  /**
   * Files already decoded, by content id (`CatalogSource.contentId`): the base and the head of
   * a pull request share almost every file, and each is then read and decoded once. Filled
   * as files are decoded; decoded values are never changed by loading, so sharing is safe.
   */
  decodedFiles?: Map<string, DecodedFile>;
  /**
   * Only validation's answer is wanted (`catalog-bot validate`): what validation only
   * type-checks (bundle property values such as olm.csv.metadata, package icons) is checked
   * as each blob is read and not kept, and bundle objects leave no digest. The findings are
   * the same; each document is let go as soon as it is read, so memory stays small.
   */
  validationOnly?: boolean;
  /** With `validationOnly`, from a DirectorySource: a thread that loads half of the files. */
  helper?: LoadHelper<Result>;
}

/**
 * A file's decoding: it hands each blob to `onBlob`, in the file's order, and gives the file's
 * decoding problems and notes (its `values` may be left empty).
 */
export type FileDecoding = (onBlob: (value: DecodedValue) => void) => DecodedFile;

/** What loadCatalog does with each file (load.ts). */
export interface FileSteps<Result> {
  /** Add a file: why it could not be read, or its size and its decoding. */
  add(path: string, read: { bytes: number; decoding: FileDecoding } | Error | undefined): void;
  /** A file on its own, into a result of its own (either thread of a validation-only load). */
  loadOne(source: DirectorySource, path: string): Result;
  /** Add a result of loadOne. */
  merge(result: Result): void;
}

/** Decode every file of `paths` and hand each to `steps.add`, in the order of `paths`. */
export async function decodeFiles<Result>(
  source: CatalogSource,
  paths: string[],
  sizes: Map<string, number>,
  options: SpeedOptions<Result>,
  steps: FileSteps<Result>,
): Promise<void> {
  const cache = options.decodedFiles;
  if (options.helper && options.validationOnly && cache === undefined && source instanceof DirectorySource) {
    const results = await loadShared(source, paths, sizes, options.helper, (path) =>
      steps.loadOne(source, path),
    );
    for (const result of results) steps.merge(result);
    return;
  }
  const idOf = (path: string): string | undefined => (cache ? source.contentId?.(path) : undefined);
  const decodedBefore = (path: string): DecodedFile | undefined => {
    const id = idOf(path);
    return id === undefined ? undefined : cache?.get(id);
  };
  const each = (path: string, data: Buffer | Error | undefined): void => {
    const known = decodedBefore(path);
    if (known) return steps.add(path, { bytes: sizes.get(path) ?? 0, decoding: decoded(known) });
    if (data === undefined || data instanceof Error) return steps.add(path, data);
    const id = idOf(path);
    const decoding =
      id !== undefined
        ? decoded(rememberedAs(id, decodeFile(data), cache!))
        : options.validationOnly
          ? decodedAsRead(data)
          : decoded(decodeFile(data));
    steps.add(path, { bytes: data.length, decoding });
  };
  await readInBatches(source, paths, sizes, each, (path) => decodedBefore(path) !== undefined);
}

/** A file of a validation-only load, as its thread read it (load-threads.ts). */
export function decodeForValidation(data: Buffer | Error): { bytes: number; decoding: FileDecoding } | Error {
  return data instanceof Error ? data : { bytes: data.length, decoding: decodedAsRead(data) };
}

function rememberedAs(id: string, file: DecodedFile, cache: Map<string, DecodedFile>): DecodedFile {
  cache.set(id, file);
  return file;
}

/** A file decoded whole: its values are handed over from the list. */
function decoded(file: DecodedFile): FileDecoding {
  return (onBlob) => {
    for (const value of file.values) onBlob(value);
    return file;
  };
}

/** A file whose blobs are handed over as they are decoded, and let go (validationOnly). */
function decodedAsRead(data: Buffer): FileDecoding {
  return (onBlob) => {
    const fullReaderChars = yamlDocumentsRead.fullChars;
    const file = decodeFile(data, { checkedValues: CHECKED_WHEN_READ, onValue: onBlob });
    // A validation run that needs the full YAML reader is long enough to optimize (short-run.ts).
    if (yamlDocumentsRead.fullChars > fullReaderChars)
      noteFullReaderChars(yamlDocumentsRead.fullChars - fullReaderChars);
    return file;
  };
}

/**
 * Read files in batches so that memory holds a bounded number of raw files at once, calling
 * `each` in the order of `paths`. Paths `known` says need no reading are passed over
 * unread (`each` gets undefined for them).
 */
export async function readInBatches(
  source: CatalogSource,
  paths: string[],
  sizes: Map<string, number>,
  each: (path: string, data: Buffer | Error | undefined) => void,
  known: (path: string) => boolean = () => false,
): Promise<void> {
  for (let i = 0; i < paths.length;) {
    const batch: string[] = [];
    const toRead: string[] = [];
    let bytes = 0;
    while (i < paths.length) {
      const path = paths[i] as string;
      const size = known(path) ? 0 : (sizes.get(path) ?? 0);
      if (toRead.length > 0 && bytes + size > READ_BATCH_BYTES) break;
      i++;
      batch.push(path);
      if (!known(path)) {
        toRead.push(path);
        bytes += size;
      }
    }
    const contents = toRead.length > 0 ? await source.read(toRead) : new Map<string, Buffer | Error>();
    for (const path of batch) each(path, contents.get(path));
  }
}
