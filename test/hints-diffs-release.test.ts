// Issue 30, items 3, 4 and 6, on a repository laid out like community-operators-prod:
// fix hints that run as printed (offline, never destroying a catalog), diffs counted as git
// counts them and shown bounded, and `release` of a bundle already listed by hand.
import { lstatSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BUNDLE_CHECK } from '../src/checks/bundle.js';
import { TEMPLATES_CHECK } from '../src/checks/templates.js';
import { runPrChecks } from '../src/checks/pr.js';
import { catalogBotShell, runCommand } from './helpers/cli.js';
import { haveRealRepo, makeCopRepo, type CopRepo } from './helpers/cop-repo.js';
import { tempTrees } from './helpers/oracle.js';

const made: CopRepo[] = [];
afterAll(() => {
  for (const c of made) c.cleanup();
});
const trees = tempTrees();

// One repository per release, shared: each test works on its own branch from main.
const repos = new Map<string, CopRepo>();
function cop(release: string): CopRepo {
  let c = repos.get(release);
  if (!c) {
    repos.set(release, (c = makeCopRepo(release)));
    made.push(c);
  }
  c.git('checkout', '-qf', 'main');
  c.git('clean', '-qfd');
  return c;
}
let branches = 0;
/** A new branch of `c` (see CopRepo.branch), named uniquely. */
const branch = (c: CopRepo, edit?: () => void, withBundle = true): string =>
  c.branch(`b${++branches}`, edit, withBundle);

/** Per file, as `git diff --numstat` counts the work tree's changes. */
function numstat(c: CopRepo): Map<string, { added: number; removed: number }> {
  const stats = new Map<string, { added: number; removed: number }>();
  for (const line of c.git('diff', '--numstat').split('\n').filter(Boolean)) {
    const [added, removed, path] = line.split('\t') as [string, string, string];
    stats.set(path, { added: Number(added), removed: Number(removed) });
  }
  return stats;
}

const changedFiles = (c: CopRepo): string[] => c.git('diff', '--name-only').split('\n').filter(Boolean);
const read = (c: CopRepo, path: string): string => readFileSync(join(c.repo, path), 'utf8');
/** Rewrites one file of `c`'s work tree through `edit`. */
const rewrite = (c: CopRepo, path: string, edit: (text: string) => string): void =>
  writeFileSync(join(c.repo, path), edit(read(c, path)));

/**
 * jumpstarter-operator 0.9.0's bundle pull request, its release already written into the basic
 * template by hand and then changed by `edit`.
 */
function jumpstarterListedByHand(edit: (template: string) => string): CopRepo {
  const c = cop('jumpstarter-operator/0.9.0');
  branch(c, () => {
    c.applyRelease('template');
    rewrite(c, 'operators/jumpstarter-operator/catalog-templates/basic.yaml', edit);
  });
  return c;
}

interface Finding {
  rule: string;
  file?: string;
  hint?: string;
}

/** The findings of the templates check of a pull request from main to `head`, as `check` gets them. */
async function templateFindings(c: CopRepo, head: string): Promise<Finding[]> {
  const result = await runPrChecks({ repo: c.repo, base: 'main', head, only: [TEMPLATES_CHECK] });
  return result.checks.find((k) => k.name === TEMPLATES_CHECK)?.findings ?? [];
}

/** The command a hint says to run (its first code span). */
const commandOf = (hint: string | undefined): string => /`([^`]+)`/.exec(hint ?? '')![1]!;

describe.runIf(haveRealRepo)('fix hints run as printed (item 3)', () => {
  it('TEMPLATE-OUT-OF-DATE on catalogs not re-rendered: each hint, run offline, fixes its catalog', async () => {
    const c = cop('clusterpulse/1.0.2');
    // The release's template and catalogs, then v4.17 and v4.19 as they were: a template
    // edited, two of its catalogs not re-rendered (they lack the new bundle; siblings hold it).
    const stale = ['catalogs/v4.17/clusterpulse/catalog.yaml', 'catalogs/v4.19/clusterpulse/catalog.yaml'];
    let rendered = new Map<string, string>();
    const head = branch(c, () => {
      c.applyRelease();
      rendered = new Map(stale.map((p) => [p, read(c, p)]));
      c.git('checkout', 'main', '--', ...stale);
    });
    const findings = (await templateFindings(c, head)).filter((f) => f.rule === 'TEMPLATE-OUT-OF-DATE');
    expect(findings.map((f) => f.file).sort()).toEqual(stale);
    const sh = catalogBotShell(c.repo);
    for (const f of findings) {
      const command = commandOf(f.hint);
      expect(command).toContain('--bundles-from');
      expect(command).toContain(`--output-file ${f.file}`);
      expect(command).not.toContain('>');
      const ran = sh(command);
      expect(ran.stderr + ran.stdout).toBe('');
      expect(ran.status).toBe(0);
      // Byte-identical to the recorded release.
      expect(read(c, f.file!)).toBe(rendered.get(f.file!));
    }
    c.git('commit', '-qam', 'hints run');
    expect(await templateFindings(c, 'HEAD')).toEqual([]);
  }, 60_000);

  it('a failing render leaves the catalog byte-identical, with no file left behind', async () => {
    const c = cop('clusterpulse/1.0.2');
    const target = 'catalogs/v4.17/clusterpulse/catalog.yaml';
    const head = branch(c, () => {
      c.applyRelease();
      c.git('checkout', 'main', '--', target);
    });
    const finding = (await templateFindings(c, head)).find((f) => f.file === target)!;
    const before = readFileSync(join(c.repo, target));
    // Without the sibling that holds the new bundle, the render needs a registry: offline it fails.
    const command = commandOf(finding.hint).replace(/ --bundles-from catalogs\/v4\.1[89]\S*/g, '');
    expect(command).not.toMatch(/--bundles-from \S*v4\.1[89]/);
    const ran = catalogBotShell(c.repo)(command);
    expect(ran.status).not.toBe(0);
    expect(readFileSync(join(c.repo, target)).equals(before)).toBe(true);
    expect(readdirSync(dirname(join(c.repo, target)))).toEqual(['catalog.yaml']);
    // The same with the shell redirection the hint used to print: the catalog is destroyed.
    catalogBotShell(c.repo)(command.replace(/--output-file (\S+)/, '> $1'));
    expect(readFileSync(join(c.repo, target)).equals(before)).toBe(false);
  }, 60_000);

  it('a template edited by hand: every catalog out of date, each hint fixes its own offline', async () => {
    const c = cop('clusterpulse/1.0.2');
    const template = 'operators/clusterpulse/catalog-templates/semver.yaml';
    const head = branch(
      c,
      () => rewrite(c, template, (t) => t.replace(/^ {2}- Image: \S+:0\.3\.0\n/m, '')),
      false,
    );
    const findings = (await templateFindings(c, head)).filter((f) => f.rule === 'TEMPLATE-OUT-OF-DATE');
    expect(findings.length).toBeGreaterThan(1);
    const sh = catalogBotShell(c.repo);
    for (const f of findings) {
      const ran = sh(commandOf(f.hint));
      expect(ran.status, ran.stderr).toBe(0);
    }
    c.git('commit', '-qam', 'hints run');
    expect(await templateFindings(c, 'HEAD')).toEqual([]);
    expect(read(c, 'catalogs/v4.17/clusterpulse/catalog.yaml')).not.toContain('clusterpulse.v0.3.0');
  }, 60_000);
});

describe.runIf(haveRealRepo)('diffs counted and bounded (item 4)', () => {
  it('release counts each file as git diff --numstat does, and writes the recorded release', async () => {
    const c = cop('clusterpulse/1.0.2');
    branch(c);
    const { code, out } = await runCommand('release', ['--repo', c.repo, c.bundleDir]);
    expect(code).toBe(0);
    const printed = new Map(
      [...out.matchAll(/^wrote (\S+) \(\+(\d+) -(\d+)\)$/gm)].map((m) => [
        m[1]!,
        { added: Number(m[2]), removed: Number(m[3]) },
      ]),
    );
    const released = new Map(changedFiles(c).map((p) => [p, read(c, p)]));
    expect(printed).toEqual(numstat(c));
    // The files are the recorded release's.
    c.git('checkout', '--', '.');
    c.applyRelease();
    expect(new Map(changedFiles(c).map((p) => [p, read(c, p)]))).toEqual(released);
  }, 60_000);

  it("the bundle check's note: a line per group of identical files, a bounded diff, the command for the rest", async () => {
    const c = cop('clusterpulse/1.0.2');
    const head = branch(c);
    c.applyRelease();
    const stats = numstat(c);
    c.git('checkout', '--', '.');
    const { code, out } = await runCommand('check', ['--repo', c.repo, '--base', 'main', '--head', head]);
    expect(code).toBe(0);
    const catalogs = [...stats.keys()].filter((p) => p.startsWith('catalogs/')).sort();
    const first = stats.get(catalogs[0]!)!;
    // One line for the byte-identical catalogs, with git's counts.
    expect(out).toContain(
      `note: ${catalogs[0]!.replace(/v4\.\d+/, `${catalogs[0]!.split('/')[1]}-${catalogs.at(-1)!.split('/')[1]}`)} +${first.added} -${first.removed} (${catalogs.length} identical files)`,
    );
    const template = [...stats.keys()].find((p) => p.startsWith('operators/'))!;
    expect(out).toContain(
      `note: ${template} +${stats.get(template)!.added} -${stats.get(template)!.removed}`,
    );
    expect(out).toContain('catalog-bot release operators/clusterpulse/1.0.2');
    // Bounded: a screenful, not the 577 lines of diff the check printed before.
    expect(out.split('\n').length).toBeLessThan(80);
    expect(out).toMatch(
      /more diff lines not shown: `git diff` after `catalog-bot release operators\/clusterpulse\/1\.0\.2`/,
    );
    // One representative diff: the other catalogs are named, not repeated.
    expect(out.match(/^\+\+\+ b\/catalogs\//gm)).toHaveLength(1);
  }, 60_000);
});

describe.runIf(haveRealRepo)('release of a bundle already listed in its template (item 6)', () => {
  const catalogsOf = (c: CopRepo): Map<string, string> =>
    new Map(changedFiles(c).map((p) => [p, read(c, p)]));

  for (const [release, kind] of [
    ['clusterpulse/1.0.2', 'semver'],
    ['jumpstarter-operator/0.9.0', 'basic'],
  ] as const) {
    it(`${release} (${kind}): the entry is left as it is and the catalogs are rendered as recorded`, async () => {
      const c = cop(release);
      // The author listed the bundle by hand, exactly as the release bot would have.
      branch(c, () => c.applyRelease('template'));
      const { code, out } = await runCommand('release', ['--repo', c.repo, c.bundleDir]);
      expect(out).not.toContain('refused');
      expect(code).toBe(0);
      const released = catalogsOf(c);
      expect([...released.keys()].every((p) => p.startsWith('catalogs/'))).toBe(true);
      c.git('checkout', '--', '.');
      c.applyRelease('catalog');
      expect(released).toEqual(catalogsOf(c));
      // Once rendered, again: nothing to write.
      const again = await runCommand('release', ['--repo', c.repo, c.bundleDir]);
      expect(again.code).toBe(0);
      expect(catalogsOf(c)).toEqual(released);
    }, 60_000);
  }

  it("the App's bundle check: the hand-listed entry stays, the merge needs the catalogs only", async () => {
    const c = cop('clusterpulse/1.0.2');
    const head = branch(c, () => c.applyRelease('template'));
    const result = await runPrChecks({ repo: c.repo, base: 'main', head, only: [BUNDLE_CHECK] });
    const check = result.checks.find((k) => k.name === BUNDLE_CHECK)!;
    expect(check.findings.filter((f) => f.level === 'error')).toEqual([]);
    expect(check.conclusion).toBe('success');
    c.applyRelease('catalog');
    const catalogs = changedFiles(c);
    expect(check.title).toContain(`the merge needs the catalog update of ${catalogs.length} files`);
    expect(check.summary).not.toContain('catalog-templates/semver.yaml +');
  }, 60_000);

  it('basic: an entry with only the channel entry gets its olm.bundle entry, as recorded', async () => {
    const c = jumpstarterListedByHand((t) =>
      t.replace(/- schema: olm.bundle\n {2}image: \S+:0\.9\.0\n$/, ''),
    );
    const { code } = await runCommand('release', ['--repo', c.repo, c.bundleDir]);
    expect(code).toBe(0);
    const released = catalogsOf(c);
    c.git('checkout', '--', '.');
    c.git('checkout', 'main', '--', '.');
    c.applyRelease();
    expect(released).toEqual(catalogsOf(c));
  }, 60_000);

  it('a conflicting entry is refused, saying what differs', async () => {
    const basic = jumpstarterListedByHand((t) =>
      t.replace('replaces: jumpstarter-operator.v0.9.0-rc.2\n', 'replaces: jumpstarter-operator.v0.8.0\n'),
    );
    const refused = await runCommand('release', ['--repo', basic.repo, basic.bundleDir, '--format', 'json']);
    expect(refused.code).toBe(1);
    const error = (JSON.parse(refused.out) as { error: string }).error;
    expect(error).toContain('jumpstarter-operator.v0.9.0 is already in channel "alpha"');
    expect(error).toContain(
      '"jumpstarter-operator.v0.8.0" where release-config.yaml says "jumpstarter-operator.v0.9.0-rc.2"',
    );
    expect(changedFiles(basic)).toEqual([]);

    const semver = cop('clusterpulse/1.0.2');
    const semverTemplate = 'operators/clusterpulse/catalog-templates/semver.yaml';
    branch(semver, () =>
      rewrite(
        semver,
        semverTemplate,
        (t) => `${t.trimEnd()}\n  - Image: quay.io/someone-else/clusterpulse:1.0.2\n`,
      ),
    );
    const other = await runCommand('release', ['--repo', semver.repo, semver.bundleDir]);
    expect(other.code).toBe(1);
    expect(other.out + other.err).toContain('quay.io/someone-else/clusterpulse:1.0.2');
    expect(other.out + other.err).toContain('quay.io/community-operator-pipeline-prod/clusterpulse:1.0.2');
    expect(changedFiles(semver)).toEqual([]);
  }, 60_000);
});

describe.runIf(haveRealRepo)('render-template --output-file, as an attacker would use it', () => {
  it('a symbolic link at the output is replaced, never written through; a directory is refused', async () => {
    const c = cop('clusterpulse/1.0.2');
    const victim = join(trees.dir(), 'secret.txt');
    writeFileSync(victim, 'do not touch\n');
    const output = join(c.repo, 'catalogs/v4.17/clusterpulse/catalog.yaml');
    const committed = readFileSync(output, 'utf8');
    rmSync(output);
    symlinkSync(victim, output);
    const args = [
      'operators/clusterpulse/catalog-templates/semver.yaml',
      '-o',
      'yaml',
      '--opm-version',
      'v1.46.0',
    ];
    const from = ['--bundles-from', 'catalogs/v4.18/clusterpulse/catalog.yaml'];
    const cwd = process.cwd();
    process.chdir(c.repo);
    try {
      const wrote = await runCommand('render-template', [
        ...args,
        ...from,
        '--migrate-level',
        'bundle-object-to-csv-metadata',
        '--output-file',
        output,
      ]);
      expect(wrote.code, wrote.err + wrote.out).toBe(0);
      expect(readFileSync(victim, 'utf8')).toBe('do not touch\n');
      expect(lstatSync(output).isSymbolicLink()).toBe(false);
      expect(readFileSync(output, 'utf8')).toBe(committed);
      const dir = await runCommand('render-template', [
        ...args,
        ...from,
        '--output-file',
        'catalogs/v4.17/clusterpulse',
      ]);
      expect(dir.code).toBe(2);
      expect(readdirSync(join(c.repo, 'catalogs/v4.17/clusterpulse'))).toEqual(['catalog.yaml']);
    } finally {
      process.chdir(cwd);
    }
  }, 60_000);
});
