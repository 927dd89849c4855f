// YAML scalars resolved the way opm reads them: go-yaml v2 (YAML 1.1) decoding into
// interface{}, then conversion to JSON by sigs.k8s.io/yaml. So `on` is true, `4.12` is a
// number, `0777` is octal, and timestamps stay strings.
import { createRequire } from 'node:module';
import type * as JsYaml from 'js-yaml';

/** What resolvePlainScalar gives for a plain scalar that stays a string. */
export const NOT_RESOLVED = Symbol('not resolved');
type Resolved = null | boolean | number | string | typeof NOT_RESOLVED;

const KNOWN_PLAIN = new Map<string, null | boolean | number>();
for (const s of ['y', 'Y', 'yes', 'Yes', 'YES', 'true', 'True', 'TRUE', 'on', 'On', 'ON'])
  KNOWN_PLAIN.set(s, true);
for (const s of ['n', 'N', 'no', 'No', 'NO', 'false', 'False', 'FALSE', 'off', 'Off', 'OFF'])
  KNOWN_PLAIN.set(s, false);
for (const s of ['', '~', 'null', 'Null', 'NULL']) KNOWN_PLAIN.set(s, null);
for (const s of ['.nan', '.NaN', '.NAN']) KNOWN_PLAIN.set(s, NaN);
for (const s of ['.inf', '.Inf', '.INF', '+.inf', '+.Inf', '+.INF']) KNOWN_PLAIN.set(s, Infinity);
for (const s of ['-.inf', '-.Inf', '-.INF']) KNOWN_PLAIN.set(s, -Infinity);

const YAML_STYLE_FLOAT = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/;
const GO_DOT_FLOAT = /^\.[0-9]+([eE][-+]?[0-9]+)?$/;
const INT64_MAX = 2n ** 63n - 1n;
const INT64_MIN = -(2n ** 63n);
const UINT64_MAX = 2n ** 64n - 1n;

/** Go strconv.ParseInt(s, 0, 64) or ParseUint(s, 0, 64): sign, base prefixes, legacy octal. */
function parseGoInteger(s: string): number | undefined {
  const m = /^([-+]?)(0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)$/.exec(s);
  if (!m) return undefined;
  const sign = m[1] ?? '';
  const digits = m[2] ?? '';
  let big: bigint;
  if (/^0[oO]/.test(digits)) big = BigInt('0o' + digits.slice(2));
  else if (/^0[0-7]+$/.test(digits)) big = BigInt('0o' + digits.slice(1));
  else big = BigInt(digits);
  if (sign === '-') big = -big;
  if (big < INT64_MIN || big > UINT64_MAX || (sign !== '' && big > INT64_MAX)) return undefined;
  return Number(big);
}

// Characters a number can be written with; anything else is a string at once.
const NUMBER_CHARACTERS = /^[-+0-9a-fA-F_.xXoObBeE]+$/;

/**
 * How many plain scalars this thread resolved to an infinity or NaN: numbers JSON cannot
 * hold, so opm fails on a document with one as a value (decode.ts looks only when this moved).
 */
export const nonFiniteScalars = { count: 0 };

/** The value go-yaml v2 gives a plain (unquoted) scalar when decoding into interface{}. */
export function resolvePlainScalar(s: string): Resolved {
  // Booleans, nulls, .inf and .nan are at most 6 characters; long text is never hashed.
  if (s.length <= 6) {
    const known = KNOWN_PLAIN.get(s);
    if (typeof known === 'number') nonFiniteScalars.count++; // the only numbers known: .inf, .nan
    if (known !== undefined || KNOWN_PLAIN.has(s)) return known ?? null;
    if (s === '<<') return NOT_RESOLVED; // merge key, handled by the merge type
  }
  const c = s.charCodeAt(0);
  if (c === 0x2e /* . */) return GO_DOT_FLOAT.test(s) ? finiteOrText(Number(s)) : NOT_RESOLVED;
  const isDigit = c >= 0x30 && c <= 0x39;
  if (!isDigit && c !== 0x2b && c !== 0x2d) return NOT_RESOLVED;
  if (!NUMBER_CHARACTERS.test(s)) return NOT_RESOLVED; // also keeps timestamps strings
  const plain = s.includes('_') ? s.replaceAll('_', '') : s;
  const int = parseGoInteger(plain);
  if (int !== undefined) return int;
  if (YAML_STYLE_FLOAT.test(plain)) return finiteOrText(Number(plain));
  return NOT_RESOLVED;
}

/** go-yaml keeps a float too large for float64 (1e400: strconv.ParseFloat fails) as text. */
function finiteOrText(f: number): Resolved {
  return Number.isFinite(f) ? f : NOT_RESOLVED;
}

// js-yaml calls resolve() then construct() on the same text: remember the last answer.
let lastText = '';
let lastValue: Resolved = NOT_RESOLVED;
function resolveCached(s: string): Resolved {
  if (s !== lastText) {
    lastText = s;
    lastValue = resolvePlainScalar(s);
  } else if (typeof lastValue === 'number' && !Number.isFinite(lastValue)) {
    nonFiniteScalars.count++;
  }
  return lastValue;
}

// js-yaml is loaded on first use: the fast reader (fastyaml.ts) reads what opm and the
// renderers write, so `catalog-bot validate` on a real catalog never needs it, and loading it
// is a noticeable part of that command's start-up on both of its threads (README, "Benchmarks").
const require = createRequire(import.meta.url);
let jsYamlModule: typeof JsYaml | undefined;

/** The full YAML reader (js-yaml), loaded the first time it is needed. */
export function jsYaml(): typeof JsYaml {
  return (jsYamlModule ??= require('js-yaml') as typeof JsYaml);
}

let goYamlSchemaValue: JsYaml.Schema | undefined;

/** The schema opm effectively reads YAML with (go-yaml v2 into interface{}), for jsYaml(). */
export function goYamlSchema(): JsYaml.Schema {
  if (goYamlSchemaValue === undefined) {
    const { Schema, Type, types } = jsYaml();
    const goPlainScalar = new Type('tag:yaml.org,2002:go-plain', {
      kind: 'scalar',
      resolve: (data: string | null) => data === null || resolveCached(data) !== NOT_RESOLVED,
      construct: (data: string | null) => (data === null ? null : resolveCached(data)),
    });
    const explicitStr = new Type('tag:yaml.org,2002:str', {
      kind: 'scalar',
      construct: (data: string | null) => data ?? '',
    });
    goYamlSchemaValue = new Schema({
      explicit: [explicitStr, types.seq, types.map],
      implicit: [goPlainScalar, types.merge],
    });
  }
  return goYamlSchemaValue;
}
