// `catalog-bot check [--base <ref>] [--head <ref>]`: the pull-request checks on two commits of
// a git repository (by default: the working tree against the default branch), as the App runs them.
import { runPrChecks } from '../checks/pr.js';
import { defineCommand, EXIT_FAIL, EXIT_OK, requireDirectory, UsageError } from './command.js';
import { defaultBase, resolveCommit, workingTreeCommit } from './working-tree.js';
import { jsonFinding, paint, useColor, writeFindings, writeJson } from './output.js';

export const command = defineCommand({
  options: {
    repo: { type: 'string', default: '.' },
    base: { type: 'string' },
    head: { type: 'string' },
    format: { type: 'string', default: 'text' },
    author: { type: 'string' },
    approver: { type: 'string', multiple: true, default: [] },
  },
  formats: ['text', 'json', 'github'],
  async run({ values }, { out }) {
    if (values.approver.length > 0 && values.author === undefined)
      throw new UsageError('--approver needs --author');
    await requireDirectory(values.repo);
    // Defaults (README "Command line"): head is the working tree, uncommitted changes included;
    // base is where HEAD left the default branch. Both resolved here, so a bad ref is one line.
    const head =
      values.head === undefined
        ? workingTreeCommit(values.repo)
        : resolveCommit(values.repo, values.head, '--head');
    const base =
      values.base === undefined
        ? defaultBase(values.repo)
        : resolveCommit(values.repo, values.base, '--base');
    const result = await runPrChecks({
      repo: values.repo,
      base,
      head,
      author: values.author,
      approvers: values.approver,
      // As the App does: a bundle-only change is checked with the release it needs applied
      // (docs/bundles.md), so its CRDs and upgrade graph are judged before the merge.
      checkRelease: true,
    });
    const failed = result.checks.some((c) => c.conclusion === 'failure');
    if (values.format === 'json') {
      const checks = result.checks.map((c) => ({
        name: c.name,
        conclusion: c.conclusion,
        title: c.title,
        findings: c.findings.map(jsonFinding),
        ...(c.notes ? { notes: c.notes } : {}),
      }));
      writeJson(out, { checks });
    } else if (values.format === 'github') {
      for (const c of result.checks) writeFindings(out, c.findings, 'github');
    } else {
      const color = useColor(out);
      const changed = result.roots.map(
        (r) => `${r.path} (${[...r.packages].sort().join(', ') || 'no package'})`,
      );
      out.write(`changed catalogs: ${changed.join('; ') || 'none'}\n`);
      for (const c of result.checks) {
        const mark =
          c.conclusion === 'failure'
            ? paint('✗', 31, color)
            : c.conclusion === 'neutral'
              ? paint('–', 33, color) // not decided (e.g. no manifests to compare)
              : paint('✓', 32, color);
        out.write(`\n${mark} ${c.name}: ${c.title}\n`);
        writeFindings(out, c.findings, 'text', { color, indent: '  ' });
        for (const note of c.notes ?? []) out.write(`  note: ${note}\n`);
      }
    }
    return failed ? EXIT_FAIL : EXIT_OK;
  },
});
