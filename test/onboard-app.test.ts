// `/onboard <package>` end to end through the App (docs/legacy-index.md, "`/onboard` in the
// App"): Probot's server on 127.0.0.1 fed signed issue_comment webhooks, a repository laid
// out like community-operators-prod holding a real package still on the bundle index
// (amd-gpu-operator, an onboarding case), the real mirror, conversion and checks, and
// GitHub as a stateful fake that checks every request against GitHub's API description.
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { AppOptions } from '../src/app.js';
import { readState } from '../src/handlers/pr-state.js';
import { startAppOnOrigin, type AppHarness } from './helpers/app-harness.js';
import { issueCommentPayload } from './helpers/app-server.js';
import { COP_CONFIG, makeIndexRepo, type IndexRepo } from './helpers/cop-repo.js';
import type { FakeGitHub, FakePull } from './helpers/fake-github.js';
import { git } from './helpers/git.js';
import { blobsOf, graphOf, ONBOARDING, onboardingCases } from './helpers/onboarding-cases.js';
import { outsideCode } from './helpers/markdown.js';

vi.setConfig({ testTimeout: 120_000 });

const PKG = 'amd-gpu-operator';
const OWNER = 'yevgeny-shnaidman'; // the package's ci.yaml reviewer
const ISSUE = 7; // an issue of the repository, not a pull request
const BRANCH = `catalog-bot/onboard-${PKG}`;
const CONFIG = `${COP_CONFIG}automerge:\n  enabled: true\n  method: merge\n`;

/** Three of the case's eight OpenShift catalogs (the first, and both sides of csvMetadataFrom: v4.17) keep each check quick. */
const KEPT = ['v4.12', 'v4.16', 'v4.17'];

/**
 * The onboarding case's repository with automerge on and only the KEPT catalogs, and `edit`
 * (of the work tree) if any: committed on main as `message`.
 */
function onboardingRepo(message: string, edit?: (repo: string) => void): IndexRepo {
  const made = makeIndexRepo(PKG);
  writeFileSync(join(made.repo, '.github/catalog-bot.yml'), CONFIG);
  for (const v of readdirSync(join(made.repo, 'catalogs')))
    if (!KEPT.includes(v)) rmSync(join(made.repo, 'catalogs', v), { recursive: true });
  edit?.(made.repo);
  made.git('add', '-A');
  made.git('commit', '-qm', message);
  return made;
}

/**
 * The App for `made` (main and `refspecs` on a bare origin), `pulls` open; GitHub registers
 * the pull requests the App opens. No registry in a test: every image exists.
 */
async function startOnboardApp(
  made: IndexRepo,
  refspecs: string[],
  pulls: FakePull[],
  options: Partial<AppOptions> = {},
): Promise<AppHarness> {
  const app = await startAppOnOrigin(made.repo, refspecs, pulls, {
    announceAfterMs: 0,
    images: async (refs) => new Map(refs.map((ref) => [ref, { ref, status: 'exists' as const, reason: '' }])),
    ...options,
  });
  app.gh.registerCreatedPulls = true;
  return app;
}

let issueCommentId = 5000;

/**
 * `login` comments `body` on issue ISSUE (or pull request `number`); resolves to the
 * comment's id once every job it caused is done.
 */
async function comment(app: AppHarness, login: string, body: string, number = ISSUE): Promise<number> {
  if (number !== ISSUE) return app.comment(number, login, body);
  const id = ++issueCommentId;
  const payload = issueCommentPayload({ bare: app.gh.bare, number, id, login, body, at: app.gh.tick() });
  delete payload.issue.pull_request;
  await app.deliver('issue_comment', payload);
  return id;
}

describe('/onboard through the App', () => {
  let made: IndexRepo;
  let app: AppHarness;
  let gh: FakeGitHub;

  beforeAll(async () => {
    made = onboardingRepo('automerge');
    // Pull request 2: any open pull request of the repository (commands there work too).
    const pr = made.branch('notes', (repo) => writeFileSync(join(repo, 'NOTES.md'), 'a change\n'));
    // Pull request 3: mallory pushed a branch of the App's name (with a change of her own)
    // and opened a pull request from it; it is not the App's proposal.
    const squat = made.branch('squat', (repo) => writeFileSync(join(repo, 'SQUAT.md'), 'mine\n'));
    app = await startOnboardApp(
      made,
      [
        `${pr}:refs/heads/pr-2`,
        `${pr}:refs/pull/2/head`,
        `${squat}:refs/heads/${BRANCH}`,
        `${squat}:refs/pull/3/head`,
      ],
      [
        { number: 2, head: pr, author: 'carol', mergeable_state: 'blocked' },
        { number: 3, head: squat, author: 'mallory', headRef: BRANCH, mergeable_state: 'blocked' },
      ],
      { approveGraceMs: 0 },
    );
    ({ gh } = app);
  }, 60_000);

  afterAll(async () => {
    await app?.stop();
    made?.cleanup();
  });

  const replies = (number: number) =>
    gh
      .botComments(number)
      .filter((c) => readState(c.body) === undefined)
      .map((c) => c.body);
  const lastReply = (number = ISSUE) => replies(number).at(-1) ?? '';
  const reactionsTo = (id: number) => gh.reactions.filter((r) => r.comment === id).map((r) => r.content);
  /** git in the bare origin, what the App pushed to. */
  const inOrigin = (...args: string[]) => git(gh.bare, ...args);
  const show = (rev: string, path: string) => inOrigin('show', `${rev}:${path}`);

  it('refuses a stranger with the reason; nothing is written', async () => {
    const id = await comment(app, 'mallory', `/onboard ${PKG}`);
    expect(reactionsTo(id)).toEqual(['confused']);
    expect(lastReply()).toMatch(
      /^@mallory `\/onboard`: only the owners of `amd-gpu-operator` \(its ci\.yaml reviewers\) or a maintainer may onboard it \(`/,
    );
    expect(gh.refUpdates).toEqual([]);
    expect(gh.created).toEqual([]);
  });

  it('refuses a name that is a path or not a package name, before any work', async () => {
    for (const bad of ['../etc', 'operators/amd-gpu-operator', 'a..b', 'Amd', '`x`<img>']) {
      const id = await comment(app, OWNER, `/onboard ${bad}`, 2);
      expect(reactionsTo(id)).toEqual(['confused']);
      expect(lastReply(2)).toContain('is not a package name');
    }
    // On an issue too: the line names /onboard, so it is answered.
    await comment(app, OWNER, '/onboard ../../x');
    expect(lastReply()).toContain('is not a package name');
    expect(gh.refUpdates).toEqual([]);
    expect(gh.created).toEqual([]);
  });

  it('an issue comment with other commands or none runs nothing and says nothing', async () => {
    const before = gh.comments.length;
    const id = await comment(app, OWNER, 'some text\n/approve\n/retest');
    expect(reactionsTo(id)).toEqual([]);
    expect(gh.comments.length).toBe(before);
  });

  it("by the package's owner on an issue: opens one pull request with the conversion; nothing changes for clusters", async () => {
    const id = await comment(app, OWNER, `/onboard ${PKG}`);
    expect(reactionsTo(id)).toEqual(['+1']);
    expect(gh.created).toHaveLength(1);
    const [opened] = gh.created;
    expect(opened).toMatchObject({
      number: 100,
      base: 'main',
      head: `catalog-bot/onboard-${PKG}`,
      title: `Onboard ${PKG} to file-based catalogs`,
    });
    expect(lastReply()).toMatch(
      /^@yevgeny-shnaidman Opened #100: `amd-gpu-operator` on file-based catalogs \(/,
    );
    expect(lastReply()).toContain('nothing changes for clusters');
    // The description: index and directories agree for this package.
    expect(opened!.body).toContain('Nothing changes for clusters');
    expect(opened!.body).toContain(`Requested by @${OWNER} in #${ISSUE}.`);
    // mallory's pull request from a branch of that name did not count; her commit is not in it.
    expect(gh.refUpdates.map((u) => u.ref)).toEqual([BRANCH]);
    const files = inOrigin('ls-tree', '--name-only', gh.pulls.get(100)!.head);
    expect(files).not.toContain('SQUAT.md');
    // The branch is one commit on main holding the conversion: the graph of every catalog is
    // the one the community's pipeline wrote from the published indexes (the case's after/).
    const head = gh.pulls.get(100)!.head;
    expect(inOrigin('rev-parse', `${head}^`)).toBe(inOrigin('rev-parse', 'main'));
    const expected = join(ONBOARDING, PKG, 'expected', 'catalogs');
    const scored = onboardingCases().find((c) => c.package === PKG)!.compared;
    const catalogs = inOrigin('ls-tree', '-r', '--name-only', head, '--', 'catalogs/')
      .split('\n')
      .filter((p) => p.endsWith(`/${PKG}/catalog.yaml`));
    expect(catalogs.map((p) => p.split('/')[1])).toEqual(KEPT.filter((v) => scored.includes(v)));
    for (const path of catalogs.filter((p) => scored.some((v) => p.startsWith(`catalogs/${v}/`)))) {
      const want = readFileSync(join(expected, path.slice('catalogs/'.length)), 'utf8');
      expect(graphOf(blobsOf(show(head, path))), path).toEqual(graphOf(blobsOf(want)));
    }
    expect(show(head, `operators/${PKG}/ci.yaml`)).toMatch(/fbc:\n {2}enabled: true/);
    // Its checks ran at once, on the App's head: every catalog check passes; who may merge it
    // is the permissions check's, which waits for an owner (the App owns no package).
    const runs = gh.runsFor(head).filter((r) => r.status === 'completed');
    expect(runs.length).toBeGreaterThan(0);
    for (const r of runs.filter((r) => r.name !== 'catalog-bot/permissions'))
      expect(['success', 'neutral'], `${r.name}: ${r.output?.title}`).toContain(r.conclusion);
    for (const name of ['catalog-bot/validate', 'catalog-bot/upgrade-graph', 'catalog-bot/ocp-continuity'])
      expect(gh.runsFor(head, name).at(-1)?.conclusion, name).toBe('success');
    expect(gh.merges).toEqual([]);
  });

  it('asked again while its pull request is open: points to it, opens no second one', async () => {
    const id = await comment(app, OWNER, `/onboard ${PKG}`, 2);
    expect(reactionsTo(id)).toEqual(['confused']);
    expect(lastReply(2)).toContain(
      '#100 proposes the onboarding of `amd-gpu-operator` already and is still open',
    );
    expect(gh.created).toHaveLength(1);
  });

  it("the owner's /approve on it: green, merged; main holds the package on file-based catalogs", async () => {
    const head = gh.pulls.get(100)!.head;
    // As on any pull request opened just now: the App first sees its head when asked, then
    // an approval written after that counts for it (docs/security.md).
    await comment(app, OWNER, '/approve', 100);
    expect(gh.merges).toEqual([]);
    await comment(app, OWNER, `/approve ${head.slice(0, 7)}`, 100);
    const permissions = gh.runsFor(head, 'catalog-bot/permissions').at(-1);
    expect(permissions?.conclusion, JSON.stringify(replies(100))).toBe('success');
    expect(gh.merges).toEqual([{ number: 100, sha: head, method: 'merge' }]);
    expect(show('main', `operators/${PKG}/ci.yaml`)).toMatch(/fbc:\n {2}enabled: true/);
  });

  it('once merged, asking again is refused: the package is on file-based catalogs already', async () => {
    const id = await comment(app, OWNER, `/onboard ${PKG}`);
    expect(reactionsTo(id)).toEqual(['confused']);
    expect(lastReply()).toContain('says fbc.enabled: true: the package is on file-based catalogs already');
    expect(gh.created).toHaveLength(1);
  });
});

describe('/onboard through the App: names from the bundle directories in the description', () => {
  // Every bundle annotates a channel whose name is HTML with a mention in it.
  const CHANNEL = 'alpha<img/src=x/onerror=alert(1)>[x](https://evil.example)@mallory';
  let made: IndexRepo;
  let app: AppHarness;
  let gh: FakeGitHub;

  beforeAll(async () => {
    made = onboardingRepo('hostile channel', (repo) => {
      for (const version of ['0.0.1', '0.0.2', '0.0.3', '0.0.4']) {
        const p = join(repo, 'operators', PKG, version, 'metadata/annotations.yaml');
        writeFileSync(p, readFileSync(p, 'utf8').replace(/(bundle\.channels\.v1:) alpha/, `$1 "${CHANNEL}"`));
      }
    });
    app = await startOnboardApp(made, [], []);
    ({ gh } = app);
  }, 60_000);

  afterAll(async () => {
    await app?.stop();
    made?.cleanup();
  });

  it('the channel name reaches the pull request only as code: no tag, link or mention renders', async () => {
    await comment(app, OWNER, `/onboard ${PKG}`);
    expect(gh.created, gh.comments.map((c) => c.body).join('\n')).toHaveLength(1);
    const { body } = gh.created[0]!;
    expect(body).toContain(CHANNEL); // shown, as written
    const rendered = outsideCode(body);
    expect(rendered).not.toContain('<img');
    expect(rendered).not.toContain('](https://evil');
    expect([...rendered.matchAll(/(?<![\w`])@[A-Za-z0-9-]+/g)].map((m) => m[0])).toEqual([`@${OWNER}`]);
  });

  it('a refusal of the conversion is the reply, naming the reason; nothing is written', async () => {
    // The pull request of the test before is closed unmerged: asking again is allowed.
    Object.assign(gh.pulls.get(100)!, { state: 'closed' });
    const ci = join(made.repo, 'operators', PKG, 'ci.yaml');
    writeFileSync(
      ci,
      readFileSync(ci, 'utf8').replace('updateGraph: replaces-mode', 'updateGraph: semver-skippatch-mode'),
    );
    made.git('commit', '-qam', 'an updateGraph the index never had');
    made.git('push', '-q', gh.bare, 'main:refs/heads/main');
    const written = gh.refUpdates.length;
    await comment(app, OWNER, `/onboard ${PKG}`);
    const reply = gh.botComments(ISSUE).at(-1)?.body ?? '';
    expect(reply).toMatch(
      /^@yevgeny-shnaidman `\/onboard` `amd-gpu-operator`: `operators\/amd-gpu-operator\/ci\.yaml has updateGraph: "semver-skippatch-mode", which is none of replaces-mode, semver-mode/,
    );
    expect(gh.refUpdates).toHaveLength(written);
    expect(gh.created).toHaveLength(1);
  });
});
