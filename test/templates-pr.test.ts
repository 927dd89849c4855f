// catalog-bot/templates among the pull-request checks: a community-operators layout (the
// real kairos-operator semver template and its committed v4.16 output) in a git repo.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runPrChecks } from '../src/checks/pr.js';
import { SHARED_DATA } from './helpers/oracle.js';

const pair = join(SHARED_DATA, 'real-templates', 'community-operators-prod', 'kairos-operator');
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

const TEMPLATE = 'operators/kairos-operator/catalog-templates/semver.yaml';
const OUTPUT = 'catalogs/v4.16/kairos-operator/catalog.yaml';

/** main: template + output as committed upstream; pr: `edit` applied to the work tree. */
function repo(edit: (dir: string) => void): string {
  const dir = mkdtempSync(join(tmpdir(), 'catalog-bot-templates-'));
  dirs.push(dir);
  const git = (...args: string[]) =>
    execFileSync('git', ['-C', dir, '-c', 'user.name=T', '-c', 'user.email=t@example.com', ...args], {
      encoding: 'utf8',
    });
  git('init', '-q', '-b', 'main');
  mkdirSync(join(dir, 'operators/kairos-operator/catalog-templates'), { recursive: true });
  cpSync(join(pair, 'catalog-templates/semver.yaml'), join(dir, TEMPLATE));
  // The upstream ci.yaml maps v4.12-v4.22; this repository holds the v4.16 output only.
  writeFileSync(
    join(dir, 'operators/kairos-operator/ci.yaml'),
    'fbc:\n  enabled: true\n  catalog_mapping:\n    - template_name: semver.yaml\n      catalog_names: ["v4.16"]\n      type: olm.semver\n',
  );
  mkdirSync(join(dir, 'catalogs/v4.16/kairos-operator'), { recursive: true });
  cpSync(join(pair, 'rendered/v4.16/kairos-operator/catalog.yaml'), join(dir, OUTPUT));
  git('add', '-A');
  git('commit', '-qm', 'base');
  git('checkout', '-q', '-b', 'pr');
  edit(dir);
  git('add', '-A');
  git('commit', '-qm', 'pr', '--allow-empty');
  return dir;
}

const templatesOf = async (dir: string) =>
  (await runPrChecks({ repo: dir, base: 'main', head: 'pr' })).checks.find(
    (c) => c.name === 'catalog-bot/templates',
  );

describe('catalog-bot/templates on a pull request', () => {
  it('passes when the committed output is the render of the template', async () => {
    const dir = repo((d) => {
      // Only a comment: the render is the same.
      writeFileSync(join(d, TEMPLATE), readFileSync(join(d, TEMPLATE), 'utf8') + '# reviewed\n');
    });
    const check = await templatesOf(dir);
    expect(check?.findings).toEqual([]);
    expect(check?.conclusion).toBe('success');
  });

  it('fails a template changed without rendering it, with the diff and the command', async () => {
    const dir = repo((d) => {
      const text = readFileSync(join(d, TEMPLATE), 'utf8');
      const last = text.trimEnd().split('\n').at(-1)!; // the newest bundle's image line
      writeFileSync(join(d, TEMPLATE), text.replace(last + '\n', ''));
    });
    const check = (await templatesOf(dir))!;
    expect(check.conclusion).toBe('failure');
    const finding = check.findings.find((f) => f.rule === 'TEMPLATE-OUT-OF-DATE')!;
    expect(finding.file).toBe(OUTPUT);
    expect(finding.line).toBeGreaterThan(0);
    expect(finding.hint).toContain(`catalog-bot render-template ${TEMPLATE}`);
    expect(check.summary).toContain('```diff');
  });

  it('fails an output edited by hand', async () => {
    const dir = repo((d) => {
      const text = readFileSync(join(d, OUTPUT), 'utf8');
      writeFileSync(
        join(d, OUTPUT),
        text.replace('defaultChannel: candidate-v2', 'defaultChannel: stable-v2'),
      );
    });
    const check = (await templatesOf(dir))!;
    expect(check.conclusion).toBe('failure');
    expect(check.summary).toMatch(/-defaultChannel: stable-v2\n\+defaultChannel: candidate-v2|stable-v2/);
  });

  it('is not run when no template or output changed', async () => {
    const dir = repo((d) => writeFileSync(join(d, 'README.md'), 'docs\n'));
    expect(await templatesOf(dir)).toBeUndefined();
  });
});
