// Load a catalog root into a DeclarativeConfig the way opm's `declcfg.LoadFS` does, but
// collecting every problem (with file and line) instead of stopping at the first: list the
// files, leave out what .indexignore names, decode each file, add each blob to the config.
// How files are read and decoded fast (batches, shared decodings, a second thread) is
// fast/files.ts's (docs/architecture.md, "The loader").
import { createRequire } from 'node:module';
import { decodeFile, lineOf, type DecodedFile, type DecodedValue, type LineTable } from './decode.js';
import { READ_REFUSAL_HINTS, type ReadRefusal } from './yaml-screen.js';
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
import { decodeGo, validateGoBase64 } from '../go/gojson.js';
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
import { keepForValidation } from './fast/checked-values.js';
import {
  decodeFiles,
  decodeForValidation,
  readInBatches,
  type FileDecoding,
  type SpeedOptions,
} from './fast/files.js';
import {
  DEFAULT_MAX_FILE_SIZE,
  NAME_NOT_UTF8,
  type CatalogSource,
  type DirectorySource,
  type SourceEntry,
} from './source.js';
import { PROPERTY_BUNDLE_OBJECT, PROPERTY_CSV_METADATA } from '../property.js';

export { DEFAULT_MAX_FILE_SIZE } from './source.js';

// node:crypto is loaded on first use: `catalog-bot validate` never digests, and loading it
// is a noticeable part of that command's start-up, on both of its threads (README, "Benchmarks").
const require = createRequire(import.meta.url);
const createHash = (algorithm: string): import('node:crypto').Hash =>
  (require('node:crypto') as typeof import('node:crypto')).createHash(algorithm);

export interface LoadOptions extends SpeedOptions<LoadResult> {
  /** Files larger than this are not read (an error). Default 64 MiB. */
  maxFileSize?: number;
  /** Keep `olm.bundle.object` contents (for render); otherwise they are checked and dropped. */
  keepBundleObjects?: boolean;
  /** Remember a digest of each blob as read, every key of it (`blobDigest`), for change detection. */
  blobDigests?: boolean;
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

// Characters whose Unicode case folding (opm's cases.Fold) is not their lowercase: ſ, ß, final
// sigma, Greek symbol forms, Cherokee, ligatures... (from the Unicode CaseFolding table).
const FOLDS_UNLIKE_LOWERCASE =
  /[\u00b5\u00df\u0149\u017f\u01f0\u0390\u03a3\u03b0\u03c2\u03d0\u03d1\u03d5\u03d6\u03f0\u03f1\u03f5\u0587\u13a0-\u13f5\u13f8-\u13fd\u1c80-\u1c88\u1e96-\u1e9b\u1e9e\u1f50\u1f52\u1f54\u1f56\u1f80-\u1faf\u1fb2-\u1fb4\u1fb6\u1fb7\u1fbc\u1fbe\u1fc2-\u1fc4\u1fc6\u1fc7\u1fcc\u1fd2\u1fd3\u1fd6\u1fd7\u1fe2-\u1fe4\u1fe6\u1fe7\u1ff2-\u1ff4\u1ff6\u1ff7\u1ffc\uab70-\uabbf\ufb00-\ufb06\ufb13-\ufb17]|\u0345/; // U+0345 combines: kept out of the class

/** A digest of everything the blob that made `object` said (loaded with `blobDigests`). */
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

export async function loadCatalog(source: CatalogSource, options: LoadOptions = {}): Promise<LoadResult> {
  const result = newLoadResult();
  const entries = await source.list();
  const sizes = new Map(entries.map((e) => [e.path, e.size]));
  const ignore = await readIndexIgnores(source, entries, sizes, result.diagnostics);
  const paths = filesToRead(
    entries,
    ignore,
    options.maxFileSize ?? DEFAULT_MAX_FILE_SIZE,
    result.diagnostics,
  );
  if (options.onListed) options.onListed(paths.reduce((bytes, path) => bytes + (sizes.get(path) ?? 0), 0));
  await decodeFiles(source, paths, sizes, options, {
    // Bound, not wrapped: the walk from a file to a message stays short (docs/architecture.md).
    add: addRead.bind(undefined, result, options),
    loadOne: loadOneFile,
    merge: (one) => mergeResult(result, one),
  });
  return result;
}

const isIndexIgnore = (e: SourceEntry): boolean =>
  e.path === INDEX_IGNORE || e.path.endsWith('/' + INDEX_IGNORE);

/**
 * Every .indexignore of the listing, read and parsed into one IndexIgnore; one that cannot be
 * read exactly as opm reads it is a finding (opm fails on it too).
 */
async function readIndexIgnores(
  source: CatalogSource,
  entries: SourceEntry[],
  sizes: Map<string, number>,
  diagnostics: Diagnostic[],
): Promise<IndexIgnore> {
  const ignoreFiles = entries.filter(isIndexIgnore);
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
  return new IndexIgnore(
    ignoreFiles.flatMap((e) => {
      const problem = ignoreProblems.get(e.path);
      if (problem !== undefined) {
        diagnostics.push({
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
}

/** The files of the listing opm reads, in its order; one it cannot read (or too large) is a finding. */
function filesToRead(
  entries: SourceEntry[],
  ignore: IndexIgnore,
  maxFileSize: number,
  diagnostics: Diagnostic[],
): string[] {
  const paths: string[] = [];
  for (const e of entries) {
    const name = e.path.slice(e.path.lastIndexOf('/') + 1);
    // A name that is not UTF-8 cannot be matched against .indexignore exactly: fail it always.
    if (e.problem !== NAME_NOT_UTF8 && (name === INDEX_IGNORE || ignore.ignores(e.path))) continue;
    if (e.problem) {
      diagnostics.push({
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
      diagnostics.push({
        rule: 'L-FILE-TOO-LARGE',
        level: 'error',
        message: `file is ${e.size} bytes, over the ${maxFileSize}-byte limit`,
        file: e.path,
        hint: 'Split the catalog into smaller files (one per package is usual), or raise the size limit.',
      });
    } else {
      paths.push(e.path);
    }
  }
  return paths;
}

/**
 * Add one file as read: why it could not be read, or its decoding problems and notes, then
 * what each of its blobs says.
 */
function addRead(
  result: LoadResult,
  options: LoadOptions,
  path: string,
  read: { bytes: number; decoding: FileDecoding } | Error | undefined,
): void {
  if (read === undefined || read instanceof Error) {
    result.diagnostics.push({
      rule: 'L-FS',
      level: 'error',
      message: read?.message ?? `read ${path}: not readable`,
      file: path,
      hint: 'Make the file readable, or list it in .indexignore.',
    });
    return;
  }
  result.stats.files++;
  result.stats.bytes += read.bytes;
  const hintFor = hintsFor(path);
  // Blob findings go after the file's decoding problems, though a blob may be added first.
  const blobs: LoadResult = { config: result.config, diagnostics: [], stats: result.stats };
  const decoded = read.decoding(addBlob.bind(undefined, blobs, path, options, hintFor));
  addFileProblems(result, path, decoded, hintFor);
  for (const d of blobs.diagnostics) result.diagnostics.push(d);
}

export function newLoadResult(): LoadResult {
  return { config: emptyConfig(), diagnostics: [], stats: { files: 0, bytes: 0, blobs: 0 } };
}

/** One file of a validation-only load, into a result of its own (on either thread of `catalog-bot validate`). */
export function loadOneFile(source: DirectorySource, path: string): LoadResult {
  const result = newLoadResult();
  addRead(result, { validationOnly: true }, path, decodeForValidation(source.readReused(path)));
  return result;
}

/** Add the result of one file (loadOneFile) to the whole load's. */
function mergeResult(into: LoadResult, one: LoadResult): void {
  for (const d of one.diagnostics) into.diagnostics.push(d);
  for (const key of ['packages', 'channels', 'bundles', 'deprecations', 'others'] as const)
    for (const o of one.config[key]) (into.config[key] as object[]).push(o);
  into.stats.files += one.stats.files;
  into.stats.bytes += one.stats.bytes;
  into.stats.blobs += one.stats.blobs;
}

const NON_FBC_EXTENSION =
  /\.(md|txt|png|jpe?g|gif|svg|sh|py|go|mod|sum|toml|ini|cfg|lock)$|(^|\/)(Makefile|Dockerfile|LICENSE|OWNERS|README)$/;

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

/** A blob being added: where it is, and how to report a problem with it. */
interface BlobInFile {
  result: LoadResult;
  decoded: DecodedValue;
  pos: Position;
  options: LoadOptions;
  hintFor(rule: string): string | undefined;
  /** Report a problem with the blob (the file's hint for the rule, unless `hint` is given). */
  fail(rule: string, message: string, hint?: string, extra?: Partial<Diagnostic>): void;
}

type Meta = Record<'schema' | 'package' | 'name', string>;

/** Add one blob: opm's declcfg.Meta of it, then the typed object its schema makes. */
function addBlob(
  result: LoadResult,
  file: string,
  options: LoadOptions,
  hintFor: (rule: string) => string | undefined,
  decoded: DecodedValue,
): void {
  result.stats.blobs++;
  const pos: Position = { file, line: decoded.line, column: decoded.column };
  const at: BlobInFile = {
    result,
    decoded,
    pos,
    options,
    hintFor,
    fail: (rule, message, hint, extra = {}) => {
      result.diagnostics.push({
        rule,
        level: 'error',
        message,
        ...pos,
        hint: hint ?? hintFor(rule),
        ...extra,
      });
    },
  };
  const blob = objectOf(decoded.value, at);
  const meta = blob && metaOf(blob, at);
  if (!blob || !meta) return;
  const keep = <T extends object>(typed: T): T => {
    if (options.blobDigests) digests.set(typed, contentDigest(blob));
    return typed;
  };
  switch (meta.schema) {
    case '':
      return at.fail(
        'L-SCHEMA-MISSING',
        `object '${abbreviate(metaText(blob))}\n' is missing root schema field`,
        hintFor('L-SCHEMA-MISSING') ??
          'Every FBC object needs `schema:` (olm.package, olm.channel, olm.bundle, olm.deprecations, or your own). If this file is not part of the catalog, list it in .indexignore.',
      );
    case SCHEMA_PACKAGE:
      return addPackage(blob, at, keep);
    case SCHEMA_CHANNEL:
      return addChannel(blob, at, keep);
    case SCHEMA_BUNDLE:
      return addBundle(blob, at, keep);
    case SCHEMA_DEPRECATIONS:
      return addDeprecation(blob, at, keep);
    default:
      result.config.others.push(keep({ ...meta, value: blob, pos }));
  }
}

/** The decoded value as an object, or undefined when it is not one (a finding). */
function objectOf(value: unknown, at: BlobInFile): Record<string, unknown> | undefined {
  if (value === null) {
    at.fail(
      'L-EMPTY-DOCUMENT',
      "object '' is missing root schema field",
      'This YAML document is empty (only blank lines or comments). Remove the extra `---` or the comment-only document, or put the comment inside a document.',
    );
    return undefined;
  }
  if (typeof value !== 'object' || Array.isArray(value)) {
    const kind = Array.isArray(value)
      ? 'array'
      : typeof value === 'string'
        ? 'string'
        : typeof value === 'number'
          ? 'number'
          : 'bool';
    at.fail(
      'L-NOT-OBJECT',
      `json: cannot unmarshal ${kind} into Go value of type map[string]interface {}`,
      at.hintFor('L-NOT-OBJECT') ?? 'Every FBC document must be an object (a mapping) with a `schema` key.',
    );
    return undefined;
  }
  return value as Record<string, unknown>;
}

/**
 * opm's declcfg.Meta of a blob: its schema, package and name, read from top-level keys
 * matched without regard to case; undefined when opm fails on them (a finding).
 */
function metaOf(blob: Record<string, unknown>, at: BlobInFile): Meta | undefined {
  // opm groups top-level keys by Unicode case folding (ſchema is schema, paßword is password);
  // a key with a character that folds otherwise than it lowercases is refused, so that no
  // key is a field, or a duplicate, for opm and not for us (docs/security.md).
  const foldKey = Object.keys(blob).find((k) => FOLDS_UNLIKE_LOWERCASE.test(k));
  if (foldKey !== undefined) {
    at.fail(
      'L-KEY-FOLD',
      `top-level key ${goQuote(foldKey)} holds a character opm folds to other letters (ſ, ß, ς, ligatures): it may be another key for opm`,
      'Write top-level keys in ASCII (schema, package, name, ...); put other text inside a value.',
    );
    return undefined;
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
    at.fail(
      'L-META-DUPLICATE-KEYS',
      msgs.length === 1 ? (msgs[0] as string) : `[${msgs.join(', ')}]`,
      'Keys are matched without regard to case: keep one spelling of each key.',
    );
    return undefined;
  }
  const meta: Meta = { schema: '', package: '', name: '' };
  for (const key of ['schema', 'package', 'name'] as const) {
    const actual = folded.get(key)?.[0];
    if (actual === undefined) continue;
    const v = blob[actual];
    if (typeof v !== 'string') {
      at.fail(
        'L-META-NOT-STRING',
        `expected value for key ${goQuote(actual)} to be a string, got ${goKind(v)}`,
        `Quote the value of \`${actual}\` so that YAML reads it as a string (for example \`${actual}: "4.12"\`).`,
      );
      return undefined;
    }
    meta[key] = v;
  }
  return meta;
}

type Keep = <T extends object>(typed: T) => T;

function addPackage(blob: Obj, at: BlobInFile, keep: Keep): void {
  const { value: p, error } = decodeGo(blob, GO_PACKAGE);
  if (error !== undefined) return at.fail('L-PARSE-PACKAGE', `parse package: ${error}`, typeHint(error));
  const pkg = toPackage(p as Obj, blob, at.decoded.lines, at.pos);
  // The icon's base64 was checked by decodeGo; nothing else reads it.
  if (at.options.validationOnly && pkg.icon) delete pkg.icon.base64data;
  at.result.config.packages.push(keep(pkg));
}

function addChannel(blob: Obj, at: BlobInFile, keep: Keep): void {
  const { value: c, error } = decodeGo(blob, GO_CHANNEL);
  if (error !== undefined) return at.fail('L-PARSE-CHANNEL', `parse channel: ${error}`, typeHint(error));
  at.result.config.channels.push(keep(toChannel(c as Obj, blob, at.decoded.lines, at.pos)));
}

function addBundle(blob: Obj, at: BlobInFile, keep: Keep): void {
  const { value: b, error } = decodeGo(blob, GO_BUNDLE);
  if (error !== undefined) return at.fail('L-PARSE-BUNDLE', `parse bundle: ${error}`, typeHint(error));
  const bundle = keep(toBundle(b as Obj, blob, at.decoded.lines, at.pos));
  const objectError = readBundleObjects(bundle, at.options);
  if (objectError) {
    return at.fail('L-BUNDLE-OBJECT', `read bundle objects: ${objectError.message}`, undefined, {
      line: objectError.line ?? at.pos.line,
      package: bundle.package,
    });
  }
  if (at.options.validationOnly) keepForValidation(bundle);
  at.result.config.bundles.push(bundle);
}

function addDeprecation(blob: Obj, at: BlobInFile, keep: Keep): void {
  const { value: d, error } = decodeGo(blob, GO_DEPRECATION);
  if (error !== undefined)
    return at.fail('L-PARSE-DEPRECATION', `parse deprecation: ${error}`, typeHint(error));
  at.result.config.deprecations.push(keep(toDeprecation(d as Obj, blob, at.decoded.lines, at.pos)));
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
