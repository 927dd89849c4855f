// The one tar module (src/publish/tar.ts): what the writer writes, the reader reads back,
// and system tar agrees with both; a header the reader cannot move past is an error.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createTar, readTar, TarFormatError, treeEntries } from '../src/publish/tar.js';

describe('tar', () => {
  it('reads back what it writes: paths past 100 bytes, modes, directories, in order', () => {
    const long = `manifests/${'x'.repeat(150)}/${'y'.repeat(120)}.yaml`;
    const files = new Map([
      ['metadata/annotations.yaml', Buffer.from('annotations: {}\n')],
      [long, Buffer.from('kind: X\n')],
      ['manifests/csv.yaml', Buffer.from('kind: ClusterServiceVersion\n')],
    ]);
    const tar = createTar(treeEntries(files), { mtime: 1_700_000_000 });
    const items = readTar(tar);
    expect(items.map((i) => [i.path, i.type, i.mode.toString(8)])).toEqual([
      ['manifests', 'dir', '755'],
      ['manifests/csv.yaml', 'file', '644'],
      [`manifests/${'x'.repeat(150)}`, 'dir', '755'],
      [long, 'file', '644'],
      ['metadata', 'dir', '755'],
      ['metadata/annotations.yaml', 'file', '644'],
    ]);
    for (const i of items.filter((x) => x.type === 'file'))
      expect(i.data.equals(files.get(i.path)!)).toBe(true);
    // GNU tar lists the same names and the fixed time.
    const listing = spawnSync('tar', ['-tv', '--full-time', '--numeric-owner'], {
      input: tar,
      encoding: 'utf8',
    });
    expect(listing.status).toBe(0);
    expect(listing.stdout).toContain('2023-11-14 22:13:20');
    expect(
      listing.stdout
        .trim()
        .split('\n')
        .map((l) => l.split(/\s+/).pop()),
    ).toEqual(items.map((i) => (i.type === 'dir' ? `${i.path}/` : i.path)));
  });

  it('reads what GNU tar writes: long names and symlink targets, hard links', () => {
    const dir = mkdtempSync(join(tmpdir(), 'catalog-bot-tar-'));
    try {
      const deep = `${'d'.repeat(120)}/${'f'.repeat(110)}`;
      mkdirSync(join(dir, 'in', 'd'.repeat(120)), { recursive: true });
      writeFileSync(join(dir, 'in', deep), 'data');
      symlinkSync(`${'t'.repeat(150)}`, join(dir, 'in', 'link'));
      const made = spawnSync('tar', ['--format=gnu', '-cf', join(dir, 'a.tar'), '-C', join(dir, 'in'), '.'], {
        encoding: 'utf8',
      });
      expect(made.status).toBe(0);
      const items = readTar(readFileSync(join(dir, 'a.tar')));
      const byPath = new Map(items.map((i) => [i.path.replace(/^\.\//, ''), i]));
      expect(byPath.get(deep)).toMatchObject({ type: 'file' });
      expect(byPath.get(deep)!.data.toString()).toBe('data');
      expect(byPath.get('link')).toMatchObject({ type: 'symlink', link: 't'.repeat(150) });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a header whose size would read the same header forever', () => {
    const header = Buffer.alloc(1024);
    header.write('manifests/a.yaml', 0, 'ascii');
    header.write('-1750\0', 124, 'ascii'); // parseInt(..., 8) reads -1000
    header.write('0', 156, 'ascii');
    expect(() => readTar(header)).toThrow(TarFormatError);
  });
});
