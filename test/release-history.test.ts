// `catalog-bot release` against the real release history of community-operators-prod: for
// every bundle commit -> catalog commit pair, the repository state before the catalog
// commit is rebuilt in a temp dir (the snapshot, with the patches of that commit and of
// every newer one reversed), the command is run on the bundle directory, and every
// catalog file must equal the catalog commit's byte for byte, the templates equal as YAML
// (byte for byte where the release bot only appended to them).
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { parse } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { SHARED_DATA } from './helpers/oracle.js';
import { cliCommand } from './helpers/cli.js';

const releaseCommand = cliCommand('release');

const REAL = join(SHARED_DATA, 'real-repo');
const SNAPSHOT = join(REAL, 'community-operators-prod');
const HISTORY = join(REAL, 'history');

/**
 * Each release, newest first per package, with the commits of its package's catalog chain
 * that came after it and are not releases listed before it (newest first).
 */
const RELEASES: { pkg: string; version: string; newer: string[] }[] = [
  { pkg: 'clusterpulse', version: '1.0.2', newer: ['promote-v4.22'] },
  { pkg: 'clusterpulse', version: '1.0.1', newer: [] },
  { pkg: 'rabbitmq-messaging-topology-operator', version: '1.19.3', newer: ['promote-v4.22'] },
  { pkg: 'rabbitmq-messaging-topology-operator', version: '1.19.2', newer: [] },
  { pkg: 'jumpstarter-operator', version: '0.9.0', newer: [] },
  { pkg: 'jumpstarter-operator', version: '0.9.0-rc.2', newer: [] },
  { pkg: 'dotvirt-operator', version: '0.0.32', newer: [] },
  { pkg: 'dotvirt-operator', version: '0.0.29', newer: [] },
  { pkg: 'visionone-containersecurity', version: '0.0.5', newer: ['promote-v4.21'] },
  { pkg: 'visionone-containersecurity', version: '0.0.4', newer: [] },
];

const made: string[] = [];
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

/** The package's part of the snapshot, in a fresh temp dir. */
function copyPackage(pkg: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'release-history-'));
  made.push(dir);
  cpSync(join(SNAPSHOT, 'operators', pkg), join(dir, 'operators', pkg), { recursive: true });
  for (const v of readdirSync(join(SNAPSHOT, 'catalogs'))) {
    const from = join(SNAPSHOT, 'catalogs', v, pkg);
    if (existsSync(from)) cpSync(from, join(dir, 'catalogs', v, pkg), { recursive: true });
  }
  return dir;
}

/** The patch files of one commit of the chain: a promotion, or a release (catalog + template). */
function patchesOf(pkg: string, commit: string): string[] {
  const names = commit.startsWith('promote-')
    ? [`${pkg}-${commit}.patch`]
    : [`${pkg}-${commit}-catalog.patch`, `${pkg}-${commit}-template.patch`];
  return names.map((n) => join(HISTORY, n)).filter((p) => existsSync(p));
}

function reverse(dir: string, patch: string): void {
  const run = spawnSync('git', ['apply', '-R', '--whitespace=nowarn', patch], { cwd: dir, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`git apply -R ${patch}: ${run.stderr}`);
}

/** The files a release touches: the package's catalogs and templates. */
function releaseFiles(dir: string, pkg: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const v of readdirSync(join(dir, 'catalogs'))) {
    const p = join('catalogs', v, pkg, 'catalog.yaml');
    if (existsSync(join(dir, p))) out.set(p, readFileSync(join(dir, p), 'utf8'));
  }
  const templates = join('operators', pkg, 'catalog-templates');
  for (const t of readdirSync(join(dir, templates)))
    out.set(`${templates}/${t}`, readFileSync(join(dir, templates, t), 'utf8'));
  return out;
}

async function release(dir: string, bundle: string): Promise<{ code: number; output: string }> {
  let output = '';
  const sink = new Writable({
    write(chunk, _enc, done) {
      output += String(chunk);
      done();
    },
  });
  const code = await releaseCommand([bundle, '--repo', dir, '--format', 'json'], sink);
  return { code, output };
}

/** Put the files a release touches back as they were (a release only writes those). */
function restore(dir: string, pkg: string, files: Map<string, string>): void {
  for (const p of releaseFiles(dir, pkg).keys()) if (!files.has(p)) rmSync(join(dir, p));
  for (const [p, text] of files) writeFileSync(join(dir, p), text);
}

describe('catalog-bot release reproduces the real release history', () => {
  // One copy per package: its releases are checked newest first, each from the state
  // the previous one left (the files the release wrote are put back first).
  const dirs = new Map<string, string>();
  for (const { pkg, version, newer } of RELEASES) {
    it(`${pkg} ${version}`, async () => {
      let dir = dirs.get(pkg);
      if (!dir) {
        dirs.set(pkg, (dir = copyPackage(pkg)));
        for (const commit of newer) for (const p of patchesOf(pkg, commit)) reverse(dir, p);
      }
      const expected = releaseFiles(dir, pkg);
      const own = patchesOf(pkg, version);
      expect(own.length).toBe(2);
      for (const p of own) reverse(dir, p);
      const before = releaseFiles(dir, pkg);
      // The release bot only appended to the template unless its patch removes lines.
      const templatePatch = readFileSync(own[1]!, 'utf8');
      const onlyAppended = !/^-(?!--)/m.test(templatePatch);

      const { code, output } = await release(dir, `operators/${pkg}/${version}`);
      expect(output).toContain('"released": true');
      expect(code).toBe(0);
      const after = releaseFiles(dir, pkg);
      restore(dir, pkg, before);

      const catalogs = [...expected.keys()].filter((p) => p.startsWith('catalogs/'));
      // Every catalog the commit changed changed, and no other.
      expect([...after.keys()].filter((p) => p.startsWith('catalogs/')).sort()).toEqual(catalogs.sort());
      for (const p of catalogs) {
        if (after.get(p) !== expected.get(p))
          expect.fail(
            `${p} differs from the catalog commit (${before.get(p) === expected.get(p) ? 'the commit left it alone' : 'the commit changed it'})`,
          );
      }
      for (const [p, text] of expected) {
        if (!p.startsWith('operators/')) continue;
        if (onlyAppended || text === before.get(p)) expect(after.get(p), p).toBe(text);
        else expect(parse(after.get(p)!), p).toEqual(parse(text));
      }
    });
  }
});
