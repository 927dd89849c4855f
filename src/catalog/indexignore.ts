// `.indexignore` matching exactly as opm does it (joelanford/ignore on go-git's
// gitignore patterns): every `.indexignore` in the tree contributes patterns scoped to
// its directory, the last matching pattern wins, and `!` re-includes.

interface Pattern {
  domain: string[];
  parts: string[];
  inclusion: boolean;
  dirOnly: boolean;
  isGlob: boolean;
}

export const INDEX_IGNORE = '.indexignore';

/** Parse one `.indexignore` file found in directory `dir` ('' for the root). */
export function parseIndexIgnore(text: string, dir: string): Pattern[] {
  const domain = dir === '' ? [] : dir.split('/');
  const patterns: Pattern[] = [];
  for (const raw of text.split('\n')) {
    let p = raw.trim();
    if (p === '' || p.startsWith('#')) continue;
    let inclusion = false;
    if (p.startsWith('!')) {
      inclusion = true;
      p = p.slice(1);
    }
    let dirOnly = false;
    if (p.endsWith('/')) {
      dirOnly = true;
      p = p.slice(0, -1);
    }
    patterns.push({ domain, parts: p.split('/'), inclusion, dirOnly, isGlob: p.includes('/') });
  }
  return patterns;
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

const compiled = new Map<string, RegExp | null>();

/** Go's filepath.Match for one path element; a malformed pattern matches nothing. */
export function goFilepathMatch(pattern: string, name: string): boolean {
  let re = compiled.get(pattern);
  if (re === undefined) {
    re = compileGoPattern(pattern);
    compiled.set(pattern, re);
  }
  return re !== null && re.test(name);
}

function escapeRegex(c: string): string {
  return c.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}

function compileGoPattern(pattern: string): RegExp | null {
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i] as string;
    if (c === '*') out += '[^/]*';
    else if (c === '?') out += '[^/]';
    else if (c === '\\') {
      i++;
      if (i >= pattern.length) return null;
      out += escapeRegex(pattern[i] as string);
    } else if (c === '[') {
      i++;
      let cls = '';
      if (pattern[i] === '^') {
        cls += '^';
        i++;
      }
      let count = 0;
      while (i < pattern.length && (pattern[i] !== ']' || count === 0)) {
        let lo = pattern[i] as string;
        if (lo === '\\') {
          i++;
          if (i >= pattern.length) return null;
          lo = pattern[i] as string;
        }
        let range = escapeRegex(lo);
        if (pattern[i + 1] === '-' && pattern[i + 2] !== undefined && pattern[i + 2] !== ']') {
          let hi = pattern[i + 2] as string;
          i += 2;
          if (hi === '\\') {
            i++;
            if (i >= pattern.length) return null;
            hi = pattern[i] as string;
          }
          if (hi < lo) return null;
          range += '-' + escapeRegex(hi);
        }
        cls += range;
        count++;
        i++;
      }
      if (i >= pattern.length || count === 0) return null; // unterminated or empty class
      out += `[${cls}]`;
      if (cls === '^') return null;
    } else out += escapeRegex(c);
  }
  try {
    return new RegExp(`^${out}$`, 'su');
  } catch {
    return null;
  }
}
