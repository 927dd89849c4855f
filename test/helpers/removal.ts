// Shared by the remove tests: a catalog's blobs, and a git repository's files with their blob
// ids, so "byte-identical" is git's own word for it.
import { decodeFile } from '../../src/catalog/fbc/decode.js';
import type { JsonObject } from '../../src/catalog/templates/write.js';
import { expect } from 'vitest';
import { runCommand } from './cli.js';

type Git = (...args: string[]) => string;

export const remove = (args: string[]) => runCommand('remove', args);

/** `catalog-bot validate` passes every catalog root in `roots` (what a removal must leave). */
export async function expectValidCatalogs(roots: string[]): Promise<void> {
  const valid = await runCommand('validate', roots);
  expect(valid.code, valid.out + valid.err).toBe(0);
}

export const blobsOf = (text: string): JsonObject[] =>
  decodeFile(Buffer.from(text))
    .values.map((v) => v.value as JsonObject)
    .filter((v) => v && typeof v === 'object');

/** Every tracked file with its blob id. */
export function trackedFiles(git: Git): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of git('ls-files', '-s').split('\n')) {
    const m = /^\d+ ([0-9a-f]+) \d\t(.*)$/.exec(line);
    if (m) out.set(m[2]!, m[1]!);
  }
  return out;
}

/** The working tree's files now, with blob ids (deleted files absent). */
export function currentFiles(git: Git): Map<string, string> {
  git('add', '-A');
  const files = trackedFiles(git);
  git('reset', '-q');
  return files;
}
