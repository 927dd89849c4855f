// `catalog-bot impact --format json` on real commits of community-operators-prod: for each,
// the repository state before the commit is rebuilt (the snapshot with that commit's patch
// and every newer one of its package reversed, newest first), the commit's own patch is
// applied forward, and impact runs from the one commit to the other. What it must say is
// read here from the patch itself (entries and edges on its `+` and `-` lines, the default
// channel), and the heads and reachability from the two catalog files with a few lines of
// graph walking of this test's own: never from the command's output.
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { runCommand } from './helpers/cli.js';
import { haveRealRepo, HISTORY, realRepoBefore } from './helpers/ocp-history.js';

interface Edge {
  from: string;
  to: string;
  kind: 'replaces' | 'skips';
}

/** What one catalog file's diff says, per channel. */
interface FileDiff {
  root: string;
  pkg: string;
  created: boolean;
  deleted: boolean;
  defaultChannel: { old: string | null; new: string | null } | null;
  /** channel -> entries and edges on `+` lines (new side) and `-` lines (old side). */
  channels: Map<string, { plus: Set<string>; minus: Set<string>; edgesPlus: Edge[]; edgesMinus: Edge[] }>;
}

/**
 * Walk a `git show` patch of opm-rendered YAML catalogs: an olm.channel's entries are `- name:`
 * items at column 0 with `  replaces:`, `  skips:` / `  - x` under them, and the channel's
 * own `name:` follows its entries (keys are sorted), so what the lines before it declared
 * belongs to that channel.
 */
function readPatch(text: string): FileDiff[] {
  const files: FileDiff[] = [];
  let file: FileDiff | undefined;
  type Side = 'old' | 'new';
  let entry: Record<Side, string | null> = { old: null, new: null };
  let key: Record<Side, string | null> = { old: null, new: null };
  let pending: { side: Side; entry?: string; edge?: Edge }[] = [];
  for (const line of text.split('\n')) {
    const diff = /^diff --git a\/(catalogs\/[^/]+)\/([^/]+)\/[^ ]+ /.exec(line);
    if (diff) {
      file = {
        root: diff[1]!,
        pkg: diff[2]!,
        created: false,
        deleted: false,
        defaultChannel: null,
        channels: new Map(),
      };
      files.push(file);
      continue;
    }
    if (line.startsWith('diff --git')) file = undefined;
    if (!file) continue;
    if (line === '--- /dev/null') file.created = true;
    if (line === '+++ /dev/null') file.deleted = true;
    if (line.startsWith('@@')) {
      expect(pending, 'entries of a hunk without their channel').toEqual([]);
      entry = { old: null, new: null };
      key = { old: null, new: null };
      continue;
    }
    if (line.startsWith('---') || line.startsWith('+++') || !/^[ +-]/.test(line)) continue;
    const mark = line[0]!;
    const body = line.slice(1);
    const sides: Side[] = mark === ' ' ? ['old', 'new'] : mark === '+' ? ['new'] : ['old'];
    const changed = mark !== ' ';
    let m: RegExpExecArray | null;
    if ((m = /^- name: (.+)$/.exec(body))) {
      for (const s of sides) [entry[s], key[s]] = [m[1]!, null];
      if (changed) pending.push({ side: sides[0]!, entry: m[1]! });
    } else if ((m = /^ {2}replaces: (.+)$/.exec(body))) {
      for (const s of sides) {
        key[s] = null;
        if (changed) pending.push({ side: s, edge: { from: entry[s]!, to: m[1]!, kind: 'replaces' } });
      }
    } else if (body === '  skips:') {
      for (const s of sides) key[s] = 'skips';
    } else if ((m = /^ {2}- (.+)$/.exec(body))) {
      for (const s of sides)
        if (key[s] === 'skips' && changed)
          pending.push({ side: s, edge: { from: entry[s]!, to: m[1]!, kind: 'skips' } });
    } else if (/^ {2}\S/.test(body)) {
      for (const s of sides) key[s] = null;
    } else if ((m = /^defaultChannel: (.+)$/.exec(body)) && changed) {
      file.defaultChannel ??= { old: null, new: null };
      file.defaultChannel[sides[0]!] = m[1]!;
    } else if ((m = /^name: (.+)$/.exec(body))) {
      // The channel's own name closes its entries (an olm.bundle's name has no entries before it).
      if (pending.length > 0) {
        const ch = file.channels.get(m[1]!) ?? {
          plus: new Set<string>(),
          minus: new Set<string>(),
          edgesPlus: [],
          edgesMinus: [],
        };
        for (const p of pending) {
          if (p.entry) (p.side === 'new' ? ch.plus : ch.minus).add(p.entry);
          if (p.edge) (p.side === 'new' ? ch.edgesPlus : ch.edgesMinus).push(p.edge);
        }
        file.channels.set(m[1]!, ch);
        pending = [];
      }
      entry = { old: null, new: null };
    } else if (/^\S/.test(body)) {
      entry = { old: null, new: null };
      key = { old: null, new: null };
    }
  }
  expect(pending).toEqual([]);
  return files;
}

/** A channel's entries in a catalog file, read with a YAML parser. */
function channelEntries(
  yamlText: string | undefined,
  channel: string,
): { name: string; replaces?: string; skips?: string[] }[] | undefined {
  if (yamlText === undefined) return undefined;
  for (const doc of parseAllDocuments(yamlText)) {
    const o = doc.toJS() as { schema?: string; name?: string; entries?: { name: string }[] } | null;
    if (o?.schema === 'olm.channel' && o.name === channel) return o.entries ?? [];
  }
  return undefined;
}

/** The one entry no other entry replaces or skips (null unless exactly one). */
function headOf(entries: { name: string; replaces?: string; skips?: string[] }[] | undefined): string | null {
  if (!entries) return null;
  const named = new Set(entries.flatMap((e) => [...(e.replaces ? [e.replaces] : []), ...(e.skips ?? [])]));
  const heads = entries.filter((e) => !named.has(e.name));
  return heads.length === 1 ? heads[0]!.name : null;
}

/** Whether a cluster on `from` can climb to `head`: each step to an entry replacing or skipping it. */
function climbs(
  entries: { name: string; replaces?: string; skips?: string[] }[] | undefined,
  from: string,
  head: string | null,
): boolean {
  if (!entries || head === null || !entries.some((e) => e.name === from)) return false;
  const seen = new Set([from]);
  const todo = [from];
  while (todo.length > 0) {
    const at = todo.pop()!;
    if (at === head) return true;
    for (const e of entries)
      if ((e.replaces === at || e.skips?.includes(at)) && !seen.has(e.name)) {
        seen.add(e.name);
        todo.push(e.name);
      }
  }
  return false;
}

const byName = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
const byEdge = (a: Edge, b: Edge): number =>
  byName(a.from, b.from) || byName(a.to, b.to) || byName(a.kind, b.kind);
const edgeKey = (e: Edge): string => `${e.from}\0${e.to}\0${e.kind}`;
const minus = (xs: Edge[], ys: Edge[]): Edge[] => {
  const drop = new Set(ys.map(edgeKey));
  return xs.filter((e) => !drop.has(edgeKey(e))).sort(byEdge);
};

/** The impact JSON a patch implies, the two catalog files read at `before` and `after`. */
function expectedImpact(
  files: FileDiff[],
  show: (rev: 'before' | 'after', path: string) => string | undefined,
): Record<string, { packages: Record<string, unknown> }> {
  const out: Record<string, { packages: Record<string, unknown> }> = {};
  for (const f of files) {
    const path = `${f.root}/${f.pkg}/catalog.yaml`;
    const [oldText, newText] = [show('before', path), show('after', path)];
    const channels: Record<string, unknown> = {};
    for (const name of [...f.channels.keys()].sort(byName)) {
      const d = f.channels.get(name)!;
      const [oldEntries, newEntries] = [channelEntries(oldText, name), channelEntries(newText, name)];
      const [headOld, headNew] = [headOf(oldEntries), headOf(newEntries)];
      const stranded: string[] = [];
      const newlyReachable: string[] = [];
      for (const e of oldEntries ?? []) {
        const had = climbs(oldEntries, e.name, headOld);
        const has = climbs(newEntries, e.name, headNew);
        if (!newEntries || (had && !has)) stranded.push(e.name);
        else if (!had && has) newlyReachable.push(e.name);
      }
      channels[name] = {
        status: !oldEntries ? 'added' : !newEntries ? 'removed' : 'changed',
        headOld,
        headNew,
        bundlesAdded: [...d.plus].filter((n) => !d.minus.has(n)).sort(byName),
        bundlesRemoved: [...d.minus].filter((n) => !d.plus.has(n)).sort(byName),
        edgesAdded: minus(d.edgesPlus, d.edgesMinus),
        edgesRemoved: minus(d.edgesMinus, d.edgesPlus),
        skipRangeChanged: [],
        stranded: stranded.sort(byName),
        newlyReachable: newlyReachable.sort(byName),
      };
    }
    (out[f.root] ??= { packages: {} }).packages[f.pkg] = {
      status: f.created ? 'added' : f.deleted ? 'removed' : 'changed',
      defaultChannel: f.defaultChannel,
      channels,
    };
  }
  return out;
}

/** One recorded commit: its patch and the newer commits of its package (newest first). */
const COMMITS: { patch: string; newer: string[]; what: string }[] = [
  {
    patch: 'jumpstarter-operator-0.9.0-catalog',
    newer: [],
    what: 'a release of a basic template: 0.9.0 replaces 0.9.0-rc.2 in five identical catalogs',
  },
  {
    patch: 'clusterpulse-1.0.1-catalog',
    newer: ['clusterpulse-promote-v4.22', 'clusterpulse-1.0.2-catalog'],
    what: 'a semver release that also repairs v4.21 (its promotion raced 1.0.0): a new channel and default there',
  },
  {
    patch: 'rabbitmq-messaging-topology-operator-1.19.3-catalog',
    newer: ['rabbitmq-messaging-topology-operator-promote-v4.22'],
    what: 'a release of 1.19.3 to five catalogs',
  },
  {
    patch: 'visionone-containersecurity-promote-v4.21',
    newer: [],
    what: 'a promotion: the package copied into catalogs/v4.21, every channel and entry new',
  },
];

describe.skipIf(!haveRealRepo)(
  'catalog-bot impact --format json on real community-operators-prod commits',
  () => {
    const dirs: string[] = [];
    afterAll(() => {
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
    });

    /** A repository with `before` (the state before the commit) and `after` (the commit applied). */
    function replay(patch: string, newer: string[]) {
      const dir = realRepoBefore([...newer, patch]);
      dirs.push(dir);
      const git = (...args: string[]): string =>
        execFileSync('git', ['-C', dir, '-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], {
          encoding: 'utf8',
          maxBuffer: 1 << 28,
        });
      git('add', '-A');
      git('commit', '-qm', 'before');
      git('tag', 'before');
      git('apply', join(HISTORY, `${patch}.patch`));
      git('add', '-A');
      git('commit', '-qm', 'after');
      git('tag', 'after');
      const show = (rev: string, path: string): string | undefined => {
        try {
          return execFileSync('git', ['-C', dir, 'show', `${rev}:${path}`], {
            encoding: 'utf8',
            stdio: ['ignore', 'pipe', 'ignore'],
            maxBuffer: 1 << 28,
          });
        } catch {
          return undefined;
        }
      };
      return { dir, show };
    }

    const impact = async (dir: string, format: string) => {
      const r = await runCommand('impact', [
        '--repo',
        dir,
        '--base',
        'before',
        '--head',
        'after',
        '--format',
        format,
      ]);
      expect(r.err).toBe('');
      expect(r.code).toBe(0);
      return r.out;
    };

    for (const { patch, newer, what } of COMMITS)
      it(`${patch}: ${what}`, async () => {
        const { dir, show } = replay(patch, newer);
        const files = readPatch(readFileSync(join(HISTORY, `${patch}.patch`), 'utf8'));
        expect(files.length).toBeGreaterThan(0);
        const expected = expectedImpact(files, show);
        const json = JSON.parse(await impact(dir, 'json'));
        expect(json).toEqual({ catalogs: expected });
        // Catalogs the patch changed identically are shown once in the Markdown form.
        const groups = new Set(Object.values(expected).map((r) => JSON.stringify(r)));
        const md = await impact(dir, 'markdown');
        expect(md.match(/^### /gm)).toHaveLength(groups.size);
      });

    it('what the patches say, spelled out: heads, edges and the default channel', async () => {
      const jumpstarter = readPatch(
        readFileSync(join(HISTORY, 'jumpstarter-operator-0.9.0-catalog.patch'), 'utf8'),
      );
      const { dir, show } = replay('jumpstarter-operator-0.9.0-catalog', []);
      const expected = expectedImpact(jumpstarter, show);
      const roots = Object.keys(expected);
      expect(roots).toEqual([
        'catalogs/v4.18',
        'catalogs/v4.19',
        'catalogs/v4.20',
        'catalogs/v4.21',
        'catalogs/v4.22',
      ]);
      const alpha = (
        expected['catalogs/v4.20']!.packages['jumpstarter-operator'] as { channels: Record<string, unknown> }
      ).channels.alpha;
      expect(alpha).toMatchObject({
        headOld: 'jumpstarter-operator.v0.9.0-rc.2',
        headNew: 'jumpstarter-operator.v0.9.0',
        bundlesAdded: ['jumpstarter-operator.v0.9.0'],
        edgesAdded: [
          { from: 'jumpstarter-operator.v0.9.0', to: 'jumpstarter-operator.v0.9.0-rc.2', kind: 'replaces' },
        ],
        stranded: [],
      });
      const md = await impact(dir, 'markdown');
      expect(md).toContain('### `v4.18-v4.22, 5 catalogs`');

      const clusterpulse = readPatch(readFileSync(join(HISTORY, 'clusterpulse-1.0.1-catalog.patch'), 'utf8'));
      const v421 = clusterpulse.find((f) => f.root === 'catalogs/v4.21')!;
      // v4.21 had no 1.0.0 and no fast-v1: the repair adds both and moves the default.
      expect(v421.defaultChannel).toEqual({ old: 'fast-v0', new: 'fast-v1' });
      expect([...v421.channels.get('fast-v1')!.plus].sort()).toEqual([
        'clusterpulse.v1.0.0',
        'clusterpulse.v1.0.1',
      ]);
      expect(clusterpulse.find((f) => f.root === 'catalogs/v4.20')!.defaultChannel).toBeNull();
    });
  },
);
