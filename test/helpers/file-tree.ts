// A directory's files as one value, to compare an unpacked image with the files it was built from.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

/** Every file under a directory: relative path -> bytes. */
export function fileTree(dir: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  const walk = (d: string): void => {
    for (const name of readdirSync(d)) {
      const abs = join(d, name);
      if (statSync(abs).isDirectory()) walk(abs);
      else out.set(relative(dir, abs), readFileSync(abs));
    }
  };
  walk(dir);
  return out;
}
