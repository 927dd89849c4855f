// `/remove <package>[/<bundle>]` through the App (docs/remove.md, "In the App"): signed
// webhooks to Probot's server on 127.0.0.1, GitHub's API as the stateful nock fake (every
// request checked against GitHub's description), a real bare repository laid out like
// community-operators-prod (test/helpers/cop-repo.ts), and a real docker-registry on
// 127.0.0.1 holding the catalog image published from main, so the pruning guard has
// something to guard. What the pull request must hold is computed here with
// `catalog-bot remove` on the same commit, and what clusters lose from the package's files.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { GitTreeSource } from '../src/catalog/index.js';
import { readState } from '../src/handlers/pr-state.js';
import { publishCatalog } from '../src/publish/publish.js';
import { RegistryClient } from '../src/publish/registry.js';
import { InProcessQueue } from '../src/queue.js';
import { issueCommentPayload, startAppServer, type AppServer } from './helpers/app-server.js';
import { runCommand } from './helpers/cli.js';
import { COP_CONFIG, haveRealRepo, makeCopRepo, makeIndexRepo } from './helpers/cop-repo.js';
import { FakeGitHub } from './helpers/fake-github.js';
import { haveRegistryTools, pushTestBase, startRegistry, type RunningRegistry } from './helpers/registry.js';
import { remove } from './helpers/removal.js';

type Git = (...args: string[]) => string;

const AUTOMERGE = 'automerge:\n  enabled: true\n  method: merge\n';
const STRANGER = 'carol';

/** Text outside code spans and fenced blocks: what GitHub renders as Markdown. */
function rendered(markdown: string): string {
  return markdown
    .replace(/^(`{3,})[^\n]*\n[\s\S]*?\n\1$/gm, '')
    .replace(/(`+)(?!`)[\s\S]*?(?<!`)\1(?!`)/g, '');
}

const ISSUE = 7; // an issue of the repository, not a pull request

describe.skipIf(!haveRealRepo || !haveRegistryTools)('/remove through the App', { timeout: 240_000 }, () => {
  let registry: RunningRegistry;
  let client: RegistryClient;
  let root: string;
  let bare: string;
  let gh: FakeGitHub;
  let queue: InProcessQueue;
  let app: AppServer | undefined;
  let delivery = 0;
  let commentId = 7000;
  const cleanups: (() => void)[] = [];

  beforeAll(async () => {
    registry = await startRegistry();
    client = new RegistryClient({ insecureHosts: [registry.host], privateHosts: ['127.0.0.1'] });
    await pushTestBase(client, { registry: registry.host, repository: 'base', tag: '1' });
  });
  afterAll(async () => {
    client?.close();
    await registry?.stop();
  });
  afterEach(async () => {
    await app?.stop();
    app = undefined;
    for (const c of cleanups.splice(0)) c();
  });

  /** The repository's main on a bare origin, an open pull request #2 to comment on, the App running. */
  async function serve(git: Git): Promise<string> {
    root = mkdtempSync(join(tmpdir(), 'remove-app-'));
    cleanups.push(() => rmSync(root, { recursive: true, force: true }));
    bare = join(root, 'origin.git');
    execFileSync('git', ['init', '-q', '--bare', '-b', 'main', bare]);
    const main = git('rev-parse', 'main');
    git('push', '-q', bare, 'main:refs/heads/main', 'main:refs/pull/2/head', 'main:refs/heads/pr-2');
    gh = new FakeGitHub('Codertocat', 'Hello-World', bare);
    gh.registerCreatedPulls = true;
    gh.addPull({ number: 2, head: main, author: STRANGER });
    queue = new InProcessQueue();
    app = await startAppServer(gh, { queue, workDir: join(root, 'mirrors'), registry: () => client });
    return main;
  }

  async function comment(number: number, login: string, body: string): Promise<void> {
    const payload = issueCommentPayload({ bare, number, id: ++commentId, login, body, at: gh.tick() });
    if (number === ISSUE) delete payload.issue.pull_request;
    expect(await app!.send('issue_comment', payload, `remove-${++delivery}`)).toBe(200);
    await queue.onIdle();
  }

  const lastReply = (number: number): string =>
    gh
      .botComments(number)
      .filter((c) => readState(c.body) === undefined)
      .at(-1)?.body ?? '';
  const conclusion = (sha: string, name: string) => gh.runsFor(sha, name).at(-1)?.conclusion;
  const bareGit: Git = (...args) => execFileSync('git', ['-C', bare, ...args], { encoding: 'utf8' }).trim();

  it("an owner's /remove of an FBC bundle opens one pull request; the prune guard holds it until an owner's /allow-prune, then it merges and main is valid", async () => {
    const pkg = 'visionone-containersecurity';
    const config = `${COP_CONFIG}${AUTOMERGE}publish:\n  baseImage: ${registry.host}/base:1\n  images:\n    - ${registry.host}/cop:{root}\nimages:\n  unverifiableRegistries: [quay.io]\n`;
    const cop = makeCopRepo('clusterpulse/1.0.2', config);
    cleanups.push(cop.cleanup);
    const ci = parseYaml(readFileSync(join(cop.repo, `operators/${pkg}/ci.yaml`), 'utf8'));
    const owner: string = ci.reviewers[0];
    const mapped: string[] = ci.fbc.catalog_mapping[0].catalog_names;
    const published = 'v4.18';
    expect(mapped).toContain(published);
    const main = await serve(cop.git);
    // What a merge of main published for one of its catalogs.
    await publishCatalog({
      source: new GitTreeSource(bare, main, `catalogs/${published}`),
      root: `catalogs/${published}`,
      tags: [`${registry.host}/cop:{root}`],
      baseImage: `${registry.host}/base:1`,
      client,
      opmCache: false,
    });

    // What `catalog-bot remove` makes of main, and what the template says clusters keep.
    const template = parseYaml(
      readFileSync(join(cop.repo, `operators/${pkg}/catalog-templates/basic.yaml`), 'utf8'),
    );
    const cli = await remove([`${pkg}/0.0.1`, '--repo', cop.repo, '--format', 'json']);
    expect(cli.code, cli.err).toBe(0);
    const name: string = JSON.parse(cli.out).bundle;
    cop.git('add', '-A');
    const wantedTree = cop.git('write-tree');
    cop.git('reset', '-q', '--hard');

    // Someone who does not own the package is refused; nothing is written.
    await comment(2, STRANGER, `/remove ${pkg}/0.0.1`);
    expect(lastReply(2)).toContain(`only the owners of package \`${pkg}\` or a maintainer may remove it`);
    expect(gh.created).toEqual([]);
    expect(gh.refUpdates).toEqual([]);

    await comment(2, owner, `/remove ${pkg}/0.0.1`);
    expect(gh.created, lastReply(2)).toHaveLength(1);
    const pull = gh.created[0]!;
    expect(pull).toMatchObject({ base: 'main', head: `catalog-bot/remove-${pkg}/bundle-0.0.1` });
    expect(lastReply(2)).toContain(`Opened #${pull.number}`);
    const head = gh.pulls.get(pull.number)!.head;
    // Exactly the CLI's removal, on main.
    expect(bareGit('rev-parse', `${head}^`)).toBe(main);
    expect(bareGit('rev-parse', `${head}^{tree}`)).toBe(wantedTree);
    // The description: every mapped catalog loses the same, so they are told once, and the
    // entries that replaced the bundle still take its clusters forward (none stranded).
    expect(pull.body).toContain(`**${mapped.map((v) => `\`${v}\``).join(', ')}** (the same for each)`);
    expect(pull.body).toContain(`- bundles removed: \`${name}\``);
    const replacing = (
      template.entries as { schema: string; name: string; entries?: { name: string; replaces?: string }[] }[]
    )
      .filter((e) => e.schema === 'olm.channel')
      .flatMap((c) => c.entries!.filter((x) => x.replaces === name).map((x) => [c.name, x.name]));
    expect(replacing.length).toBeGreaterThan(0);
    for (const [channel, entry] of replacing)
      expect(pull.body).toContain(
        `- \`${entry}\` in channel \`${channel}\` replaces \`${name}\`, which is gone`,
      );
    expect(pull.body).not.toContain('stranded');
    expect(pull.body).toContain(`/allow-prune ${name}`);

    // Checked like any other: the guard fails it, naming the published image and the bundle.
    expect(conclusion(head, 'catalog-bot/prune')).toBe('failure');
    expect(gh.runsFor(head, 'catalog-bot/prune').at(-1)!.output?.summary).toContain(`bundle ${name}`);
    expect(conclusion(head, 'catalog-bot/validate')).toBe('success');

    // A second /remove of the same target points to it.
    await comment(2, owner, `/remove ${pkg}/${name}`);
    expect(gh.created).toHaveLength(1);
    expect(lastReply(2)).toContain(`#${pull.number} already removes`);

    // The App owns no package: an owner approves it, a while after it was opened (an approval
    // is for a head that was there when it was written, docs/security.md). Without
    // /allow-prune it does not merge.
    gh.tick(61_000);
    await comment(pull.number, owner, '/approve');
    expect(conclusion(head, 'catalog-bot/permissions')).toBe('success');
    expect(conclusion(head, 'catalog-bot/prune')).toBe('failure');
    expect(gh.merges).toEqual([]);
    // A stranger's allow releases nothing.
    await comment(pull.number, STRANGER, `/allow-prune ${name}`);
    expect(lastReply(pull.number)).toContain(`only the owners of package ${pkg} or a maintainer may allow`);
    expect(conclusion(head, 'catalog-bot/prune')).toBe('failure');
    expect(gh.merges).toEqual([]);

    // The owner's allow: the guard passes and the merge gate merges the checked head.
    await comment(pull.number, owner, `/allow-prune ${name}`);
    expect(conclusion(head, 'catalog-bot/prune')).toBe('success');
    expect(gh.merges.map((m) => [m.number, m.sha])).toEqual([[pull.number, head]]);
    // main holds the removal and every catalog it touched is valid.
    const merged = bareGit('rev-parse', 'main');
    expect(bareGit('rev-parse', `${merged}^{tree}`)).toBe(wantedTree);
    const checkout = join(root, 'main');
    execFileSync('git', ['clone', '-q', bare, checkout]);
    const valid = await runCommand(
      'validate',
      mapped.map((v) => join(checkout, 'catalogs', v)),
    );
    expect(valid.code, valid.out + valid.err).toBe(0);
  });

  it("a package on the bundle index: refused arguments that are paths; a bundle named with Markdown and HTML stays quoted in the pull request, which merges on an owner's approval", async () => {
    const pkg = 'multi-nic-cni-operator';
    const ix = makeIndexRepo(pkg, null, `${COP_CONFIG}${AUTOMERGE}`);
    cleanups.push(ix.cleanup);
    // A CSV named with Markdown, HTML, a link and a mention; the next bundle replaces it by that name.
    const hostile = `${pkg}.v1.0.3<img src=x onerror=alert(1)>**x**[click](https://evil.example)@Allda`;
    const csv = (dir: string) =>
      join(ix.repo, `operators/${pkg}/${dir}/manifests/${pkg}.clusterserviceversion.yaml`);
    writeFileSync(
      csv('1.0.3'),
      readFileSync(csv('1.0.3'), 'utf8').replace(`name: ${pkg}.v1.0.3`, `name: ${JSON.stringify(hostile)}`),
    );
    writeFileSync(
      csv('1.0.4'),
      readFileSync(csv('1.0.4'), 'utf8').replace(
        `replaces: ${pkg}.v1.0.3`,
        `replaces: ${JSON.stringify(hostile)}`,
      ),
    );
    ix.git('commit', '-qam', 'a hostile name');
    const ci = parseYaml(readFileSync(join(ix.repo, `operators/${pkg}/ci.yaml`), 'utf8'));
    const owner: string = ci.reviewers[0];
    const main = await serve(ix.git);

    // Arguments that are paths never reach the repository.
    await comment(
      2,
      owner,
      [
        '/remove ../x',
        `/remove ${pkg}/../../etc`,
        '/remove /etc/passwd',
        `/remove ${pkg}/1.0.3/manifests`,
      ].join('\n'),
    );
    for (const arg of ['../x', `${pkg}/../../etc`, '/etc/passwd', `${pkg}/1.0.3/manifests`])
      expect(lastReply(2)).toContain(`\`${arg}\` is not \`<package>\` or \`<package>/<bundle>\``);
    expect(gh.created).toEqual([]);
    expect(gh.refUpdates).toEqual([]);

    await comment(2, owner, `/remove ${pkg}/1.0.3`);
    expect(gh.created, lastReply(2)).toHaveLength(1);
    const pull = gh.created[0]!;
    expect(pull.head).toBe(`catalog-bot/remove-${pkg}/bundle-1.0.3`);
    const head = gh.pulls.get(pull.number)!.head;
    // Only the bundle's directory goes.
    expect(
      bareGit('diff', '--name-only', main, head)
        .split('\n')
        .every((p) => p.startsWith(`operators/${pkg}/1.0.3/`)),
    ).toBe(true);
    expect(bareGit('ls-tree', '-r', '--name-only', head, `operators/${pkg}/1.0.3`)).toBe('');
    // The name is in code spans only: nothing of it renders, links or mentions.
    expect(pull.body).toContain('### What clusters lose, per OpenShift index');
    expect(pull.body).toContain(`\`${hostile}\``);
    const outside = rendered(pull.body);
    for (const piece of ['<img', 'evil.example', '@Allda', 'onerror']) expect(outside).not.toContain(piece);
    expect(pull.title).toBe(`Remove bundle ${hostile} of ${pkg}`);
    // The index is the pipeline's: the guard does not run on it, and an owner's approval merges it.
    // (No prune run at all, or one shown in progress on a slow machine and completed "Not run".)
    expect(
      gh
        .runsFor(head, 'catalog-bot/prune')
        .filter((r) => !(r.conclusion === 'neutral' && r.output?.title === 'Not run')),
    ).toEqual([]);
    gh.tick(61_000);
    await comment(pull.number, owner, '/approve');
    const failing = [...new Set(gh.runsFor(head).map((r) => r.name))].filter(
      (n) => conclusion(head, n) === 'failure',
    );
    expect(failing).toEqual([]);
    expect(gh.merges.map((m) => [m.number, m.sha])).toEqual([[pull.number, head]]);
    expect(bareGit('ls-tree', '-r', '--name-only', 'main', `operators/${pkg}/1.0.3`)).toBe('');

    // The whole package, asked on an issue, from the new main: its own branch and pull request,
    // only its directory deleted, and every OpenShift index it was in loses all of its channels.
    await comment(ISSUE, owner, `/remove ${pkg}`);
    expect(gh.created, lastReply(ISSUE)).toHaveLength(2);
    expect(lastReply(ISSUE)).toContain(`#${gh.created[1]!.number}`);
    const whole = gh.created[1]!;
    expect(whole.head).toBe(`catalog-bot/remove-${pkg}/package`);
    const wholeHead = gh.pulls.get(whole.number)!.head;
    const merged = bareGit('rev-parse', 'main');
    const deleted = bareGit('diff', '--name-only', merged, wholeHead).split('\n');
    expect(deleted).toEqual(bareGit('ls-tree', '-r', '--name-only', merged, `operators/${pkg}`).split('\n'));
    const channels = new Set(
      bareGit(
        'grep',
        '-h',
        'operators.operatorframework.io.bundle.channels.v1',
        merged,
        '--',
        `operators/${pkg}`,
      )
        .split('\n')
        .flatMap(
          (l) =>
            /^\s*operators\.operatorframework\.io\.bundle\.channels\.v1:\s*(.+)$/.exec(l)?.[1]?.split(',') ??
            [],
        )
        .map((c) => c.trim().replace(/^["']|["']$/g, '')),
    );
    for (const channel of channels)
      expect(whole.body).toMatch(new RegExp(`channels removed: [^\n]*\`${channel}\``));
    expect(whole.body).toContain('installed versions stranded in channel');
  });
});
