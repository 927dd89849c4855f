// Issue 30, "output a person can act on": every fix hint that prints a `catalog-bot` command
// names real paths (no `...`, no `<placeholder>`), on findings of pull requests laid out like
// community-operators-prod; the OCP-BUNDLE-OBJECT hint, run as printed with the built CLI,
// fixes its catalog; `render-template --output-file` is an editing command (--dry-run, and
// an output that is the render already is left alone); a bundle whose other metadata file
// names another package fails catalog-bot/bundle.
import {
  cpSync,
  existsSync,
  lstatSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BUNDLE_CHECK } from '../src/checks/bundle.js';
import { OCP_CONTINUITY_CHECK } from '../src/checks/ocp-continuity.js';
import { runPrChecks } from '../src/checks/pr.js';
import { TEMPLATES_CHECK } from '../src/checks/templates.js';
import { catalogBotShell, runCommand } from './helpers/cli.js';
import { haveRealRepo, makeCopRepo, type CopRepo } from './helpers/cop-repo.js';

const scratch: string[] = [];
let repo: CopRepo | undefined;
afterAll(() => {
  repo?.cleanup();
  for (const d of scratch) rmSync(d, { recursive: true, force: true });
});

/** One repository for the file: each test works on its own branch from main. */
function cop(): CopRepo {
  repo ??= makeCopRepo('clusterpulse/1.0.2');
  repo.git('checkout', '-qf', 'main');
  repo.git('clean', '-qfd');
  return repo;
}
let branches = 0;

// visionone-containersecurity: one olm.template.basic renders v4.12-v4.21; v4.16 is its render
// without the migrate level (olm.bundle.object), v4.17 with it (olm.csv.metadata).
const V416 = 'catalogs/v4.16/visionone-containersecurity/catalog.yaml';
const V417 = 'catalogs/v4.17/visionone-containersecurity/catalog.yaml';
const CI = 'operators/visionone-containersecurity/ci.yaml';
const TEMPLATE = 'operators/visionone-containersecurity/catalog-templates/basic.yaml';
const path = (c: CopRepo, p: string): string => join(c.repo, p);
const read = (c: CopRepo, p: string): string => readFileSync(path(c, p), 'utf8');

interface Finding {
  rule: string;
  file?: string;
  hint?: string;
}

/** The findings of these checks on a pull request from main to `head`, as `check` gets them. */
async function findings(c: CopRepo, head: string, only: string[]): Promise<Finding[]> {
  const result = await runPrChecks({ repo: c.repo, base: 'main', head, only });
  return result.checks.flatMap((k) => k.findings);
}

/** The `catalog-bot ...` code spans of a hint. */
const commandsOf = (hint: string | undefined): string[] =>
  [...(hint ?? '').matchAll(/`(catalog-bot [^`]*)`/g)].map((m) => m[1]!);

/** What stands for something the reader has to fill in. */
const PLACEHOLDER = /\.\.\.|…|<[^<>\s]+>/;

const cases: {
  name: string;
  edit: (c: CopRepo) => void;
  withBundle?: boolean;
  only: string[];
  /** The rule whose hint must print a command (or, `words`, must say it in words). */
  rule: string;
  words?: boolean;
}[] = [
  {
    name: 'OCP-BUNDLE-OBJECT: a v4.17 catalog rendered without the migrate level',
    edit: (c) => cpSync(path(c, V416), path(c, V417)),
    withBundle: false,
    only: [OCP_CONTINUITY_CHECK],
    rule: 'OCP-BUNDLE-OBJECT',
  },
  {
    name: 'OCP-BUNDLE-OBJECT where no template renders the catalog: said in words',
    edit: (c) => {
      cpSync(path(c, V416), path(c, V417));
      const ci = read(c, CI);
      expect(ci).toContain('"v4.17", ');
      writeFileSync(path(c, CI), ci.replace('"v4.17", ', ''));
    },
    withBundle: false,
    only: [OCP_CONTINUITY_CHECK],
    rule: 'OCP-BUNDLE-OBJECT',
    words: true,
  },
  {
    name: 'TEMPLATE-OUT-OF-DATE: a template edited by hand',
    edit: (c) => {
      const t = 'operators/clusterpulse/catalog-templates/semver.yaml';
      writeFileSync(path(c, t), read(c, t).replace(/^ {2}- Image: \S+:0\.3\.0\n/m, ''));
    },
    withBundle: false,
    only: [TEMPLATES_CHECK],
    rule: 'TEMPLATE-OUT-OF-DATE',
  },
  {
    name: 'OCP-PACKAGE-DROPPED: a package removed from the newest catalog',
    edit: (c) => rmSync(path(c, 'catalogs/v4.22/jumpstarter-operator'), { recursive: true }),
    withBundle: false,
    only: [OCP_CONTINUITY_CHECK],
    rule: 'OCP-PACKAGE-DROPPED',
  },
];

describe.runIf(haveRealRepo)('every fix hint that prints a command names real paths', () => {
  it.each(cases)(
    '$name',
    async ({ edit, withBundle, only, rule, words }) => {
      const c = cop();
      const head = c.branch(`hints${++branches}`, () => edit(c), withBundle ?? true);
      const found = await findings(c, head, only);
      const ofRule = found.filter((f) => f.rule === rule);
      expect(ofRule.length, `${rule} among ${found.map((f) => f.rule).join(', ')}`).toBeGreaterThan(0);
      for (const f of found) {
        if (!/catalog-bot [a-z]/.test(f.hint ?? '')) continue;
        expect(f.hint, `${f.rule} ${f.file}`).not.toMatch(PLACEHOLDER);
      }
      for (const f of ofRule) {
        const commands = commandsOf(f.hint);
        if (words) {
          expect(commands, f.hint).toEqual([]);
          expect(f.hint).toContain('bundle-object-to-csv-metadata');
        } else expect(commands.length, f.hint).toBeGreaterThan(0);
      }
    },
    60_000,
  );

  it('the OCP-BUNDLE-OBJECT hint, run as printed offline, makes the catalog the release bot made', async () => {
    const c = cop();
    const made = read(c, V417);
    const head = c.branch(`hints${++branches}`, () => cpSync(path(c, V416), path(c, V417)), false);
    const found = (await findings(c, head, [OCP_CONTINUITY_CHECK])).filter(
      (f) => f.rule === 'OCP-BUNDLE-OBJECT',
    );
    expect(found.length).toBeGreaterThan(0);
    const commands = new Set(found.flatMap((f) => commandsOf(f.hint)));
    expect(commands.size).toBe(1);
    const [command] = [...commands] as [string];
    expect(command).toContain(`--output-file ${V417}`);
    expect(command).toContain('--migrate-level bundle-object-to-csv-metadata');
    const ran = catalogBotShell(c.repo)(command);
    expect(ran.stderr + ran.stdout).toBe('');
    expect(ran.status).toBe(0);
    expect(read(c, V417)).toBe(made);
    c.git('commit', '-qam', 'hint run');
    const after = await findings(c, 'HEAD', [OCP_CONTINUITY_CHECK, TEMPLATES_CHECK]);
    expect(after.filter((f) => f.rule === 'OCP-BUNDLE-OBJECT' || f.rule.startsWith('TEMPLATE-'))).toEqual([]);
  }, 60_000);

  it('a template name smuggling a shell command is quoted in the hint: running it runs nothing else', async () => {
    const c = cop();
    const evil = 'basic.yaml;touch PWNED;x.yaml';
    const head = c.branch(
      `hints${++branches}`,
      () => {
        cpSync(path(c, V416), path(c, V417));
        cpSync(path(c, TEMPLATE), path(c, TEMPLATE.replace('basic.yaml', evil)));
        writeFileSync(
          path(c, CI),
          read(c, CI).replace('template_name: basic.yaml', `template_name: '${evil}'`),
        );
      },
      false,
    );
    const found = (await findings(c, head, [OCP_CONTINUITY_CHECK])).filter(
      (f) => f.rule === 'OCP-BUNDLE-OBJECT',
    );
    const [command] = commandsOf(found[0]?.hint);
    expect(command).toContain(`'${TEMPLATE.replace('basic.yaml', evil)}'`);
    const ran = catalogBotShell(c.repo)(command!);
    expect(ran.status, ran.stderr).toBe(0);
    expect(existsSync(path(c, 'PWNED'))).toBe(false);
  }, 60_000);
});

const run = (args: string[]): ReturnType<typeof runCommand> => runCommand('render-template', args);

describe.runIf(haveRealRepo)('render-template --output-file is an editing command', () => {
  const args = (output: string, from = output): string[] => [
    TEMPLATE,
    '-o',
    'yaml',
    '--migrate-level',
    'bundle-object-to-csv-metadata',
    '--bundles-from',
    from,
    '--output-file',
    output,
  ];
  const inRepo = async <T>(c: CopRepo, f: () => Promise<T>): Promise<T> => {
    const cwd = process.cwd();
    process.chdir(c.repo);
    try {
      return await f();
    } finally {
      process.chdir(cwd);
    }
  };
  const OLD = new Date('2020-01-01T00:00:00Z');

  it('an output that is the render already: "nothing to do" on stderr, exit 0, the file untouched', async () => {
    const c = cop();
    const file = path(c, V417);
    utimesSync(file, OLD, OLD);
    const before = statSync(file);
    const r = await inRepo(c, () => run(args(V417)));
    expect(r.code, r.err).toBe(0);
    expect(r.out).toBe('');
    expect(r.err).toMatch(/^catalog-bot render-template: nothing to do: .*\n$/);
    const after = statSync(file);
    expect(after.mtimeMs).toBe(before.mtimeMs);
    expect(after.ino).toBe(before.ino);
  }, 60_000);

  it('--dry-run prints the lines it would change, as git counts them, and writes nothing', async () => {
    const c = cop();
    cpSync(path(c, V416), path(c, V417));
    c.git('add', V417);
    const stale = read(c, V417);
    utimesSync(path(c, V417), OLD, OLD);
    const mtime = statSync(path(c, V417)).mtimeMs;
    const dry = await inRepo(c, () => run([...args(V417), '--dry-run']));
    expect(dry.code, dry.err).toBe(0);
    expect(dry.err).toBe('');
    expect(read(c, V417)).toBe(stale);
    expect(statSync(path(c, V417)).mtimeMs).toBe(mtime);
    // The numbers it gave are the ones git counts once the file is written.
    const wrote = await inRepo(c, () => run(args(V417)));
    expect(wrote.code, wrote.err).toBe(0);
    const [added, removed] = c.git('diff', '--numstat', '--', V417).split('\t');
    expect(Number(removed)).toBeGreaterThan(0);
    expect(dry.out).toBe(`would write ${V417} (+${added} -${removed})\n(dry run: nothing written)\n`);
    // Without --output-file nothing would be written anyway: a usage error, not a silent render.
    expect(await inRepo(c, () => run([TEMPLATE, '--dry-run']))).toMatchObject({ code: 2 });
  }, 60_000);

  it('a link at the output holding the render is replaced, not kept as "nothing to do"; --dry-run never writes through it', async () => {
    const c = cop();
    const outside = mkdtempSync(join(tmpdir(), 'outside-'));
    scratch.push(outside);
    const target = join(outside, 'catalog.yaml');
    cpSync(path(c, V417), target);
    const from = join(outside, 'from.yaml');
    cpSync(path(c, V417), from);
    rmSync(path(c, V417));
    symlinkSync(target, path(c, V417));
    const dry = await inRepo(c, () => run([...args(V417, from), '--dry-run']));
    expect(dry.code, dry.err).toBe(0);
    expect(lstatSync(path(c, V417)).isSymbolicLink()).toBe(true);
    const r = await inRepo(c, () => run(args(V417, from)));
    expect(r.code, r.err).toBe(0);
    expect(r.err).toBe('');
    expect(lstatSync(path(c, V417)).isSymbolicLink()).toBe(false);
    expect(read(c, V417)).toBe(readFileSync(target, 'utf8'));
  }, 60_000);
});

describe.runIf(haveRealRepo)('catalog-bot/bundle reads metadata/ as opm does', () => {
  it('a bundle pull request whose metadata/0.yaml names another package fails, naming the file', async () => {
    const c = cop();
    const head = c.branch(`hints${++branches}`, () => {
      const annotations = read(c, `${c.bundleDir}/metadata/annotations.yaml`);
      writeFileSync(
        path(c, `${c.bundleDir}/metadata/0.yaml`),
        annotations.replace('package.v1: clusterpulse', 'package.v1: dotvirt-operator'),
      );
    });
    const result = await runPrChecks({ repo: c.repo, base: 'main', head, only: [BUNDLE_CHECK] });
    const check = result.checks.find((k) => k.name === BUNDLE_CHECK)!;
    expect(check.conclusion).toBe('failure');
    const finding = check.findings.find((f) => f.file === `${c.bundleDir}/metadata/0.yaml`);
    expect(finding).toMatchObject({ rule: 'B-ANNOTATIONS', level: 'error' });
    expect(finding!.message).toContain('names package "dotvirt-operator"');
  }, 60_000);
});
