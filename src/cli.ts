#!/usr/bin/env node
// The catalog-bot command: the same checks as the GitHub App, on local files, no GitHub.
import { realpathSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { relative, join } from 'node:path';
import { parseArgs } from 'node:util';
import { availableParallelism } from 'node:os';
import type { ChannelGraph } from './catalog/olm/graph.js';
import type { Diagnostic } from './catalog/index.js';
// Only what starts `validate`'s second thread is loaded up front: the catalog code loads
// meanwhile (README, "Benchmark").
import { startLoadHelper } from './catalog/fbc/load-threads.js';
import { DEFAULT_MAX_FILE_SIZE } from './catalog/fbc/source.js';

const EXIT_OK = 0;
const EXIT_FAIL = 1;
const EXIT_USAGE = 2;

const USAGE = `Usage: catalog-bot <command> [options]

Commands:
  check --base <ref> --head <ref> [--repo <dir>]
                       Run the pull-request checks on two commits of a git repository,
                       as the GitHub App does (exit 0 pass, 1 a check fails, 2 usage/IO)
      --format text|json|github   output format (default: text)
      --author <login> [--approver <login>]...
                                  also decide catalog-bot/permissions (OWNERS files,
                                  package owners and maintainers of the base commit)
  validate <root>...   Validate FBC catalog roots exactly as \`opm validate\` does
                       (exit 0 valid, 1 invalid, 2 usage or I/O error)
      --format text|json|github   output format (default: text)
      --max-file-size <bytes>     refuse larger files (default: ${DEFAULT_MAX_FILE_SIZE})
  render <root>        Print the catalog as a normalised JSON stream, like \`opm render\`
  range <skipRange> <version>...
                       Evaluate a skipRange with OLM's (blang/semver v4) semantics
                       (exit 0 valid range, 1 invalid range, 2 usage error)
      --format json|text          output format (default: json)
  graph <root> <package> [--channel <name>]
                       One channel's upgrade graph under classic OLM and OLM v1
      --format json|text|mermaid|dot  output format (default: text)
      --installed <bundle>=<version>  a bundle installed on clusters (repeatable;
                                      it may be absent from the catalog)
      --v1-version-range <range>      OLM v1 spec.source.catalog.version (Masterminds)
  deps <root> <package> [--channel <name>]
                       What a fresh install of the package pulls in: the bundle OLM
                       installs and the provider it picks for each requirement (exit 0 all
                       met, 1 a requirement cannot be met, 2 usage/IO)
      --format text|json|mermaid  output format (default: text)
      --external-gvk <group>/<version>/<kind>, --external-package <name>
                                  providers outside the catalog (repeatable)
  crd-diff <old-bundle> <new-bundle> --root <root>
                       Compare the CRDs of two bundles as OLM does on an upgrade
                       (exit 0 safe, 1 unsafe, 2 usage/IO or no manifests)
      --format text|json          output format (default: text)
  images <root>        Check that every bundle and related image exists in its registry
                       (exit 0 all exist, 1 missing, disallowed or not asked unless
                       on an --unverifiable-registry, 2 usage)
      --format text|json, --allowed-registry <host>..., --unverifiable-registry <host>...,
      --concurrency <n>
  build <root> --tag <image>... [--base <image>] [--push | --oci-dir <dir>]
                       Build the catalog image natively (the base image's platforms plus
                       <root> at /configs, served by opm) and print or push its digests
      --rev <git-rev> [--repo <dir>]   read the root from a git commit (no checkout)
      --repo-url <url>, --commit <sha> OCI source annotations; --format text|json
  promote <bundle> <channel> [--root <root>] [--repo <dir>] [--dry-run]
                       Add a bundle the catalog has to a channel with edges that keep it
                       single-headed and every user upgradeable; template-aware (edits the
                       template, re-renders); keeps comments and layout; prints the diff
                       (exit 0 done, 1 refused, 2 usage/IO)
  ocp-promote <from> <to> [--repo <dir>] [--package <pkg>]... [--format text|json]
                       Open OpenShift catalog <to> from <from>: copy every package whose
                       ci.yaml version_promotion_strategy is always (and every --package)
                       and add <to> to its catalog_mapping, keeping comments and layout
                       (exit 0 done, 1 refused, 2 usage/IO)
  ocp-matrix [--repo <dir>] [--package <pkg>]... [--format text|json|markdown]
                       Packages x OpenShift catalogs: the default channel's head in each
                       cell, gaps, and the ocp-continuity findings (exit 0 no errors,
                       1 errors, 2 usage/IO)
  default-channel <package> <channel> [--root <root>] [--repo <dir>] [--dry-run]
                       Set the package's default channel where it is written (catalog or
                       olm.template.basic template, re-rendered); validated first; keeps
                       comments and layout; prints the diff (exit 0 done, 1 refused, 2 usage/IO)
  explain <bundle> [--from <version>] [--catalog <root>]
                       Whether new installs get the bundle and which installed versions
                       reach it, by what path, under classic OLM and OLM v1, and where
                       not, why (exit 0, 2 usage/IO or unknown bundle)
      --format text|json|mermaid  output format (default: text)
  render-template <template> [-o yaml|json] [--bundles-from <dir>]
                  [--migrate-level bundle-object-to-csv-metadata] [--opm-version <v>]
                       Render an olm.semver or olm.template.basic template exactly as
                       \`opm alpha render-template\` does (exit 0, 1 cannot render, 2 usage)
  release <bundle-dir> [--repo <dir>] [--format text|json]
                       Add a bundle directory to every template its release-config.yaml
                       names and re-render every catalog they map to, as the release bot
                       does (exit 0 done, 1 refused, 2 usage/IO)
  help                 Show this help

Registry credentials (images, build): REGISTRY_AUTH_FILE (each entry for its own host), or
REGISTRY_USERNAME and REGISTRY_PASSWORD (only for build's --tag/--base hosts and the hosts in
REGISTRY_CREDENTIAL_HOSTS); plain HTTP only for hosts in REGISTRY_INSECURE_HOSTS.
`;

class UsageError extends Error {}

export async function main(
  argv: string[],
  out: NodeJS.WritableStream = process.stdout,
  err: NodeJS.WritableStream = process.stderr,
): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case 'validate':
        return await validateCommand(rest, out);
      case 'render':
        return await renderCommand(rest, out, err);
      case 'range':
        return await rangeCommand(rest, out);
      case 'graph':
        return await graphCommand(rest, out);
      case 'check':
        return await checkCommand(rest, out);
      // Loaded on demand, like the pull-request checks: start-up stays fast.
      case 'deps':
        return await (await import('./commands/deps.js')).depsCommand(rest, out, err);
      case 'crd-diff':
        return await (await import('./commands/crd-diff.js')).crdDiffCommand(rest, out, err);
      case 'images':
        return await (await import('./commands/images.js')).imagesCommand(rest, out, err);
      case 'build':
        return await (await import('./commands/build.js')).buildCommand(rest, out, err);
      case 'promote':
        return await (await import('./commands/promote.js')).promoteCommand(rest, out);
      case 'ocp-promote':
        return await (await import('./commands/ocp-promote.js')).ocpPromoteCommand(rest, out);
      case 'ocp-matrix':
        return await (await import('./commands/ocp-matrix.js')).ocpMatrixCommand(rest, out);
      case 'default-channel':
        return await (await import('./commands/default-channel.js')).defaultChannelCommand(rest, out);
      case 'explain':
        return await (await import('./commands/explain.js')).explainCommand(rest, out, err);
      case 'render-template':
        return await (await import('./commands/render-template.js')).renderTemplateCommand(rest, out);
      case 'release':
        return await (await import('./commands/release.js')).releaseCommand(rest, out);
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        out.write(USAGE);
        return command === undefined ? EXIT_USAGE : EXIT_OK;
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
  } catch (problem) {
    const message = (problem as Error).message;
    const usage =
      problem instanceof UsageError || (problem as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
    err.write(`catalog-bot: ${message}\n${usage ? `\n${USAGE}` : ''}`);
    return EXIT_USAGE;
  }
}

async function requireDirectory(root: string): Promise<void> {
  let info;
  try {
    info = await stat(root);
  } catch {
    throw new Error(`${root}: no such file or directory`);
  }
  if (!info.isDirectory()) throw new Error(`${JSON.stringify(root)} is not a directory`);
}

async function validateCommand(args: string[], out: NodeJS.WritableStream): Promise<number> {
  // Started first: the second thread takes a moment to start (docs: README, "Benchmark").
  const helper = availableParallelism() > 1 ? startLoadHelper() : undefined;
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { format: { type: 'string', default: 'text' }, 'max-file-size': { type: 'string' } },
  });
  const format = values.format;
  if (format !== 'text' && format !== 'json' && format !== 'github')
    throw new UsageError(`unknown format "${format}"`);
  if (positionals.length === 0) throw new UsageError('validate needs at least one catalog root');
  const maxFileSize = values['max-file-size'] === undefined ? undefined : Number(values['max-file-size']);
  if (maxFileSize !== undefined && !(maxFileSize > 0))
    throw new UsageError('--max-file-size must be a positive number');
  for (const root of positionals) await requireDirectory(root);
  const { DirectorySource, validateCatalog } = await import('./catalog/index.js');

  const all: Diagnostic[] = [];
  const summaries: string[] = [];
  let valid = true;
  for (const root of positionals) {
    const started = performance.now();
    const report = await validateCatalog(new DirectorySource(root), {
      maxFileSize,
      validationOnly: true,
      helper,
    });
    const seconds = (performance.now() - started) / 1000;
    valid &&= report.valid;
    // Paths as the user named them, so editors and CI annotations find the files.
    for (const d of report.diagnostics)
      all.push(d.file === undefined ? d : { ...d, file: join(root, d.file) });
    const errors = report.diagnostics.filter((d) => d.level === 'error').length;
    const warnings = report.diagnostics.length - errors;
    const m = report.model;
    let channels = 0;
    let bundles = 0;
    for (const p of m.values()) {
      channels += p.channels.size;
      for (const c of p.channels.values()) bundles += c.bundles.size;
    }
    summaries.push(
      `${report.valid ? 'valid' : 'invalid'}: ${root}: ${errors} error${errors === 1 ? '' : 's'}, ${warnings} warning${warnings === 1 ? '' : 's'}` +
        ` (${report.stats.files} files, ${m.size} packages, ${channels} channels, ${bundles} channel entries; ${seconds.toFixed(2)} s)`,
    );
  }

  if (format === 'json') {
    const errors = all.filter((d) => d.level === 'error');
    const warnings = all.filter((d) => d.level !== 'error');
    out.write(
      JSON.stringify(
        { valid, errors: errors.map(jsonFinding), warnings: warnings.map(jsonFinding) },
        null,
        2,
      ) + '\n',
    );
  } else if (format === 'github') {
    for (const d of all) out.write(githubAnnotation(d) + '\n');
    for (const s of summaries) out.write(s + '\n');
  } else {
    const color = useColor(out);
    for (const d of all) out.write(textFinding(d, color) + '\n');
    for (const s of summaries) out.write(paint(s, s.startsWith('valid') ? 32 : 31, color) + '\n');
  }
  return valid ? EXIT_OK : EXIT_FAIL;
}

function jsonFinding(d: Diagnostic): Record<string, unknown> {
  return {
    rule: d.rule,
    level: d.level,
    message: d.message,
    file: d.file ?? null,
    line: d.line ?? null,
    column: d.column ?? null,
    package: d.package ?? null,
    hint: d.hint ?? null,
  };
}

function useColor(out: NodeJS.WritableStream): boolean {
  return (out as { isTTY?: boolean }).isTTY === true && !process.env.NO_COLOR && process.env.TERM !== 'dumb';
}

function paint(s: string, code: number, color: boolean): string {
  return color ? `\u001b[${code}m${s}\u001b[0m` : s;
}

function location(d: Diagnostic): string {
  if (d.file === undefined) return '';
  const file = relative(process.cwd(), d.file) || d.file;
  return `${file}${d.line !== undefined ? `:${d.line}` : ''}${d.column !== undefined ? `:${d.column}` : ''}: `;
}

export function textFinding(d: Diagnostic, color = false): string {
  const level = paint(d.level, d.level === 'error' ? 31 : d.level === 'warning' ? 33 : 36, color);
  const head = `${location(d)}${level} ${paint(d.rule, 1, color)}: ${d.message}`;
  return d.hint ? `${head}\n    ${paint('hint:', 2, color)} ${d.hint}` : head;
}

/** A GitHub Actions workflow command, escaped as the runner expects. */
export function githubAnnotation(d: Diagnostic): string {
  const esc = (s: string): string => s.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
  const prop = (s: string): string => esc(s).replace(/:/g, '%3A').replace(/,/g, '%2C');
  const kind = d.level === 'notice' ? 'notice' : d.level;
  const params = [
    d.file !== undefined ? `file=${prop(d.file)}` : undefined,
    d.line !== undefined ? `line=${d.line}` : undefined,
    d.column !== undefined ? `col=${d.column}` : undefined,
    `title=${prop(d.rule)}`,
  ].filter(Boolean);
  return `::${kind} ${params.join(',')}::${esc(d.hint ? `${d.message}\n${d.hint}` : d.message)}`;
}

async function rangeCommand(args: string[], out: NodeJS.WritableStream): Promise<number> {
  const [{ tryParseRange }, { tryParseVersion }] = await Promise.all([
    import('./catalog/versions/range.js'),
    import('./catalog/versions/semver.js'),
  ]);
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { format: { type: 'string', default: 'json' } },
  });
  if (values.format !== 'json' && values.format !== 'text')
    throw new UsageError(`unknown format "${values.format}"`);
  const [range, ...versions] = positionals;
  if (range === undefined) throw new UsageError('range needs a skipRange (quote it) and versions to test');
  const parsed = tryParseRange(range);
  const matches: Record<string, boolean> = {};
  const versionErrors: Record<string, string> = {};
  for (const v of versions) {
    const version = tryParseVersion(v);
    if (!version.ok) {
      versionErrors[v] = version.error;
      matches[v] = false;
      continue;
    }
    try {
      matches[v] = parsed.ok && parsed.range.matches(version.version);
    } catch {
      matches[v] = false; // an empty `||` group makes OLM's evaluation fail: nothing matches
    }
  }
  if (values.format === 'json') {
    out.write(
      JSON.stringify(
        {
          valid: parsed.ok,
          error: parsed.ok ? null : parsed.error,
          meaning: parsed.ok ? parsed.range.toString() : null,
          matches,
          ...(Object.keys(versionErrors).length > 0 ? { versionErrors } : {}),
        },
        null,
        2,
      ) + '\n',
    );
  } else {
    out.write(
      parsed.ok
        ? `valid: ${JSON.stringify(range)} means ${parsed.range.toString()}\n`
        : `invalid: ${parsed.error}\n`,
    );
    for (const v of versions)
      out.write(`${v}: ${versionErrors[v] ?? (matches[v] ? 'matches' : 'does not match')}\n`);
  }
  return parsed.ok ? EXIT_OK : EXIT_FAIL;
}

async function graphCommand(args: string[], out: NodeJS.WritableStream): Promise<number> {
  const [{ tryParseVersion }, { DirectorySource, validateCatalog }] = await Promise.all([
    import('./catalog/versions/semver.js'),
    import('./catalog/index.js'),
  ]);
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      channel: { type: 'string' },
      format: { type: 'string', default: 'text' },
      installed: { type: 'string', multiple: true, default: [] },
      'v1-version-range': { type: 'string' },
    },
  });
  const format = values.format;
  if (!['json', 'text', 'mermaid', 'dot'].includes(format))
    throw new UsageError(`unknown format "${format}"`);
  if (positionals.length !== 2) throw new UsageError('graph needs a catalog root and a package name');
  const [root, packageName] = positionals as [string, string];
  const installed = values.installed.map((spec) => {
    const at = spec.lastIndexOf('=');
    if (at <= 0) throw new UsageError(`--installed takes <bundle>=<version>, not "${spec}"`);
    const version = tryParseVersion(spec.slice(at + 1));
    if (!version.ok) throw new UsageError(`--installed ${spec}: ${version.error}`);
    return { name: spec.slice(0, at), version: version.version };
  });
  await requireDirectory(root);
  // Loaded here: `validate`, the most used command, does not need the graph code.
  const [{ channelGraph, dot, findChannel, graphText, mermaid }, { InvalidVersionRangeError }] =
    await Promise.all([import('./catalog/olm/graph.js'), import('./catalog/olm/v1.js')]);
  const report = await validateCatalog(new DirectorySource(root));
  const found = findChannel(report.model, packageName, values.channel);
  if ('error' in found) throw new Error(found.error);
  let graph: ChannelGraph;
  try {
    graph = channelGraph(found.pkg, found.channel, { installed, v1VersionRange: values['v1-version-range'] });
  } catch (err) {
    if (err instanceof InvalidVersionRangeError) throw new UsageError(err.message);
    throw err;
  }
  const errors = report.diagnostics.filter((d) => d.level === 'error');
  if (format === 'json') {
    out.write(
      JSON.stringify(
        {
          ...graph,
          valid: report.valid,
          note: report.valid
            ? null
            : `the catalog fails validation (${errors.length} errors): classic OLM cannot serve it at all; OLM v1 serves it as shown`,
        },
        null,
        2,
      ) + '\n',
    );
  } else if (format === 'mermaid') {
    out.write(mermaid(graph, found.channel));
  } else if (format === 'dot') {
    out.write(dot(graph, found.channel));
  } else {
    out.write(graphText(graph));
    if (!report.valid)
      out.write(
        `note: the catalog fails validation (${errors.length} errors); classic OLM cannot serve it\n`,
      );
  }
  return EXIT_OK;
}

async function checkCommand(args: string[], out: NodeJS.WritableStream): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      repo: { type: 'string', default: '.' },
      base: { type: 'string' },
      head: { type: 'string' },
      format: { type: 'string', default: 'text' },
      author: { type: 'string' },
      approver: { type: 'string', multiple: true, default: [] },
    },
  });
  const format = values.format;
  if (format !== 'text' && format !== 'json' && format !== 'github')
    throw new UsageError(`unknown format "${format}"`);
  if (!values.base || !values.head) throw new UsageError('check needs --base <ref> and --head <ref>');
  if (values.approver.length > 0 && values.author === undefined)
    throw new UsageError('--approver needs --author');
  await requireDirectory(values.repo);
  // Loaded on demand: the config schema (ajv, yaml) would slow every other command's start.
  const { runPrChecks } = await import('./checks/pr.js');
  const result = await runPrChecks({
    repo: values.repo,
    base: values.base,
    head: values.head,
    author: values.author,
    approvers: values.approver,
  });
  const failed = result.checks.some((c) => c.conclusion === 'failure');
  if (format === 'json') {
    const checks = result.checks.map((c) => ({
      name: c.name,
      conclusion: c.conclusion,
      title: c.title,
      findings: c.findings.map((d) => ({ ...jsonFinding(d) })),
      ...(c.notes ? { notes: c.notes } : {}),
    }));
    out.write(JSON.stringify({ checks }, null, 2) + '\n');
  } else if (format === 'github') {
    for (const c of result.checks) for (const d of c.findings) out.write(githubAnnotation(d) + '\n');
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
      for (const d of c.findings) out.write(textFinding(d, color).replace(/^/gm, '  ') + '\n');
      for (const note of c.notes ?? []) out.write(`  note: ${note}\n`);
    }
  }
  return failed ? EXIT_FAIL : EXIT_OK;
}

async function renderCommand(
  args: string[],
  out: NodeJS.WritableStream,
  err: NodeJS.WritableStream,
): Promise<number> {
  const { positionals } = parseArgs({ args, allowPositionals: true, options: {} });
  if (positionals.length !== 1) throw new UsageError('render needs exactly one catalog root');
  const root = positionals[0] as string;
  await requireDirectory(root);
  const { DirectorySource, loadCatalog, renderJson } = await import('./catalog/index.js');
  const loaded = await loadCatalog(new DirectorySource(root), { keepBundleObjects: true });
  const errors = loaded.diagnostics.filter((d) => d.level === 'error');
  if (errors.length > 0) {
    for (const d of errors) err.write(textFinding({ ...d, file: d.file && join(root, d.file) }) + '\n');
    return EXIT_FAIL;
  }
  for (const chunk of renderJson(loaded.config)) {
    if (!out.write(chunk)) await new Promise((r) => out.once('drain', r));
  }
  return EXIT_OK;
}

function invokedAsCommand(): boolean {
  try {
    return process.argv[1] !== undefined && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url);
  } catch {
    return false;
  }
}

if (invokedAsCommand()) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(`catalog-bot: ${(err as Error).stack ?? String(err)}\n`);
      process.exitCode = EXIT_USAGE;
    },
  );
}
