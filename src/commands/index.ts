// The table of `catalog-bot` commands: name, help entry, and the module that runs it. A
// command's module (its options, argument rules and run; see ./command.ts) is loaded only when
// that command runs, so `validate` never loads the App, the queue, the registry client or the
// template engine. `catalog-bot --help` is written from this table (docs/architecture.md).
import type { Command } from './command.js';

export interface CommandEntry {
  name: string;
  /** Its entry in `catalog-bot --help`. */
  help: string;
  /**
   * Arguments that make the command read DIR (a catalog root or repository) or FILE, or null
   * when it reads none: test/cli-bad-input.test.ts runs every command with a missing path, a
   * path of the other kind and a binary file there, so a new command is held to the CLI
   * contract (docs/design.md) as it is added.
   */
  readsPath: readonly string[] | null;
  load(): Promise<{ command: Command }>;
}

export const CLI_COMMANDS: readonly CommandEntry[] = [
  {
    name: 'check',
    help: `  check [--base <ref>] [--head <ref>] [--repo <dir>]
                       Run the pull-request checks on two commits of a git repository,
                       as the GitHub App does (exit 0 pass, 1 a check fails, 2 usage/IO).
                       Default head: the working tree, uncommitted and untracked (not
                       ignored) files included; default base: the merge-base of HEAD with
                       the default branch (origin/HEAD, else main, else master)
      --format text|json|github   output format (default: text)
      --author <login> [--approver <login>]...
                                  also decide catalog-bot/permissions (OWNERS files,
                                  package owners and maintainers of the base commit)
      --all                       list the findings the base already had one by one
                                  (by default: one line per rule with a count)
`,
    readsPath: ['--repo', 'DIR'],
    load: () => import('./check.js'),
  },
  {
    name: 'bundle',
    help: `  bundle validate <bundle-dir>... [--suite <name>]... [--format text|json]
                       Check bundle directories as the catalog-bot/bundle check does, with
                       the rules of operator-pipelines' static tests and operator-sdk bundle
                       validate (suites: community (default), isv, operatorhub,
                       operatorframework); each finding names the upstream checks it stands
                       for (exit 0 no error, 1 a bundle has an error, 2 usage/IO)
`,
    readsPath: ['validate', 'DIR'],
    load: () => import('./bundle.js'),
  },
  {
    name: 'validate',
    help: `  validate <root>...   Validate FBC catalog roots exactly as \`opm validate\` does
                       (exit 0 valid, 1 invalid, 2 usage or I/O error)
      --format text|json|github   output format (default: text)
      --max-file-size <bytes>     refuse larger files (default: 67108864)
`,
    readsPath: ['DIR'],
    load: () => import('./validate.js'),
  },
  {
    name: 'render',
    help: `  render <root>        Print the catalog as a normalised JSON stream, like \`opm render\`
                       (exit 0, 1 the files cannot be loaded, 2 usage/IO)
`,
    readsPath: ['DIR'],
    load: () => import('./render.js'),
  },
  {
    name: 'range',
    help: `  range <skipRange> <version>...
                       Evaluate a skipRange with OLM's (blang/semver v4) semantics
                       (exit 0 valid range, 1 invalid range, 2 usage error)
      --format json|text          output format (default: json)
`,
    readsPath: null,
    load: () => import('./range.js'),
  },
  {
    name: 'graph',
    help: `  graph <root> <package> [--channel <name>]
                       One channel's upgrade graph under classic OLM and OLM v1
                       (exit 0, 2 usage/IO)
      --format json|text|mermaid|dot  output format (default: text)
      --installed <bundle>=<version>  a bundle installed on clusters (repeatable;
                                      it may be absent from the catalog)
      --v1-version-range <range>      OLM v1 spec.source.catalog.version (Masterminds)
`,
    readsPath: ['DIR', 'some-package'],
    load: () => import('./graph.js'),
  },
  {
    name: 'deps',
    help: `  deps <root> <package> [--channel <name>]
                       What a fresh install of the package pulls in: the bundle OLM
                       installs and the provider it picks for each requirement (exit 0 all
                       met, 1 a requirement cannot be met, 2 usage/IO)
      --format text|json|mermaid  output format (default: text)
      --external-gvk <group>/<version>/<kind>, --external-package <name>
                                  providers outside the catalog (repeatable)
`,
    readsPath: ['DIR', 'some-package'],
    load: () => import('./deps.js'),
  },
  {
    name: 'crd-diff',
    help: `  crd-diff <old-bundle> <new-bundle> [--root <root>] [--repo <dir>]
                       Compare the CRDs of two bundles as OLM does on an upgrade: from the
                       catalog, or from the repository's bundle directories when the catalog
                       has no manifests (exit 0 safe, 1 unsafe, 2 usage/IO or no manifests)
      --repo <dir>                repository with the bundle directories (default: .)
      --format text|json          output format (default: text)
`,
    readsPath: ['old.v1.0.0', 'new.v1.0.1', '--root', 'DIR'],
    load: () => import('./crd-diff.js'),
  },
  {
    name: 'images',
    help: `  images <root>        Check that every bundle and related image exists in its registry
                       (exit 0 all exist, 1 missing, disallowed or not asked unless
                       on an --unverifiable-registry, 2 usage/IO)
      --format text|json, --allowed-registry <host>..., --unverifiable-registry <host>...,
      --concurrency <n>
`,
    readsPath: ['DIR'],
    load: () => import('./images.js'),
  },
  {
    name: 'build',
    help: `  build <root> --tag <image>... [--base <image>] [--push | --oci-dir <dir>]
                       Build the catalog image natively (the base image's platforms plus
                       <root> at /configs, served by opm) and print or push its digests
      --rev <git-rev> [--repo <dir>]   read the root from a git commit (no checkout)
      --repo-url <url>, --commit <sha> OCI source annotations; --format text|json
`,
    readsPath: ['DIR', '--tag', 'localhost:5000/catalog:test'],
    load: () => import('./build.js'),
  },
  {
    name: 'verify-published',
    help: `  verify-published <root> --image <image> [--format text|json]
                       Pull a published catalog image's catalog and compare it with <root>:
                       same packages, channels, edges and bundles (exit 0 same, 1 different,
                       2 usage or error)
`,
    readsPath: ['DIR', '--image', 'localhost:5000/catalog:test'],
    load: () => import('./verify-published.js'),
  },
  {
    name: 'promote',
    help: `  promote <bundle> <channel> [--root <root>] [--repo <dir>] [--dry-run] [--format text|json]
                       Add a bundle the catalog has to a channel with edges that keep it
                       single-headed and every user upgradeable; template-aware (edits the
                       template, re-renders); keeps comments and layout; prints the diff
                       (exit 0 done or nothing to do, 1 refused, 2 usage/IO)
`,
    readsPath: ['some.v1.0.0', 'stable', '--repo', 'DIR'],
    load: () => import('../flows/promote/cli.js'),
  },
  {
    name: 'ocp-promote',
    help: `  ocp-promote <from> <to> [--repo <dir>] [--package <pkg>]... [--dry-run]
                  [--format text|json]
                       Open OpenShift catalog <to> from <from>: copy every package whose
                       ci.yaml version_promotion_strategy is always (and every --package)
                       and add <to> to its catalog_mapping, keeping comments and layout
                       (exit 0 done or nothing to do, 1 refused, 2 usage/IO)
`,
    readsPath: ['v4.21', 'v4.22', '--repo', 'DIR'],
    load: () => import('../flows/ocp-promote/cli.js'),
  },
  {
    name: 'ocp-matrix',
    help: `  ocp-matrix [--repo <dir>] [--package <pkg>]... [--format text|json|markdown]
                       Packages x OpenShift catalogs: the default channel's head in each
                       cell, gaps, and the ocp-continuity findings (exit 0 no errors,
                       1 errors, 2 usage/IO)
`,
    readsPath: ['--repo', 'DIR'],
    load: () => import('./ocp-matrix.js'),
  },
  {
    name: 'default-channel',
    help: `  default-channel <package> <channel> [--root <root>] [--repo <dir>] [--dry-run]
                  [--format text|json]
                       Set the package's default channel where it is written (catalog or
                       olm.template.basic template, re-rendered); validated first; keeps
                       comments and layout; prints the diff (exit 0 done or nothing to do,
                       1 refused, 2 usage/IO)
`,
    readsPath: ['some-package', 'stable', '--repo', 'DIR'],
    load: () => import('../flows/default-channel/cli.js'),
  },
  {
    name: 'deprecate',
    help: `  deprecate <bundle|channel|package> <name> [--package <p>] [--message <m>] [--undo]
                  [--root <root>] [--repo <dir>] [--dry-run] [--format text|json]
                       Write (--undo: remove) the package's olm.deprecations entry where it
                       is kept (catalog or olm.template.basic template, re-rendered), with a
                       message naming the way forward; refused when users would have none;
                       validated first; keeps comments and layout (exit 0 done or nothing
                       to do, 1 refused, 2 usage/IO)
`,
    readsPath: ['bundle', 'some.v1.0.0', '--repo', 'DIR'],
    load: () => import('../flows/deprecate/cli.js'),
  },
  {
    name: 'explain',
    help: `  explain <bundle> [--from <version>] [--catalog <root>]
                       Whether new installs get the bundle and which installed versions
                       reach it, by what path, under classic OLM and OLM v1, and where
                       not, why (exit 0, 2 usage/IO or unknown bundle)
      --format text|json|mermaid  output format (default: text)
`,
    readsPath: ['some.v1.0.0', '--catalog', 'DIR'],
    load: () => import('../flows/explain/cli.js'),
  },
  {
    name: 'render-template',
    help: `  render-template <template> [-o yaml|json] [--bundles-from <dir>]
                  [--migrate-level bundle-object-to-csv-metadata] [--opm-version <v>]
                  [--output-file <file> [--dry-run]]
                       Render an olm.semver or olm.template.basic template exactly as
                       \`opm alpha render-template\` does, to stdout or into a file (left
                       untouched when it is the render already) (exit 0 done or nothing
                       to do, 1 cannot render, 2 usage)
`,
    readsPath: ['FILE'],
    load: () => import('../flows/render/cli.js'),
  },
  {
    name: 'release',
    help: `  release <bundle-dir> [--repo <dir>] [--dry-run] [--format text|json]
                       Add a bundle directory to every template its release-config.yaml
                       names and re-render every catalog they map to, as the release bot
                       does (exit 0 done, 1 refused, 2 usage/IO)
`,
    readsPath: ['operators/some/1.0.0', '--repo', 'DIR'],
    load: () => import('../flows/release/cli.js'),
  },
  {
    name: 'impact',
    help: `  impact [--base <ref>] [--head <ref>] [--repo <dir>] [--format text|json|markdown]
                       What clusters will see differently after a change: per catalog,
                       package and channel the bundles, edges, heads and default channel
                       before and after, and installed versions that lose (or gain) their
                       way to the head (same defaults as check; exit 0, 2 usage/IO)
`,
    readsPath: ['--repo', 'DIR'],
    load: () => import('../flows/impact/cli.js'),
  },
  {
    name: 'site',
    help: `  site <root>... -o <dir>
                       Write static catalog pages into <dir>: index with search, catalogs,
                       packages with their upgrade graphs (SVG), bundles, and the package x
                       OpenShift-version matrix (exit 0 written, 2 usage/IO)
`,
    readsPath: ['-o', 'OUT', 'DIR'],
    load: () => import('./site.js'),
  },
  {
    name: 'onboard',
    help: `  onboard <package> [--repo <dir>] [--catalogs <v>,<v>...] [--bundle-images <file>]
          [--index <v>=<root>]... [--dry-run] [--format text|json]
                       Move a package the bundle index serves to file-based catalogs,
                       from its bundle directories: templates, catalogs as the index gave
                       them, ci.yaml switched to fbc (exit 0 done, 1 refused, 2 usage/IO)
`,
    readsPath: ['some-package', '--repo', 'DIR'],
    load: () => import('../flows/onboard/cli.js'),
  },
  {
    name: 'remove',
    help: `  remove <package>[/<bundle>] [--repo <dir>] [--dry-run] [--format text|json]
                       Remove a package or one bundle as the repository keeps them (catalog
                       directories, templates, re-rendered catalogs, bundle directories) and
                       say per catalog what clusters lose (exit 0 done, 1 refused, 2 usage/IO)
`,
    readsPath: ['some-package', '--repo', 'DIR'],
    load: () => import('../flows/remove/cli.js'),
  },
];

/** `catalog-bot --help`: the usage line, every command's entry, then what applies to several. */
export function cliHelpText(): string {
  return (
    `Usage: catalog-bot <command> [options]\n\nCommands:\n` +
    CLI_COMMANDS.map((c) => c.help).join('') +
    `  help [<command>]     Show this help, or the command's (also: <command> --help)\n` +
    `  --version            Print catalog-bot's version\n` +
    `
Registry credentials (images, build): REGISTRY_AUTH_FILE (each entry for its own host), or
REGISTRY_USERNAME and REGISTRY_PASSWORD (only for build's --tag/--base hosts and the hosts in
REGISTRY_CREDENTIAL_HOSTS); plain HTTP only for hosts in REGISTRY_INSECURE_HOSTS.

Data goes to stdout, errors to stderr (one line). The editing commands (promote,
default-channel, deprecate, ocp-promote, release, remove, render-template --output-file) take
--dry-run: they print what would change and write nothing; an edit already made exits 0
with "nothing to do".
`
  );
}
