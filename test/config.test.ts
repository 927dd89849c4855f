// The repository config `.github/catalog-bot.yml`: schema, defaults, and every problem with key, line, column.
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import {
  CONFIG_PATH,
  CONFIG_SCHEMA,
  DEFAULT_CONFIG,
  configProblemsAsDiagnostics,
  parseRepoConfig,
  type ConfigProblem,
} from '../src/checks/config.js';

/** The single problem of `text`. */
function problem(text: string): ConfigProblem {
  const { config, problems } = parseRepoConfig(text);
  expect(problems).toHaveLength(1);
  expect(config).toEqual(DEFAULT_CONFIG);
  return problems[0] as ConfigProblem;
}

/**
 * Each text has exactly one problem, written `line:column [key] message` (all four fields, nothing
 * else), so a test lists its cases one row each.
 */
function expectSingleProblems(cases: [text: string, problemLine: string][]): void {
  const got = cases.map(([text]) => {
    const { key, message, line, column, ...others } = problem(text);
    expect(others).toEqual({});
    return `${line}:${column} [${key}] ${message}`;
  });
  expect(got).toEqual(cases.map(([, problemLine]) => problemLine));
}

// The example of design.md, Repository contract.
const DESIGN_EXAMPLE = `catalogs: [catalogs/*]      # globs of FBC roots; each matching directory is one catalog
maintainers: [alice, my-org/catalog-admins]   # users and org/team; may change anything
ownership:
  ownersFiles: true          # Prow-style OWNERS / OWNERS_ALIASES along changed paths
  packageOwners: operators/{package}/ci.yaml  # optional: per-package owners file
                                              # (OWNERS format or ci.yaml \`reviewers:\`)
  newPackages: maintainers   # or "anyone": who may add a package that base lacks
automerge:
  enabled: true
  method: squash             # merge | squash | rebase
publish:
  images:                    # tags pushed for each changed catalog root after a merge
    - registry.example.com/org/catalog:{root}
    - registry.example.com/org/catalog:{root}-{sha}
  baseImage: quay.io/operator-framework/opm:latest
`;

describe('defaults', () => {
  it('a missing file, an empty file and a file of comments mean all defaults', () => {
    for (const text of [undefined, '', '# nothing yet\n', '---\n', '\n\n']) {
      expect(parseRepoConfig(text)).toEqual({ config: DEFAULT_CONFIG, problems: [] });
    }
  });

  it('are the documented ones, with auto-merge off', () => {
    expect(DEFAULT_CONFIG).toEqual({
      catalogs: ['catalogs/*'],
      maintainers: [],
      ownership: { ownersFiles: true, newPackages: 'maintainers' },
      automerge: { enabled: false, method: 'squash', batch: { enabled: false, max: 8 } },
      publish: { images: [], baseImage: 'quay.io/operator-framework/opm:latest' },
      dependencies: { externalProviders: { gvks: [], packages: [] } },
      images: { allowedRegistries: [], unverifiableRegistries: [] },
      templates: [],
      bundles: {
        path: 'operators/{package}/{version}',
        imageTemplate: 'quay.io/community-operator-pipeline-prod/{package}:{version}',
        pushImages: false,
        renderer: { opmVersion: 'v1.46.0', csvMetadataFrom: 'v4.17' },
        release: 'push',
        suites: [],
      },
      ocp: { bundleObjectForbiddenFrom: 'v4.17', kubernetesVersions: [] },
    });
    expect(CONFIG_PATH).toBe('.github/catalog-bot.yml');
    expect(DEFAULT_CONFIG.catalogs).toEqual(['catalogs/*']);
  });

  it('every call gets its own copy; DEFAULT_CONFIG cannot be changed', () => {
    const a = parseRepoConfig(undefined).config;
    a.catalogs.push('x/*');
    a.automerge.enabled = true;
    expect(parseRepoConfig('').config.catalogs).toEqual(['catalogs/*']);
    expect(DEFAULT_CONFIG.automerge.enabled).toBe(false);
    expect(() => (DEFAULT_CONFIG.catalogs as string[]).push('y')).toThrow();
  });

  it('fill in every key a valid file leaves out', () => {
    const { config, problems } = parseRepoConfig('automerge:\n  enabled: true\nownership: {}\n');
    expect(problems).toEqual([]);
    expect(config).toEqual({
      ...DEFAULT_CONFIG,
      automerge: { enabled: true, method: 'squash', batch: { enabled: false, max: 8 } },
    });
  });
});

describe('a valid config', () => {
  it('the design.md example', () => {
    expect(parseRepoConfig(DESIGN_EXAMPLE)).toEqual({
      config: {
        catalogs: ['catalogs/*'],
        maintainers: ['alice', 'my-org/catalog-admins'],
        ownership: {
          ownersFiles: true,
          packageOwners: 'operators/{package}/ci.yaml',
          newPackages: 'maintainers',
        },
        automerge: { enabled: true, method: 'squash', batch: { enabled: false, max: 8 } },
        publish: {
          images: [
            'registry.example.com/org/catalog:{root}',
            'registry.example.com/org/catalog:{root}-{sha}',
          ],
          baseImage: 'quay.io/operator-framework/opm:latest',
        },
        // The sections the example leaves out are the defaults (checked key by key above).
        dependencies: DEFAULT_CONFIG.dependencies,
        images: DEFAULT_CONFIG.images,
        templates: DEFAULT_CONFIG.templates,
        bundles: DEFAULT_CONFIG.bundles,
        ocp: DEFAULT_CONFIG.ocp,
      },
      problems: [],
    });
  });

  it('every key set to a non-default value', () => {
    const text = [
      'catalogs: [catalogs/*, "operators/*/catalog"]',
      'maintainers: [bob, acme/admins]',
      'ownership:',
      '  ownersFiles: false',
      '  packageOwners: owners/{package}/OWNERS',
      '  newPackages: anyone',
      'automerge: {enabled: true, method: rebase}',
      'publish:',
      '  images: ["quay.io/acme/catalog:{root}-{sha}", localhost:5000/catalog]',
      '  baseImage: quay.io/operator-framework/opm@sha256:' + 'a'.repeat(64),
      'dependencies:',
      '  externalProviders:',
      '    gvks: [{group: cert-manager.io, version: v1, kind: Certificate}]',
      '    packages: [openshift-pipelines-operator-rh]',
      'images: {allowedRegistries: [quay.io, "registry.example.com:5000"]}',
      'templates: [{template: templates/etcd.yaml, outputs: [catalogs/v4.21/etcd/catalog.yaml]}]',
      'bundles:',
      '  path: bundles/{package}/{version}',
      '  imageTemplate: "registry.example.com/{package}-bundle:v{version}"',
      '  renderer: {opmVersion: v1.73.0, csvMetadataFrom: v4.19}',
      '  suites: [community, isv]',
      'ocp: {bundleObjectForbiddenFrom: v4.18, kubernetesVersions: [{openshift: v5.0, kubernetes: "1.36"}]}',
      '',
    ].join('\n');
    expect(parseRepoConfig(text)).toEqual({
      config: {
        catalogs: ['catalogs/*', 'operators/*/catalog'],
        maintainers: ['bob', 'acme/admins'],
        ownership: { ownersFiles: false, packageOwners: 'owners/{package}/OWNERS', newPackages: 'anyone' },
        automerge: { enabled: true, method: 'rebase', batch: { enabled: false, max: 8 } },
        publish: {
          images: ['quay.io/acme/catalog:{root}-{sha}', 'localhost:5000/catalog'],
          baseImage: 'quay.io/operator-framework/opm@sha256:' + 'a'.repeat(64),
        },
        dependencies: {
          externalProviders: {
            gvks: [{ group: 'cert-manager.io', version: 'v1', kind: 'Certificate' }],
            packages: ['openshift-pipelines-operator-rh'],
          },
        },
        images: { allowedRegistries: ['quay.io', 'registry.example.com:5000'], unverifiableRegistries: [] },
        templates: [{ template: 'templates/etcd.yaml', outputs: ['catalogs/v4.21/etcd/catalog.yaml'] }],
        bundles: {
          path: 'bundles/{package}/{version}',
          imageTemplate: 'registry.example.com/{package}-bundle:v{version}',
          pushImages: false,
          renderer: { opmVersion: 'v1.73.0', csvMetadataFrom: 'v4.19' },
          release: 'push',
          suites: ['community', 'isv'],
        },
        ocp: {
          bundleObjectForbiddenFrom: 'v4.18',
          kubernetesVersions: [{ openshift: 'v5.0', kubernetes: '1.36' }],
        },
      },
      problems: [],
    });
  });

  it('bundles.path needs {package} and {version}; imageTemplate no other placeholder', () => {
    expect(problem('bundles:\n  path: operators/{package}\n')).toMatchObject({
      key: 'bundles.path',
      line: 2,
    });
    expect(problem('bundles:\n  imageTemplate: quay.io/x/{name}:{version}\n')).toMatchObject({
      key: 'bundles.imageTemplate',
    });
    expect(problem('bundles: {renderer: {opmVersion: latest}}\n')).toMatchObject({
      key: 'bundles.renderer.opmVersion',
    });
  });

  it('a byte order mark does not shift columns', () => {
    expect(problem('\uFEFFautomerge: {method: fast}\n')).toMatchObject({ line: 1, column: 21 });
  });
});

describe('problems, each with key, line and column', () => {
  it('unknown top-level key, with a suggestion', () => {
    expectSingleProblems([
      ['automerge: {}\ncatalog: [a/*]\n', '2:1 [catalog] catalog: unknown key (did you mean catalogs?)'],
      ['# settings\n  \ncolour: blue\n', '3:1 [colour] colour: unknown key'],
    ]);
  });

  it('a nested key at the top level points to its section', () => {
    expectSingleProblems([
      ['method: squash\n', '1:1 [method] method: unknown key (did you mean automerge.method?)'],
    ]);
  });

  it('unknown nested key, with a suggestion by edit distance', () => {
    expectSingleProblems([
      [
        'ownership:\n  ownersFiles: true\n  newPackage: anyone\n',
        '3:3 [ownership.newPackage] ownership.newPackage: unknown key (did you mean newPackages?)',
      ],
    ]);
    expect(problem('automerge:\n    auto_merge: true\n').message).toBe('automerge.auto_merge: unknown key');
    expectSingleProblems([
      [
        'publish: {base-image: x}\n',
        '1:11 [publish.base-image] publish.base-image: unknown key (did you mean baseImage?)',
      ],
    ]);
  });

  it('wrong enum value', () => {
    expectSingleProblems([
      [
        'automerge:\n  enabled: true\n  method: fast-forward\n',
        '3:11 [automerge.method] automerge.method: must be one of merge, squash, rebase (got "fast-forward")',
      ],
      [
        'ownership: {newPackages: everyone}\n',
        '1:26 [ownership.newPackages] ownership.newPackages: must be one of maintainers, anyone (got "everyone")',
      ],
    ]);
  });

  it('automerge.batch: on with a maximum, off by default, and a maximum out of range is named with its range', () => {
    const { config, problems } = parseRepoConfig(
      'automerge:\n  enabled: true\n  batch: {enabled: true, max: 3}\n',
    );
    expect(problems).toEqual([]);
    expect(config.automerge.batch).toEqual({ enabled: true, max: 3 });
    expect(parseRepoConfig('automerge: {enabled: true}\n').config.automerge.batch).toEqual({
      enabled: false,
      max: 8,
    });
    expectSingleProblems([
      [
        'automerge:\n  batch:\n    max: 1\n',
        '3:10 [automerge.batch.max] automerge.batch.max: must be a whole number from 2 to 20 (got 1)',
      ],
    ]);
    expect(problem('automerge:\n  batch: {enabled: true, max: 2.5}\n').message).toBe(
      'automerge.batch.max: must be a whole number (got 2.5)',
    );
    expect(problem('automerge:\n  batch: true\n').message).toBe(
      'automerge.batch: must be a mapping of keys (got true)',
    );
  });

  it('wrong type', () => {
    // YAML 1.2: `yes` is a string, not a boolean.
    expectSingleProblems([
      [
        'automerge:\n  enabled: yes\n',
        '2:12 [automerge.enabled] automerge.enabled: must be true or false (got "yes")',
      ],
      ['ownership: [a]\n', '1:12 [ownership] ownership: must be a mapping of keys (got a list)'],
    ]);
    expectSingleProblems([
      ['publish:\n  baseImage: 3\n', '2:14 [publish.baseImage] publish.baseImage: must be a string (got 3)'],
    ]);
  });

  it('an empty value points at its key', () => {
    expectSingleProblems([
      [
        'ownership:\nautomerge: {}\n',
        '1:1 [ownership] ownership: must be a mapping of keys (got an empty value)',
      ],
    ]);
    expectSingleProblems([
      [
        'automerge:\n  method:\n',
        '2:3 [automerge.method] automerge.method: must be one of merge, squash, rebase (got an empty value)',
      ],
    ]);
  });

  it('globs that are not strings, or not a list', () => {
    const { problems } = parseRepoConfig('catalogs:\n  - catalogs/*\n  - 3\n  - {a: 1}\n');
    expect(problems).toEqual([
      { key: 'catalogs[1]', message: 'catalogs[1]: must be a glob (a string) (got 3)', line: 3, column: 5 },
      {
        key: 'catalogs[2]',
        message:
          'catalogs[2]: must be a glob (a string) (got a mapping; put the value in quotes if it contains {, }, [, ] or ": ")',
        line: 4,
        column: 5,
      },
    ]);
    expectSingleProblems([
      [
        'catalogs: catalogs/*\n',
        '1:11 [catalogs] catalogs: must be a list of globs, like [catalogs/*] (got "catalogs/*")',
      ],
    ]);
    expect(problem('catalogs: []\n')).toMatchObject({
      message: 'catalogs: must list at least one glob (with none, no catalog would be checked)',
    });
    expectSingleProblems([
      [
        'catalogs: [catalogs/*, ../other/*]\n',
        '1:24 [catalogs[1]] catalogs[1]: must be a glob relative to the repository root, like catalogs/* (got "../other/*")',
      ],
    ]);
  });

  it('maintainers, packageOwners and image references', () => {
    expectSingleProblems([
      [
        'maintainers: [alice, "@bob"]\n',
        '1:22 [maintainers[1]] maintainers[1]: must be a GitHub user or org/team without the "@" (got "@bob")',
      ],
    ]);
    expect(problem('ownership:\n  packageOwners: operators/ci.yaml\n').message).toBe(
      'ownership.packageOwners: must contain {package}, like operators/{package}/ci.yaml (got "operators/ci.yaml")',
    );
    expectSingleProblems([
      [
        'publish:\n  images:\n    - quay.io/acme/catalog:{branch}\n',
        '3:7 [publish.images[0]] publish.images[0]: unknown placeholder {branch}; the placeholders are {root} and {sha} (got "quay.io/acme/catalog:{branch}")',
      ],
    ]);
    expectSingleProblems([
      [
        'publish:\n  images: [Quay.io/Acme/catalog:x]\n',
        '2:12 [publish.images[0]] publish.images[0]: is not a valid image reference (got "Quay.io/Acme/catalog:x")',
      ],
    ]);
    expect(problem(`publish:\n  images: ["quay.io/a/b@sha256:${'a'.repeat(64)}"]\n`).message).toMatch(
      /^publish\.images\[0\]: must be a tag, not a digest/,
    );
    // In a flow list, `x:{root}` is a mapping: say so.
    expect(problem('publish: {images: [quay.io/a/b:{root}]}\n').message).toBe(
      'publish.images[0]: must be an image reference (a string) (got a mapping; put the value in quotes if it contains {, }, [, ] or ": ")',
    );
    expect(problem('publish: {baseImage: "opm latest"}\n').message).toBe(
      'publish.baseImage: must be an image reference without spaces or placeholders (got "opm latest")',
    );
  });

  it('reports every problem at once, in file order', () => {
    const text = 'maintainers: ["@a"]\nautomerge:\n  method: ff\n  enable: true\nfoo: 1\n';
    expect(parseRepoConfig(text).problems.map((p) => [p.key, p.line, p.column])).toEqual([
      ['maintainers[0]', 1, 15],
      ['automerge.method', 3, 11],
      ['automerge.enable', 4, 3],
      ['foo', 5, 1],
    ]);
  });

  it('YAML syntax errors', () => {
    expect(problem('catalogs: [catalogs/*\nmaintainers: []\n')).toMatchObject({
      key: '',
      message: expect.stringMatching(/^YAML syntax error: /),
      line: 2,
    });
    expectSingleProblems([
      [
        'automerge:\n  enabled: true\n\tmethod: squash\n',
        '3:1 [] YAML syntax error: Tabs are not allowed as indentation',
      ],
      [
        'ownership:\n  ownersFiles: true\n  ownersFiles: false\n',
        '3:3 [ownership.ownersFiles] ownership.ownersFiles: duplicate key',
      ],
      [
        'catalogs: [a/*]\n---\ncatalogs: [b/*]\n',
        '2:1 [] the file must hold one YAML document, but another one starts here',
      ],
      [
        'catalogs: [a/*]\nmaintainers: *admins\n',
        '2:14 [] YAML error: Unresolved alias (the anchor must be set before the alias): admins',
      ],
    ]);
  });

  it('a document that is not a mapping', () => {
    expectSingleProblems([
      [
        '# config\n- catalogs/*\n',
        '2:1 [] the file must be a mapping of keys (catalogs, maintainers, ...), not a list',
      ],
    ]);
    expectSingleProblems([
      [
        '\ncatalogs/*\n',
        '2:1 [] the file must be a mapping of keys (catalogs, maintainers, ...), not "catalogs/*"',
      ],
    ]);
  });

  it('a file over 64 KiB, counted in bytes', () => {
    const comment = (n: number): string => '#'.repeat(n - 1) + '\n';
    expect(parseRepoConfig(comment(64 * 1024)).problems).toEqual([]);
    expectSingleProblems([
      [comment(64 * 1024 + 1), '1:1 [] the file is 65537 bytes; the limit is 65536 bytes (64 KiB)'],
    ]);
    expect(problem('# ' + 'é'.repeat(33_000) + '\n').message).toMatch(/^the file is 66003 bytes/);
  });
});

describe('configProblemsAsDiagnostics', () => {
  it('CONFIG-INVALID errors on the config file, with hints quoting what is allowed', () => {
    const text = 'automerge:\n  method: ff\n  enabled: 1\nownership:\n  newPackage: x\nfoo: 1\n';
    const diagnostics = configProblemsAsDiagnostics(parseRepoConfig(text).problems);
    expect(
      diagnostics.map(({ rule, level, file, line, column }) => ({ rule, level, file, line, column })),
    ).toEqual(
      [
        [2, 11],
        [3, 12],
        [5, 3],
        [6, 1],
      ].map(([line, column]) => ({
        rule: 'CONFIG-INVALID',
        level: 'error',
        file: CONFIG_PATH,
        line,
        column,
      })),
    );
    expect(diagnostics[0]?.message).toBe('automerge.method: must be one of merge, squash, rebase (got "ff")');
    expect(diagnostics[0]?.hint).toContain('Allowed values: merge, squash, rebase.');
    expect(diagnostics[1]?.hint).toContain('Allowed values: true, false.');
    expect(diagnostics[2]?.hint).toBe(
      'Allowed keys under ownership: ownersFiles, packageOwners, newPackages.',
    );
    expect(diagnostics[3]?.hint).toBe(
      'Allowed top-level keys: catalogs, maintainers, ownership, automerge, publish, dependencies, templates, images, bundles, ocp.',
    );
  });

  it('document-level problems get a hint too', () => {
    const [d] = configProblemsAsDiagnostics(parseRepoConfig('- a\n').problems);
    expect(d?.hint).toBe(
      `${CONFIG_PATH} must be one YAML mapping of at most 64 KiB; its keys, all optional, are catalogs, maintainers, ownership, automerge, publish, dependencies, templates, images, bundles, ocp.`,
    );
    expect(configProblemsAsDiagnostics([])).toEqual([]);
  });
});

describe('CONFIG_SCHEMA', () => {
  type Node = Record<string, unknown>;
  /** Every subschema with the path to it. */
  function* walk(node: Node, at = '#'): Generator<[string, Node]> {
    yield [at, node];
    for (const [name, child] of Object.entries((node.properties ?? {}) as Record<string, Node>))
      yield* walk(child, `${at}/properties/${name}`);
    if (node.items) yield* walk(node.items as Node, `${at}/items`);
  }

  it('compiles with ajv in strict mode and is plain JSON', () => {
    const ajv = new Ajv2020({ strict: true, strictRequired: true, allErrors: true });
    expect(() => ajv.compile(CONFIG_SCHEMA)).not.toThrow();
    expect(JSON.parse(JSON.stringify(CONFIG_SCHEMA))).toEqual(CONFIG_SCHEMA);
    expect((CONFIG_SCHEMA as Node).$schema).toBe('https://json-schema.org/draft/2020-12/schema');
  });

  it('every key has a description; every mapping forbids other keys', () => {
    const nodes = [...walk(CONFIG_SCHEMA as Node)];
    expect(nodes.length).toBeGreaterThan(12);
    for (const [at, node] of nodes) {
      expect(typeof node.description, at).toBe('string');
      expect((node.description as string).length, at).toBeGreaterThan(10);
      if (node.type === 'object') expect(node.additionalProperties, at).toBe(false);
    }
  });

  it('its defaults are DEFAULT_CONFIG', () => {
    const validate = new Ajv2020({ strict: true, useDefaults: true }).compile(CONFIG_SCHEMA);
    const data = {};
    expect(validate(data)).toBe(true);
    expect(data).toEqual(DEFAULT_CONFIG);
  });

  it('accepts DEFAULT_CONFIG and the parsed design example', () => {
    const validate = new Ajv2020({ strict: true }).compile(CONFIG_SCHEMA);
    expect(validate(structuredClone(DEFAULT_CONFIG))).toBe(true);
    expect(validate(parseRepoConfig(DESIGN_EXAMPLE).config)).toBe(true);
  });
});
