// What a bundle directory of a pull request may cost (docs/security.md, "Checks are bounded
// work, off the event loop"): a file over the per-file limit is refused unread, and each
// manifest of a bundle within the limits is decoded once per check run, for the bundle check
// and for the release that renders it.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runPrChecksInProcess } from '../src/checks/pr.js';
import { BUNDLE_DIR as DIR, makeBundleRepo, type BundleRepo } from './helpers/bundle-repo.js';

// Every decode of a file, by its size: a manifest's size names it.
const decodedSizes = vi.hoisted(() => [] as number[]);
vi.mock('../src/catalog/fbc/decode.js', async (original) => {
  const real = await original<typeof import('../src/catalog/fbc/decode.js')>();
  return {
    ...real,
    decodeFile: (bytes: Uint8Array, ...rest: unknown[]) => {
      decodedSizes.push(bytes.byteLength);
      return (real.decodeFile as (...a: unknown[]) => ReturnType<typeof real.decodeFile>)(bytes, ...rest);
    },
  };
});

/** A CustomResourceDefinition of about `bytes` bytes: one schema field after another. */
function bigCrd(bytes: number): string {
  const head = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: bigs.example.com
spec:
  group: example.com
  names:
    kind: Big
    plural: bigs
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
`;
  const parts = [head];
  let length = head.length;
  for (let i = 0; length < bytes; i++) {
    const field = `          field${String(i).padStart(8, '0')}:\n            type: string\n            description: The value of this field, as the operator reads it.\n`;
    parts.push(field);
    length += field.length;
  }
  return parts.join('');
}

let made: BundleRepo;
let nearSize = 0;
let overSize = 0;

beforeAll(() => {
  made = makeBundleRepo();
  const near = bigCrd(1.9 * 2 ** 20);
  const over = bigCrd(2.5 * 2 ** 20);
  nearSize = Buffer.byteLength(near);
  overSize = Buffer.byteLength(over);
  made.branch('near-limit', () => writeFileSync(join(made.repo, DIR, 'manifests', 'big.crd.yaml'), near));
  made.branch('over-limit', () => writeFileSync(join(made.repo, DIR, 'manifests', 'big.crd.yaml'), over));
}, 60_000);

afterAll(() => made.cleanup());

describe('a bundle directory is bounded work', () => {
  it('refuses a manifest over 2 MiB unread, naming the file', async () => {
    decodedSizes.length = 0;
    const started = Date.now();
    const result = await runPrChecksInProcess({ repo: made.repo, base: 'main', head: 'over-limit' });
    const check = result.checks.find((c) => c.name === 'catalog-bot/bundle');
    expect(check?.conclusion).toBe('failure');
    expect(check?.findings.map((d) => [d.rule, d.file])).toEqual([
      ['B-SIZE', `${DIR}/manifests/big.crd.yaml`],
    ]);
    expect(check?.findings[0]?.message).toMatch(/over the 2 MiB/);
    expect(decodedSizes).not.toContain(overSize);
    expect(Date.now() - started).toBeLessThan(10_000);
  }, 60_000);

  it('decodes each manifest of a bundle near the limit once, for the check and the release', async () => {
    decodedSizes.length = 0;
    const result = await runPrChecksInProcess({ repo: made.repo, base: 'main', head: 'near-limit' });
    const check = result.checks.find((c) => c.name === 'catalog-bot/bundle');
    expect(check?.conclusion, check?.summary).toBe('success');
    // The release was computed: the bundle was read by both.
    expect(check?.title).toMatch(/the merge needs the catalog update/);
    expect(decodedSizes.filter((n) => n === nearSize)).toHaveLength(1);
  }, 60_000);
});
