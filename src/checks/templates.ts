// The `catalog-bot/templates` check: every rendered catalog file that a template maps to
// must be exactly what `opm alpha render-template` makes of the template at the head
// commit. Pure: files come from a reader of the head commit; bundle images the committed
// outputs already hold resolve from them, and only new images go to `resolveBundle`.
import type { Diagnostic } from '../catalog/diagnostics.js';
import { lineDiff, unifiedDiff } from '../catalog/edits/promote-diff.js';
import {
  bundleResolverFromCatalog,
  parseTemplate,
  templateKind,
  TemplateError,
  type BundleResolver,
  type TemplateKind,
} from '../catalog/templates/index.js';
import {
  migrateLevelOf,
  OPM_BEHAVIOURS,
  opmBehavioursFor,
  renderAsCommitted,
  type BehaviourMatch,
  type MigrateLevel,
} from '../catalog/templates/behaviours.js';
import { findingsTable, shellWord, toAnnotations, type CheckResult } from './check.js';

export const TEMPLATES_CHECK = 'catalog-bot/templates';

export interface TemplateMappingInput {
  /** Path of the template in the repository. */
  template: string;
  /** `olm.semver` or `olm.template.basic` (informative: the template's schema decides). */
  kind?: string;
  /** Paths of the committed rendered files. */
  outputs: string[];
}

export interface TemplatesCheckInput {
  mappings: TemplateMappingInput[];
  /** A file of the head commit, or undefined when it does not exist. */
  read: (path: string) => string | undefined | Promise<string | undefined>;
  /** Renders bundle images that no committed output holds (the registry); none: they fail. */
  resolveBundle?: BundleResolver;
  /** Bytes of diff shown per output (default 12 000) and in all (default 50 000). */
  maxDiffChars?: number;
  maxSummaryDiffChars?: number;
}

const formatOf = (path: string): 'json' | 'yaml' => (/\.json$/i.test(path) ? 'json' : 'yaml');

/**
 * The command that writes an output, for the fix hint: run as printed it writes the file
 * only when the render succeeds (--output-file), and `bundlesFrom` (the committed catalogs
 * the check took bundles from, in its order) make it offline and byte-identical. Without
 * them it pulls the bundles from their registries.
 */
export function renderCommand(
  template: string,
  output: string,
  migrate: MigrateLevel,
  opm?: string,
  bundlesFrom: readonly string[] = [],
): string {
  return [
    'catalog-bot render-template',
    shellWord(template),
    ...(formatOf(output) === 'json' ? ['-o json'] : ['-o yaml']),
    ...(migrate ? [`--migrate-level ${migrate}`] : []),
    ...(opm && opm !== OPM_BEHAVIOURS[0] ? [`--opm-version ${shellWord(opm)}`] : []),
    ...bundlesFrom.map((f) => `--bundles-from ${shellWord(f)}`),
    `--output-file ${shellWord(output)}`,
  ].join(' ');
}

/** A failure of the registry (or the network), not of the template or the image's content. */
function fromRegistry(err: unknown): boolean {
  const cause = (err as { cause?: unknown }).cause;
  return !(err instanceof TemplateError) || (cause instanceof Error && cause.name === 'RegistryError');
}

/** Each image is asked for once per check, failures included. */
function memoise(resolver: BundleResolver): BundleResolver {
  const seen = new Map<string, ReturnType<BundleResolver>>();
  return (image) => {
    let got = seen.get(image);
    if (!got) seen.set(image, (got = resolver(image)));
    return got;
  };
}

function lineOfMessage(message: string): number | undefined {
  const m = /\bline (\d+)\b/.exec(message);
  return m ? Number(m[1]) : undefined;
}

interface OutputResult {
  output: string;
  status: 'ok' | 'differs' | 'missing' | 'error';
  opm?: string;
  diff?: string;
  /** The render, when it is not what is committed. */
  rendered?: string;
  before?: string;
}

function capDiff(diff: string, max: number): string {
  if (diff.length <= max) return diff;
  const cut = diff.lastIndexOf('\n', max);
  const shown = diff.slice(0, cut < 0 ? max : cut + 1);
  const left = diff.slice(shown.length).split('\n').filter(Boolean).length;
  return `${shown}... (${left} more diff line${left === 1 ? '' : 's'} not shown)\n`;
}

async function checkMapping(
  mapping: TemplateMappingInput,
  input: TemplatesCheckInput,
  findings: Diagnostic[],
): Promise<OutputResult[]> {
  const template = await readTemplate(mapping, input, findings);
  if (!template) return [];
  const committed = new Map<string, string | undefined>();
  for (const o of mapping.outputs) committed.set(o, await input.read(o));
  const resolvers: OutputResolvers = {
    network: memoise(input.resolveBundle ?? (async () => undefined)),
    fromOutput: new Map(),
  };
  // Each output's bundles; an output resolves from its own first, then its siblings'.
  for (const [o, t] of committed)
    if (t !== undefined) resolvers.fromOutput.set(o, bundleResolverFromCatalog([t]));
  const results: OutputResult[] = [];
  let renderFailed = false;
  for (const output of mapping.outputs) {
    const rendered = await renderOutput(mapping, template, committed.get(output), output, resolvers);
    if ('error' in rendered) {
      // One render failure says it for every output of the template.
      if (renderFailed) continue;
      renderFailed = true;
      findings.push(renderFailure(mapping, rendered.error));
      results.push({ output, status: 'error' });
      continue;
    }
    const { best } = rendered;
    if (!best) continue;
    results.push(
      compareOutput(mapping, input, output, committed.get(output), { ...rendered, best }, findings),
    );
  }
  return results;
}

/** The template's text and kind; undefined (with a finding) when it is missing or unreadable. */
async function readTemplate(
  mapping: TemplateMappingInput,
  input: TemplatesCheckInput,
  findings: Diagnostic[],
): Promise<{ text: string; kind: TemplateKind } | undefined> {
  const text = await input.read(mapping.template);
  if (text === undefined) {
    findings.push({
      rule: 'TEMPLATE-MISSING',
      level: 'error',
      message: `template ${mapping.template} is mapped to ${mapping.outputs.join(', ')} but does not exist`,
      file: mapping.template,
      hint: 'Add the template, or remove it from the template mapping.',
    });
    return undefined;
  }
  try {
    return { text, kind: templateKind(parseTemplate(text)) };
  } catch (err) {
    if (!(err instanceof TemplateError)) throw err;
    findings.push({
      rule: 'TEMPLATE-INVALID',
      level: 'error',
      message: `${mapping.template} is not a template opm can read: ${err.message}`,
      file: mapping.template,
      line: lineOfMessage(err.message) ?? 1,
      hint: 'Fix the template: opm alpha render-template refuses it as it is.',
    });
    return undefined;
  }
}

/** Where a template's bundles come from: the committed outputs, then a registry (asked once per image). */
interface OutputResolvers {
  network: BundleResolver;
  fromOutput: Map<string, BundleResolver>;
}

/** One output rendered as it was committed, and which committed outputs gave its bundles. */
interface OutputRender {
  best: BehaviourMatch | undefined;
  /** Output-first order of the outputs whose bundles the render used (none when a registry had to). */
  bundlesFrom: string[];
  migrate: ReturnType<typeof migrateLevelOf>;
}

async function renderOutput(
  mapping: TemplateMappingInput,
  template: { text: string; kind: TemplateKind },
  mine: string | undefined,
  output: string,
  { network, fromOutput }: OutputResolvers,
): Promise<OutputRender | { error: unknown }> {
  const migrate = migrateLevelOf(mine);
  // This output's own bundles first, then its siblings', then the registry.
  const order = [output, ...mapping.outputs.filter((o) => o !== output)];
  // Which committed outputs gave bundles (for the hint), and whether a registry had to.
  const usedOutputs = new Set<string>();
  let usedNetwork = false;
  const resolveBundle: BundleResolver = async (image) => {
    for (const o of order) {
      const got = await fromOutput.get(o)?.(image);
      if (got) {
        usedOutputs.add(o);
        return got;
      }
    }
    usedNetwork = true;
    return network(image);
  };
  try {
    const best = await renderAsCommitted(
      template.text,
      formatOf(output),
      mine,
      { resolveBundle, ...(migrate ? { migrateLevel: migrate } : {}) },
      opmBehavioursFor(template.kind),
      (a, b) => lineDiff(a, b).length,
    );
    return { best, bundlesFrom: usedNetwork ? [] : order.filter((o) => usedOutputs.has(o)), migrate };
  } catch (error) {
    return { error };
  }
}

function renderFailure(mapping: TemplateMappingInput, err: unknown): Diagnostic {
  const message = (err as Error).message;
  return {
    rule: 'TEMPLATE-RENDER',
    level: 'error',
    message: `${mapping.template} cannot be rendered: ${message}`,
    file: mapping.template,
    line: lineOfMessage(message) ?? 1,
    hint: fromRegistry(err)
      ? 'A registry could not give the bundle image: check that it exists and that catalog-bot may pull it, then `/retest`.'
      : 'Fix the template (or the bundle image it names) so that opm alpha render-template can render it.',
  };
}

/** The render against the committed output: ok, missing or differing (with a finding and the diff). */
function compareOutput(
  mapping: TemplateMappingInput,
  input: TemplatesCheckInput,
  output: string,
  mine: string | undefined,
  { best, bundlesFrom, migrate }: OutputRender & { best: BehaviourMatch },
  findings: Diagnostic[],
): OutputResult {
  const command = renderCommand(mapping.template, output, migrate, best.opm, bundlesFrom);
  if (mine === undefined) {
    findings.push({
      rule: 'TEMPLATE-OUTPUT-MISSING',
      level: 'error',
      message: `${output} is rendered from ${mapping.template} but is not committed`,
      file: mapping.template,
      line: 1,
      hint: `Run \`${command}\` and commit the file, or comment \`/render\`.`,
    });
    return { output, status: 'missing', rendered: best.rendered };
  }
  if (best.rendered === mine) return { output, status: 'ok', opm: best.opm };
  const first = lineDiff(mine, best.rendered)[0];
  findings.push({
    rule: 'TEMPLATE-OUT-OF-DATE',
    level: 'error',
    message: `${output} is not the render of ${mapping.template} (${best.changes} line${best.changes === 1 ? '' : 's'} differ)`,
    file: output,
    line: first?.op === '-' ? first.line : Math.max(1, first?.line ?? 1),
    hint: `Run \`${command}\` and commit the result, or comment \`/render\`.`,
  });
  return {
    output,
    status: 'differs',
    opm: best.opm,
    rendered: best.rendered,
    before: mine,
    diff: capDiff(unifiedDiff(output, mine, best.rendered), input.maxDiffChars ?? 12_000),
  };
}

/** The check over every mapping. */
export async function templatesCheck(input: TemplatesCheckInput): Promise<CheckResult> {
  const findings: Diagnostic[] = [];
  const sections: string[] = [];
  let diffBudget = input.maxSummaryDiffChars ?? 50_000;
  let outputs = 0;
  let bad = 0;
  for (const mapping of input.mappings) {
    const before = findings.length;
    const results = await checkMapping(mapping, input, findings);
    outputs += results.length;
    bad += results.filter((r) => r.status !== 'ok').length;
    const lines = [`#### \`${mapping.template}\``, ''];
    for (const r of results) {
      const mark = r.status === 'ok' ? '✓' : '✗';
      const note =
        r.status === 'ok'
          ? `up to date${r.opm && r.opm !== OPM_BEHAVIOURS[0] ? ` (rendered as opm ${r.opm} does)` : ''}`
          : r.status === 'differs'
            ? 'differs from the render'
            : r.status === 'missing'
              ? 'not committed'
              : 'not rendered';
      lines.push(`- ${mark} \`${r.output}\`: ${note}`);
    }
    const mine = findings.slice(before);
    lines.push(...findingsTable(mine));
    for (const r of results.filter((x) => x.diff)) {
      if (diffBudget <= 0) {
        lines.push('', `(diff of \`${r.output}\` left out: the summary is full)`);
        continue;
      }
      const shown = capDiff(r.diff!, diffBudget);
      diffBudget -= shown.length;
      // a fence longer than any run of backticks in the diff
      const fence = '`'.repeat(Math.max(3, ...[...shown.matchAll(/`+/g)].map((m) => m[0].length + 1)));
      lines.push(
        '',
        `<details><summary>diff of <code>${r.output}</code> (committed → render)</summary>`,
        '',
        `${fence}diff`,
        shown.trimEnd(),
        fence,
        '',
        '</details>',
      );
    }
    sections.push(lines.join('\n'));
  }
  const errors = findings.filter((d) => d.level === 'error').length;
  const summary =
    input.mappings.length === 0
      ? 'No templates are mapped to rendered catalogs.'
      : [
          errors > 0
            ? `**${errors} problem${errors === 1 ? '' : 's'}.** Run the command each hint gives (it re-renders that catalog from its template, offline where it can) and commit, or comment \`/render\` to have the bot do it.`
            : `Every rendered catalog (${outputs}) is the render of its template.`,
          '',
          ...sections,
        ].join('\n');
  return {
    name: TEMPLATES_CHECK,
    conclusion: errors > 0 ? 'failure' : 'success',
    title:
      input.mappings.length === 0
        ? 'No templates'
        : errors > 0
          ? `${bad || errors} rendered catalog${(bad || errors) === 1 ? '' : 's'} out of date or not renderable`
          : `${outputs} rendered catalog${outputs === 1 ? '' : 's'} up to date`,
    summary,
    findings,
    annotations: toAnnotations(findings),
  };
}

export interface RenderedOutput {
  path: string;
  /** The committed text (undefined: not committed yet). */
  before: string | undefined;
  after: string;
}

/**
 * What `/render` commits: every mapped output that is not the render of its template,
 * rendered as its committed version was (same opm behaviour and migrate level). Templates
 * that cannot be rendered come back as findings and leave their outputs alone.
 */
export async function renderTemplateOutputs(
  input: TemplatesCheckInput,
): Promise<{ edits: RenderedOutput[]; findings: Diagnostic[] }> {
  const findings: Diagnostic[] = [];
  const edits: RenderedOutput[] = [];
  for (const mapping of input.mappings) {
    for (const r of await checkMapping(mapping, input, findings)) {
      if (r.rendered !== undefined) edits.push({ path: r.output, before: r.before, after: r.rendered });
    }
  }
  return {
    edits,
    findings: findings.filter(
      (d) => d.rule !== 'TEMPLATE-OUT-OF-DATE' && d.rule !== 'TEMPLATE-OUTPUT-MISSING',
    ),
  };
}
