// The catalog work of a comment's edit (`/promote`, `/default-channel`, `/deprecate`,
// `/undeprecate`, `/render`; ./flow.ts): planning the edit loads the branch's catalogs, so it
// runs in a check worker, off the App's event loop and under its deadline and heap cap
// (docs/security.md, bounded work). The plan, the commit of the edit in the mirror and its
// checks are one task (`editAndCheck`): the checks reuse the plan's validation of the branch
// tip, so each tree is validated once (docs/architecture.md, the `/promote` walk).
import { GitTreeSource } from '../../catalog/fbc/source.js';
import { PromoteError, templateMappingsFromTree, type FileTree } from '../../catalog/edits/promote.js';
import type { DeprecationKind } from '../../catalog/edits/deprecate.js';
import { withValidationLog } from '../../catalog/validation-log.js';
import { catalogRoots, readRepoConfig } from '../../checks/changes.js';
import type { CheckResult } from '../../checks/check.js';
import { CALLBACKS, CHECKS_SUBJECT, nowRunning, type Callbacks } from '../../checks/isolate.js';
import { PERMISSIONS_CHECK, type TeamMembers } from '../../checks/permissions.js';
import { runPrChecksInProcess, type PrCheckResult } from '../../checks/pr.js';
import { RootValidations } from '../../checks/root-validations.js';
import { commitFiles } from '../../git/tree.js';
import { setDefaultChannel } from '../default-channel/plan.js';
import { deprecate } from '../deprecate/plan.js';
import { promote } from '../promote/plan.js';

/** A planned edit, or why there is none. */
export type Plan = { refused: string } | PlannedEdit;

export interface PlannedEdit {
  edits: { path: string; before: string; after: string }[];
  notes: string[];
  title: string;
}

/**
 * A flow's plan step: export `fn` of `module` (plain data: it travels to the worker), called
 * with `input` and the validations of the task; `callbacks` are main-thread functions it is
 * given (a registry lookup).
 */
export interface PlanTask {
  module: string;
  fn: string;
  input: object;
  callbacks?: Callbacks;
}

/** How a plan step is called in the worker (planCatalogEdit, ../render/work.ts planRender). */
type PlanFn = (input: object, validations: RootValidations) => Promise<Plan>;

/** A comment's edit, as the worker plans, commits and checks it. */
export interface EditWork {
  /** The mirror's git directory. */
  dir: string;
  /** The commit the edit is planned and committed on (the tip of the branch it goes to). */
  parent: string;
  /** The commit whose rules judge the edit (the pull request's base). */
  rules: string;
  plan: Omit<PlanTask, 'callbacks'>;
  /** Who asked (the edit's author for the checks), and where: for the commit message. */
  commenter: string;
  number: number;
  /** `all`: every check must pass on the edit (a promotion); `permissions`: only who asks matters. */
  gate: 'all' | 'permissions';
  /** Say which trees were validated (an observer asked: SessionOptions.observeValidations). */
  logValidations?: boolean;
  /** Main-thread callbacks (set by the worker): team members for the permissions check. */
  teams?: TeamMembers;
}

/** The edit, committed in the mirror and checked; or why not. */
export type EditChecked =
  | { refused: string; validated?: string[] }
  | {
      result: PlannedEdit;
      message: string;
      /** The commit of the edit in the mirror: the one the checks judged. */
      commit: string;
      checks: CheckResult[];
      /** What each checks run did (for observeChecks). */
      ran: NonNullable<PrCheckResult['ran']>[];
      /** The identity of each tree validated, in order (with logValidations). */
      validated?: string[];
    };

/** Which catalog edit, and its arguments (plain data: it travels to the worker). */
export type CatalogEdit =
  | { edit: 'promote'; request: { bundle: string; channel: string; root?: string } }
  | { edit: 'default-channel'; request: { package: string; channel: string } }
  | {
      edit: 'deprecate';
      request: { kind: DeprecationKind; name: string; message?: string; undo: boolean };
    };

export interface CatalogEditWork {
  dir: string;
  /** The commit the edit is planned on (the tip of the branch it goes to). */
  parent: string;
  change: CatalogEdit;
  title: string;
}

/** A file tree of one commit of the mirror, read once (promote reads synchronously). */
export async function gitFileTree(
  dir: string,
  rev: string,
  wanted: (path: string) => boolean,
): Promise<FileTree> {
  const source = new GitTreeSource(dir, rev, '');
  const paths = (await source.list()).filter((e) => e.kind === 'file').map((e) => e.path);
  const contents = await source.read(paths.filter(wanted));
  const texts = new Map<string, string>();
  for (const [path, data] of contents) if (Buffer.isBuffer(data)) texts.set(path, data.toString('utf8'));
  return { list: () => paths, read: (path) => texts.get(path) };
}

/**
 * The plan of a catalog edit (a flow's plan.ts) on the branch's catalogs, the owners files
 * and the templates that say how they are made; a PromoteError is a refusal.
 */
export async function planCatalogEdit(work: CatalogEditWork, validations?: RootValidations): Promise<Plan> {
  const { dir, parent, change, title } = work;
  const { config } = await readRepoConfig(dir, parent);
  const roots = await catalogRoots(dir, parent, config.catalogs);
  const tree = await gitFileTree(
    dir,
    parent,
    (p) => roots.some((r) => p.startsWith(r + '/')) || p.startsWith('operators/') || p.startsWith('.github/'),
  );
  const input = {
    tree,
    roots,
    templates: templateMappingsFromTree(tree),
    // Validated as the checks validate, each set of files once: the checks of the edit reuse them.
    ...(validations
      ? {
          validateFiles: (files: Map<string, string>, label: string) =>
            validations.validateFiles(files, label),
        }
      : {}),
  };
  try {
    const result =
      change.edit === 'promote'
        ? await promote(change.request, input)
        : change.edit === 'default-channel'
          ? await setDefaultChannel(change.request, input)
          : await deprecate(change.request, input);
    return { ...result, title };
  } catch (error) {
    if (error instanceof PromoteError) return { refused: error.message };
    throw error;
  }
}

/**
 * Plan the edit, commit it in the mirror and run the checks on it as the commenter's change:
 * their permissions first (someone who may not ask costs no more checks), then, for a
 * promotion, every check. One task, so each set of files is validated once and the checks
 * reuse what the plan validated (`RootValidations`: by the files' content, never for other
 * files). A limit hit in the checks is named as the checks' (`nowRunning`).
 */
export async function editAndCheck(work: EditWork): Promise<EditChecked> {
  if (!work.logValidations) return planCommitAndCheck(work);
  const { result, validated } = await withValidationLog(() => planCommitAndCheck(work));
  return { ...result, validated };
}

async function planCommitAndCheck(work: EditWork): Promise<EditChecked> {
  const { dir, parent, rules, commenter, number, gate, teams } = work;
  const validations = new RootValidations(dir);
  // The plan step's own callbacks (the worker set them on this task's input).
  const given = Object.fromEntries(
    CALLBACKS.filter((name) => name !== 'teams' && work[name as keyof EditWork] !== undefined).map((name) => [
      name,
      work[name as keyof EditWork],
    ]),
  );
  const module = (await import(work.plan.module)) as Record<string, PlanFn>;
  const result = await module[work.plan.fn]!({ ...work.plan.input, ...given }, validations);
  if ('refused' in result) return result;
  if (result.edits.length === 0) return { refused: 'nothing to change' };
  const message = `${result.title}\n\nRequested by @${commenter} in #${number}.`;
  const files = result.edits.map((e) => ({ path: e.path, text: e.after }));
  const commit = await commitFiles(dir, parent, files, message);
  const asked = {
    repo: dir,
    base: parent,
    rules,
    head: commit,
    author: commenter,
    approvers: [],
    ...(teams ? { teams } : {}),
  };
  nowRunning(CHECKS_SUBJECT);
  const allowed = await runPrChecksInProcess({ ...asked, only: [PERMISSIONS_CHECK] }, validations);
  const ran = allowed.ran ? [allowed.ran] : [];
  const mayAsk = allowed.checks.every((c) => c.conclusion === 'success');
  if (gate === 'permissions' || !mayAsk) return { result, message, commit, checks: allowed.checks, ran };
  nowRunning(CHECKS_SUBJECT);
  const all = await runPrChecksInProcess(asked, validations);
  return { result, message, commit, checks: all.checks, ran: all.ran ? [...ran, all.ran] : ran };
}
