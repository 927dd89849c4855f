// Typed decoding of JSON values with Go encoding/json rules, because opm decodes every
// blob into Go structs: field names match case-insensitively, unknown fields are
// dropped, a wrong JSON type is an error, null leaves the zero value, and []byte fields
// hold strict base64.
import { goStringCompare } from './gostrings.js';

export type GoType =
  | { kind: 'string' }
  | { kind: 'bool' }
  | { kind: 'int'; bits: 8 | 16 | 32 | 64; goName?: string }
  | { kind: 'float' }
  | { kind: 'bytes' }
  | { kind: 'raw' }
  | { kind: 'slice'; elem: GoType; goName: string }
  | { kind: 'map'; elem: GoType; goName: string }
  | { kind: 'struct'; goName: string; fields: Record<string, GoType> };

export const goString: GoType = { kind: 'string' };
export const goBool: GoType = { kind: 'bool' };
export const goRaw: GoType = { kind: 'raw' };
export const goBytes: GoType = { kind: 'bytes' };
export const goStringSlice: GoType = { kind: 'slice', elem: goString, goName: '[]string' };
export const goStringMap: GoType = { kind: 'map', elem: goString, goName: 'map[string]string' };

export function goStruct(goName: string, fields: Record<string, GoType>): GoType {
  return { kind: 'struct', goName, fields };
}
export function goSlice(elem: GoType): GoType {
  return { kind: 'slice', elem, goName: '[]' + goTypeName(elem) };
}

export function goTypeName(t: GoType): string {
  switch (t.kind) {
    case 'string':
    case 'bool':
      return t.kind;
    case 'int':
      return t.goName ?? (t.bits === 64 ? 'int' : `int${t.bits}`);
    case 'float':
      return 'float64';
    case 'bytes':
      return '[]uint8';
    case 'raw':
      return 'json.RawMessage';
    default:
      return t.goName;
  }
}

function jsonKind(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (v === null) return 'null';
  switch (typeof v) {
    case 'string':
      return 'string';
    case 'number':
      return 'number';
    case 'boolean':
      return 'bool';
    default:
      return 'object';
  }
}

export class GoDecodeError extends Error {}

interface Context {
  /** false: only check types, return the input untouched (no copies). */
  build: boolean;
  /** Keys in Go's order (againInKeyOrder): set only while looking for the error Go reports. */
  sorted?: boolean;
  firstError?: string;
  structName?: string;
  path: string[];
}

/**
 * Decode `value` as Go's json.Unmarshal would into a value of type `type`. Returns the
 * decoded value (plain JS data, structs as objects keyed by their JSON field names) and
 * the error Go would return, if any.
 */
export function decodeGo(value: unknown, type: GoType): { value: unknown; error?: string } {
  return run(value, type, { build: true, path: [] });
}

/** The error Go would give decoding `value` into `type`, without building a copy. */
export function checkGo(value: unknown, type: GoType): string | undefined {
  return run(value, type, { build: false, path: [] }).error;
}

function run(value: unknown, type: GoType, ctx: Context): { value: unknown; error?: string } {
  try {
    const out = decodeValue(value, type, ctx);
    return ctx.firstError === undefined ? { value: out } : { value: out, error: ctx.firstError };
  } catch (err) {
    if (err instanceof GoDecodeError) return { value: undefined, error: err.message };
    throw err;
  }
}

function typeError(ctx: Context, v: unknown, t: GoType, literal?: string): void {
  if (ctx.firstError !== undefined) return;
  const what = literal !== undefined ? `${jsonKind(v)} ${literal}` : jsonKind(v);
  ctx.firstError =
    ctx.structName !== undefined && ctx.path.length > 0
      ? `json: cannot unmarshal ${what} into Go struct field ${ctx.structName}.${ctx.path.join('.')} of type ${goTypeName(t)}`
      : `json: cannot unmarshal ${what} into Go value of type ${goTypeName(t)}`;
}

function decodeValue(v: unknown, t: GoType, ctx: Context): unknown {
  if (v === null || v === undefined) return undefined; // zero value
  switch (t.kind) {
    case 'raw':
      return v;
    case 'string':
      if (typeof v === 'string') return v;
      typeError(ctx, v, t);
      return undefined;
    case 'bool':
      if (typeof v === 'boolean') return v;
      typeError(ctx, v, t);
      return undefined;
    case 'float':
      if (typeof v === 'number') return v;
      typeError(ctx, v, t);
      return undefined;
    case 'int': {
      if (typeof v !== 'number') {
        typeError(ctx, v, t);
        return undefined;
      }
      const limit = 2 ** (t.bits - 1);
      // Go reads the number as JSON writes a float64, its shortest decimal: -2^63 is written
      // -9223372036854776000, past int64 (2^31 and below are written exactly).
      if (!Number.isInteger(v) || v < -limit || v >= limit || (v === -limit && t.bits === 64)) {
        typeError(ctx, v, t, String(v));
        return undefined;
      }
      return v;
    }
    case 'bytes':
      if (typeof v !== 'string') {
        typeError(ctx, v, t);
        return undefined;
      }
      try {
        return validateGoBase64(v);
      } catch (err) {
        // Saved as Go saves it: an earlier type error stays the one reported.
        if (!(err instanceof GoDecodeError)) throw err;
        ctx.firstError ??= err.message;
        return undefined;
      }
    case 'slice': {
      if (!Array.isArray(v)) {
        typeError(ctx, v, t);
        return undefined;
      }
      if (!ctx.build) {
        for (const item of v) decodeValue(item, t.elem, ctx);
        return v;
      }
      return v.map((item) => decodeValue(item, t.elem, ctx));
    }
    case 'map': {
      if (typeof v !== 'object' || Array.isArray(v)) {
        typeError(ctx, v, t);
        return undefined;
      }
      const obj = v as Record<string, unknown>;
      const before = ctx.firstError;
      let out: Record<string, unknown> | undefined;
      if (!ctx.build) {
        for (const k of keysInOrder(obj, ctx)) decodeValue(obj[k], t.elem, ctx);
      } else {
        out = {};
        for (const [k, item] of Object.entries(obj)) out[k] = decodeValue(item, t.elem, ctx);
      }
      if (before === undefined && ctx.firstError !== undefined)
        againInKeyOrder(obj, ctx, () => decodeValue(v, t, ctx));
      return out ?? v;
    }
    case 'struct':
      return decodeStruct(v, t, ctx);
  }
}

function decodeStruct(v: unknown, t: Extract<GoType, { kind: 'struct' }>, ctx: Context): unknown {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) {
    typeError(ctx, v, t);
    return undefined;
  }
  const out: Record<string, unknown> | undefined = ctx.build ? {} : undefined;
  const chosenKey: Record<string, string> = {};
  const obj = v as Record<string, unknown>;
  const savedStruct = ctx.structName;
  const structName = shortName(t);
  const before = ctx.firstError;
  for (const key of keysInOrder(obj, ctx)) {
    const field = matchField(t, key);
    if (field === undefined) continue;
    ctx.structName = structName;
    ctx.path.push(field);
    const decoded = decodeValue(obj[key], t.fields[field] as GoType, ctx);
    ctx.path.pop();
    ctx.structName = savedStruct;
    // Several spellings of one field: Go sees keys in sorted order, so the last wins (each
    // one is decoded all the same, and its type error counts).
    const previous = chosenKey[field];
    if (previous !== undefined && goStringCompare(previous, key) > 0) continue;
    chosenKey[field] = key;
    if (out === undefined) continue;
    if (decoded !== undefined) out[field] = decoded;
    else delete out[field];
  }
  if (before === undefined && ctx.firstError !== undefined)
    againInKeyOrder(obj, ctx, () => decodeStruct(v, t, ctx));
  return out ?? v;
}

/**
 * Go decodes an object's keys in sorted order (opm's YAML reaches it as JSON from a Go map)
 * and reports the first error it meets. An object that gave the first error is checked once
 * more, keys in that order all the way down, for the error Go reports; nearly all objects
 * have none and are decoded once, keys as they come.
 */
function againInKeyOrder(obj: Record<string, unknown>, ctx: Context, check: () => void): void {
  if (ctx.sorted || Object.keys(obj).length < 2) return;
  const build = ctx.build;
  ctx.build = false;
  ctx.sorted = true;
  ctx.firstError = undefined;
  check();
  ctx.build = build;
  ctx.sorted = false;
}

function keysInOrder(obj: Record<string, unknown>, ctx: Context): string[] {
  const keys = Object.keys(obj);
  return ctx.sorted && keys.length > 1 ? keys.sort(goStringCompare) : keys;
}

const shortNames = new WeakMap<object, string>();

/** The struct's name without its package (`declcfg.Bundle` -> `Bundle`), computed once per type. */
function shortName(t: Extract<GoType, { kind: 'struct' }>): string {
  let name = shortNames.get(t);
  if (name === undefined) {
    name = t.goName.replace(/^.*\./, '');
    shortNames.set(t, name);
  }
  return name;
}

const lowerFieldNames = new WeakMap<object, Map<string, string>>();
// Keys that are not a field's exact name, per struct type, with the field they fold to
// (undefined: none). Catalogs repeat the same few, so folding each once is enough; the
// check worker outlives a pull request, so only short keys, and a bounded number, are kept.
const foldedKeys = new WeakMap<object, Map<string, string | undefined>>();
const FOLDED_KEYS_MAX = 1000;
const FOLDED_KEY_LENGTH_MAX = 64;

/** The field of struct `t` that a JSON key decodes into (names match case-insensitively), if any. */
export function matchField(t: Extract<GoType, { kind: 'struct' }>, key: string): string | undefined {
  if (Object.hasOwn(t.fields, key)) return key;
  let folded = foldedKeys.get(t);
  if (folded?.has(key)) return folded.get(key);
  let lower = lowerFieldNames.get(t);
  if (!lower) {
    lower = new Map(Object.keys(t.fields).map((f) => [foldName(f), f]));
    lowerFieldNames.set(t, lower);
  }
  const field = lower.get(foldName(key));
  if (!folded) foldedKeys.set(t, (folded = new Map()));
  if (folded.size < FOLDED_KEYS_MAX && key.length <= FOLDED_KEY_LENGTH_MAX) folded.set(key, field);
  return field;
}

// Go folds ASCII case, plus the Kelvin sign and long s that fold to k and s.
function foldName(s: string): string {
  return s
    .toLowerCase()
    .replace(/\u212a/g, 'k')
    .replace(/\u017f/g, 's');
}

const BASE64_FAST = /^[A-Za-z0-9+/]*={0,2}$/;
const BASE64_ALPHABET = /[A-Za-z0-9+/]/;

/**
 * Go's base64.StdEncoding as used by encoding/json for []byte: padding required,
 * CR and LF ignored. Returns the text without line breaks (decode it only when the bytes
 * are needed); throws with Go's "illegal base64 data at input byte N".
 */
export function validateGoBase64(s: string): string {
  const compact = s.includes('\n') || s.includes('\r') ? s.replace(/[\r\n]/g, '') : s;
  if (compact.length % 4 === 0 && BASE64_FAST.test(compact) && !/=[^=]/.test(compact)) return compact;
  throw new GoDecodeError(`illegal base64 data at input byte ${base64ErrorOffset(s)}`);
}

function base64ErrorOffset(s: string): number {
  // Walk quanta of four significant characters as Go's decodeQuantum does.
  let j = 0;
  let quantumStart = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i] as string;
    if (c === '\r' || c === '\n') continue;
    if (j === 0) quantumStart = i;
    if (c === '=') {
      if (j < 2) return i;
      // "xx==" or "xxx=" must end the input (ignoring newlines).
      const rest = s.slice(i + 1).replace(/[\r\n]/g, '');
      if (j === 2 && rest[0] !== '=') return i;
      const tail = j === 2 ? rest.slice(1) : rest;
      return tail.length > 0 ? i + 1 + (j === 2 ? 1 : 0) : s.length;
    }
    if (!BASE64_ALPHABET.test(c)) return i;
    j = (j + 1) % 4;
  }
  return j === 0 ? s.length : quantumStart;
}
