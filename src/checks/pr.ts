// The checks of a pull request, on two commits of a git repository: the same code path
// for the App and for `catalog-bot check`. Reads git objects only (never a worktree).
import { GitTreeSource, validateCatalog, type CatalogReport } from '../catalog/index.js';
import type { Diagnostic } from '../catalog/diagnostics.js';
import { runGit } from '../catalog/source.js';
import { catalogRoots, changedFiles, changedPackages, readRepoConfig } from './changes.js';
import { toAnnotations, type CheckResult } from './check.js';
import { configProblemsAsDiagnostics } from './config.js';
import { decidePermissions, permissionsCheck, type TeamMembers } from './permissions.js';
import { upgradeGraphCheck } from './upgrade-graph/index.js';
import { validateCheck } from './validate.js';

export interface PrCheckInput {
  repo: string;
  base: string;
  head: string;
  /** Catalog root globs; default: the base commit's `.github/catalog-bot.yml`, else `catalogs/*`. */
  globs?: string[];
  /** The PR author and who said /approve: with an author, `catalog-bot/permissions` is decided too. */
  author?: string;
  approvers?: string[];
  /** `org/team` -> members; without it teams cannot be resolved (reported). */
  teams?: TeamMembers;
}

export interface CheckedRoot {
  path: string;
  base?: CatalogReport;
  head?: CatalogReport;
  /** Packages whose content differs between base and head. */
  packages: Set<string>;
}

export interface PrCheckResult {
  roots: CheckedRoot[];
  checks: CheckResult[];
}

export async function runPrChecks(input: PrCheckInput): Promise<PrCheckResult> {
  const { repo, base, head } = input;
  // The base decides: a pull request cannot change the rules that judge it.
  const { config, problems } = await readRepoConfig(repo, base);
  const configFindings: Diagnostic[] = configProblemsAsDiagnostics(problems);
  const globs = input.globs ?? config.catalogs;
  const [baseRoots, headRoots, files] = await Promise.all([
    catalogRoots(repo, base, globs),
    catalogRoots(repo, head, globs),
    changedFiles(repo, base, head),
  ]);
  const all = [...new Set([...baseRoots, ...headRoots])].sort();
  const touched = all.filter((root) => files.some((f) => f.startsWith(root + '/')));

  const roots: CheckedRoot[] = [];
  for (const path of touched) {
    const [baseReport, headReport] = await Promise.all([
      baseRoots.includes(path) ? validateCatalog(new GitTreeSource(repo, base, path)) : undefined,
      headRoots.includes(path) ? validateCatalog(new GitTreeSource(repo, head, path)) : undefined,
    ]);
    roots.push({
      path,
      base: baseReport,
      head: headReport,
      packages: changedPackages(baseReport?.config, headReport?.config),
    });
  }

  const validate = validateCheck(roots.flatMap((r) => (r.head ? [{ path: r.path, report: r.head }] : [])));
  const checks: CheckResult[] = [withConfigProblems(validate, configFindings), upgradeGraphCheck(roots)];
  if (input.author !== undefined) {
    const baseFiles = {
      read: async (path: string) => {
        try {
          return (await runGit(repo, ['show', `${base}:${path}`])).toString('utf8');
        } catch {
          return undefined;
        }
      },
    };
    const decision = await decidePermissions(
      {
        author: input.author,
        approvers: input.approvers ?? [],
        changes: roots.map((r) => ({
          root: r.path,
          packages: r.packages,
          basePackages: new Set(r.base?.model.keys() ?? []),
          baseConfig: r.base?.config,
          headConfig: r.head?.config,
        })),
        otherFiles: files,
        config,
      },
      baseFiles,
      input.teams ??
        (async (team) => {
          throw new Error(`team ${team} cannot be resolved without GitHub`);
        }),
    );
    checks.unshift(permissionsCheck(decision));
  }
  return { roots, checks };
}

/** A bad repository config fails the validate check, naming the key and line. */
function withConfigProblems(check: CheckResult, problems: Diagnostic[]): CheckResult {
  if (problems.length === 0) return check;
  const findings = [...problems, ...check.findings];
  return {
    ...check,
    conclusion: 'failure',
    title: `Bad repository config; ${check.title}`,
    summary: `**${problems.length} problem${problems.length === 1 ? '' : 's'} in \`.github/catalog-bot.yml\`** (the base branch's copy applies; defaults are used until it is fixed).\n\n${check.summary}`,
    findings,
    annotations: [...toAnnotations(problems), ...check.annotations],
  };
}
