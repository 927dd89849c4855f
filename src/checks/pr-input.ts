// What the checks of a pull request are given and what they give back (pr.ts runs them,
// isolate.ts carries them to and from the worker thread).
import type { CatalogsImpact } from '../catalog/olm/impact-report.js';
import type { MergedRelease, PendingRelease } from './bundle-pr.js';
import type { CheckResult } from './check.js';
import type { ExplainedCause } from './findings.js';
import type { CheckedRoot } from './checked-root.js';
import type { TeamMembers } from './permissions.js';
import type { PruneRootOutcome, ReadPublishedCatalog } from './prune.js';
import type { ImageCheck, PolicyBundles, RegistryPolicy } from './registry-policy.js';

export interface PrCheckInput {
  repo: string;
  /** The commit the change is measured from (a pull request's merge base). */
  base: string;
  /**
   * The commit whose config and owners files apply (default: `base`). The App passes the
   * base branch's tip: a pull request branched from an old commit still meets today's rules.
   */
  rules?: string;
  head: string;
  /** Catalog root globs; default: the base commit's `.github/catalog-bot.yml`, else `catalogs/*`. */
  globs?: string[];
  /** The PR author and who said /approve: with an author, `catalog-bot/permissions` is decided too. */
  author?: string;
  approvers?: string[];
  /**
   * Recorded `/approve`s with the content digests they saw (`subjects`: permission row ->
   * digest). Each counts only for the rows whose content is still the same.
   */
  approvals?: { login: string; subjects: Record<string, string> }[];
  /** `org/team` -> members; without it teams cannot be resolved (reported). */
  teams?: TeamMembers;
  /**
   * Asks registries whether images exist: with it, `catalog-bot/images` is decided too (the
   * only check that needs the network).
   */
  images?: (refs: string[], policy: RegistryPolicy) => Promise<Map<string, ImageCheck>>;
  /**
   * Renders bundle images new to a template (the registry); without it `catalog-bot/templates`
   * cannot render them. Called with the base config's policy, and only for allowed registries.
   */
  resolveBundle?: PolicyBundles['resolveBundle'];
  /** A bundle image's manifests (the registry), for CRDs the catalog does not carry (`olm.csv.metadata`). */
  bundleManifests?: PolicyBundles['manifests'];
  /**
   * Reads the catalog of a published image (the registry): with it, `catalog-bot/prune`
   * compares each changed catalog with what is published (docs/publishing.md, "Pruning guard").
   */
  published?: ReadPublishedCatalog;
  /**
   * Recorded `/allow-prune`s: `target` is a bundle name or `<package>/<channel>`; each counts
   * only when its author owns the package and the package content (`subjects`) is still what
   * they saw.
   */
  allowPrunes?: { login: string; target: string; subjects: Record<string, string> }[];
  /**
   * Only these checks (names from PR_CHECKS, src/checks/pr-checks.ts), e.g. `/approve` asks
   * only for the permissions decision; default: every check. A check not asked for does no work.
   */
  only?: readonly string[];
  /**
   * When the pull request carries only a bundle, run the catalog checks again on the head
   * with the bundle's release applied (a tree written to the repository's object store; no
   * ref moves), and report those results (docs/bundles.md). The App sets it.
   */
  checkRelease?: boolean;
  /**
   * The App's own release pull request for a merged pull request: the files that pull
   * request changed (GitHub's list). The change passes `catalog-bot/permissions` only if it
   * is exactly the release of the bundle directories among them, computed on the base
   * (docs/bundles.md).
   */
  derivedRelease?: { changed: string[] };
  /**
   * The App's follow-up release after a merge (docs/bundles.md): release the bundle
   * directories among these changed files that `head` holds, on `head`; no check runs. Here,
   * in the worker, because a release costs what the bundle check's did: on the App's event
   * loop it would stall every repository (docs/security.md, bounded work).
   */
  releaseMerged?: { changed: string[] };
  /**
   * Also say what the change means for clusters (docs/impact.md), from the catalogs the
   * checks loaded: the App shows it in its status comment.
   */
  impact?: boolean;
}

export interface PrCheckResult {
  roots: CheckedRoot[];
  checks: CheckResult[];
  /** With an author: each permission row (package or file) -> a digest of its content at head. */
  subjects?: Map<string, string>;
  /**
   * With an author: the permission rows the author agrees to as an owner (the whole row, or
   * one of its owner sets); what an `/approve` of theirs is recorded for (docs/security.md).
   */
  agreed?: string[];
  /** With `catalog-bot/prune` run: what each changed catalog removes from its published image. */
  pruned?: PruneRootOutcome[];
  /** The work done: the checks that ran and how many catalog roots were loaded and validated. */
  ran?: { checks: string[]; validatedRoots: number };
  /** The catalog update a bundle-only pull request needs (the release of its new bundles). */
  release?: PendingRelease;
  /**
   * Root causes: one entry the change wrote that several rules' findings follow from
   * (docs/output.md); byte-identical catalogs give one, naming its catalogs.
   */
  causes?: ExplainedCause[];
  /**
   * A bundle-only change checked with its release applied: the catalog roots that release
   * changes (its findings name their files; the output groups identical catalogs by them).
   */
  releasedRoots?: string[];
  /**
   * Packages still on the bundle index whose bundles the change touches: one line each on
   * the catalogs the index will serve, emulated and checked (docs/bundles.md).
   */
  indexed?: string[];
  /**
   * With `impact`: what clusters will see differently, per changed catalog root (of the
   * change with its release applied, for a bundle-only change); absent when no check loaded
   * the catalogs.
   */
  impact?: CatalogsImpact;
  /** With `releaseMerged`: the directories released and what their release writes (or why not). */
  mergedRelease?: { dirs: string[]; release: MergedRelease };
}
