// Write FBC objects exactly as `opm alpha render-template -o yaml|json` does
// (operator-registry alpha/declcfg/write.go): objects grouped by package, channels and
// bundles sorted by name, then other schemas and deprecations, then package-less blobs.
// JSON is Go's encoder with four-space indent and no HTML escaping; YAML is
// sigs.k8s.io/yaml JSONToYAML, i.e. go-yaml v2's Marshal of the JSON value, a document
// each, after a `---` line. The YAML emitter below is a port of the parts of go-yaml v2
// (v2.4.3, libyaml's emitterc.go) that block mappings, sequences and scalars reach.
import { resolvePlainScalar } from '../fbc/yaml11.js';
import { goFormatFloat } from '../go/gofloat.js';
import { goJsonEncode, type GoMap, type RawJson } from '../go/gojsonencode.js';
import { goStringCompare } from '../go/gostrings.js';

export type JsonObject = Record<string, unknown>;
export type OutputFormat = 'json' | 'yaml';

/** One FBC object ready to write: its meta fields and its JSON, fields in Go's order. */
export interface FbcObject {
  schema: string;
  package: string;
  name: string;
  value: JsonObject | RawJson | GoMap;
}

/** A declarative config as the writer sees it (declcfg.DeclarativeConfig). */
export interface OutputConfig {
  packages: FbcObject[];
  channels: FbcObject[];
  bundles: FbcObject[];
  others: FbcObject[];
  deprecations: FbcObject[];
}

export function emptyOutput(): OutputConfig {
  return { packages: [], channels: [], bundles: [], others: [], deprecations: [] };
}

/** declcfg.WriteJSON / WriteYAML. */
export function writeConfig(cfg: OutputConfig, format: OutputFormat): string {
  const encode = format === 'json' ? encodeJson : encodeYaml;
  const groups = new Map<string, OutputConfig>();
  const group = (name: string): OutputConfig => {
    let g = groups.get(name);
    if (!g) groups.set(name, (g = emptyOutput()));
    return g;
  };
  // An object without a package is dropped, except blobs of other schemas.
  for (const p of cfg.packages) if (p.name) group(p.name).packages.push(p);
  for (const c of cfg.channels) if (c.package) group(c.package).channels.push(c);
  for (const b of cfg.bundles) if (b.package) group(b.package).bundles.push(b);
  const rootOthers: FbcObject[] = [];
  for (const o of cfg.others) (o.package ? group(o.package).others : rootOthers).push(o);
  for (const d of cfg.deprecations) if (d.package) group(d.package).deprecations.push(d);

  const out: string[] = [];
  const byName = (a: FbcObject, b: FbcObject): number => goStringCompare(a.name, b.name);
  for (const name of [...groups.keys()].sort(goStringCompare)) {
    const g = groups.get(name)!;
    for (const p of g.packages) out.push(encode(p.value));
    for (const c of [...g.channels].sort(byName)) out.push(encode(c.value));
    for (const b of [...g.bundles].sort(byName)) out.push(encode(b.value));
    // sort.SliceStable by schema; Array.prototype.sort is stable too.
    for (const o of [...g.others].sort((a, b) => goStringCompare(a.schema, b.schema)))
      out.push(encode(o.value));
    for (const d of g.deprecations) out.push(encode(d.value));
  }
  for (const o of rootOthers) out.push(encode(o.value));
  return out.join('');
}

/** jsonEncoder.Encode of write.go. */
export function encodeJson(value: unknown): string {
  // declcfg.WriteJSON: a json.Encoder with SetIndent("", "    ") and SetEscapeHTML(false)
  // writing structs (the caller's objects are in Go's field order).
  return goJsonEncode(value, { sortKeys: false, escapeHtml: false, indent: '    ' });
}

/** yamlEncoder.Encode of write.go: `---` and the sigs.k8s.io/yaml form of the JSON. */
export function encodeYaml(value: unknown): string {
  return '---\n' + goYamlMarshal(asYamlReadsJson(JSON.parse(JSON.stringify(value))));
}

/**
 * JSONToYAML parses the JSON text with go-yaml, which takes a raw U+0085 (NEL, which
 * Go's JSON encoder leaves unescaped) inside a quoted string as a line break and folds it.
 */
function asYamlReadsJson(v: unknown): unknown {
  const fold = (s: string): string =>
    s.includes('\u0085')
      ? s.replace(/[ \t]*(?:\u0085[ \t]*)+/g, (m) => {
          const breaks = m.split('\u0085').length - 1;
          return breaks === 1 ? ' ' : '\n'.repeat(breaks - 1);
        })
      : s;
  if (typeof v === 'string') return fold(v);
  if (Array.isArray(v)) return v.map(asYamlReadsJson);
  if (typeof v === 'object' && v !== null) {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [fold(k), asYamlReadsJson(x)]));
  }
  return v;
}

// ---- go-yaml v2 Marshal of a JSON value

/** go-yaml v2 `yaml.Marshal` of a value decoded from JSON (maps, slices, scalars). */
export function goYamlMarshal(value: unknown): string {
  const e = new Emitter();
  e.emitNode(value, true, false, false, false);
  // Document end (implicit), then stream end.
  e.writeIndent();
  if (e.openEnded) {
    e.writeIndicator('...', true, false, false);
    e.writeIndent();
  }
  return e.out.join('');
}

type Style = 'plain' | 'single' | 'double' | 'literal';

interface ScalarData {
  value: string[];
  bytes: number;
  multiline: boolean;
  flowPlainAllowed: boolean;
  blockPlainAllowed: boolean;
  singleQuotedAllowed: boolean;
  blockAllowed: boolean;
}

const isBreak = (c: string | undefined): boolean =>
  c === '\r' || c === '\n' || c === '\u0085' || c === '\u2028' || c === '\u2029';
const isSpace = (c: string | undefined): boolean => c === ' ';
const isBlank = (c: string | undefined): boolean => c === ' ' || c === '\t';
const isBlankZ = (c: string | undefined): boolean =>
  isBlank(c) || isBreak(c) || c === '\0' || c === undefined;

/** libyaml is_printable (on the UTF-8 bytes): note that characters above U+FFFF are not. */
function isPrintable(c: string): boolean {
  const cp = c.codePointAt(0)!;
  return (
    cp === 0x0a ||
    (cp >= 0x20 && cp <= 0x7e) ||
    (cp >= 0xa0 && cp <= 0xd7ff) ||
    (cp >= 0xe000 && cp <= 0xfffd && cp !== 0xfeff)
  );
}

function analyzeScalar(text: string): ScalarData {
  const value = [...text];
  const data: ScalarData = {
    value,
    bytes: Buffer.byteLength(text),
    multiline: false,
    flowPlainAllowed: false,
    blockPlainAllowed: true,
    singleQuotedAllowed: true,
    blockAllowed: false,
  };
  if (value.length === 0) return data;

  let blockIndicators = false;
  let flowIndicators = false;
  let lineBreaks = false;
  let specialCharacters = false;
  let leadingSpace = false;
  let leadingBreak = false;
  let trailingSpace = false;
  let trailingBreak = false;
  let breakSpace = false;
  let spaceBreak = false;
  let previousSpace = false;
  let previousBreak = false;

  if (text.startsWith('---') || text.startsWith('...')) {
    blockIndicators = true;
    flowIndicators = true;
  }
  let precededByWhitespace = true;
  for (let i = 0; i < value.length; i++) {
    const c = value[i]!;
    const followedByWhitespace = i + 1 >= value.length || isBlank(value[i + 1]);
    if (i === 0) {
      switch (c) {
        case '#':
        case ',':
        case '[':
        case ']':
        case '{':
        case '}':
        case '&':
        case '*':
        case '!':
        case '|':
        case '>':
        case "'":
        case '"':
        case '%':
        case '@':
        case '`':
          flowIndicators = true;
          blockIndicators = true;
          break;
        case '?':
        case ':':
          flowIndicators = true;
          if (followedByWhitespace) blockIndicators = true;
          break;
        case '-':
          if (followedByWhitespace) {
            flowIndicators = true;
            blockIndicators = true;
          }
          break;
      }
    } else {
      switch (c) {
        case ',':
        case '?':
        case '[':
        case ']':
        case '{':
        case '}':
          flowIndicators = true;
          break;
        case ':':
          flowIndicators = true;
          if (followedByWhitespace) blockIndicators = true;
          break;
        case '#':
          if (precededByWhitespace) {
            flowIndicators = true;
            blockIndicators = true;
          }
          break;
      }
    }
    if (!isPrintable(c)) specialCharacters = true;
    if (isSpace(c)) {
      if (i === 0) leadingSpace = true;
      if (i === value.length - 1) trailingSpace = true;
      if (previousBreak) breakSpace = true;
      previousSpace = true;
      previousBreak = false;
    } else if (isBreak(c)) {
      lineBreaks = true;
      if (i === 0) leadingBreak = true;
      if (i === value.length - 1) trailingBreak = true;
      if (previousSpace) spaceBreak = true;
      previousSpace = false;
      previousBreak = true;
    } else {
      previousSpace = false;
      previousBreak = false;
    }
    precededByWhitespace = isBlankZ(c);
  }

  data.multiline = lineBreaks;
  data.flowPlainAllowed = true;
  data.blockPlainAllowed = true;
  data.singleQuotedAllowed = true;
  data.blockAllowed = true;
  if (leadingSpace || leadingBreak || trailingSpace || trailingBreak) {
    data.flowPlainAllowed = false;
    data.blockPlainAllowed = false;
  }
  if (trailingSpace) data.blockAllowed = false;
  if (breakSpace) {
    data.flowPlainAllowed = false;
    data.blockPlainAllowed = false;
    data.singleQuotedAllowed = false;
  }
  if (spaceBreak || specialCharacters) {
    data.flowPlainAllowed = false;
    data.blockPlainAllowed = false;
    data.singleQuotedAllowed = false;
    data.blockAllowed = false;
  }
  if (lineBreaks) {
    data.flowPlainAllowed = false;
    data.blockPlainAllowed = false;
  }
  if (flowIndicators) data.flowPlainAllowed = false;
  if (blockIndicators) data.blockPlainAllowed = false;
  return data;
}

const BASE60_FLOAT = /^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$/;
const TIMESTAMP =
  /^([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})(?:(?:([Tt])| )([0-9]{1,2}):([0-9]{1,2}):([0-9]{1,2})(?:\.[0-9]+)?(Z|[-+][0-9]{2}:[0-9]{2})?)?$/;

/** go-yaml v2 parseTimestamp: the time.Parse layouts it tries. */
function isTimestamp(s: string): boolean {
  const m = TIMESTAMP.exec(s);
  if (!m) return false;
  const [, y, mo, d, t, h, mi, sec, zone] = m;
  if (h !== undefined) {
    // RFC 3339 layouts need a zone; the space-separated layout takes none.
    if (t !== undefined ? zone === undefined : zone !== undefined) return false;
    if (Number(h) > 23 || Number(mi) > 59 || Number(sec) > 59) return false;
  }
  const month = Number(mo);
  const day = Number(d);
  if (month < 1 || month > 12 || day < 1) return false;
  const days = new Date(Date.UTC(Number(y), month, 0)).getUTCDate();
  return day <= days;
}

/** Would go-yaml v2 read this text, unquoted, as something other than a string? */
function resolvesToNonString(s: string): boolean {
  if (s === '<<') return true; // merge key
  if (typeof resolvePlainScalar(s) !== 'symbol') return true;
  const c = s.charCodeAt(0);
  const digitOrSign = (c >= 0x30 && c <= 0x39) || c === 0x2b || c === 0x2d;
  return digitOrSign && isTimestamp(s);
}

/** A float as go-yaml writes it: YAML's names for NaN and the infinities, else strconv's 'g'. */
function goFloat(f: number): string {
  if (Number.isNaN(f)) return '.nan';
  if (f === Infinity) return '.inf';
  if (f === -Infinity) return '-.inf';
  return goFormatFloat(f, 'g');
}

function goYamlKeyLess(a: string, b: string): boolean {
  const ar = [...a];
  const br = [...b];
  const isLetter = (c: string): boolean => /\p{L}/u.test(c);
  const isDigit = (c: string | undefined): boolean => c !== undefined && /\p{Nd}/u.test(c);
  const cp = (c: string): number => c.codePointAt(0)!;
  for (let i = 0; i < ar.length && i < br.length; i++) {
    const x = ar[i]!;
    const y = br[i]!;
    if (x === y) continue;
    const al = isLetter(x);
    const bl = isLetter(y);
    if (al && bl) return cp(x) < cp(y);
    if (al || bl) return bl;
    let an = 0n;
    let bn = 0n;
    if (x === '0' || y === '0') {
      for (let j = i - 1; j >= 0 && isDigit(ar[j]); j--) {
        if (ar[j] !== '0') {
          an = 1n;
          bn = 1n;
          break;
        }
      }
    }
    let ai = i;
    for (; ai < ar.length && isDigit(ar[ai]); ai++) an = an * 10n + BigInt(cp(ar[ai]!) - 0x30);
    let bi = i;
    for (; bi < br.length && isDigit(br[bi]); bi++) bn = bn * 10n + BigInt(cp(br[bi]!) - 0x30);
    if (an !== bn) return an < bn;
    if (ai !== bi) return ai < bi;
    return cp(x) < cp(y);
  }
  return ar.length < br.length;
}

/** go-yaml sorts map keys with its keyList.Less (numbers inside keys compare by value). */
export function goYamlSortKeys(keys: string[]): string[] {
  return [...keys].sort((a, b) => (goYamlKeyLess(a, b) ? -1 : goYamlKeyLess(b, a) ? 1 : 0));
}

class Emitter {
  readonly out: string[] = [];
  private column = 0;
  private indent = -1;
  private readonly indents: number[] = [];
  private whitespace = true;
  private indention = true;
  private flowLevel = 0;
  openEnded = false;
  private rootContext = false;
  private simpleKeyContext = false;
  private mappingContext = false;
  private readonly bestIndent = 2;
  private readonly bestWidth = 80;

  private put(c: string): void {
    this.out.push(c);
    this.column++;
  }

  private putBreak(): void {
    this.out.push('\n');
    this.column = 0;
  }

  private writeBreak(c: string): void {
    if (c === '\n') this.putBreak();
    else {
      this.out.push(c);
      this.column = 0;
    }
  }

  writeIndent(): void {
    const indent = Math.max(this.indent, 0);
    if (!this.indention || this.column > indent || (this.column === indent && !this.whitespace)) {
      this.putBreak();
    }
    while (this.column < indent) this.put(' ');
    this.whitespace = true;
    this.indention = true;
  }

  writeIndicator(
    indicator: string,
    needWhitespace: boolean,
    isWhitespace: boolean,
    isIndention: boolean,
  ): void {
    if (needWhitespace && !this.whitespace) this.put(' ');
    for (const c of indicator) this.put(c);
    this.whitespace = isWhitespace;
    this.indention = this.indention && isIndention;
    this.openEnded = false;
  }

  private increaseIndent(flow: boolean, indentless: boolean): void {
    this.indents.push(this.indent);
    if (this.indent < 0) this.indent = flow ? this.bestIndent : 0;
    else if (!indentless) this.indent += this.bestIndent;
  }

  private popIndent(): void {
    this.indent = this.indents.pop()!;
  }

  emitNode(value: unknown, root: boolean, _sequence: boolean, mapping: boolean, simpleKey: boolean): void {
    this.rootContext = root;
    this.mappingContext = mapping;
    this.simpleKeyContext = simpleKey;
    if (Array.isArray(value)) this.emitSequence(value);
    else if (typeof value === 'object' && value !== null) this.emitMapping(value as JsonObject);
    else {
      const [text, style] = scalarText(value);
      this.emitScalar(analyzeScalar(text), style);
    }
  }

  private emitSequence(items: unknown[]): void {
    if (this.flowLevel > 0 || items.length === 0) {
      this.writeIndicator('[', true, true, false);
      this.increaseIndent(true, false);
      this.flowLevel++;
      // Only empty sequences are written in flow style here.
      this.flowLevel--;
      this.popIndent();
      this.writeIndicator(']', false, false, false);
      return;
    }
    this.increaseIndent(false, this.mappingContext && !this.indention);
    for (const item of items) {
      this.writeIndent();
      this.writeIndicator('-', true, false, true);
      this.emitNode(item, false, true, false, false);
    }
    this.popIndent();
  }

  private emitMapping(map: JsonObject): void {
    const keys = goYamlSortKeys(Object.keys(map));
    if (this.flowLevel > 0 || keys.length === 0) {
      this.writeIndicator('{', true, true, false);
      this.increaseIndent(true, false);
      this.popIndent();
      this.writeIndicator('}', false, false, false);
      return;
    }
    this.increaseIndent(false, false);
    for (const key of keys) {
      this.writeIndent();
      const keyData = analyzeScalar(key);
      const [, keyStyle] = scalarText(key);
      if (!keyData.multiline && keyData.bytes <= 128) {
        this.rootContext = false;
        this.mappingContext = true;
        this.simpleKeyContext = true;
        this.emitScalar(keyData, keyStyle);
        this.writeIndicator(':', false, false, false);
      } else {
        this.writeIndicator('?', true, false, true);
        this.rootContext = false;
        this.mappingContext = true;
        this.simpleKeyContext = false;
        this.emitScalar(keyData, keyStyle);
        this.writeIndent();
        this.writeIndicator(':', true, false, true);
      }
      this.emitNode(map[key], false, false, true, false);
    }
    this.popIndent();
  }

  private emitScalar(data: ScalarData, requested: Style): void {
    let style = requested;
    if (this.simpleKeyContext && data.multiline) style = 'double';
    if (style === 'plain') {
      if (
        (this.flowLevel > 0 && !data.flowPlainAllowed) ||
        (this.flowLevel === 0 && !data.blockPlainAllowed)
      ) {
        style = 'single';
      }
      if (data.value.length === 0 && (this.flowLevel > 0 || this.simpleKeyContext)) style = 'single';
    }
    if (style === 'single' && !data.singleQuotedAllowed) style = 'double';
    if (style === 'literal' && (!data.blockAllowed || this.flowLevel > 0 || this.simpleKeyContext)) {
      style = 'double';
    }
    this.increaseIndent(true, false);
    const allowBreaks = !this.simpleKeyContext;
    if (style === 'plain') this.writePlain(data.value, allowBreaks);
    else if (style === 'single') this.writeSingleQuoted(data.value, allowBreaks);
    else if (style === 'double') this.writeDoubleQuoted(data.value, allowBreaks);
    else this.writeLiteral(data.value);
    this.popIndent();
  }

  private writePlain(value: string[], allowBreaks: boolean): void {
    if (!this.whitespace) this.put(' ');
    this.writeFolded(value, allowBreaks, false);
    this.whitespace = false;
    this.indention = false;
    if (this.rootContext) this.openEnded = true;
  }

  private writeSingleQuoted(value: string[], allowBreaks: boolean): void {
    this.writeIndicator("'", true, false, false);
    this.writeFolded(value, allowBreaks, true);
    this.writeIndicator("'", false, false, false);
    this.whitespace = false;
    this.indention = false;
  }

  /**
   * The characters of a plain or single-quoted scalar, the loop libyaml's write_plain and
   * write_single_quoted share: a space past the width becomes a line break (in quotes, never
   * the first or last character), line breaks are kept, and in quotes `'` is doubled.
   */
  private writeFolded(value: string[], allowBreaks: boolean, quoted: boolean): void {
    let spaces = false;
    let breaks = false;
    for (let i = 0; i < value.length; i++) {
      const c = value[i]!;
      if (isSpace(c)) {
        if (
          allowBreaks &&
          !spaces &&
          this.column > this.bestWidth &&
          (!quoted || (i > 0 && i < value.length - 1)) &&
          !isSpace(value[i + 1])
        ) {
          this.writeIndent();
        } else this.put(c);
        spaces = true;
      } else if (isBreak(c)) {
        if (!breaks && c === '\n') this.putBreak();
        this.writeBreak(c);
        this.indention = true;
        breaks = true;
      } else {
        if (breaks) this.writeIndent();
        if (quoted && c === "'") this.put("'");
        this.put(c);
        this.indention = false;
        spaces = false;
        breaks = false;
      }
    }
  }

  private writeDoubleQuoted(value: string[], allowBreaks: boolean): void {
    let spaces = false;
    this.writeIndicator('"', true, false, false);
    // libyaml's is_bom looks at the start of the value whatever the position (a quirk).
    const startsWithBom = value[0] === '\ufeff';
    for (let i = 0; i < value.length; i++) {
      const c = value[i]!;
      if (!isPrintable(c) || startsWithBom || isBreak(c) || c === '"' || c === '\\') {
        this.put('\\');
        const v = c.codePointAt(0)!;
        const short: Record<number, string> = {
          0x00: '0',
          0x07: 'a',
          0x08: 'b',
          0x09: 't',
          0x0a: 'n',
          0x0b: 'v',
          0x0c: 'f',
          0x0d: 'r',
          0x1b: 'e',
          0x22: '"',
          0x5c: '\\',
          0x85: 'N',
          0xa0: '_',
          0x2028: 'L',
          0x2029: 'P',
        };
        const s = short[v];
        if (s !== undefined) this.put(s);
        else {
          const [letter, width] = v <= 0xff ? ['x', 2] : v <= 0xffff ? ['u', 4] : ['U', 8];
          this.put(letter as string);
          for (const d of v
            .toString(16)
            .toUpperCase()
            .padStart(width as number, '0'))
            this.put(d);
        }
        spaces = false;
      } else if (isSpace(c)) {
        if (allowBreaks && !spaces && this.column > this.bestWidth && i > 0 && i < value.length - 1) {
          this.writeIndent();
          if (isSpace(value[i + 1])) this.put('\\');
        } else this.put(c);
        spaces = true;
      } else {
        this.put(c);
        spaces = false;
      }
    }
    this.writeIndicator('"', false, false, false);
    this.whitespace = false;
    this.indention = false;
  }

  private writeLiteral(value: string[]): void {
    this.writeIndicator('|', true, false, false);
    // Block scalar hints: indentation indicator and chomping.
    if (isSpace(value[0]) || isBreak(value[0])) {
      this.writeIndicator(String(this.bestIndent), false, false, false);
    }
    this.openEnded = false;
    let chomp = '';
    if (value.length === 0) chomp = '-';
    else if (!isBreak(value[value.length - 1])) chomp = '-';
    else if (value.length === 1) {
      chomp = '+';
      this.openEnded = true;
    } else if (isBreak(value[value.length - 2])) {
      chomp = '+';
      this.openEnded = true;
    }
    if (chomp) this.writeIndicator(chomp, false, false, false);
    this.putBreak();
    this.indention = true;
    this.whitespace = true;
    let breaks = true;
    for (const c of value) {
      if (isBreak(c)) {
        this.writeBreak(c);
        this.indention = true;
        breaks = true;
      } else {
        if (breaks) this.writeIndent();
        this.put(c);
        this.indention = false;
        breaks = false;
      }
    }
  }
}

/** The text and requested style go-yaml's encoder gives a scalar (encode.go stringv etc.). */
function scalarText(value: unknown): [string, Style] {
  if (value === null || value === undefined) return ['null', 'plain'];
  if (typeof value === 'boolean') return [value ? 'true' : 'false', 'plain'];
  if (typeof value === 'number') {
    // go-yaml decodes JSON integers as int and other numbers as float64.
    if (Number.isInteger(value) && Math.abs(value) < 2 ** 63) {
      return [BigInt(value).toString(), 'plain'];
    }
    return [goFloat(value), 'plain'];
  }
  const s = String(value);
  const canUsePlain = !resolvesToNonString(s) && !BASE60_FLOAT.test(s);
  if (s.includes('\n')) return [s, 'literal'];
  return [s, canUsePlain ? 'plain' : 'double'];
}
