// Run the real opm (v1.73.0, shipped beside the project) as the oracle for verdicts.
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll } from 'vitest';

export const OPM = fileURLToPath(new URL('../../../shared/tools/opm/opm', import.meta.url));
export const SHARED_DATA = fileURLToPath(new URL('../../../shared/data/', import.meta.url));

/** Without the oracle (e.g. on GitHub Actions) the differential tests are skipped; .ci/run requires it. */
export const haveOpm = existsSync(OPM);

export interface OpmResult {
  valid: boolean;
  message: string;
}

export function opmValidate(dir: string): OpmResult {
  const r = spawnSync(OPM, ['validate', dir], { encoding: 'utf8', timeout: 60_000 });
  if (r.error) throw r.error;
  const m = /msg="((?:[^"\\]|\\.)*)"/.exec(r.stderr);
  return { valid: r.status === 0, message: m ? goUnquote(`"${m[1]}"`) : r.stderr.trim() };
}

/** Write files (path -> content) into a new temporary directory. */
export function writeTree(files: Record<string, string | Buffer>): string {
  const dir = mkdtempSync(join(tmpdir(), 'catalog-bot-test-'));
  for (const [path, content] of Object.entries(files)) {
    const abs = join(dir, path);
    mkdirSync(dirname(abs), { recursive: true });
    writeFileSync(abs, content);
  }
  return dir;
}

/** Every file below `dir` (path relative to it, with `/`) with its bytes. */
export function readTree(dir: string, prefix = '', out = new Map<string, Buffer>()): Map<string, Buffer> {
  for (const name of readdirSync(dir)) {
    const abs = join(dir, name);
    if (statSync(abs).isDirectory()) readTree(abs, `${prefix}${name}/`, out);
    else out.set(`${prefix}${name}`, readFileSync(abs));
  }
  return out;
}

export function removeTree(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/** The temporary trees of one test file. */
export interface TempTrees {
  /** writeTree, the tree kept for removal. */
  write: (files: Record<string, string | Buffer>) => string;
  /** A new empty directory, kept for removal. */
  dir: () => string;
}

/** Temporary trees removed after the calling file's tests: call it at a test file's top level. */
export function tempTrees(): TempTrees {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach(removeTree));
  return {
    write(files) {
      const dir = writeTree(files);
      dirs.push(dir);
      return dir;
    },
    dir() {
      return this.write({});
    },
  };
}

/** Inverse of strconv.Quote (enough for logrus' quoted msg field). */
export function goUnquote(quoted: string): string {
  const bytes: number[] = [];
  const encoder = new TextEncoder();
  const body = quoted.slice(1, -1);
  const simple: Record<string, string> = { a: '\x07', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v' };
  for (let i = 0; i < body.length; i++) {
    const ch = body[i]!;
    if (ch !== '\\') {
      const cp = body.codePointAt(i)!;
      bytes.push(...encoder.encode(String.fromCodePoint(cp)));
      if (cp > 0xffff) i++;
      continue;
    }
    const esc = body[++i]!;
    const hexLength = { x: 2, u: 4, U: 8 }[esc];
    if (hexLength !== undefined) {
      const value = parseInt(body.slice(i + 1, i + 1 + hexLength), 16);
      bytes.push(...(esc === 'x' ? [value] : encoder.encode(String.fromCodePoint(value))));
      i += hexLength;
    } else {
      bytes.push(...encoder.encode(simple[esc] ?? esc));
    }
  }
  return new TextDecoder().decode(new Uint8Array(bytes));
}

/**
 * The values of a stream of JSON values, as `opm render -o json` writes a catalog (and as
 * rendered catalogs are stored): split at the end of each top-level object or array.
 */
export function jsonStream(text: string): unknown[] {
  const out: unknown[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{' || c === '[') {
      if (depth++ === 0) start = i;
    } else if (c === '}' || c === ']') {
      if (--depth === 0) out.push(JSON.parse(text.slice(start, i + 1)));
    }
  }
  return out;
}
