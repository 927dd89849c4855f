// `.indexignore` matching exactly as opm does it (joelanford/ignore on go-git's
// gitignore patterns): every `.indexignore` in the tree contributes patterns scoped to
// its directory, the last matching pattern wins, and `!` re-includes.
import { goTrimSpace } from '../go/gostrings.js';

interface Pattern {
  domain: string[];
  parts: string[];
  inclusion: boolean;
  dirOnly: boolean;
  isGlob: boolean;
}

export const INDEX_IGNORE = '.indexignore';

/** bufio.Scanner's default limit: opm fails on a longer line ("token too long"). */
export const MAX_INDEX_IGNORE_LINE = 64 * 1024;

/**
 * The largest `.indexignore` the bot reads. opm has no such limit, but real ones are a few
 * lines, and a bigger one fails the catalog unread rather than cost memory (docs/security.md).
 */
export const MAX_INDEX_IGNORE_SIZE = 1024 * 1024;

/**
 * Parse one `.indexignore` file found in directory `dir` ('' for the root), line by line as
 * joelanford/ignore does: split at '\n', `strings.TrimSpace` (not JavaScript's trim(), which
 * also strips U+FEFF and keeps U+0085: see docs/security.md), skip blanks and `#` lines,
 * then go-git's ParsePattern.
 */
export function parseIndexIgnore(text: string, dir: string): Pattern[] {
  const domain = dir === '' ? [] : dir.split('/');
  const patterns: Pattern[] = [];
  for (const raw of text.split('\n')) {
    const line = goTrimSpace(raw);
    if (line === '' || line.startsWith('#')) continue;
    let p = line;
    let inclusion = false;
    if (p.startsWith('!')) {
      inclusion = true;
      p = p.slice(1);
    }
    if (!p.endsWith('\\ ')) p = p.replace(/ +$/, '');
    let dirOnly = false;
    if (p.endsWith('/')) {
      dirOnly = true;
      p = p.slice(0, -1);
    }
    patterns.push({ domain, parts: p.split('/'), inclusion, dirOnly, isGlob: p.includes('/') });
  }
  return patterns;
}

/**
 * Why opm cannot use this `.indexignore` as the bot reads it, if so: a line over bufio.Scanner's
 * limit makes opm fail, and bytes that are not UTF-8 are compared raw by Go but would be
 * replaced here, so the bot could not tell which files opm serves (docs/security.md).
 */
export function indexIgnoreProblem(data: Buffer): string | undefined {
  let start = 0;
  while (start <= data.length) {
    let end = data.indexOf(0x0a, start);
    if (end === -1) end = data.length;
    if (end - start >= MAX_INDEX_IGNORE_LINE) {
      return `a line is ${end - start} bytes long; opm stops at ${MAX_INDEX_IGNORE_LINE - 1} (bufio.Scanner: token too long)`;
    }
    start = end + 1;
  }
  try {
    new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(data);
  } catch {
    return 'not valid UTF-8; opm compares such bytes raw, so the bot cannot tell which files it ignores';
  }
  return undefined;
}

export class IndexIgnore {
  constructor(private readonly patterns: Pattern[]) {}

  /** Is this file (slash path relative to the root) ignored? */
  ignores(path: string): boolean {
    if (this.patterns.length === 0) return false;
    const parts = path.split('/');
    for (let i = this.patterns.length - 1; i >= 0; i--) {
      const result = matchPattern(this.patterns[i] as Pattern, parts, false);
      if (result !== undefined) return !result;
    }
    return false;
  }
}

/** true = include, false = exclude, undefined = no match (go-git pattern.Match). */
function matchPattern(p: Pattern, path: string[], isDir: boolean): boolean | undefined {
  if (path.length <= p.domain.length) return undefined;
  for (let i = 0; i < p.domain.length; i++) if (path[i] !== p.domain[i]) return undefined;
  const rest = path.slice(p.domain.length);
  const matched = p.isGlob ? globMatch(p, rest, isDir) : simpleNameMatch(p, rest, isDir);
  if (!matched) return undefined;
  return p.inclusion;
}

function simpleNameMatch(p: Pattern, path: string[], isDir: boolean): boolean {
  for (let i = 0; i < path.length; i++) {
    if (!goFilepathMatch(p.parts[0] ?? '', path[i] as string)) continue;
    if (p.dirOnly && !isDir && i === path.length - 1) return false;
    return true;
  }
  return false;
}

function globMatch(p: Pattern, pathIn: string[], isDir: boolean): boolean {
  let path = pathIn;
  let matched = false;
  let canTraverse = false;
  for (let i = 0; i < p.parts.length; i++) {
    const part = p.parts[i] as string;
    if (part === '') {
      canTraverse = false;
      continue;
    }
    if (part === '**') {
      if (i === p.parts.length - 1) break;
      canTraverse = true;
      continue;
    }
    if (part.includes('**')) return false;
    if (path.length === 0) return false;
    if (canTraverse) {
      canTraverse = false;
      while (path.length > 0) {
        const e = path[0] as string;
        path = path.slice(1);
        if (goFilepathMatch(part, e)) {
          matched = true;
          break;
        } else if (path.length === 0) {
          matched = false;
        }
      }
    } else {
      if (!goFilepathMatch(part, path[0] as string)) return false;
      matched = true;
      path = path.slice(1);
    }
  }
  if (matched && p.dirOnly && !isDir && path.length === 0) matched = false;
  return matched;
}

/**
 * Go's filepath.Match (Go 1.16 and later, on Unix) for one path element, ported step by step:
 * a malformed pattern matches nothing (go-git treats the error as no match), and Go's idea of
 * malformed is its own (`[]a]`, `[-a]`, `[a-]` are errors; `[z-a]` is an empty range, not one).
 * Works on code points, which equals Go's byte comparison for valid UTF-8.
 */
export function goFilepathMatch(pattern: string, name: string): boolean {
  const pat = codePoints(pattern);
  const s = Array.from(name);
  let p = 0;
  let at = 0;
  chunks: while (p < pat.length) {
    let star = false;
    while (p < pat.length && pat[p] === '*') {
      p++;
      star = true;
    }
    const end = chunkEnd(pat, p);
    if (star && end === p) return !s.slice(at).includes('/');
    const start = p;
    p = end;
    const first = matchChunk(pat, start, end, s, at);
    if (first >= 0 && (first === s.length || p < pat.length)) {
      at = first;
      continue;
    }
    if (first === BAD) return false;
    if (star) {
      for (let i = at; i < s.length && s[i] !== '/'; i++) {
        const next = matchChunk(pat, start, end, s, i + 1);
        if (next >= 0) {
          if (p === pat.length && next < s.length) continue;
          at = next;
          continue chunks;
        }
        if (next === BAD) return false;
      }
    }
    // Go checks the rest of the pattern before answering false; either way nothing matches.
    return false;
  }
  return at === s.length;
}

const patternCache = new Map<string, string[]>();

function codePoints(pattern: string): string[] {
  let cp = patternCache.get(pattern);
  if (cp === undefined) {
    if (patternCache.size > 4096) patternCache.clear();
    cp = Array.from(pattern);
    patternCache.set(pattern, cp);
  }
  return cp;
}

/** Go's scanChunk: where the chunk starting at `from` (after its stars) ends. */
function chunkEnd(pat: string[], from: number): number {
  let inRange = false;
  let i = from;
  for (; i < pat.length; i++) {
    const c = pat[i];
    if (c === '\\') {
      if (i + 1 < pat.length) i++;
    } else if (c === '[') inRange = true;
    else if (c === ']') inRange = false;
    else if (c === '*' && !inRange) break;
  }
  return i;
}

const FAILED = -1;
const BAD = -2;

/** Go's matchChunk on pat[from, to) against s from `at`: the index after the match, FAILED or BAD. */
function matchChunk(pat: string[], from: number, to: number, s: string[], at: number): number {
  let c = from;
  let i = at;
  let failed = false;
  while (c < to) {
    if (!failed && i >= s.length) failed = true;
    const ch = pat[c] as string;
    if (ch === '[') {
      let r = -1;
      if (!failed) r = (s[i++] as string).codePointAt(0) as number;
      c++;
      let negated = false;
      if (c < to && pat[c] === '^') {
        negated = true;
        c++;
      }
      let match = false;
      let nrange = 0;
      for (;;) {
        if (c < to && pat[c] === ']' && nrange > 0) {
          c++;
          break;
        }
        const lo = getEsc(pat, c, to);
        if (lo === undefined) return BAD;
        c = lo.next;
        let hi = lo.rune;
        if (pat[c] === '-') {
          const h = getEsc(pat, c + 1, to);
          if (h === undefined) return BAD;
          c = h.next;
          hi = h.rune;
        }
        if (lo.rune <= r && r <= hi) match = true;
        nrange++;
      }
      if (match === negated) failed = true;
    } else if (ch === '?') {
      if (!failed) {
        if (s[i] === '/') failed = true;
        i++;
      }
      c++;
    } else {
      if (ch === '\\') {
        c++;
        if (c >= to) return BAD;
      }
      if (!failed) {
        if (pat[c] !== s[i]) failed = true;
        i++;
      }
      c++;
    }
  }
  return failed ? FAILED : i;
}

/** A possibly escaped character of a class; undefined where Go says ErrBadPattern. */
function getEsc(pat: string[], at: number, to: number): { rune: number; next: number } | undefined {
  let i = at;
  if (i >= to || pat[i] === '-' || pat[i] === ']') return undefined;
  if (pat[i] === '\\') {
    i++;
    if (i >= to) return undefined;
  }
  const rune = (pat[i] as string).codePointAt(0) as number;
  i++;
  if (i >= to) return undefined;
  return { rune, next: i };
}
