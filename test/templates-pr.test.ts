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

describe('/render in the App', () => {
  it('renders the changed template into its output on the pull request branch, and the check then passes', async () => {
    const { InProcessQueue } = await import('../src/queue.js');
    const { FakeGitHub } = await import('./helpers/fake-github.js');
    const { issueCommentPayload, startAppServer } = await import('./helpers/app-server.js');
    const dir = repo((d) => {
      const text = readFileSync(join(d, TEMPLATE), 'utf8');
      writeFileSync(join(d, TEMPLATE), text.replace(text.trimEnd().split('\n').at(-1)! + '\n', ''));
    });
    // The config (alice maintains everything) goes on main, under the pull request.
    const git = (...args: string[]) =>
      execFileSync('git', ['-C', dir, '-c', 'user.name=T', '-c', 'user.email=t@example.com', ...args], {
        encoding: 'utf8',
      }).trim();
    git('checkout', '-q', 'main');
    mkdirSync(join(dir, '.github'), { recursive: true });
    writeFileSync(join(dir, '.github/catalog-bot.yml'), 'maintainers: [alice]\n');
    git('add', '-A');
    git('commit', '-qm', 'config');
    git('checkout', '-q', 'pr');
    git('rebase', '-q', 'main');
    const head = git('rev-parse', 'pr');
    const bare = join(dir, '..', `${dir.split('/').pop()}.git`);
    dirs.push(bare);
    execFileSync('git', ['clone', '-q', '--bare', dir, bare]);
    execFileSync('git', ['-C', bare, 'update-ref', 'refs/heads/pr-1', head]);
    execFileSync('git', ['-C', bare, 'update-ref', 'refs/pull/1/head', head]);

    const workDir = mkdtempSync(join(tmpdir(), 'catalog-bot-work-'));
    dirs.push(workDir);
    const gh = new FakeGitHub('Codertocat', 'Hello-World', bare);
    gh.addPull({ number: 1, head, author: 'bob', mergeable_state: 'blocked' });
    const queue = new InProcessQueue();
    const app = await startAppServer(gh, { queue, workDir });
    try {
      const payload = issueCommentPayload({
        bare,
        number: 1,
        id: 1,
        login: 'alice',
        body: '/render',
        at: gh.tick(),
      });
      expect(await app.send('issue_comment', payload, 'render-1')).toBe(200);
      await queue.onIdle();
      const reply = gh.botComments(1).at(-1)?.body ?? '';
      expect(reply).toContain('Pushed');
      expect(gh.refUpdates.map((u) => u.ref)).toEqual(['pr-1']);
      const rendered = gh.refUpdates[0]!.sha;
      expect(
        execFileSync('git', ['-C', bare, 'diff', '--name-only', head, rendered], { encoding: 'utf8' }).trim(),
      ).toBe(OUTPUT);
      // The output now matches the template: the check passes on the new head.
      const { checks } = await runPrChecks({ repo: bare, base: 'main', head: rendered });
      expect(checks.find((c) => c.name === 'catalog-bot/templates')?.conclusion).toBe('success');
    } finally {
      await app.stop();
    }
  }, 60_000);
});
