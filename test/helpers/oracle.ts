// Run the real opm (v1.73.0, shipped beside the project) as the oracle for verdicts.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

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
  return { valid: r.status === 0, message: m ? (JSON.parse(`"${m[1]}"`) as string) : r.stderr.trim() };
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

export function removeTree(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}
