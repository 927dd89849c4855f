// `catalog-bot remove` on packages still on the bundle index: onboarding cases of
// community-operators-prod (their `before/`, copied into a git repository in a temp dir; the
// data set is read-only). What the report says each OpenShift catalog loses is derived here
// from the bundle directories.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { makeIndexRepo, ONBOARDING } from './helpers/cop-repo.js';
import { currentFiles, remove, trackedFiles } from './helpers/removal.js';

/** An onboarding case's `before/` as a git repository, every bundle on main (the data set is read-only). */
const indexRepo = (name: string) =>
  makeIndexRepo(name, null, 'catalogs: [catalogs/*]\nmaintainers: [Allda]\n');

interface DirBundle {
  dir: string;
  name: string;
  replaces?: string;
  channels: string[];
  ocp?: string;
}

function dirBundles(repo: string, pkg: string): DirBundle[] {
  const base = join(repo, 'operators', pkg);
  return readdirSync(base)
    .filter((d) => existsSync(join(base, d, 'metadata')))
    .map((dir) => {
      const csvFile = readdirSync(join(base, dir, 'manifests')).find((f) =>
        f.includes('clusterserviceversion'),
      )!;
      const csv = parseYaml(readFileSync(join(base, dir, 'manifests', csvFile), 'utf8'));
      const annotations = parseYaml(
        readFileSync(join(base, dir, 'metadata', 'annotations.yaml'), 'utf8'),
      ).annotations;
      return {
        dir,
        name: csv.metadata.name,
        ...(csv.spec.replaces ? { replaces: csv.spec.replaces } : {}),
        channels: String(annotations['operators.operatorframework.io.bundle.channels.v1']).split(','),
        ...(annotations['com.redhat.openshift.versions']
          ? { ocp: String(annotations['com.redhat.openshift.versions']) }
          : {}),
      };
    });
}

const haveOnboarding = existsSync(ONBOARDING);

describe.skipIf(!haveOnboarding)('remove on packages still on the bundle index', () => {
  it('removes a package: operators/<pkg>/ goes, nothing else; every OpenShift catalog loses all its bundles and channels', async () => {
    const { repo, git, cleanup } = indexRepo('amd-gpu-operator');
    try {
      const pkg = 'amd-gpu-operator';
      const bundles = dirBundles(repo, pkg);
      const before = trackedFiles(git);
      const text = await remove([pkg, '--repo', repo, '--dry-run']);
      expect(text.out).toMatch(/catalog-bot\/prune check does not see this removal/);
      expect(currentFiles(git)).toEqual(before);
      const r = await remove([pkg, '--repo', repo, '--format', 'json']);
      expect(r.code, r.err).toBe(0);
      const after = currentFiles(git);
      for (const [path, blob] of before)
        if (path.startsWith(`operators/${pkg}/`)) expect(after.has(path), path).toBe(false);
        else expect(after.get(path), path).toBe(blob);
      const report = JSON.parse(r.out);
      expect(report.mode).toBe(parseYaml(git('show', `main:operators/${pkg}/ci.yaml`)).updateGraph);
      expect(report.removed).toEqual([`operators/${pkg}`]);
      expect(report.edited).toEqual([]);
      // No bundle is annotated with OpenShift versions here: every catalog directory served them all.
      expect(bundles.every((b) => b.ocp === undefined)).toBe(true);
      expect(Object.keys(report.catalogs).sort()).toEqual(readdirSync(join(repo, 'catalogs')).sort());
      for (const loss of Object.values(report.catalogs) as {
        bundlesRemoved: string[];
        channelsRemoved: string[];
      }[]) {
        expect(loss.bundlesRemoved).toEqual(bundles.map((b) => b.name).sort());
        expect(loss.channelsRemoved).toEqual([...new Set(bundles.flatMap((b) => b.channels))].sort());
      }
      // The index is the pipeline's: no /allow-prune is asked for.
      expect(report.allowPrune).toEqual([]);
    } finally {
      cleanup();
    }
  });

  it('removes a bundle: only its directory goes; the catalogs its com.redhat.openshift.versions admits lose it, and the channel it headed gets its new head', async () => {
    const { repo, git, cleanup } = indexRepo('multi-nic-cni-operator');
    try {
      const pkg = 'multi-nic-cni-operator';
      const bundles = dirBundles(repo, pkg);
      const target = bundles.find(
        (b) => b.ocp && /^v4\.\d+-v4\.\d+$/.test(b.ocp) && !bundles.some((o) => o.replaces === b.name),
      )!;
      expect(target).toBeDefined();
      const [from, to] = target.ocp!.split('-').map((v) => Number(v.split('.')[1]));
      const admitted = readdirSync(join(repo, 'catalogs')).filter((v) => {
        const minor = Number(v.split('.')[1]);
        return minor >= from! && minor <= to!;
      });
      const before = trackedFiles(git);
      const r = await remove([`${pkg}/${target.dir}`, '--repo', repo, '--format', 'json']);
      expect(r.code, r.err).toBe(0);
      const after = currentFiles(git);
      for (const [path, blob] of before)
        if (path.startsWith(`operators/${pkg}/${target.dir}/`)) expect(after.has(path), path).toBe(false);
        else expect(after.get(path), path).toBe(blob);
      const report = JSON.parse(r.out);
      expect(report.bundle).toBe(target.name);
      expect(report.removed).toEqual([`operators/${pkg}/${target.dir}`]);
      expect(Object.keys(report.catalogs).sort()).toEqual(admitted.sort());
      // Its channel: the bundle it replaces (also served there) is the head now.
      const channel = target.channels[0]!;
      for (const v of admitted) {
        const loss = report.catalogs[v];
        expect(loss.bundlesRemoved).toEqual([target.name]);
        expect(loss.dangling).toEqual([]);
        expect(loss.headsRemoved).toEqual([{ channel, head: target.name, newHeads: [target.replaces] }]);
        // Nothing replaces the removed head: clusters running it have no way to the new head.
        expect(loss.stranded).toEqual(
          [...target.channels].sort().map((c) => ({ channel: c, bundles: [target.name] })),
        );
      }
    } finally {
      cleanup();
    }
  });
});
