// Load a catalog root into a DeclarativeConfig the way opm's `declcfg.LoadFS` does, but
// collecting every problem (with file and line) instead of stopping at the first.
import { createRequire } from 'node:module';
import { checkBundleBlob } from './blob-check.js';
import {
  decodeFile,
  lineOf,
  yamlDocumentsRead,
  type DecodedFile,
  type DecodedValue,
  type LineTable,
} from './decode.js';
import type { CheckedValues } from './fastyaml.js';
import { READ_REFUSAL_HINTS, type ReadRefusal } from './yaml-screen.js';
import { noteFullReaderChars } from './short-run.js';
import {
  emptyConfig,
  GO_BUNDLE,
  GO_CHANNEL,
  GO_DEPRECATION,
  GO_PACKAGE,
  GO_PROPERTY_VALUES,
  SCHEMA_BUNDLE,
  SCHEMA_CHANNEL,
  SCHEMA_DEPRECATIONS,
  SCHEMA_PACKAGE,
  type Bundle,
  type Channel,
  type DeclarativeConfig,
  type Deprecation,
  type Package,
  type Position,
  type Property,
} from './declcfg.js';
import type { Diagnostic } from '../diagnostics.js';
import { checkGo, decodeGo, goRaw, validateGoBase64, type GoType } from '../go/gojson.js';
import {
  INDEX_IGNORE,
  IndexIgnore,
  indexIgnoreProblem,
  MAX_INDEX_IGNORE_SIZE,
  parseIndexIgnore,
} from './indexignore.js';
import { goFormatFloat } from '../go/gofloat.js';
import { goJsonEncode } from '../go/gojsonencode.js';
import { goQuote, goStringCompare } from '../go/gostrings.js';
import { claimNext, joinLoadJob, type LoadHelper, type SharedLoadJob } from './load-threads.js';
import {
  DEFAULT_MAX_FILE_SIZE,
  DirectorySource,
  NAME_NOT_UTF8,
  READ_BATCH_BYTES,
  type CatalogSource,
} from './source.js';
import { PROPERTY_BUNDLE_OBJECT, PROPERTY_CSV_METADATA, PROPERTY_PACKAGE } from '../property.js';

export { DEFAULT_MAX_FILE_SIZE } from './source.js';

// node:crypto is loaded on first use: `catalog-bot validate` never digests, and loading it
// is a noticeable part of that command's start-up, on both of its threads (README, "Benchmarks").
const require = createRequire(import.meta.url);
const createHash = (algorithm: string): import('node:crypto').Hash =>
  (require('node:crypto') as typeof import('node:crypto')).createHash(algorithm);

export interface LoadOptions {
  /** Files larger than this are not read (an error). Default 64 MiB. */
  maxFileSize?: number;
  /** Keep `olm.bundle.object` contents (for render); otherwise they are checked and dropped. */
  keepBundleObjects?: boolean;
  /** Remember a digest of each blob as read, every key of it (`blobDigest`), for change detection. */
  blobDigests?: boolean;
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
  helper?: LoadHelper<LoadResult>;
  /** Told the total size of the files about to be read, once they are listed and before any is read. */
  onListed?: (bytes: number) => void;
}

// Digests of the blobs as read, by the typed object made from each: the typed view leaves out
// keys opm's structs ignore, which catalog servers still serve (docs/security.md).
const digests = new WeakMap<object, string>();
// The digest of each decoded blob, so a blob shared by two loads is digested once.
const blobContentDigests = new WeakMap<object, string>();

function contentDigest(blob: object): string {
  let digest = blobContentDigests.get(blob);
  if (digest === undefined) {
    digest = createHash('sha256').update(JSON.stringify(blob)).digest('hex');
    blobContentDigests.set(blob, digest);
  }
  return digest;
}

/** A digest of everything the blob that made `object` said (loaded with `blobDigests`). */
// Characters whose Unicode case folding (opm's cases.Fold) is not their lowercase: ſ, ß, final
// sigma, Greek symbol forms, Cherokee, ligatures... (from the Unicode CaseFolding table).
const FOLDS_UNLIKE_LOWERCASE =
  /[\u00b5\u00df\u0149\u017f\u01f0\u0390\u03a3\u03b0\u03c2\u03d0\u03d1\u03d5\u03d6\u03f0\u03f1\u03f5\u0587\u13a0-\u13f5\u13f8-\u13fd\u1c80-\u1c88\u1e96-\u1e9b\u1e9e\u1f50\u1f52\u1f54\u1f56\u1f80-\u1faf\u1fb2-\u1fb4\u1fb6\u1fb7\u1fbc\u1fbe\u1fc2-\u1fc4\u1fc6\u1fc7\u1fcc\u1fd2\u1fd3\u1fd6\u1fd7\u1fe2-\u1fe4\u1fe6\u1fe7\u1ff2-\u1ff4\u1ff6\u1ff7\u1ffc\uab70-\uabbf\ufb00-\ufb06\ufb13-\ufb17]|\u0345/; // U+0345 combines: kept out of the class

export function blobDigest(object: object): string | undefined {
  return digests.get(object);
}

export interface LoadStats {
  files: number;
  bytes: number;
  blobs: number;
}

export interface LoadResult {
  config: DeclarativeConfig;
  /** Loading problems: any `error` makes the catalog invalid for opm too. */
  diagnostics: Diagnostic[];
  stats: LoadStats;
}

/** Stands in for dropped `olm.bundle.object` data, which was already checked. */
const DROPPED_BUNDLE_OBJECT = Object.freeze({ data: '<dropped after loading>' });

/**
 * Read files in batches so that memory holds a bounded number of raw files at once, calling
 * `each` in the order of `paths`. Paths `known` says need no reading are passed over
 * unread (`each` gets undefined for them).
 */
async function readInBatches(
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

export async function loadCatalog(source: CatalogSource, options: LoadOptions = {}): Promise<LoadResult> {
  const maxFileSize = options.maxFileSize ?? DEFAULT_MAX_FILE_SIZE;
  const result: LoadResult = {
    config: emptyConfig(),
    diagnostics: [],
    stats: { files: 0, bytes: 0, blobs: 0 },
  };
  const entries = await source.list();

  const sizes = new Map(entries.map((e) => [e.path, e.size]));
  const ignoreFiles = entries.filter((e) => e.path === INDEX_IGNORE || e.path.endsWith('/' + INDEX_IGNORE));
  const ignoreProblems = new Map<string, string>();
  const ignorePatterns = new Map<string, ReturnType<typeof parseIndexIgnore>>();
  for (const e of ignoreFiles) {
    if (e.problem) ignoreProblems.set(e.path, e.problem);
    // Real ones are a few lines; a huge one is refused unread, as its bytes would be memory
    // the check worker's heap cap does not bound (docs/security.md).
    else if (e.size > MAX_INDEX_IGNORE_SIZE)
      ignoreProblems.set(
        e.path,
        `file is ${e.size} bytes, over the bot's ${MAX_INDEX_IGNORE_SIZE}-byte (1 MiB) limit for .indexignore; not read`,
      );
  }
  await readInBatches(
    source,
    ignoreFiles.filter((e) => !ignoreProblems.has(e.path)).map((e) => e.path),
    sizes,
    (path, data) => {
      const dir = path.includes('/') ? path.slice(0, path.lastIndexOf('/')) : '';
      // opm fails on an .indexignore it cannot read; one the bot cannot read exactly as opm
      // does fails too, so no file opm serves goes unchecked (docs/security.md).
      const problem =
        data instanceof Buffer
          ? indexIgnoreProblem(data)
          : ((data as Error | undefined)?.message ?? `read ${path}: not readable`);
      if (problem !== undefined) ignoreProblems.set(path, problem);
      if (data instanceof Buffer) ignorePatterns.set(path, parseIndexIgnore(data.toString('utf8'), dir));
    },
  );
  // Entries come in fs.WalkDir order, the order in which opm collects the patterns (it
  // matters: the last matching pattern wins, even across files).
  const ignore = new IndexIgnore(
    ignoreFiles.flatMap((e) => {
      const problem = ignoreProblems.get(e.path);
      if (problem !== undefined) {
        result.diagnostics.push({
          rule: 'L-INDEXIGNORE',
          level: 'error',
          message: problem,
          file: e.path,
          hint:
            e.size > MAX_INDEX_IGNORE_SIZE && !e.problem
              ? 'Keep .indexignore short: a few patterns (such as *.md or docs/), not a list of every file.'
              : 'Make .indexignore a regular UTF-8 text file with one pattern per line.',
        });
      }
      return ignorePatterns.get(e.path) ?? [];
    }),
  );

  const toRead: string[] = [];
  for (const e of entries) {
    const name = e.path.slice(e.path.lastIndexOf('/') + 1);
    // A name that is not UTF-8 cannot be matched against .indexignore exactly: fail it always.
    if (e.problem !== NAME_NOT_UTF8 && (name === INDEX_IGNORE || ignore.ignores(e.path))) continue;
    if (e.problem) {
      result.diagnostics.push({
        rule: 'L-FS',
        level: 'error',
        message: e.problem,
        file: e.path,
        hint:
          e.problem === NAME_NOT_UTF8
            ? 'Rename it (or its directory) to a UTF-8 name.'
            : 'Remove it, replace it with the file itself, or list it in .indexignore.',
      });
    } else if (e.size > maxFileSize) {
      result.diagnostics.push({
        rule: 'L-FILE-TOO-LARGE',
        level: 'error',
        message: `file is ${e.size} bytes, over the ${maxFileSize}-byte limit`,
        file: e.path,
        hint: 'Split the catalog into smaller files (one per package is usual), or raise the size limit.',
      });
    } else {
      toRead.push(e.path);
    }
  }

  if (options.onListed) {
    let bytes = 0;
    for (const path of toRead) bytes += sizes.get(path) ?? 0;
    options.onListed(bytes);
  }

  // Read in bounded batches, decode each file, then let the raw bytes go.
  const cache = options.decodedFiles;
  const idOf = (path: string): string | undefined => (cache ? source.contentId?.(path) : undefined);
  const decodedBefore = (path: string): DecodedFile | undefined => {
    const id = idOf(path);
    return id === undefined ? undefined : cache?.get(id);
  };
  const each = (path: string, data: Buffer | Error | undefined): void => {
    const known = decodedBefore(path);
    if (known) {
      result.stats.files++;
      result.stats.bytes += sizes.get(path) ?? 0;
      addFile(result, path, known, options);
      return;
    }
    const id = idOf(path);
    addRead(result, path, data, options, id === undefined ? undefined : (decoded) => cache?.set(id, decoded));
  };
  const helper = options.helper;
  if (helper && options.validationOnly && cache === undefined && source instanceof DirectorySource) {
    await loadShared(result, source, toRead, sizes, helper);
  } else {
    await readInBatches(source, toRead, sizes, each, (path) => decodedBefore(path) !== undefined);
  }
  return result;
}

/** Load one file as read (bytes, or why it could not be read); `remember` keeps the decoded file. */
function addRead(
  result: LoadResult,
  path: string,
  data: Buffer | Error | undefined,
  options: LoadOptions,
  remember?: (decoded: DecodedFile) => void,
): void {
  if (!(data instanceof Buffer)) {
    result.diagnostics.push({
      rule: 'L-FS',
      level: 'error',
      message: (data as Error | undefined)?.message ?? `read ${path}: not readable`,
      file: path,
      hint: 'Make the file readable, or list it in .indexignore.',
    });
    return;
  }
  result.stats.files++;
  result.stats.bytes += data.length;
  if (options.validationOnly && remember === undefined) {
    addFileStreaming(result, path, data, options);
    return;
  }
  const decoded = decodeFile(data);
  remember?.(decoded);
  addFile(result, path, decoded, options);
}

// ---- loading on two threads (`catalog-bot validate`)

export function newLoadResult(): LoadResult {
  return { config: emptyConfig(), diagnostics: [], stats: { files: 0, bytes: 0, blobs: 0 } };
}

/**
 * Load files of the job until none is left to claim, handing each result to `each`. The
 * helper thread first joins the job; false when the job was already over.
 */
export function loadClaimedFiles(
  job: SharedLoadJob,
  source: DirectorySource,
  asHelper: boolean,
  each: (index: number, result: LoadResult) => void,
): boolean {
  if (asHelper && !joinLoadJob(job)) return false;
  for (;;) {
    const k = claimNext(job);
    if (k >= job.order.length) return true;
    const index = job.order[k] as number;
    const path = job.paths[index] as string;
    const result = newLoadResult();
    addRead(result, path, source.readReused(path), { validationOnly: true });
    each(index, result);
  }
}

/**
 * Load `paths` on this thread and the helper's, each claiming the next file when done with
 * one; results are put together in the order of `paths`, as one thread would have. A file
 * the helper claimed but did not hand back (it failed) is loaded here.
 */
async function loadShared(
  result: LoadResult,
  source: DirectorySource,
  paths: string[],
  sizes: Map<string, number>,
  helper: LoadHelper<LoadResult>,
): Promise<void> {
  const order = paths
    .map((_, i) => i)
    .sort((a, b) => (sizes.get(paths[b]!) ?? 0) - (sizes.get(paths[a]!) ?? 0));
  const job: SharedLoadJob = {
    source: source.readState(),
    paths,
    order,
    claims: new SharedArrayBuffer(2 * Int32Array.BYTES_PER_ELEMENT),
  };
  const running = helper.start(job);
  const results: (LoadResult | undefined)[] = new Array(paths.length);
  loadClaimedFiles(job, source, false, (i, r) => (results[i] = r));
  const helped = await running.finish();
  paths.forEach((path, i) => {
    let r = results[i] ?? helped.get(i);
    if (r === undefined) {
      r = newLoadResult();
      addRead(r, path, source.readReused(path), { validationOnly: true });
    }
    for (const d of r.diagnostics) result.diagnostics.push(d);
    const into = result.config;
    for (const key of ['packages', 'channels', 'bundles', 'deprecations', 'others'] as const)
      for (const o of r.config[key]) (into[key] as object[]).push(o);
    result.stats.files += r.stats.files;
    result.stats.bytes += r.stats.bytes;
    result.stats.blobs += r.stats.blobs;
  });
}

const NON_FBC_EXTENSION =
  /\.(md|txt|png|jpe?g|gif|svg|sh|py|go|mod|sum|toml|ini|cfg|lock)$|(^|\/)(Makefile|Dockerfile|LICENSE|OWNERS|README)$/;

function addFile(result: LoadResult, file: string, decoded: DecodedFile, options: LoadOptions): void {
  const hintFor = hintsFor(file);
  addFileProblems(result, file, decoded, hintFor);
  for (const v of decoded.values) {
    result.stats.blobs++;
    addBlob(result, file, v, options, hintFor);
  }
}

/** addFile, with each blob converted as soon as it is decoded and then let go. */
function addFileStreaming(result: LoadResult, file: string, data: Buffer, options: LoadOptions): void {
  const hintFor = hintsFor(file);
  const fullReaderChars = yamlDocumentsRead.fullChars;
  // Blob findings go after the file's decoding problems, as addFile orders them.
  const blobs: LoadResult = { config: result.config, diagnostics: [], stats: result.stats };
  const decoded = decodeFile(data, {
    checkedValues: CHECKED_WHEN_READ,
    onValue: (v) => {
      result.stats.blobs++;
      addBlob(blobs, file, v, options, hintFor);
    },
  });
  addFileProblems(result, file, decoded, hintFor);
  for (const d of blobs.diagnostics) result.diagnostics.push(d);
  // A validation run that needs the full YAML reader is long enough to optimize (short-run.ts).
  if (yamlDocumentsRead.fullChars > fullReaderChars)
    noteFullReaderChars(yamlDocumentsRead.fullChars - fullReaderChars);
}

function hintsFor(file: string): (rule: string) => string | undefined {
  return (rule: string): string | undefined =>
    NON_FBC_EXTENSION.test(file)
      ? `opm reads every file under the catalog root. Add "${file.slice(file.lastIndexOf('/') + 1)}" to an .indexignore file, or move it out of the catalog.`
      : rule === 'L-YAML-SYNTAX'
        ? 'Fix the YAML syntax at this line (check indentation and quoting).'
        : rule === 'L-JSON-SYNTAX'
          ? 'Fix the JSON syntax at this point.'
          : Object.hasOwn(READ_REFUSAL_HINTS, rule)
            ? READ_REFUSAL_HINTS[rule as ReadRefusal]
            : undefined;
}

function addFileProblems(
  result: LoadResult,
  file: string,
  decoded: DecodedFile,
  hintFor: (rule: string) => string | undefined,
): void {
  for (const p of decoded.problems) {
    result.diagnostics.push({ ...p, level: 'error', file, hint: hintFor(p.rule) });
  }
  for (const n of decoded.notes) {
    result.diagnostics.push({ ...n, level: 'warning', file });
  }
}

function goKind(v: unknown): string {
  if (v === null) return '%!t(<nil>): <nil>';
  if (typeof v === 'boolean') return `${v}: ${v}`;
  if (typeof v === 'number') return `%!t(float64=${goFloat(v)}): ${goFloat(v)}`;
  if (Array.isArray(v)) return `%!t([]interface {}=[...]): [...]`;
  return `%!t(map[string]interface {}=map[...]): map[...]`;
}

const goFloat = (n: number): string => goFormatFloat(n, 'v');

/** The blob as declcfg.Meta re-encodes it (a map[string]any, HTML left alone), as opm quotes it. */
function metaText(blob: unknown): string {
  return goJsonEncode(blob, { sortKeys: true, escapeHtml: false });
}

/** A canonical text of a JSON value (keys sorted), for comparing values; opm's bytes are metaText's. */
export function sortedJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(sortedJson).join(',')}]`;
  if (typeof v === 'object' && v !== null) {
    const keys = Object.keys(v).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${sortedJson((v as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

function abbreviate(s: string, max = 300): string {
  return s.length > max ? s.slice(0, max) + '…' : s;
}

function addBlob(
  result: LoadResult,
  file: string,
  decoded: DecodedValue,
  options: LoadOptions,
  hintFor: (rule: string) => string | undefined,
): void {
  const pos: Position = { file, line: decoded.line, column: decoded.column };
  const fail = (rule: string, message: string, hint?: string, extra: Partial<Diagnostic> = {}): void => {
    result.diagnostics.push({ rule, level: 'error', message, ...pos, hint: hint ?? hintFor(rule), ...extra });
  };
  const value = decoded.value;

  if (value === null) {
    fail(
      'L-EMPTY-DOCUMENT',
      "object '' is missing root schema field",
      'This YAML document is empty (only blank lines or comments). Remove the extra `---` or the comment-only document, or put the comment inside a document.',
    );
    return;
  }
  if (typeof value !== 'object' || Array.isArray(value)) {
    const kind = Array.isArray(value)
      ? 'array'
      : typeof value === 'string'
        ? 'string'
        : typeof value === 'number'
          ? 'number'
          : 'bool';
    fail(
      'L-NOT-OBJECT',
      `json: cannot unmarshal ${kind} into Go value of type map[string]interface {}`,
      hintFor('L-NOT-OBJECT') ?? 'Every FBC document must be an object (a mapping) with a `schema` key.',
    );
    return;
  }
  const blob = value as Record<string, unknown>;
  const keep = <T extends object>(typed: T): T => {
    if (options.blobDigests) digests.set(typed, contentDigest(blob));
    return typed;
  };

  // opm groups top-level keys by Unicode case folding (ſchema is schema, paßword is password);
  // a key with a character that folds otherwise than it lowercases is refused, so that no
  // key is a field, or a duplicate, for opm and not for us (docs/security.md).
  const foldKey = Object.keys(blob).find((k) => FOLDS_UNLIKE_LOWERCASE.test(k));
  if (foldKey !== undefined) {
    fail(
      'L-KEY-FOLD',
      `top-level key ${goQuote(foldKey)} holds a character opm folds to other letters (ſ, ß, ς, ligatures): it may be another key for opm`,
      'Write top-level keys in ASCII (schema, package, name, ...); put other text inside a value.',
    );
    return;
  }
  // Meta: case-insensitive uniqueness of top-level keys; schema/package/name strings.
  const folded = new Map<string, string[]>();
  for (const key of Object.keys(blob)) {
    const f = key.toLowerCase();
    const list = folded.get(f);
    if (list) list.push(key);
    else folded.set(f, [key]);
  }
  const dups = [...folded.entries()].filter(([, keys]) => keys.length > 1);
  if (dups.length > 0) {
    const msgs = dups.map(
      ([f, keys]) => `duplicate keys for key ${goQuote(f)}: [${keys.sort(goStringCompare).join(' ')}]`,
    );
    fail(
      'L-META-DUPLICATE-KEYS',
      msgs.length === 1 ? (msgs[0] as string) : `[${msgs.join(', ')}]`,
      'Keys are matched without regard to case: keep one spelling of each key.',
    );
    return;
  }
  const meta: Record<'schema' | 'package' | 'name', string> = { schema: '', package: '', name: '' };
  for (const key of ['schema', 'package', 'name'] as const) {
    const actual = folded.get(key)?.[0];
    if (actual === undefined) continue;
    const v = blob[actual];
    if (typeof v !== 'string') {
      fail(
        'L-META-NOT-STRING',
        `expected value for key ${goQuote(actual)} to be a string, got ${goKind(v)}`,
        `Quote the value of \`${actual}\` so that YAML reads it as a string (for example \`${actual}: "4.12"\`).`,
      );
      return;
    }
    meta[key] = v;
  }

  switch (meta.schema) {
    case '':
      fail(
        'L-SCHEMA-MISSING',
        `object '${abbreviate(metaText(blob))}\n' is missing root schema field`,
        hintFor('L-SCHEMA-MISSING') ??
          'Every FBC object needs `schema:` (olm.package, olm.channel, olm.bundle, olm.deprecations, or your own). If this file is not part of the catalog, list it in .indexignore.',
      );
      return;
    case SCHEMA_PACKAGE: {
      const { value: p, error } = decodeGo(blob, GO_PACKAGE);
      if (error !== undefined) return fail('L-PARSE-PACKAGE', `parse package: ${error}`, typeHint(error));
      const pkg = toPackage(p as Record<string, unknown>, blob, decoded.lines, pos);
      // The icon's base64 was checked by decodeGo; nothing else reads it.
      if (options.validationOnly && pkg.icon) delete pkg.icon.base64data;
      result.config.packages.push(keep(pkg));
      return;
    }
    case SCHEMA_CHANNEL: {
      const { value: c, error } = decodeGo(blob, GO_CHANNEL);
      if (error !== undefined) return fail('L-PARSE-CHANNEL', `parse channel: ${error}`, typeHint(error));
      result.config.channels.push(keep(toChannel(c as Record<string, unknown>, blob, decoded.lines, pos)));
      return;
    }
    case SCHEMA_BUNDLE: {
      const { value: b, error } = decodeGo(blob, GO_BUNDLE);
      if (error !== undefined) return fail('L-PARSE-BUNDLE', `parse bundle: ${error}`, typeHint(error));
      const bundle = keep(toBundle(b as Record<string, unknown>, blob, decoded.lines, pos));
      const objectError = readBundleObjects(bundle, options);
      if (objectError) {
        return fail('L-BUNDLE-OBJECT', `read bundle objects: ${objectError.message}`, undefined, {
          line: objectError.line ?? pos.line,
          package: bundle.package,
        });
      }
      if (options.validationOnly) {
        dropCheckedValues(bundle);
        // Checked here, on the thread that read it, rather than all on one thread later.
        bundle.checked = checkBundleBlob(bundle);
      }
      result.config.bundles.push(bundle);
      return;
    }
    case SCHEMA_DEPRECATIONS: {
      const { value: d, error } = decodeGo(blob, GO_DEPRECATION);
      if (error !== undefined)
        return fail('L-PARSE-DEPRECATION', `parse deprecation: ${error}`, typeHint(error));
      result.config.deprecations.push(
        keep(toDeprecation(d as Record<string, unknown>, blob, decoded.lines, pos)),
      );
      return;
    }
    default:
      result.config.others.push(
        keep({
          schema: meta.schema,
          package: meta.package,
          name: meta.name,
          value: blob,
          pos,
        }),
      );
  }
}

function typeHint(error: string): string {
  if (/cannot unmarshal number into .* of type string/.test(error)) {
    return 'A value that should be text was read as a number (YAML reads 4.10 as 4.1): quote it.';
  }
  if (/cannot unmarshal bool into .* of type string/.test(error)) {
    return 'A value that should be text was read as true/false (YAML 1.1 reads yes, no, on, off as booleans): quote it.';
  }
  if (error.startsWith('illegal base64')) return 'The value must be standard base64 with padding.';
  return 'Give the field the type the schema expects (text, list, or object).';
}

// ---- typed views (fields absent in the blob get Go's zero values)

type Obj = Record<string, unknown>;
/**
 * A copy of a string that no longer points into the file it was read from. V8 keeps
 * substrings as views of their parent, so one kept bundle name would keep the whole
 * file text (bundle manifests included) alive.
 */
function detach(s: string): string {
  return s.length < 13 ? s : (' ' + s).slice(1);
}

/** Deep copy of a small JSON value with detached strings. */
function detachValue(v: unknown): unknown {
  if (typeof v === 'string') return detach(v);
  if (Array.isArray(v)) return v.map(detachValue);
  if (typeof v === 'object' && v !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, item] of Object.entries(v)) out[detach(k)] = detachValue(item);
    return out;
  }
  return v;
}

// Payloads that make up most of a catalog anyway: kept as read.
const BULK_PROPERTIES = new Set([PROPERTY_CSV_METADATA, PROPERTY_BUNDLE_OBJECT]);

const str = (v: unknown): string => (typeof v === 'string' ? detach(v) : '');
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

function toProperties(decoded: unknown, raw: unknown, lines: LineTable | undefined): Property[] {
  const rawList = arr(raw);
  return arr(decoded).map((p, i) => {
    const o = (p ?? {}) as Obj;
    const rawItem = rawList[i] as Obj | undefined;
    // Keep the raw value: `value: null` differs from a missing value for opm.
    const hasValue =
      rawItem !== undefined &&
      rawItem !== null &&
      Object.keys(rawItem).some((k) => k.toLowerCase() === 'value');
    const type = str(o.type);
    const value = hasValue ? (o.value ?? null) : undefined;
    return {
      type,
      value: BULK_PROPERTIES.has(type) ? value : detachValue(value),
      line: lineOf(lines, rawItem),
    };
  });
}

function rawField(raw: Obj, name: string): unknown {
  if (name in raw) return raw[name];
  const lower = name.toLowerCase();
  for (const k of Object.keys(raw)) if (k.toLowerCase() === lower) return raw[k];
  return undefined;
}

function toPackage(p: Obj, raw: Obj, lines: LineTable | undefined, pos: Position): Package {
  const icon = p.icon as Obj | undefined;
  return {
    schema: str(p.schema),
    name: str(p.name),
    defaultChannel: str(p.defaultChannel),
    ...(icon ? { icon: { base64data: str(icon.base64data), mediatype: str(icon.mediatype) } } : {}),
    description: str(p.description),
    properties: toProperties(p.properties, rawField(raw, 'properties'), lines),
    pos,
  };
}

function toChannel(c: Obj, raw: Obj, lines: LineTable | undefined, pos: Position): Channel {
  const rawEntries = arr(rawField(raw, 'entries'));
  return {
    schema: str(c.schema),
    name: str(c.name),
    package: str(c.package),
    entries: arr(c.entries).map((e, i) => {
      const o = (e ?? {}) as Obj;
      return {
        name: str(o.name),
        replaces: str(o.replaces),
        skips: arr(o.skips).map(str),
        skipRange: str(o.skipRange),
        line: lineOf(lines, rawEntries[i]),
      };
    }),
    properties: toProperties(c.properties, rawField(raw, 'properties'), lines),
    pos,
  };
}

function toBundle(b: Obj, raw: Obj, lines: LineTable | undefined, pos: Position): Bundle {
  return {
    schema: str(b.schema),
    name: str(b.name),
    package: str(b.package),
    image: str(b.image),
    properties: toProperties(b.properties, rawField(raw, 'properties'), lines),
    relatedImages: arr(b.relatedImages).map((r) => {
      const o = (r ?? {}) as Obj;
      return { name: str(o.name), image: str(o.image) };
    }),
    objectCount: 0,
    pos,
  };
}

function toDeprecation(d: Obj, raw: Obj, lines: LineTable | undefined, pos: Position): Deprecation {
  const rawEntries = arr(rawField(raw, 'entries'));
  return {
    schema: str(d.schema),
    package: str(d.package),
    entries: arr(d.entries).map((e, i) => {
      const o = (e ?? {}) as Obj;
      const ref = (o.reference ?? {}) as Obj;
      return {
        reference: { schema: str(ref.schema), name: str(ref.name) },
        message: str(o.message),
        line: lineOf(lines, rawEntries[i]),
      };
    }),
    pos,
  };
}

/** Stands in for a property value that passed its type check when read (`validationOnly`). */
const CHECKED_VALUE = Object.freeze({ '<checked when read>': true });

/**
 * The Go type a bundle property value of this type is only checked against in validation
 * (any value, for a type opm does not know), or undefined for the values validation reads.
 */
function checkedOnlyShape(type: string): GoType | undefined {
  if (type === PROPERTY_PACKAGE || type === PROPERTY_BUNDLE_OBJECT) return undefined;
  return GO_PROPERTY_VALUES[type] ?? goRaw;
}

/** The fast reader checks these values as it reads them and builds only those that fail. */
const CHECKED_WHEN_READ: CheckedValues = {
  schema: SCHEMA_BUNDLE,
  shape: checkedOnlyShape,
  placeholder: CHECKED_VALUE,
};

/**
 * Replace bundle property values that validation only type-checks, and that pass, with
 * CHECKED_VALUE, which passes the same check (no Go struct has a field of that name):
 * validation finds the same first failing property of each bundle. (Most were replaced
 * when read: CHECKED_WHEN_READ.)
 */
function dropCheckedValues(bundle: Bundle): void {
  for (const prop of bundle.properties) {
    if (prop.value === undefined || prop.value === CHECKED_VALUE) continue;
    const shape = checkedOnlyShape(prop.type);
    if (shape !== undefined && checkGo(prop.value, shape) === undefined) prop.value = CHECKED_VALUE;
  }
}

const JSON_PREFIX = /^[\s\u0085\u00a0]*\{/;

/**
 * opm's readBundleObjects: every `olm.bundle.object` must hold base64 of JSON or YAML.
 * JSON (text starting with `{`) is not parsed by opm, so only YAML is decoded here.
 */
function readBundleObjects(
  bundle: Bundle,
  options: LoadOptions,
): { message: string; line?: number } | undefined {
  // Only for messages: quoting every bundle's names up front showed in profiles.
  const where = (): string => `package ${goQuote(bundle.package)}, bundle ${goQuote(bundle.name)}`;
  // opm decodes every property into the same variable: a later `{}` keeps earlier data.
  let data = '';
  for (let i = 0; i < bundle.properties.length; i++) {
    const prop = bundle.properties[i] as Property;
    if (prop.type !== PROPERTY_BUNDLE_OBJECT) continue;
    if (prop.value === undefined) {
      return {
        message: `${where()}: parse property at index ${i} as bundle object: unexpected end of JSON input`,
        line: prop.line,
      };
    }
    const { value, error } = decodeGo(prop.value, GO_PROPERTY_VALUES[PROPERTY_BUNDLE_OBJECT]!);
    if (error !== undefined) {
      return {
        message: `${where()}: parse property at index ${i} as bundle object: ${error}`,
        line: prop.line,
      };
    }
    const maybe = (value as Obj | undefined)?.data;
    if (typeof maybe === 'string') data = validateGoBase64(maybe);
    const text = objectText(data);
    if (!JSON_PREFIX.test(text.head)) {
      const full = Buffer.from(data, 'base64');
      const parsed = decodeFile(full);
      const problem = parsed.problems[0];
      if (problem) {
        return {
          message: `${where()}: convert bundle object property at index ${i} to JSON: ${problem.message}`,
          line: prop.line,
        };
      }
      if (options.keepBundleObjects)
        (bundle.objects ??= []).push(JSON.stringify(parsed.values[0]?.value ?? null));
    } else if (options.keepBundleObjects) {
      (bundle.objects ??= []).push(Buffer.from(data, 'base64').toString('utf8'));
    }
    bundle.objectCount++;
    // Keep a digest in place of the content, so a change inside a manifest still shows.
    if (options.validationOnly) prop.value = DROPPED_BUNDLE_OBJECT;
    else if (!options.keepBundleObjects)
      prop.value = { ...DROPPED_BUNDLE_OBJECT, sha1: createHash('sha1').update(data).digest('hex') };
  }
  return undefined;
}

/** Decode only the start of a base64 payload: enough to see whether it is JSON. */
function objectText(base64: string): { head: string } {
  let n = 64;
  for (;;) {
    const head = Buffer.from(base64.slice(0, n), 'base64').toString('utf8');
    if (/\S/.test(head) || n >= base64.length) return { head };
    n *= 4;
  }
}
