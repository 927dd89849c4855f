import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { upgradeGraphCheck } from '../src/checks/upgrade-graph/index.js';
import { validateCatalog } from '../src/catalog/index.js';
import {
  changedLines,
  PromoteError,
  templateMappingsFromTree,
  type FileEdit,
  type FileTree,
  type PromoteResult,
} from '../src/catalog/edits/promote.js';
import { templateMappingsFromCiYaml, type TemplateMapping } from '../src/catalog/templates/ci-yaml.js';
import { promote } from '../src/flows/promote/plan.js';
import type { CatalogSource } from '../src/catalog/fbc/source.js';
import {
  bundleResolverFromCatalog,
  renderTemplateText,
  semverOptionsForOpm,
} from '../src/catalog/templates/index.js';
import { SHARED_DATA } from './helpers/oracle.js';

const CATALOGS = join(SHARED_DATA, 'real-catalogs');
const TEMPLATES = join(SHARED_DATA, 'real-templates');

/** Bundle `example.v<version>` as a hand-written YAML document (block style, like the rest of such a file). */
function exampleBundleYaml(version: string): string {
  return [
    '---',
    'schema: olm.bundle',
    `name: example.v${version}`,
    'package: example',
    `image: quay.io/example/bundle:v${version}`,
    'properties:',
    `  - {type: olm.package, value: {packageName: example, version: ${version}}}`,
    '',
  ].join('\n');
}

/** A repository made of real files: repository path -> file on disk. */
function tree(files: Record<string, string>): FileTree {
  const cache = new Map<string, string>();
  return {
    list: () => Object.keys(files),
    read: (p) => {
      const abs = files[p];
      if (abs === undefined) return undefined;
      if (!cache.has(p)) cache.set(p, readFileSync(abs, 'utf8'));
      return cache.get(p);
    },
  };
}

function rootSource(t: FileTree, root: string, edits: FileEdit[] = []): CatalogSource {
  const files = new Map<string, string>();
  for (const p of t.list()) {
    if (!p.startsWith(root + '/')) continue;
    files.set(p.slice(root.length + 1), edits.find((e) => e.path === p)?.after ?? t.read(p)!);
  }
  return {
    label: root,
    list: async () =>
      [...files.keys()]
        .sort()
        .map((path) => ({ path, kind: 'file' as const, size: files.get(path)!.length })),
    read: async (paths) => new Map(paths.map((p) => [p, Buffer.from(files.get(p)!)])),
  };
}

/** The promoted catalog loads as valid and its upgrade graph has no errors. */
async function expectValidPromotion(t: FileTree, root: string, pkg: string, result: PromoteResult) {
  const check = await checkPromotion(t, root, pkg, result);
  expect(check.valid).toBe(true);
  expect(check.graphErrors).toEqual([]);
}

/** Promote `bundle` into `channel` over `roots` of `t`, the request most cases make. */
function promoteIn(t: FileTree, roots: string[], bundle: string, channel: string): Promise<PromoteResult> {
  return promote({ bundle, channel }, { tree: t, roots });
}

/** The lines the first edit of `result` adds and removes. */
function firstEditChanges(result: PromoteResult): string[] {
  return changedLines(result.edits[0]!.before, result.edits[0]!.after);
}

/** The real checks, old catalog vs new: what the promotion would make the PR check say. */
async function checkPromotion(t: FileTree, root: string, pkg: string, result: PromoteResult) {
  const base = await validateCatalog(rootSource(t, root));
  const head = await validateCatalog(rootSource(t, root, result.edits));
  const graph = upgradeGraphCheck([{ path: root, base, head, packages: new Set([pkg]) }]);
  return {
    valid: head.valid,
    validationErrors: head.diagnostics.filter((d) => d.level === 'error').map((d) => d.message),
    graphErrors: graph.findings.filter((d) => d.level === 'error').map((d) => `${d.rule}: ${d.message}`),
    graph,
    head,
  };
}

/**
 * The edit is exactly these changed lines (in any order the line diff pairs them), and
 * each run of added lines given as one block is contiguous in the new text.
 */
function expectChanges(edit: FileEdit, blocks: string[][]): void {
  const diff = changedLines(edit.before, edit.after);
  expect([...diff].sort()).toEqual(blocks.flat().sort());
  for (const block of blocks) {
    if (block.every((l) => l.startsWith('+'))) {
      expect(edit.after).toContain(block.map((l) => l.slice(1)).join('\n') + '\n');
    }
  }
}

const community = (pkg: string) => ({
  [`catalogs/v4.21/${pkg}/catalog.yaml`]: join(
    CATALOGS,
    'community-operators-prod/catalogs/v4.21',
    pkg,
    'catalog.yaml',
  ),
});

describe('promote on plain FBC (real community-operators catalogs)', () => {
  const files = { ...community('victoriametrics-operator'), ...community('sailoperator') };
  const t = tree(files);
  const roots = ['catalogs/v4.21'];
  const VM = 'catalogs/v4.21/victoriametrics-operator/catalog.yaml';

  it('a higher version becomes the head: it replaces the current head', async () => {
    const result = await promoteIn(t, roots, 'victoriametrics-operator.v0.74.1', 'stable');
    expect(result.edits.map((e) => e.path)).toEqual([VM]);
    expect(firstEditChanges(result)).toEqual([
      '+- name: victoriametrics-operator.v0.74.1',
      '+  replaces: victoriametrics-operator.v0.68.5',
    ]);
    expect(result.notes[0]).toMatch(
      /becomes the head of "stable": it replaces the current head victoriametrics-operator\.v0\.68\.5/,
    );
    const check = await checkPromotion(t, 'catalogs/v4.21', 'victoriametrics-operator', result);
    expect(check.valid).toBe(true);
    expect(check.graphErrors).toEqual([]);
    const stable = check.head.model.get('victoriametrics-operator')!.channels.get('stable')!;
    expect(stable.bundles.get('victoriametrics-operator.v0.74.1')!.replaces).toBe(
      'victoriametrics-operator.v0.68.5',
    );
  });

  it("follows the channel's skipRange convention for a new head", async () => {
    const result = await promoteIn(t, roots, 'sailoperator.v1.26.0', 'stable-1.25');
    expect(firstEditChanges(result)).toEqual([
      '+- name: sailoperator.v1.26.0',
      '+  replaces: sailoperator.v1.25.2',
      "+  skipRange: '>=1.0.0 <1.26.0'",
    ]);
    await expectValidPromotion(t, 'catalogs/v4.21', 'sailoperator', result);
  });

  it('a lower version that the head already replaces goes in with no other change', async () => {
    // stable is `v0.68.5 replaces v0.68.4`, and v0.68.4 is not in stable yet.
    const result = await promoteIn(t, roots, 'victoriametrics-operator.v0.68.4', 'stable');
    expect(firstEditChanges(result)).toEqual(['+- name: victoriametrics-operator.v0.68.4']);
    expect(result.notes[0]).toMatch(/already replaces it/);
    const check = await checkPromotion(t, 'catalogs/v4.21', 'victoriametrics-operator', result);
    expect(check.graphErrors).toEqual([]);
  });

  it('a lower version nothing points at: the next higher entry skips it', async () => {
    const result = await promoteIn(t, roots, 'victoriametrics-operator.v0.68.3', 'stable');
    expect(firstEditChanges(result)).toEqual([
      '+  skips:',
      '+  - victoriametrics-operator.v0.68.3',
      '+- name: victoriametrics-operator.v0.68.3',
    ]);
    expect(result.notes[0]).toMatch(/victoriametrics-operator\.v0\.68\.5 skips it/);
    await expectValidPromotion(t, 'catalogs/v4.21', 'victoriametrics-operator', result);
  });

  it('creates a missing channel next to the package channels', async () => {
    const result = await promoteIn(t, roots, 'victoriametrics-operator.v0.74.1', 'candidate');
    expectChanges(result.edits[0]!, [
      [
        '+---',
        '+entries:',
        '+- name: victoriametrics-operator.v0.74.1',
        '+name: candidate',
        '+package: victoriametrics-operator',
        '+schema: olm.channel',
      ],
    ]);
    expect(result.notes[0]).toMatch(/did not exist/);
    await expectValidPromotion(t, 'catalogs/v4.21', 'victoriametrics-operator', result);
  });

  it('refuses what it cannot or need not do', async () => {
    await expect(
      promote({ bundle: 'victoriametrics-operator.v0.68.5', channel: 'stable' }, { tree: t, roots }),
    ).rejects.toThrow(/already in channel "stable"/);
    await expect(promote({ bundle: 'nope.v1.0.0', channel: 'stable' }, { tree: t, roots })).rejects.toThrow(
      'bundle nope.v1.0.0 is in no catalog root (searched catalogs/v4.21)',
    );
    await expect(
      promote(
        { bundle: 'victoriametrics-operator.v0.74.1', channel: 'stable', root: 'catalogs/v4.99' },
        { tree: t, roots },
      ),
    ).rejects.toThrow(/is not a catalog root/);
    await expect(promote({ bundle: 'x', channel: 'y' }, { tree: t, roots })).rejects.toBeInstanceOf(
      PromoteError,
    );
  });

  it('edits every root that has the bundle', async () => {
    const two = tree({
      ...files,
      'catalogs/v4.16/victoriametrics-operator/catalog.yaml': files[VM]!,
    });
    const result = await promote(
      { bundle: 'victoriametrics-operator.v0.74.1', channel: 'stable' },
      { tree: two, roots: ['catalogs/v4.16', 'catalogs/v4.21'] },
    );
    expect(result.edits.map((e) => e.path)).toEqual([
      'catalogs/v4.16/victoriametrics-operator/catalog.yaml',
      VM,
    ]);
    const only = await promote(
      { bundle: 'victoriametrics-operator.v0.74.1', channel: 'stable', root: 'catalogs/v4.16' },
      { tree: two, roots: ['catalogs/v4.16', 'catalogs/v4.21'] },
    );
    expect(only.edits.map((e) => e.path)).toEqual(['catalogs/v4.16/victoriametrics-operator/catalog.yaml']);
  });
});

// ---- templates

const C = join(TEMPLATES, 'community-operators-prod');

function communityTemplateRepo(pkg: string, templates: string[], outputs: string[]): Record<string, string> {
  const files: Record<string, string> = {
    [`operators/${pkg}/ci.yaml`]: join(C, pkg, 'ci.yaml'),
  };
  for (const t of templates)
    files[`operators/${pkg}/catalog-templates/${t}`] = join(C, pkg, 'catalog-templates', t);
  for (const o of outputs)
    files[`catalogs/${o}/${pkg}/catalog.yaml`] = join(C, pkg, 'rendered', o, pkg, 'catalog.yaml');
  return files;
}

describe('promote through an olm.semver template', () => {
  it('maps ci.yaml catalog_mapping to template and outputs', () => {
    const t = tree(communityTemplateRepo('ecr-secret-operator', [], []));
    expect(templateMappingsFromTree(t)).toEqual([
      {
        template: 'operators/ecr-secret-operator/catalog-templates/deprecated.yaml',
        kind: 'olm.template.basic',
        outputs: ['v4.12', 'v4.13', 'v4.14', 'v4.15'].map(
          (v) => `catalogs/${v}/ecr-secret-operator/catalog.yaml`,
        ),
      },
      {
        template: 'operators/ecr-secret-operator/catalog-templates/basic.yaml',
        kind: 'olm.template.basic',
        outputs: ['v4.16', 'v4.17', 'v4.18', 'v4.19', 'v4.20', 'v4.21', 'v4.22'].map(
          (v) => `catalogs/${v}/ecr-secret-operator/catalog.yaml`,
        ),
      },
    ]);
    expect(templateMappingsFromCiYaml('operators/x/ci.yaml', 'reviewers: [a]\n')).toEqual([]);
    // One path segment per name: a mapping cannot reach another package's template or catalogs.
    const escaping = [
      'fbc:',
      '  catalog_mapping:',
      '    - template_name: ../../y/catalog-templates/basic.yaml',
      '      catalog_names: [v4.21]',
      '    - template_name: basic.yaml',
      '      catalog_names: [v4.21, ../operators, v4.22/y, ..]',
      '',
    ].join('\n');
    expect(templateMappingsFromCiYaml('operators/x/ci.yaml', escaping)).toEqual([
      {
        template: 'operators/x/catalog-templates/basic.yaml',
        kind: 'olm.template.basic',
        outputs: ['catalogs/v4.21/x/catalog.yaml'],
      },
    ]);
  });

  it('kairos-operator: adds the image to the Stable bundles and re-renders both outputs', async () => {
    const files = communityTemplateRepo('kairos-operator', ['semver.yaml'], ['v4.16', 'v4.17']);
    const t = tree(files);
    const templates = templateMappingsFromTree(t);
    const roots = ['catalogs/v4.16', 'catalogs/v4.17'];
    const result = await promote(
      { bundle: 'kairos-operator.v2.2.0', channel: 'stable-v2' },
      { tree: t, roots, templates },
    );
    const byPath = new Map(result.edits.map((e) => [e.path, e]));
    expect([...byPath.keys()].sort()).toEqual([
      'catalogs/v4.16/kairos-operator/catalog.yaml',
      'catalogs/v4.17/kairos-operator/catalog.yaml',
      'operators/kairos-operator/catalog-templates/semver.yaml',
    ]);
    const template = byPath.get('operators/kairos-operator/catalog-templates/semver.yaml')!;
    expect(changedLines(template.before, template.after)).toEqual([
      '+Stable:',
      '+  Bundles:',
      '+  - Image: quay.io/community-operator-pipeline-prod/kairos-operator:2.2.0',
    ]);
    for (const root of roots) {
      const out = byPath.get(`${root}/kairos-operator/catalog.yaml`)!;
      expectChanges(out, [
        // stable outranks candidate, so the default channel moves (a warning, not an error)
        ['-defaultChannel: candidate-v2'],
        ['+defaultChannel: stable-v2'],
        [
          '+---',
          '+entries:',
          '+- name: kairos-operator.v2.2.0',
          '+name: stable-v2',
          '+package: kairos-operator',
          '+schema: olm.channel',
        ],
      ]);
      const check = await checkPromotion(t, root, 'kairos-operator', result);
      expect(check.valid).toBe(true);
      expect(check.graphErrors).toEqual([]);
    }
  });

  it('clusterpulse: renders with the opm behaviour its output was made with, so only the promotion shows', async () => {
    const files = communityTemplateRepo('clusterpulse', ['semver.yaml', 'basic.yaml'], ['v4.18']);
    const t = tree(files);
    const templates = templateMappingsFromTree(t);
    const result = await promote(
      { bundle: 'clusterpulse.v0.2.3', channel: 'stable-v0' },
      { tree: t, roots: ['catalogs/v4.18'], templates },
    );
    const out = result.edits.find((e) => e.path === 'catalogs/v4.18/clusterpulse/catalog.yaml')!;
    expectChanges(out, [
      ['-defaultChannel: fast-v1'],
      ['+defaultChannel: stable-v0'],
      [
        '+---',
        '+entries:',
        '+- name: clusterpulse.v0.2.3',
        '+name: stable-v0',
        '+package: clusterpulse',
        '+schema: olm.channel',
      ],
    ]);
    const check = await checkPromotion(t, 'catalogs/v4.18', 'clusterpulse', result);
    expect(check.graphErrors).toEqual([]);
  });

  it('minor channels: promoting to stable-v2.1, then stable-v2.2, fills the Stable bundles list', async () => {
    // kairos-operator's template switched to minor channels; its output rendered from it.
    const text = readFileSync(join(C, 'kairos-operator/catalog-templates/semver.yaml'), 'utf8').replace(
      'GenerateMajorChannels: true\nGenerateMinorChannels: false',
      'GenerateMajorChannels: false\nGenerateMinorChannels: true',
    );
    const bundles = readFileSync(
      join(C, 'kairos-operator/rendered/v4.17/kairos-operator/catalog.yaml'),
      'utf8',
    );
    const TEMPLATE = 'operators/kairos-operator/catalog-templates/semver.yaml';
    const OUT = 'catalogs/v4.17/kairos-operator/catalog.yaml';
    const store: Record<string, string> = {
      [TEMPLATE]: text,
      // Rendered as opm v1.61-v1.64 does (no package icon/description, which would follow
      // the default channel head); promote finds that behaviour and keeps to it.
      [OUT]: await renderTemplateText(text, 'yaml', {
        resolveBundle: bundleResolverFromCatalog([bundles]),
        ...semverOptionsForOpm('v1.64.0'),
      }),
    };
    const t: FileTree = { list: () => Object.keys(store), read: (p) => store[p] };
    const input = {
      tree: t,
      roots: ['catalogs/v4.17'],
      templates: [{ template: TEMPLATE, kind: 'olm.semver' as const, outputs: [OUT] }],
    };
    const first = await promote({ bundle: 'kairos-operator.v2.1.1', channel: 'stable-v2.1' }, input);
    const edit = (r: PromoteResult, p: string) => r.edits.find((e) => e.path === p)!;
    expect(changedLines(edit(first, TEMPLATE).before, edit(first, TEMPLATE).after)).toEqual([
      '+Stable:',
      '+  Bundles:',
      '+  - Image: quay.io/community-operator-pipeline-prod/kairos-operator:2.1.1',
    ]);
    expectChanges(edit(first, OUT), [
      ['-defaultChannel: candidate-v2.2'],
      ['+defaultChannel: stable-v2.1'],
      [
        '+---',
        '+entries:',
        '+- name: kairos-operator.v2.1.1',
        '+name: stable-v2.1',
        '+package: kairos-operator',
        '+schema: olm.channel',
      ],
    ]);
    expect((await checkPromotion(t, 'catalogs/v4.17', 'kairos-operator', first)).graphErrors).toEqual([]);

    for (const e of first.edits) store[e.path] = e.after;
    const second = await promote({ bundle: 'kairos-operator.v2.2.0', channel: 'stable-v2.2' }, input);
    expect(changedLines(edit(second, TEMPLATE).before, edit(second, TEMPLATE).after)).toEqual([
      '+  - Image: quay.io/community-operator-pipeline-prod/kairos-operator:2.2.0',
    ]);
    // The new Y-stream head replaces the previous Y-stream head, which lives in stable-v2.1.
    expect(edit(second, OUT).after).toContain(
      'entries:\n- name: kairos-operator.v2.2.0\n  replaces: kairos-operator.v2.1.1\nname: stable-v2.2\n',
    );
    expect((await checkPromotion(t, 'catalogs/v4.17', 'kairos-operator', second)).graphErrors).toEqual([]);
  });

  it('refuses channel names the template cannot make', async () => {
    const t = tree(communityTemplateRepo('clusterpulse', ['semver.yaml'], ['v4.18']));
    const input = { tree: t, roots: ['catalogs/v4.18'], templates: templateMappingsFromTree(t) };
    await expect(promote({ bundle: 'clusterpulse.v1.0.2', channel: 'beta' }, input)).rejects.toThrow(
      `channel name "beta" does not fit the semver template's naming`,
    );
    await expect(promote({ bundle: 'clusterpulse.v1.0.2', channel: 'stable-v1.0' }, input)).rejects.toThrow(
      /does not generate minor-version channels/,
    );
    await expect(promote({ bundle: 'clusterpulse.v1.0.2', channel: 'stable-v0' }, input)).rejects.toThrow(
      /puts version 1\.0\.2 in stable-v1/,
    );
    await expect(promote({ bundle: 'clusterpulse.v1.0.2', channel: 'fast-v1' }, input)).rejects.toThrow(
      /already in the fast bundles/,
    );
  });
});

describe('promote through an olm.template.basic template', () => {
  it('ecr-secret-operator deprecated.yaml: edits the channel in the template and re-renders', async () => {
    const t = tree(
      communityTemplateRepo('ecr-secret-operator', ['deprecated.yaml', 'basic.yaml'], ['v4.12']),
    );
    const result = await promote(
      { bundle: 'ecr-secret-operator.v0.4.1', channel: 'v0.3' },
      { tree: t, roots: ['catalogs/v4.12'], templates: templateMappingsFromTree(t) },
    );
    const template = result.edits.find((e) => e.path.endsWith('deprecated.yaml'))!;
    const out = result.edits.find((e) => e.path === 'catalogs/v4.12/ecr-secret-operator/catalog.yaml')!;
    const expected = ['+- name: ecr-secret-operator.v0.4.1', '+  replaces: ecr-secret-operator.v0.3.2'];
    expect(changedLines(template.before, template.after).map((l) => l.replace(/^\+\s+(- |)/, '+$1'))).toEqual(
      expected.map((l) => l.replace(/^\+\s+(- |)/, '+$1')),
    );
    expect(changedLines(out.before, out.after)).toEqual(expected);
    await expectValidPromotion(t, 'catalogs/v4.12', 'ecr-secret-operator', result);
  });

  it('refuses when the committed output is not the render of the template', async () => {
    // basic.yaml lists v0.6.0 and v0.5.1 in its channel, the committed outputs predate them.
    const t = tree(
      communityTemplateRepo('ecr-secret-operator', ['deprecated.yaml', 'basic.yaml'], ['v4.16']),
    );
    await expect(
      promote(
        { bundle: 'ecr-secret-operator.v0.3.2', channel: 'beta' },
        { tree: t, roots: ['catalogs/v4.16'], templates: templateMappingsFromTree(t) },
      ),
    ).rejects.toThrow(/is not the render of operators\/ecr-secret-operator\/catalog-templates\/basic\.yaml/);
  });

  it('mtv-fbc (JSON template, JSON output): the next release channel gets the previous release head as its tail', async () => {
    const files = {
      'v4.20/catalog-template.json': join(TEMPLATES, 'mtv-fbc/v4.20/catalog-template.json'),
      'v4.20/catalog/mtv-operator/catalog.json': join(
        TEMPLATES,
        'mtv-fbc/v4.20/catalog/mtv-operator/catalog.json',
      ),
    };
    const t = tree(files);
    const templates: TemplateMapping[] = [
      {
        template: 'v4.20/catalog-template.json',
        kind: 'olm.template.basic',
        outputs: ['v4.20/catalog/mtv-operator/catalog.json'],
      },
    ];
    const result = await promote(
      { bundle: 'mtv-operator.v2.11.7', channel: 'release-v2.12' },
      { tree: t, roots: ['v4.20/catalog'], templates },
    );
    const template = result.edits.find((e) => e.path === 'v4.20/catalog-template.json')!;
    // The new first entry of release-v2.12, and v2.12.0 (which replaced nothing) now replaces it.
    expectChanges(template, [
      [
        '+                {',
        '+                    "name": "mtv-operator.v2.11.7",',
        '+                    "skipRange": ">=0.0.0 <2.11.7"',
        '+                },',
      ],
      ['+                    "replaces": "mtv-operator.v2.11.7",'],
    ]);
    expect(template.after).toContain(
      '"name": "mtv-operator.v2.12.0",\n                    "replaces": "mtv-operator.v2.11.7",\n                    "skipRange": ">=0.0.0 <2.12.0"',
    );
    const out = result.edits.find((e) => e.path === 'v4.20/catalog/mtv-operator/catalog.json')!;
    expectChanges(out, [
      [
        '+        {',
        '+            "name": "mtv-operator.v2.11.7",',
        '+            "skipRange": ">=0.0.0 <2.11.7"',
        '+        },',
      ],
      ['+            "replaces": "mtv-operator.v2.11.7",'],
    ]);
    expect(JSON.parse(template.after)).toBeTruthy();
    await expectValidPromotion(t, 'v4.20/catalog', 'mtv-operator', result);
  });
});

describe('promote keeps the file as it was written', () => {
  const D = join(TEMPLATES, 'cluster-kube-descheduler-operator/v4.20');
  const JSON_OUT = 'v4.20/catalog/cluster-kube-descheduler-operator/catalog.json';
  const files = {
    'v4.20/catalog-template.yaml': join(D, 'catalog-template.yaml'),
    [JSON_OUT]: join(D, 'catalog/cluster-kube-descheduler-operator/catalog.json'),
  };
  const request = { bundle: 'clusterkubedescheduleroperator.4.13.0-202309181427', channel: 'stable' };

  it('JSON FBC (opm-written, cluster-kube-descheduler-operator): the head, which collects skips, skips it', async () => {
    const t = tree(files);
    const result = await promote(request, { tree: t, roots: ['v4.20/catalog'] });
    expect(result.edits.map((e) => e.path)).toEqual([JSON_OUT]);
    // The neighbour v4.14.0-202310201027 is itself skipped by the head, so an edge from it
    // would leave the new entry a classic dead end; the checks rejected those plans.
    expect(result.notes[0]).toMatch(/the head clusterkubedescheduleroperator\.v5\.3\.2 skips it/);
    expectChanges(result.edits[0]!, [
      [
        '+        {',
        '+            "name": "clusterkubedescheduleroperator.4.13.0-202309181427"',
        '+        },',
      ],
      ['-                "clusterkubedescheduleroperator.v5.3.1"'],
      [
        '+                "clusterkubedescheduleroperator.v5.3.1",',
        '+                "clusterkubedescheduleroperator.4.13.0-202309181427"',
      ],
    ]);
    await expectValidPromotion(t, 'v4.20/catalog', 'cluster-kube-descheduler-operator', result);
  });

  it('the same through its YAML basic template, with the JSON output re-rendered', async () => {
    const t = tree(files);
    const templates: TemplateMapping[] = [
      { template: 'v4.20/catalog-template.yaml', kind: 'olm.template.basic', outputs: [JSON_OUT] },
    ];
    const result = await promote(request, { tree: t, roots: ['v4.20/catalog'], templates });
    const template = result.edits.find((e) => e.path === 'v4.20/catalog-template.yaml')!;
    // The template indents its sequences (`entries:\n  - name`); the new lines do too.
    expectChanges(template, [
      ['+  - name: clusterkubedescheduleroperator.4.13.0-202309181427'],
      ['+    - clusterkubedescheduleroperator.4.13.0-202309181427'],
    ]);
    const out = result.edits.find((e) => e.path === JSON_OUT)!;
    const direct = await promote(request, { tree: t, roots: ['v4.20/catalog'] });
    // Rendering the edited template gives the same catalog as editing the catalog itself.
    expect(out.after).toBe(direct.edits[0]!.after);
    const check = await checkPromotion(t, 'v4.20/catalog', 'cluster-kube-descheduler-operator', result);
    expect(check.graphErrors).toEqual([]);
  });

  it('hand-written YAML: comments, flow lists and key order stay; new text follows the file', async () => {
    const text = `---
# Example operator catalog (hand-written)
schema: olm.package
name: example
defaultChannel: stable
---
schema: olm.channel
package: example
name: stable   # the GA channel
entries:
  - name: example.v1.0.0      # first release
  - name: example.v1.1.0
    replaces: example.v1.0.0
    skips: [example.v0.9.0]   # never published here
---
schema: olm.channel
package: example
name: candidate
entries: [{name: example.v1.0.1}, {name: example.v1.2.0, replaces: example.v1.0.1}]
# bundles
${['1.0.0', '1.0.1', '1.1.0', '1.2.0'].map(exampleBundleYaml).join('')}`;
    const store: Record<string, string> = { 'catalogs/a/example/catalog.yaml': text };
    const t: FileTree = { list: () => Object.keys(store), read: (p) => store[p] };
    // v1.0.1 sits between v1.0.0 and v1.1.0 (which replaces v1.0.0): the chain goes through it.
    const mid = await promote(
      { bundle: 'example.v1.0.1', channel: 'stable' },
      { tree: t, roots: ['catalogs/a'] },
    );
    // Exactly: one entry inserted in version order, and v1.1.0's replaces moved to it.
    expect(mid.edits[0]!.after).toBe(
      text.replace(
        '  - name: example.v1.1.0\n    replaces: example.v1.0.0\n',
        '  - name: example.v1.0.1\n    replaces: example.v1.0.0\n  - name: example.v1.1.0\n    replaces: example.v1.0.1\n',
      ),
    );
    expect(mid.edits[0]!.after).toContain('name: stable   # the GA channel\n');
    expect(mid.edits[0]!.after).toContain('skips: [example.v0.9.0]   # never published here\n');
    // a new head replaces the old one, in the file's own indentation
    const top = await promote(
      { bundle: 'example.v1.2.0', channel: 'stable' },
      { tree: t, roots: ['catalogs/a'] },
    );
    expect(changedLines(top.edits[0]!.before, top.edits[0]!.after)).toEqual([
      '+  - name: example.v1.2.0',
      '+    replaces: example.v1.1.0',
    ]);
    for (const r of [mid, top]) {
      const check = await checkPromotion(t, 'catalogs/a', 'example', r);
      expect(check.validationErrors).toEqual([]);
      expect(check.valid).toBe(true);
      expect(check.graphErrors).toEqual([]);
    }
  });
});

describe('promote on plain FBC (real certified-operators catalog)', () => {
  const PATH = 'catalogs/v4.22/cloud-native-postgresql/catalog.yaml';
  const t = tree({
    [PATH]: join(CATALOGS, 'certified-operators/catalogs/v4.22/cloud-native-postgresql/catalog.yaml'),
  });
  const roots = ['catalogs/v4.22'];

  it('the previous minor release becomes the tail of the next minor channel', async () => {
    const result = await promoteIn(t, roots, 'cloud-native-postgresql.v1.28.2', 'stable-v1.29');
    const before = result.edits[0]!.before;
    expect(result.edits[0]!.after).toBe(
      before.replace(
        'entries:\n- name: cloud-native-postgresql.v1.29.0\n- name: cloud-native-postgresql.v1.29.1\n',
        'entries:\n- name: cloud-native-postgresql.v1.28.2\n- name: cloud-native-postgresql.v1.29.0\n  replaces: cloud-native-postgresql.v1.28.2\n- name: cloud-native-postgresql.v1.29.1\n',
      ),
    );
    expect(changedLines(before, result.edits[0]!.after)).toEqual([
      '+- name: cloud-native-postgresql.v1.28.2',
      '+  replaces: cloud-native-postgresql.v1.28.2',
    ]);
    await expectValidPromotion(t, 'catalogs/v4.22', 'cloud-native-postgresql', result);
  });

  it('a newer minor release becomes the head of an older minor channel', async () => {
    const result = await promoteIn(t, roots, 'cloud-native-postgresql.v1.29.1', 'stable-v1.28');
    expect(firstEditChanges(result)).toEqual([
      '+- name: cloud-native-postgresql.v1.29.1',
      '+  replaces: cloud-native-postgresql.v1.28.4',
    ]);
    const check = await checkPromotion(t, 'catalogs/v4.22', 'cloud-native-postgresql', result);
    expect(check.graphErrors).toEqual([]);
  });
});
