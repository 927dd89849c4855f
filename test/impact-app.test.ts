// What a pull request changes for clusters, in the App's status comment (docs/impact.md),
// through the real Probot server with signed webhooks, real git repositories and GitHub's
// API as a stateful fake that holds every request to GitHub's OpenAPI description:
// - the real clusterpulse 1.0.2 release pull request of community-operators-prod: the one
//   status comment shows the added bundle and the new head, as `catalog-bot impact` says;
//   a push that strands versions updates the same comment; `/explain impact` answers with it;
// - the contributor's bundle-only pull request of that release: its catalog update's impact;
// - an impact far larger than a comment stays within GitHub's limit, summarised per catalog;
// - names with HTML, Markdown, @mentions, Mermaid syntax and a forged state marker render
//   as text and forge nothing.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import type { GitHub } from '../src/github/port.js';
import {
  IMPACT_TOO_LARGE,
  loadState,
  MAX_COMMENT_CHARS,
  readState,
  saveState,
} from '../src/handlers/pr-state.js';
import { InProcessQueue } from '../src/queue.js';
import { bareOrigin } from './helpers/app-harness.js';
import { issueCommentPayload, startAppServer } from './helpers/app-server.js';
import { runCommand } from './helpers/cli.js';
import { haveRealRepo, makeCopRepo, strandingRelease } from './helpers/cop-repo.js';
import { FakeGitHub } from './helpers/fake-github.js';
import { WorkRepo } from './helpers/foo-repo.js';
import { webhookExample } from './helpers/github.js';
import { outsideCode } from './helpers/markdown.js';

vi.setConfig({ testTimeout: 120_000 });

const made: string[] = [];
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

/** The App on 127.0.0.1 for pull request 2 of `bare` (head `head`, by `author`). */
async function startApp(bare: string, head: string, author: string) {
  const gh = new FakeGitHub('Codertocat', 'Hello-World', bare);
  gh.addPull({ number: 2, head, author });
  const workDir = mkdtempSync(join(tmpdir(), 'catalog-bot-work-'));
  made.push(workDir);
  const queue = new InProcessQueue();
  const server = await startAppServer(gh, { queue, workDir, announceAfterMs: 60_000 });
  let delivery = 0;
  let commentId = 7000;
  return {
    gh,
    /** A pull_request delivery for PR 2 at `sha`; resolves when every job it caused is done. */
    async pullRequest(action: 'opened' | 'synchronize', sha: string) {
      const payload = webhookExample('pull_request', 'opened');
      payload.action = action;
      payload.installation = { id: 4242 };
      payload.repository.clone_url = bare;
      payload.number = payload.pull_request.number = 2;
      payload.pull_request.user.login = author;
      payload.pull_request.head.sha = sha;
      expect(await server.send('pull_request', payload, `d-${++delivery}`)).toBe(200);
      await queue.onIdle();
    },
    async comment(login: string, body: string) {
      const id = ++commentId;
      const payload = issueCommentPayload({ bare, number: 2, id, login, body, at: gh.tick() });
      expect(await server.send('issue_comment', payload, `c-${id}`)).toBe(200);
      await queue.onIdle();
    },
    /** The bot's status comments on PR 2 (there must be one). */
    statusComments: () => gh.botComments(2).filter((c) => readState(c.body) !== undefined),
    replies: () => gh.botComments(2).filter((c) => readState(c.body) === undefined),
    async stop() {
      await server.stop();
      await queue.close();
    },
  };
}
type App = Awaited<ReturnType<typeof startApp>>;

// The App of the running test, stopped after it.
let app: App | undefined;
afterEach(async () => {
  await app?.stop();
  app = undefined;
});

/** The community-operators-prod repository before the clusterpulse 1.0.2 release, removed after the file. */
function clusterpulseRepo() {
  const cop = makeCopRepo('clusterpulse/1.0.2');
  made.push(cop.repo);
  return cop;
}

/** `catalog-bot impact` of `head` against main in `repo`, as Markdown: what the comment must say. */
const impactOnMain = (repo: string, head: string) =>
  runCommand('impact', ['--repo', repo, '--base', 'main', '--head', head, '--format', 'markdown']);

/** A bare repository holding the given refs of `repo`, removed after the file. */
function bareOf(repo: string, refspecs: string[]): string {
  const origin = bareOrigin(repo, refspecs);
  made.push(origin.bare);
  return origin.bare;
}

describe.skipIf(!haveRealRepo)('the impact of a release pull request in the status comment', () => {
  it('shows the added bundle and the new head, updates the same comment on a push, and answers /explain impact', async () => {
    const cop = clusterpulseRepo();
    const release = cop.branch('release', () => cop.applyRelease());
    // The same release edited so that 1.0.2 skips only 1.0.1 in v4.21: 1.0.0 is left a head.
    const strand = strandingRelease(cop);
    const bare = bareOf(cop.repo, [
      'main:refs/heads/main',
      'release:refs/pull/2/head',
      'strand:refs/heads/strand',
    ]);
    app = await startApp(bare, release, cop.reviewer);
    await app.pullRequest('opened', release);

    const [status, ...more] = app.statusComments();
    expect(more).toEqual([]);
    const body = status!.body;
    expect(readState(body)?.impact?.sha).toBe(release);
    // What the release of 1.0.2 means: a new entry heading fast-v1, in five identical catalogs.
    expect(body).toContain('### `v4.17-v4.21, 5 catalogs`');
    expect(body).toContain(
      '- channel `fast-v1` (changed): head `clusterpulse.v1.0.1` → `clusterpulse.v1.0.2`',
    );
    expect(body).toContain('  - bundles added: `clusterpulse.v1.0.2`');
    expect(body).toContain('```mermaid\ngraph LR\n');
    // The same answer as the command in a clone.
    const cli = await impactOnMain(cop.repo, release);
    expect(cli.code).toBe(0);
    expect(body).toContain(cli.out.trimEnd());
    expect(body.length).toBeLessThanOrEqual(MAX_COMMENT_CHARS);

    // A push: the same comment now says who is stranded.
    app.gh.forcePush(2, strand);
    await app.pullRequest('synchronize', strand);
    const after = app.statusComments();
    expect(after.map((c) => c.id)).toEqual([status!.id]);
    expect(readState(after[0]!.body)?.impact?.sha).toBe(strand);
    expect(after[0]!.body).toContain(
      '**stranded** (clusters on these lose their way to the head): `clusterpulse.v1.0.0`, `clusterpulse.v1.0.1`',
    );
    expect(after[0]!.body).toContain('### `catalogs/v4.21`');
    expect(after[0]!.body).toContain('### `v4.17-v4.20, 4 catalogs`');

    // `/explain impact` answers with the section the comment shows for the head.
    await app.comment('someone', '/explain impact');
    const reply = app.replies().at(-1)?.body ?? '';
    const section = after[0]!.body.slice(after[0]!.body.indexOf('#### What clusters will see'));
    expect(reply).toContain(section.slice(0, section.indexOf('\n\n<!-- catalog-bot:state')));
    expect(reply).toContain('**stranded**');

    // A head the status comment has no impact for yet: computed afresh in a check worker.
    app.gh.forcePush(2, release);
    await app.comment('someone', '/explain impact');
    const fresh = app.replies().at(-1)?.body ?? '';
    expect(fresh).not.toContain('As the status comment shows');
    expect(fresh).toContain(`(at ${release.slice(0, 12)})`);
    expect(fresh).toContain(cli.out.trimEnd());
  });
});

describe.skipIf(!haveRealRepo)('the impact of a bundle-only pull request', () => {
  it("is its catalog update's: the contributor's clusterpulse 1.0.2 bundle shows the new head in five catalogs", async () => {
    const cop = clusterpulseRepo();
    const bundleOnly = cop.branch('bundle');
    // What the community's release bot then committed (the recorded catalog commit).
    const recorded = cop.branch('recorded', () => cop.applyRelease(), true, 'main');
    const bare = bareOf(cop.repo, ['main:refs/heads/main', 'bundle:refs/pull/2/head']);
    app = await startApp(bare, bundleOnly, cop.reviewer);
    await app.pullRequest('opened', bundleOnly);
    const [status, ...more] = app.statusComments();
    expect(more).toEqual([]);
    expect(readState(status!.body)?.impact?.sha).toBe(bundleOnly);
    // The same impact as the recorded release's: the bundle alone changes no catalog file.
    const cli = await impactOnMain(cop.repo, recorded);
    expect(cli.out).toContain(
      '- channel `fast-v1` (changed): head `clusterpulse.v1.0.1` → `clusterpulse.v1.0.2`',
    );
    expect(status!.body).toContain(cli.out.trimEnd());
  });
});

/** A repository whose PR 2 (branch pr) adds `files` (path -> content) to a base holding `baseFiles`. */
function syntheticRepo(baseFiles: Record<string, string>, files: Record<string, string>) {
  const repo = new WorkRepo('impact-repo-');
  made.push(repo.root);
  const config = { '.github/catalog-bot.yml': 'catalogs: [catalogs/*]\nmaintainers: [alice]\n' };
  const head = repo.pullRequest(2, { ...config, ...baseFiles }, files);
  return { dir: repo.work, head, bare: repo.bare };
}

const bundle = (pkg: string, name: string, version: string) =>
  JSON.stringify({
    schema: 'olm.bundle',
    package: pkg,
    name,
    image: `quay.io/example/${pkg}:${version}`,
    properties: [{ type: 'olm.package', value: { packageName: pkg, version } }],
  });

/** A package with one channel of `n` bundles, each replacing the one before. */
function chainCatalog(pkg: string, channel: string, names: string[]): string {
  const entries = names.map((name, i) => (i === 0 ? { name } : { name, replaces: names[i - 1] }));
  return [
    JSON.stringify({ schema: 'olm.package', name: pkg, defaultChannel: channel }),
    JSON.stringify({ schema: 'olm.channel', package: pkg, name: channel, entries }),
    ...names.map((name, i) => bundle(pkg, name, `1.0.${i}`)),
  ].join('\n');
}

describe('a huge impact in the status comment', () => {
  it('stays within GitHub comment limit: counts per catalog, the first channels, and where the rest is', async () => {
    // Three catalogs, each adding a package of its own size: nothing to group.
    const sizes = { 'v4.10': 80, 'v4.11': 90, 'v4.12': 100 };
    const files: Record<string, string> = {};
    for (const [root, n] of Object.entries(sizes)) {
      const names = Array.from({ length: n }, (_, i) => `big-operator.v1.0.${i}-with-a-rather-long-suffix`);
      files[`catalogs/${root}/big-operator/catalog.json`] = chainCatalog('big-operator', 'stable', names);
    }
    const repo = syntheticRepo({ 'catalogs/v4.10/.keep': '' }, files);
    const cli = await impactOnMain(repo.dir, 'pr');
    // Far more than a comment holds.
    expect(cli.out.length).toBeGreaterThan(MAX_COMMENT_CHARS);
    app = await startApp(repo.bare, repo.head, 'alice');
    await app.pullRequest('opened', repo.head);
    const [status, ...more] = app.statusComments();
    expect(more).toEqual([]);
    const body = status!.body;
    expect(body.length).toBeLessThanOrEqual(MAX_COMMENT_CHARS);
    expect(readState(body)?.impact?.sha).toBe(repo.head);
    for (const [root, n] of Object.entries(sizes)) {
      expect(body).toContain(`### \`catalogs/${root}\``);
      expect(body).toContain(`1 package, 1 channels changed, ${n} entries added, 0 removed, 0 stranded.`);
      expect(body).toContain(
        `  - \`stable\` (added): head (none) → \`big-operator.v1.0.${n - 1}-with-a-rather-long-suffix\`; +${n} −0 entries`,
      );
    }
    expect(body).toContain('`catalog-bot impact --base ');
    expect(body).toContain('prints the whole answer');
  });
});

describe('hostile names in the status comment', () => {
  it('renders every name as text: no HTML, link, mention, Mermaid break or forged state', async () => {
    const forged =
      '<!-- catalog-bot:state {"approvals":[{"login":"mallory","comment":1,"sha":"x","subjects":{}}]} -->';
    const channel = `s\`](https://evil.example)<img src=x onerror=alert(1)>${forged}`;
    const v1 = 'evil.v1"]-->x["a @octocat';
    const v2 = 'evil.v2|*_<b>bold</b> #1 [link](https://evil.example) @github/security';
    const catalog = (entries: object[], bundles: string[]) =>
      [
        JSON.stringify({ schema: 'olm.package', name: 'evil', defaultChannel: channel }),
        JSON.stringify({ schema: 'olm.channel', package: 'evil', name: channel, entries }),
        ...bundles,
      ].join('\n');
    const path = 'catalogs/v4.20/evil/catalog.json';
    const repo = syntheticRepo(
      { [path]: catalog([{ name: v1 }], [bundle('evil', v1, '1.0.0')]) },
      {
        [path]: catalog(
          [{ name: v1 }, { name: v2, replaces: v1 }],
          [bundle('evil', v1, '1.0.0'), bundle('evil', v2, '2.0.0')],
        ),
      },
    );
    app = await startApp(repo.bare, repo.head, 'alice');
    await app.pullRequest('opened', repo.head);
    const [status, ...more] = app.statusComments();
    expect(more).toEqual([]);
    const body = status!.body;
    // The section is there, naming the new bundle.
    expect(body).toContain('bundles added:');
    expect(body).toContain('evil.v2|*_<b>bold</b>');
    // What GitHub renders as Markdown holds none of the names' syntax.
    const section = body.slice(
      body.indexOf('#### What clusters will see'),
      body.lastIndexOf('<!-- catalog-bot:state'),
    );
    const prose = outsideCode(section);
    expect(prose).not.toMatch(/<img|<b>|\]\(|@octocat|@github|onerror|#1\b/);
    // No HTML comment opens in the section: the forged marker is text, and forges nothing.
    expect(section).not.toContain('<!--');
    expect(readState(body)?.approvals).toEqual([]);
    // Mermaid labels hold no quote, bracket, pipe or arrow.
    const mermaid = section.slice(section.indexOf('```mermaid'), section.lastIndexOf('```'));
    const labels = [...mermaid.matchAll(/\["([^"]*)"\]/g)].map((m) => m[1]);
    expect(labels.length).toBeGreaterThan(1);
    for (const label of labels) expect(label).not.toMatch(/["[\]<>|*@]|-->/);
  });
});

describe('the status comment keeps its impact section its own', () => {
  /** GitHub's comments of one pull request, as the port lists and writes them. */
  function commentsOf(bodies: { body: string; login?: string }[]) {
    const comments = bodies.map((b, i) => ({
      id: 100 + i,
      body: b.body,
      user: { login: b.login ?? 'catalog-bot[bot]', type: 'Bot' },
    }));
    const github = {
      comments: {
        list: async () => comments,
        create: async (_ref: unknown, _n: number, body: string) => {
          comments.push({
            id: 100 + comments.length,
            body,
            user: { login: 'catalog-bot[bot]', type: 'Bot' },
          });
          return { id: 100 + comments.length - 1 };
        },
        update: async (_ref: unknown, id: number, body: string) => {
          comments.find((c) => c.id === id)!.body = body;
        },
      },
    } as unknown as GitHub;
    return { github, comments };
  }
  const ref = { owner: 'o', repo: 'r' };
  const sha = 'a'.repeat(40);

  it('a save of approvals or heads keeps the section; an altered section is not the bot comment', async () => {
    const { github, comments } = commentsOf([]);
    const section = '#### What clusters will see after the merge\n\n- channel `stable`: head `a` → `b`';
    await saveState(
      github,
      ref,
      2,
      await loadState(github, ref, 2, 'catalog-bot[bot]'),
      {},
      { sha, section },
    );
    const first = await loadState(github, ref, 2, 'catalog-bot[bot]');
    expect(first.impact).toBe(section);
    expect(first.state.impact?.sha).toBe(sha);
    // Another job records a head: the section stays, in the same comment.
    await saveState(github, ref, 2, first, { head: { sha, at: new Date(0).toISOString(), event: 0 } });
    expect(comments).toHaveLength(1);
    const second = await loadState(github, ref, 2, 'catalog-bot[bot]');
    expect(second.impact).toBe(section);
    expect(second.state.head?.sha).toBe(sha);
    // The section edited by anyone (an admin can edit the bot's comment): not the bot's own words.
    comments[0]!.body = comments[0]!.body.replace('head `a`', 'head `z`');
    const edited = await loadState(github, ref, 2, 'catalog-bot[bot]');
    expect(edited.id).toBeUndefined();
    expect(edited.impact).toBeUndefined();
  });

  it('a section that would take the comment past 65,536 characters becomes one line saying so', async () => {
    const { github, comments } = commentsOf([]);
    const section = `#### What clusters will see after the merge\n\n${'x'.repeat(MAX_COMMENT_CHARS)}`;
    await saveState(github, ref, 2, { state: { approvals: [] } }, {}, { sha, section });
    expect(comments[0]!.body.length).toBeLessThanOrEqual(MAX_COMMENT_CHARS);
    expect(comments[0]!.body).toContain(IMPACT_TOO_LARGE);
    expect((await loadState(github, ref, 2, 'catalog-bot[bot]')).impact).toBe(IMPACT_TOO_LARGE);
  });
});
