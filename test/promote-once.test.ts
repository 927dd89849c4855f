// A comment's catalog edit validates each tree once (docs/architecture.md, the `/promote`
// walk): the worker task that plans `/promote`, commits the edit and checks it
// (src/flows/catalog-edit/work.ts editAndCheck) on a real community-operators-prod package,
// with the trees it validated counted (src/catalog/validation-log.ts), beside the same work
// done the old way (the plan and the checks each validating on their own).
import { readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { GitTreeSource } from '../src/catalog/index.js';
import { treeIdentity, withValidationLog } from '../src/catalog/validation-log.js';
import { CHECKS_SUBJECT, CheckLimitError, runTaskIsolated } from '../src/checks/isolate.js';
import { PERMISSIONS_CHECK } from '../src/checks/permissions.js';
import { runPrChecksInProcess } from '../src/checks/pr.js';
import { RootValidations } from '../src/checks/root-validations.js';
import {
  editAndCheck,
  planCatalogEdit,
  type CatalogEditWork,
  type EditWork,
} from '../src/flows/catalog-edit/work.js';
import { commitFiles } from '../src/git/tree.js';
import { haveRealRepo, makeCopRepo, type CopRepo } from './helpers/cop-repo.js';

// Real catalogs of eleven OpenShift versions, planned and checked twice: seconds each on a
// quiet machine, more on a busy one.
vi.setConfig({ testTimeout: 240_000 });

const REQUEST = { bundle: 'clusterpulse.v0.2.3', channel: 'stable-v0' };
const TITLE = `Promote ${REQUEST.bundle} to ${REQUEST.channel}`;

/** The identities of the catalog roots of `rev` that `paths` touch. */
async function rootIdentities(dir: string, rev: string, paths: string[]): Promise<Map<string, string>> {
  const roots = [
    ...new Set(paths.filter((p) => p.startsWith('catalogs/')).map((p) => p.split('/').slice(0, 2).join('/'))),
  ];
  const out = new Map<string, string>();
  for (const root of roots) out.set(root, await treeIdentity(new GitTreeSource(dir, rev, root)));
  return out;
}

/** How often each identity was validated, for those validated more than once. */
function twice(validated: string[]): string[] {
  return [...new Set(validated.filter((id, i) => validated.indexOf(id) !== i))];
}

describe.skipIf(!haveRealRepo)('/promote validates each tree once (clusterpulse, 11 catalogs)', () => {
  let cop: CopRepo;
  let dir: string;
  let parent: string;
  let plan: CatalogEditWork;

  beforeAll(() => {
    cop = makeCopRepo('clusterpulse/1.0.2');
    dir = `${cop.repo}/.git`;
    parent = cop.git('rev-parse', 'main');
    plan = { dir, parent, change: { edit: 'promote', request: REQUEST }, title: TITLE };
  });
  afterAll(() => cop?.cleanup());

  it('plans, commits and checks with the tip and the edit validated once each, and says what the old way said', async () => {
    const work: EditWork = {
      dir,
      parent,
      rules: parent,
      plan: {
        module: new URL('../src/flows/catalog-edit/work.ts', import.meta.url).href,
        fn: 'planCatalogEdit',
        input: plan,
      },
      commenter: cop.reviewer,
      number: 7,
      gate: 'all',
      logValidations: true,
    };
    const once = await editAndCheck(work);
    if ('refused' in once) throw new Error(`refused: ${once.refused}`);
    const validated = once.validated!;

    // The old way: the plan validates the tip's roots from its own reading of the files, the
    // checks (the permissions, then all) validate them again, then the edit.
    const old = await withValidationLog(async () => {
      const planned = await planCatalogEdit(plan);
      if ('refused' in planned) throw new Error(planned.refused);
      const message = `${planned.title}\n\nRequested by @${cop.reviewer} in #7.`;
      const head = await commitFiles(
        dir,
        parent,
        planned.edits.map((e) => ({ path: e.path, text: e.after })),
        message,
      );
      const asked = { repo: dir, base: parent, rules: parent, head, author: cop.reviewer, approvers: [] };
      const allowed = await runPrChecksInProcess({ ...asked, only: [PERMISSIONS_CHECK] });
      const all = await runPrChecksInProcess(asked);
      return { planned, message, allowed, all };
    });

    // The same edit, the same commit message, the same check results, byte for byte.
    expect(once.result).toEqual(old.result.planned);
    expect(once.message).toBe(old.result.message);
    expect(once.checks).toEqual(old.result.all.checks);
    expect(once.ran).toEqual([old.result.allowed.ran, old.result.all.ran]);
    expect(once.checks.filter((c) => c.conclusion === 'failure')).toEqual([]);

    // Each catalog root the edit touches: its tree at the tip, then the edited tree, once each.
    const paths = once.result.edits.map((e) => e.path);
    const tip = await rootIdentities(dir, parent, paths);
    const edited = await rootIdentities(dir, once.commit, paths);
    expect(tip.size).toBeGreaterThan(1);
    for (const [root, id] of tip) {
      expect(edited.get(root), root).not.toBe(id); // the edit is another tree: validated on its own
      expect(
        validated.filter((v) => v === id),
        `${root} at the tip`,
      ).toHaveLength(1);
      expect(
        validated.filter((v) => v === edited.get(root)),
        `${root} edited`,
      ).toHaveLength(1);
    }
    expect(twice(validated)).toEqual([]);

    // The old way validated every touched root of the tip at least twice (the plan's reading
    // and the checks'; roots that hold the same files as another, more).
    for (const [root, id] of tip)
      expect(old.validated.filter((v) => v === id).length, root).toBeGreaterThanOrEqual(2);
    expect(old.validated.length).toBeGreaterThan(validated.length);
  });

  it('a report is given only for the very files it was made from: a moved branch, an edited file, a symlink are validated again', async () => {
    const root = 'catalogs/v4.21';
    const validations = new RootValidations(dir);
    const atTip = await withValidationLog(() => validations.validate('refs/heads/main', root));
    expect(atTip.validated).toHaveLength(1);
    // The same files again, read from the commit or held in memory: no validation.
    const files = new Map<string, string>();
    for (const path of cop.git('ls-tree', '-r', '--name-only', 'main', '--', `${root}/`).split('\n'))
      files.set(path.slice(root.length + 1), cop.git('show', `main:${path}`) + '\n');
    const again = await withValidationLog(async () => [
      await validations.validate(parent, root),
      await validations.validateFiles(files, root),
    ]);
    expect(again.validated).toEqual([]);
    expect(again.result[0]).toBe(atTip.result);
    expect(again.result[1]).toBe(atTip.result);

    // The branch moves on to a commit whose root has another bundle: the same ref, other files.
    const moved = cop.branch(
      'moved',
      () => {
        const catalog = `${cop.repo}/${root}/clusterpulse/catalog.yaml`;
        const text = readFileSync(catalog, 'utf8');
        writeFileSync(catalog, text.replaceAll('clusterpulse.v0.2.3', 'clusterpulse.v0.2.3-moved'));
      },
      false,
    );
    cop.git('update-ref', 'refs/heads/main', moved);
    try {
      const afterMove = await withValidationLog(() => validations.validate('refs/heads/main', root));
      expect(afterMove.validated).toHaveLength(1);
      expect(afterMove.validated[0]).not.toBe(atTip.validated[0]);
      const names = (r: typeof atTip.result) => r.config.bundles.map((b) => b.name);
      expect(names(afterMove.result)).toContain('clusterpulse.v0.2.3-moved');
      expect(names(atTip.result)).not.toContain('clusterpulse.v0.2.3-moved');
    } finally {
      cop.git('update-ref', 'refs/heads/main', parent);
    }

    // One byte of one file differs: validated again.
    const [first] = files.keys();
    const edited = new Map(files).set(first!, files.get(first!)! + '\n');
    const byte = await withValidationLog(() => validations.validateFiles(edited, root));
    expect(byte.validated).toHaveLength(1);
    expect(byte.result).not.toBe(atTip.result);

    // A root with a symlink is never taken for the files it points at.
    const linked = cop.branch(
      'linked',
      () => {
        symlinkSync('clusterpulse/catalog.yaml', `${cop.repo}/${root}/link.yaml`);
      },
      false,
      parent,
    );
    const withLink = await withValidationLog(async () => [
      await validations.validate(linked, root),
      await validations.validate(linked, root),
    ]);
    expect(withLink.validated).toHaveLength(2);
  });
});

describe('one task, two deadlines: the plan, then the checks (src/checks/isolate.ts nowRunning)', () => {
  /** A task in a check worker that works `planMs`, then (after nowRunning) `checksMs`. */
  function task(planMs: number, checksMs: number | undefined) {
    const isolate = new URL('../src/checks/isolate.ts', import.meta.url).href;
    const source = `import { nowRunning, CHECKS_SUBJECT } from ${JSON.stringify(isolate)};
      const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
      export async function run() {
        await sleep(${planMs});
        ${checksMs === undefined ? '' : `nowRunning(CHECKS_SUBJECT); await sleep(${checksMs});`}
        return 'done';
      }`;
    return runTaskIsolated<string>(
      {
        module: new URL(`data:text/javascript,${encodeURIComponent(source)}`),
        fn: 'run',
        input: {},
        what: 'the /promote edit',
      },
      { timeoutMs: 3000, memoryMb: 256, workers: 1 },
    );
  }

  it("a limit hit in the checks is the checks' (named as they were named in a worker of their own); in the plan, the edit's", async () => {
    const inChecks = await task(0, 60_000).catch((e: unknown) => e);
    expect(inChecks).toBeInstanceOf(CheckLimitError);
    expect((inChecks as CheckLimitError).subject).toBe(CHECKS_SUBJECT.what);
    expect((inChecks as Error).message).toBe(
      "the checks of this pull request ran longer than catalog-bot's wall-clock limit of 3 s (CATALOG_BOT_CHECK_TIMEOUT_MS) and were stopped",
    );
    const inPlan = await task(60_000, undefined).catch((e: unknown) => e);
    expect((inPlan as CheckLimitError).subject).toBe('the /promote edit');
    expect((inPlan as Error).message).toBe(
      "the /promote edit ran longer than catalog-bot's wall-clock limit of 3 s (CATALOG_BOT_CHECK_TIMEOUT_MS) and was stopped",
    );
  });

  it('each part has its own deadline, as when the plan and the checks ran in workers of their own', async () => {
    // 2 s + 2 s: over one 3 s deadline, within two.
    expect(await task(2000, 2000)).toBe('done');
  });
});
