import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DirectorySource, validateCatalog } from '../src/catalog/index.js';
import { validateCheck } from '../src/checks/validate.js';

const example = (v: string) => fileURLToPath(new URL(`./fixtures/${v}`, import.meta.url));

describe('catalog-bot/validate check', () => {
  it('fails with repository-relative annotations when a root is invalid', async () => {
    const result = validateCheck([
      {
        path: 'catalogs/v4.20',
        report: await validateCatalog(new DirectorySource(example('valid-catalog'))),
      },
      {
        path: 'catalogs/v4.21',
        report: await validateCatalog(new DirectorySource(example('invalid-catalog'))),
      },
    ]);
    expect(result.name).toBe('catalog-bot/validate');
    expect(result.conclusion).toBe('failure');
    expect(result.title).toBe('2 errors in 2 catalogs');
    expect(result.annotations).toContainEqual(
      expect.objectContaining({
        path: 'catalogs/v4.21/example-operator/catalog.yaml',
        line: 15,
        level: 'failure',
        title: 'C-MULTIPLE-HEADS',
      }),
    );
    expect(result.summary).toContain('| `catalogs/v4.20` | valid | 0 | 0 | 1 |');
    expect(result.summary).toContain('| `catalogs/v4.21` | **invalid** | 2 | 0 | 2 |');
  });

  it('succeeds when every root is valid, and says so when nothing changed', async () => {
    const ok = validateCheck([
      {
        path: 'catalogs/v4.20',
        report: await validateCatalog(new DirectorySource(example('valid-catalog'))),
      },
    ]);
    expect(ok.conclusion).toBe('success');
    expect(ok.annotations).toEqual([]);
    const none = validateCheck([]);
    expect(none).toMatchObject({ conclusion: 'success', title: 'No catalog changed' });
  });
});
