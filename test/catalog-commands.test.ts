// `/default-channel`, `/explain` and `/ocp-promote` end to end through the App: Probot's
// server on 127.0.0.1 with signed issue_comment webhooks, real git repositories made from
// the real community-operators-prod data (test/helpers/ocp-history.ts), the real mirror and
// checks, and GitHub's API as a stateful fake (nock).
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { explainBundle, explainMermaid, explainText, findBundle } from '../src/catalog/olm/explain.js';
import { DirectorySource, validateCatalog } from '../src/catalog/index.js';
import { MAX_COSTLY_PER_USER } from '../src/handlers/command-limit.js';
import { readState } from '../src/handlers/pr-state.js';
import { InProcessQueue } from '../src/queue.js';
import type { JobSpec } from '../src/queue.js';
import { issueCommentPayload, startAppServer } from './helpers/app-server.js';
import { FakeGitHub } from './helpers/fake-github.js';
import {
  BEFORE_V4_22_PROMOTION,
  haveRealRepo,
  newFileOfPatch,
  realRepoBefore,
} from './helpers/ocp-history.js';
import { gitIn } from './helpers/git.js';
import { outsideCode } from './helpers/markdown.js';

// Each command runs the real checks on 11 real OpenShift catalogs: seconds on a quiet machine,
// much more on a busy one.
vi.setConfig({ testTimeout: 180_000 });

const CONFIG = `catalogs: [catalogs/*]
maintainers: [alice]
ownership:
  ownersFiles: true
  packageOwners: operators/{package}/ci.yaml
  newPackages: maintainers
`;

/** A bare repository: `main` = `dir` (plus the config), pull request 2 = `pr` on top. */
function makeRepo(dir: string, pr: (work: string) => void) {
  const git = gitIn(dir);
  rmSync(join(dir, '.git'), { recursive: true, force: true });
  mkdirSync(join(dir, '.github'), { recursive: true });
  writeFileSync(join(dir, '.github/catalog-bot.yml'), CONFIG);
  execFileSync('git', ['init', '-q', '-b', 'main', dir]);
  git('add', '-A');
  git('commit', '-qm', 'base');
  const base = git('rev-parse', 'HEAD');
  git('checkout', '-q', '-b', 'pr-2');
  pr(dir);
  git('add', '-A');
  git('commit', '-qm', 'pr', '--allow-empty');
  const head = git('rev-parse', 'HEAD');
  const bare = `${dir}.git`;
  execFileSync('git', ['init', '-q', '--bare', '-b', 'main', bare]);
  git('push', '-q', bare, 'main:refs/heads/main', 'pr-2:refs/heads/pr-2', 'pr-2:refs/pull/2/head');
  const inBare = (...args: string[]) =>
    execFileSync('git', ['-C', bare, ...args], { encoding: 'utf8', maxBuffer: 1 << 28 }).trim();
  return { dir, bare, base, head, git: inBare, cleanup: () => [dir, bare].forEach(rmTree) };
}
const rmTree = (d: string) => rmSync(d, { recursive: true, force: true });

/**
 * The App as `npm start` runs it, on 127.0.0.1, fed signed `issue_comment` deliveries for PR 2
 * of `repo`; `stop()` removes the repository too.
 */
async function startApp(repo: { bare: string; cleanup: () => void }, { held = false } = {}) {
  const { bare } = repo;
  const gh = new FakeGitHub('Codertocat', 'Hello-World', bare);
  gh.addPull({
    number: 2,
    head: execFileSync('git', ['-C', bare, 'rev-parse', 'pr-2'], { encoding: 'utf8' }).trim(),
    author: 'carol',
  });
  const workDir = mkdtempSync(join(tmpdir(), 'catalog-bot-work-'));
  const queue = new InProcessQueue();
  const enqueued: JobSpec[] = [];
  const enqueue = queue.enqueue.bind(queue);
  queue.enqueue = async (job) => {
    enqueued.push(job);
    return enqueue(job);
  };
  // A held queue takes jobs but runs none until `runQueue()`: what is queued at once is known.
  let runQueue = () => undefined as void;
  if (held) {
    const start = queue.start.bind(queue);
    queue.start = (...args) => {
      runQueue = () => start(...args);
    };
  }
  const server = await startAppServer(gh, { queue, workDir, announceAfterMs: 0 });
  let commentId = 5000;
  /** A new comment on PR 2, delivered; its jobs are queued. */
  async function post(login: string, body: string): Promise<number> {
    const id = ++commentId;
    const payload = issueCommentPayload({ bare, number: 2, id, login, body, at: gh.tick() });
    expect(await server.send('issue_comment', payload, `comment-${id}`)).toBe(200);
    return id;
  }
  /** A new comment on PR 2; resolves once every job it caused is done. */
  async function comment(login: string, body: string): Promise<number> {
    const id = await post(login, body);
    await queue.onIdle();
    return id;
  }
  const replies = () => gh.botComments(2).filter((c) => readState(c.body) === undefined);
  const lastReply = () => replies().at(-1)?.body ?? '';
  const reactionsTo = (id: number) => gh.reactions.filter((r) => r.comment === id).map((r) => r.content);
  /** A new comment on PR 2 that must be refused (a confused reaction); resolves to the reply. */
  async function refused(login: string, body: string): Promise<string> {
    const id = await comment(login, body);
    expect(reactionsTo(id)).toEqual(['confused']);
    return lastReply();
  }
  return {
    gh,
    enqueued,
    post,
    runQueue: () => runQueue(),
    idle: () => queue.onIdle(),
    comment,
    replies,
    lastReply,
    reactionsTo,
    refused,
    async stop() {
      await server.stop();
      await queue.close();
      rmTree(workDir);
      repo.cleanup();
    },
  };
}
type App = Awaited<ReturnType<typeof startApp>>;
type Repo = ReturnType<typeof makeRepo>;

describe.skipIf(!haveRealRepo)(
  '/default-channel and /explain on the real community-operators-prod packages',
  () => {
    const TEMPLATE = 'operators/visionone-containersecurity/catalog-templates/basic.yaml';
    let repo: Repo;
    let app: App;
    beforeAll(async () => {
      const dir = realRepoBefore([]);
      // Two of the six packages keep the checks of each edit quick (every catalog stays).
      for (const pkg of [
        'dotvirt-operator',
        'ecr-secret-operator',
        'jumpstarter-operator',
        'rabbitmq-messaging-topology-operator',
      ]) {
        rmSync(join(dir, 'operators', pkg), { recursive: true });
        for (const v of readdirSync(join(dir, 'catalogs')))
          rmSync(join(dir, 'catalogs', v, pkg), { recursive: true, force: true });
      }
      // Files other than catalogs (the template) follow OWNERS files (README "Repository configuration").
      writeFileSync(join(dir, 'operators/visionone-containersecurity/OWNERS'), 'approvers: [pranav-trend]\n');
      repo = makeRepo(dir, (work) => writeFileSync(join(work, 'NOTES.md'), 'a change\n'));
      app = await startApp(repo);
    }, 60_000);
    afterAll(() => app.stop());

    it('/default-channel by someone who does not own the package is refused, and nothing is written', async () => {
      expect(await app.refused('carol', '/default-channel visionone-containersecurity alpha')).toMatch(
        /^@carol `\/default-channel`: only the owners of what it changes or a maintainer may ask for it \(`.*visionone-containersecurity/,
      );
      expect(app.gh.refUpdates).toEqual([]);
      expect(app.gh.created).toEqual([]);
    });

    it('bad input says what is wrong and what would work; nothing is written', async () => {
      expect(await app.refused('pranav-trend', '/default-channel visionone-containersecurity beta')).toBe(
        '@pranav-trend `/default-channel`: `package visionone-containersecurity has no channel "beta" in catalogs/v4.12; its channels: alpha, stable (add the channel first, e.g. with promote)`',
      );
      await app.comment('pranav-trend', '/default-channel no-such-operator alpha');
      expect(app.lastReply()).toMatch(
        /^@pranav-trend `\/default-channel`: `package no-such-operator is in no catalog root \(searched catalogs\/v4\.12, catalogs\/v4\.13,/,
      );
      await app.comment('pranav-trend', '/default-channel visionone-containersecurity');
      expect(app.lastReply()).toContain('usage: `/default-channel <package> <channel>`');
      expect(app.gh.refUpdates).toEqual([]);
    });

    it('/explain by anyone: the head catalog, in words and a Mermaid path, from the explain core', async () => {
      const written = app.gh.refUpdates.length;
      const id = await app.comment('eve', '/explain clusterpulse.v0.2.3 in v4.21');
      expect(app.reactionsTo(id)).toEqual(['+1']);
      const reply = app.lastReply();
      const head = repo.head; // the pull request's head as GitHub reports it
      // The same answer as the core gives on the same catalog.
      const dir = join(repo.dir, 'catalogs/v4.21');
      const report = await validateCatalog(new DirectorySource(dir));
      const found = findBundle(report.model, 'clusterpulse.v0.2.3');
      if ('error' in found) throw new Error(found.error);
      const e = explainBundle(report.model, found.pkg, 'clusterpulse.v0.2.3');
      expect(reply).toBe(
        [
          `@eve \`clusterpulse.v0.2.3\` in \`catalogs/v4.21\`, on the head of this pull request (${head.slice(0, 12)}):`,
          '',
          '```text',
          explainText(e).trimEnd(),
          '```',
          '',
          '```mermaid',
          explainMermaid(e).trimEnd(),
          '```',
        ].join('\n'),
      );
      expect(reply).toContain(
        'clusterpulse.v0.2.3 (0.2.3) is in package clusterpulse, channel fast-v0; the default channel is fast-v1.',
      );
      expect(app.gh.refUpdates).toHaveLength(written); // nothing written by /explain
      expect(app.gh.created).toEqual([]);
    });

    it('/explain without a catalog takes the newest that has the bundle and names the others; `from` narrows it', async () => {
      await app.comment('eve', '/explain clusterpulse.v0.2.3 from 0.2.0');
      const reply = app.lastReply();
      expect(reply).toMatch(
        /^@eve `clusterpulse\.v0\.2\.3` from `0\.2\.0` in `catalogs\/v4\.22`, on the head/,
      );
      expect(reply).toContain(
        'Also in `catalogs/v4.17, catalogs/v4.18, catalogs/v4.19, catalogs/v4.20, catalogs/v4.21`',
      );
      expect(reply).toContain(
        'OLM v1, channel fast-v0: reached from clusterpulse.v0.2.0 via clusterpulse.v0.2.3.',
      );
      expect(reply).not.toContain('clusterpulse.v0.1.1 via');
    });

    it('/explain of what is not there says what is wrong and what would work', async () => {
      await app.comment('eve', '/explain clusterpulse.v9.9.9 in v4.21');
      expect(app.lastReply()).toMatch(
        /^@eve `\/explain` in `catalogs\/v4\.21`: `no bundle "clusterpulse\.v9\.9\.9" in this catalog; package clusterpulse has: clusterpulse\.v0\.1\.1, /,
      );
      await app.comment('eve', '/explain clusterpulse.v0.2.3 in v9.99');
      expect(app.lastReply()).toBe(
        '@eve `/explain`: `v9.99` is not a catalog root; the catalog roots are `catalogs/v4.12, catalogs/v4.13, catalogs/v4.14, catalogs/v4.15, catalogs/v4.16, catalogs/v4.17, catalogs/v4.18, catalogs/v4.19, catalogs/v4.20, catalogs/v4.21, catalogs/v4.22` (write `in v4.22`).',
      );
      await app.comment('eve', '/explain nothing-like-it.v1.0.0');
      expect(app.lastReply()).toMatch(
        /^@eve `\/explain`: no catalog root of this pull request has a bundle `nothing-like-it\.v1\.0\.0`/,
      );
      expect(await app.refused('eve', '/explain clusterpulse.v0.2.3 from banana')).toContain(
        '`banana` is not a version',
      );
      // Anyone may ask and each answer loads catalogs: one such command per comment.
      expect(await app.refused('eve', '/explain nothing-like-it.v1.0.0\n/explain other.v1.0.0')).toContain(
        '`/explain`: one command that edits or explains catalogs per comment',
      );
    });

    // Last: its push moves the pull request's head (as GitHub does), which the /explain tests read.
    it("/default-channel by the package's owner: the template and its 10 catalogs, pushed to the pull request's branch", async () => {
      const before = repo.git('rev-parse', 'pr-2');
      const id = await app.comment('pranav-trend', '/default-channel visionone-containersecurity alpha');
      expect(app.reactionsTo(id), app.lastReply()).toEqual(['+1']);
      expect(app.gh.refUpdates.map((u) => u.ref)).toEqual(['pr-2']);
      const pushed = app.gh.refUpdates[0]!.sha;
      expect(repo.git('rev-parse', `${pushed}^`)).toBe(before);
      const changed = repo.git('diff', '--name-only', before, pushed).split('\n');
      const outputs = [12, 13, 14, 15, 16, 17, 18, 19, 20, 21].map(
        (v) => `catalogs/v4.${v}/visionone-containersecurity/catalog.yaml`,
      );
      expect(changed.sort()).toEqual([...outputs, TEMPLATE].sort());
      const show = (rev: string, path: string) => repo.git('show', `${rev}:${path}`);
      expect(show(pushed, TEMPLATE)).toBe(
        show(before, TEMPLATE).replace('  defaultChannel: stable\n', '  defaultChannel: alpha\n'),
      );
      for (const o of outputs)
        expect(show(pushed, o), o).toBe(
          show(before, o).replace(/^defaultChannel: stable$/m, 'defaultChannel: alpha'),
        );
      const reply = app.lastReply();
      expect(reply).toMatch(/^@pranav-trend Pushed [0-9a-f]{12} to this pull request's branch `pr-2`\./);
      // What changes for new installs, per catalog, under each OLM (src/flows/default-channel/plan.ts).
      // Both channels have the same head: a new classic install gets the same bundle.
      expect(reply).toContain(
        [
          '```text',
          'catalogs/v4.12: default channel of visionone-containersecurity: stable -> alpha. Classic OLM: a new Subscription without a channel installs visionone-containersecurity.v0.0.5 (was visionone-containersecurity.v0.0.5). OLM v1 does not use the default channel: a ClusterExtension without channels still picks from every channel, so new OLM v1 installs do not change.',
          `edited ${TEMPLATE} and re-rendered its outputs`,
          '```',
        ].join('\n'),
      );
      // The template's diff carries its icon: the reply's diff is cut, the reply bounded.
      expect(reply).toContain('+  defaultChannel: alpha\n');
      expect(reply).toContain('… (diff truncated)');
      expect(reply.length).toBeLessThan(25_000);
      expect(outsideCode(reply)).not.toMatch(/Classic OLM/);
    });
  },
);

describe('/explain: names from the pull request cannot inject Markdown, mentions, links or HTML', () => {
  let repo: Repo;
  let app: App;
  const EVIL = '@alice [click](https://evil.example) <img src=x onerror=alert(1)> ```` ` ~~~';
  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'catalog-bot-explain-evil-'));
    const bundle = (name: string, version: string) =>
      `---\nschema: olm.bundle\npackage: evil\nname: ${JSON.stringify(name)}\nimage: quay.io/evil/evil:v${version}\nproperties:\n  - type: olm.package\n    value: {packageName: evil, version: ${version}}\n`;
    repo = makeRepo(dir, (work) => {
      const file = join(work, 'catalogs/v4.21/evil/catalog.yaml');
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(
        file,
        [
          `---\nschema: olm.package\nname: evil\ndefaultChannel: ${JSON.stringify(EVIL)}\n`,
          `---\nschema: olm.channel\npackage: evil\nname: ${JSON.stringify(EVIL)}\nentries:\n  - name: ${JSON.stringify(`${EVIL} 0.9`)}\n  - name: evil.v1.0.0\n    replaces: ${JSON.stringify(`${EVIL} 0.9`)}\n`,
          bundle(`${EVIL} 0.9`, '0.9.0'),
          bundle('evil.v1.0.0', '1.0.0'),
          `---\nschema: olm.deprecations\npackage: evil\nentries:\n  - reference: {schema: olm.package}\n    message: ${JSON.stringify(`${EVIL}\n# heading\n<!-- hidden -->`)}\n`,
        ].join(''),
      );
    });
    app = await startApp(repo);
  }, 60_000);
  afterAll(() => app.stop());

  it('every name and message is inside a code block or span; the reply is bounded', async () => {
    await app.comment('eve', '/explain evil.v1.0.0');
    const reply = app.lastReply();
    // The answer is there (the catalog's names in it)...
    expect(reply).toContain('evil.v1.0.0 (1.0.0) is in package evil');
    expect(reply).toContain(`reached from ${EVIL} 0.9 via evil.v1.0.0`);
    expect(reply).toContain('The package is deprecated: @alice');
    // ...but nothing of it is Markdown: the only mention is the commenter's, no link, no HTML.
    const outside = outsideCode(reply);
    expect(outside.match(/@\w+/g)).toEqual(['@eve']);
    expect(outside).not.toMatch(/\]\(|<img|<!--|https?:|^#/m);
    expect(reply).not.toContain('<!--');
    expect(reply.length).toBeLessThan(20_000);
  });

  it('a name a commenter types is refused before anything is read', async () => {
    expect(await app.refused('eve', '/explain @alice')).toContain('`@alice` is not a bundle name');
    expect(outsideCode(app.lastReply()).match(/@\w+/g)).toEqual(['@eve']);
  });
});

describe('/explain: one user cannot fill the queue with catalog work', () => {
  let repo: Repo;
  let app: App;
  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'catalog-bot-explain-limit-'));
    repo = makeRepo(dir, (work) => {
      const file = join(work, 'catalogs/v4.21/foo/catalog.yaml');
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(
        file,
        `---\nschema: olm.package\nname: foo\ndefaultChannel: stable\n---\nschema: olm.channel\npackage: foo\nname: stable\nentries:\n  - name: foo.v1.0.0\n---\nschema: olm.bundle\npackage: foo\nname: foo.v1.0.0\nimage: quay.io/example/foo:v1.0.0\nproperties:\n  - type: olm.package\n    value: {packageName: foo, version: 1.0.0}\n`,
      );
    });
    app = await startApp(repo, { held: true });
  }, 60_000);
  afterAll(() => app.stop());

  it(`a user has at most ${MAX_COSTLY_PER_USER} comments of catalog work queued; the next ones get a short reply, and nothing is lost`, async () => {
    // eve writes five /explain comments before the repository's queue gets to any of them.
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) ids.push(await app.post('eve', '/explain foo.v1.0.0'));
    // Someone else is not held back by eve's.
    const other = await app.post('mallory', '/explain foo.v1.0.0');
    app.runQueue();
    await app.idle();
    const replies = app.replies().map((c) => c.body);
    const answers = replies.filter((r) => r.includes('foo.v1.0.0 (1.0.0) is in package foo'));
    const refused = replies.filter((r) => r.includes('not run: you have 3 comments'));
    expect(answers).toHaveLength(MAX_COSTLY_PER_USER + 1);
    expect(answers.filter((r) => r.startsWith('@mallory '))).toHaveLength(1);
    expect(refused).toHaveLength(2);
    expect(refused[0]).toMatch(
      /^@eve `\/explain` not run: you have 3 comments with commands that load catalogs \(.*\) waiting or running\. Write it again once one has been answered\.$/,
    );
    expect(ids.map((id) => app.reactionsTo(id))).toEqual([['+1'], ['+1'], ['+1'], [], []]);
    expect(app.reactionsTo(other)).toEqual(['+1']);
    // Once answered, they count no more: eve may ask again.
    await app.comment('eve', '/explain foo.v1.0.0');
    expect(app.lastReply()).toContain('foo.v1.0.0 (1.0.0) is in package foo');
  });
});

describe.skipIf(!haveRealRepo)(
  '/ocp-promote: the v4.22 promotion of community-operators-prod as pull requests',
  () => {
    let repo: Repo;
    let app: App;
    // The real promotion commit of the one `always` package (the last of BEFORE_V4_22_PROMOTION).
    const ECR = 'ecr-secret-operator-promote-v4.22';
    const ALWAYS = 'catalog-bot/ocp-promote-v4.21-v4.22';
    const REVIEW = 'catalog-bot/ocp-promote-v4.21-v4.22-dotvirt-operator';
    beforeAll(async () => {
      const dir = realRepoBefore(BEFORE_V4_22_PROMOTION);
      // dotvirt-operator (review-needed) was already in v4.22 at the time: take it out again.
      rmSync(join(dir, 'catalogs/v4.22/dotvirt-operator'), { recursive: true });
      const ci = join(dir, 'operators/dotvirt-operator/ci.yaml');
      writeFileSync(ci, readFileSync(ci, 'utf8').replace('        - v4.22\n', ''));
      repo = makeRepo(dir, () => undefined);
      app = await startApp(repo);
    }, 60_000);
    afterAll(() => app.stop());

    it('refused for anyone but a maintainer, even a package owner; nothing is written', async () => {
      expect(await app.refused('epheo', '/ocp-promote v4.21 v4.22')).toBe(
        '@epheo `/ocp-promote`: only the maintainers listed in `.github/catalog-bot.yml` on the default branch may open a new OpenShift catalog.',
      );
      expect(app.gh.created).toEqual([]);
      expect(app.enqueued.filter((j) => j.kind === 'edit-pull')).toEqual([]);
    });

    it('bad versions: what is wrong and what would work', async () => {
      await app.comment('alice', '/ocp-promote v4.22 v4.21');
      expect(app.lastReply()).toBe(
        '@alice `/ocp-promote`: `v4.21 is not a later OpenShift version than v4.22`',
      );
      await app.comment('alice', '/ocp-promote 4.21 v4.22');
      expect(app.lastReply()).toBe(
        '@alice `/ocp-promote`: `"4.21" is not an OpenShift catalog name like v4.21`',
      );
      await app.comment('alice', '/ocp-promote v4.21');
      expect(app.lastReply()).toContain('usage: `/ocp-promote <from> <to>`, like `/ocp-promote v4.21 v4.22`');
      expect(app.gh.created).toEqual([]);
    });

    it("a maintainer's comment opens one pull request for the `always` packages and one per review-needed package, in the write queue", async () => {
      const id = await app.comment('alice', '/ocp-promote v4.21 v4.22');
      expect(app.reactionsTo(id)).toEqual(['+1']);
      const writes = app.enqueued.filter((j) => j.kind === 'edit-pull');
      expect(writes.map((j) => j.group)).toEqual(['writes:4242', 'writes:4242']);
      expect(
        app.gh.created.map(({ number, title, head, base, labels }) => ({
          number,
          title,
          head,
          base,
          labels,
        })),
      ).toEqual([
        {
          number: 100,
          title: 'Promote 1 package from v4.21 to v4.22',
          head: ALWAYS,
          base: 'main',
          labels: undefined,
        },
        {
          number: 101,
          title: 'Promote dotvirt-operator from v4.21 to v4.22 (review needed)',
          head: REVIEW,
          base: 'main',
          labels: ['catalog-promotion/review-needed'],
        },
      ]);
      // The owners of the review-needed package are asked; the always pull request asks no one.
      expect(app.gh.created[1]!.body).toContain(
        '@epheo: `operators/dotvirt-operator/ci.yaml` asks for a review before the package is promoted',
      );
      expect(app.gh.created[0]!.body).not.toMatch(/@(?!alice)\w/);
      const main = repo.git('rev-parse', 'main');
      // Each branch is one commit on main with exactly what `catalog-bot ocp-promote` writes.
      const files = (branch: string) => repo.git('diff', '--name-only', main, branch).split('\n').sort();
      expect(repo.git('rev-parse', `${ALWAYS}^`)).toBe(main);
      expect(files(ALWAYS)).toEqual([
        'catalogs/v4.22/ecr-secret-operator/catalog.yaml',
        'operators/ecr-secret-operator/ci.yaml',
      ]);
      const show = (rev: string, path: string) =>
        execFileSync('git', ['-C', repo.bare, 'show', `${rev}:${path}`], {
          encoding: 'utf8',
          maxBuffer: 1 << 28,
        });
      // The real promotion commit, byte for byte (catalog) and as YAML (ci.yaml, layout kept).
      const catalog = 'catalogs/v4.22/ecr-secret-operator/catalog.yaml';
      expect(show(ALWAYS, catalog) === newFileOfPatch(ECR, catalog)).toBe(true);
      const ci = 'operators/ecr-secret-operator/ci.yaml';
      expect(parseYaml(show(ALWAYS, ci))).toEqual(parseYaml(newFileOfPatch(ECR, ci, repo.dir)));
      // ... and only the line `v4.22` inserted after `v4.21`, indented as its neighbours.
      const listed = /^( *)- v4\.21\n/m.exec(show('main', ci))!;
      expect(show(ALWAYS, ci)).toBe(show('main', ci).replace(listed[0], `${listed[0]}${listed[1]}- v4.22\n`));
      expect(files(REVIEW)).toEqual([
        'catalogs/v4.22/dotvirt-operator/catalog.yaml',
        'operators/dotvirt-operator/ci.yaml',
      ]);
      expect(show(REVIEW, 'catalogs/v4.22/dotvirt-operator/catalog.yaml')).toBe(
        show('main', 'catalogs/v4.21/dotvirt-operator/catalog.yaml'),
      );
      expect(app.lastReply()).toBe(
        [
          "@alice Opening 2 pull requests into `main` from `v4.21` to `v4.22` (written one after another at GitHub's pace; asking again updates the same branches):",
          `- \`${ALWAYS}\`: \`Promote 1 package from v4.21 to v4.22\``,
          `- \`${REVIEW}\`: \`Promote dotvirt-operator from v4.21 to v4.22 (review needed)\``,
          '',
          'Promoted (`always`):',
          '  - `ecr-secret-operator`',
          '',
          'Each in its own pull request, labelled `catalog-promotion/review-needed`, its owners asked (`review-needed`):',
          '  - `dotvirt-operator`',
          '',
          'Skipped:',
          '  - `clusterpulse`: `fbc.version_promotion_strategy is never (the default)`',
          '  - `jumpstarter-operator`: `fbc.version_promotion_strategy is never (the default)`',
          '  - `rabbitmq-messaging-topology-operator`: `fbc.version_promotion_strategy is never (the default)`',
          '  - `visionone-containersecurity`: `fbc.version_promotion_strategy is never (the default)`',
        ].join('\n'),
      );
    });

    it('asking again updates the same branches: no new pull request, and nothing rewritten when nothing changed', async () => {
      const updates = app.gh.refUpdates.length;
      await app.comment('alice', '/ocp-promote v4.21 v4.22');
      expect(app.gh.created).toHaveLength(2);
      expect(app.gh.refUpdates).toHaveLength(updates);
      // main moves on: the branches are made again on the new tip, the same two pull requests.
      const work = mkdtempSync(join(tmpdir(), 'catalog-bot-move-'));
      execFileSync('git', ['clone', '-q', repo.bare, work]);
      writeFileSync(join(work, 'NOTES.md'), 'later\n');
      const inWork = gitIn(work);
      inWork('add', '-A');
      inWork('commit', '-qm', 'notes');
      execFileSync('git', ['-C', work, 'push', '-q', 'origin', 'HEAD:main']);
      rmTree(work);
      await app.comment('alice', '/ocp-promote v4.21 v4.22');
      expect(app.gh.created).toHaveLength(2);
      const main = repo.git('rev-parse', 'main');
      expect(repo.git('rev-parse', `${ALWAYS}^`)).toBe(main);
      expect(repo.git('rev-parse', `${REVIEW}^`)).toBe(main);
      expect(app.gh.refUpdates.slice(updates).map((u) => u.ref)).toEqual([ALWAYS, REVIEW]);
      expect(app.gh.created[1]!.labels).toEqual(['catalog-promotion/review-needed']);
    });
  },
);
