// The catalog-bot/templates check on the real template/output pairs (bundles from the
// committed outputs, so no network), and on edits that break them.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { templateMappingsFromTree, type FileTree } from '../src/catalog/edits/promote.js';
import { bundleResolverFromCatalog } from '../src/catalog/templates/index.js';
import { migrateLevelOf } from '../src/catalog/templates/behaviours.js';
import { renderTemplateOutputs, templatesCheck, type TemplateMappingInput } from '../src/checks/templates.js';
import { SHARED_DATA } from './helpers/oracle.js';

const T = join(SHARED_DATA, 'real-templates');
const read = (path: string): string => readFileSync(path, 'utf8');

/** community-operators-prod laid out as the repository has it: operators/ and catalogs/. */
function communityTree(pkgs: string[]): FileTree & { files: Map<string, string> } {
  const files = new Map<string, string>();
  const base = join(T, 'community-operators-prod');
  for (const pkg of pkgs) {
    files.set(`operators/${pkg}/ci.yaml`, read(join(base, pkg, 'ci.yaml')));
    for (const t of ['semver.yaml', 'basic.yaml', 'deprecated.yaml']) {
      try {
        files.set(`operators/${pkg}/catalog-templates/${t}`, read(join(base, pkg, 'catalog-templates', t)));
      } catch {
        // not every package has every template
      }
    }
    for (const v of ['v4.12', 'v4.16', 'v4.17', 'v4.18']) {
      try {
        files.set(
          `catalogs/${v}/${pkg}/catalog.yaml`,
          read(join(base, pkg, 'rendered', v, pkg, 'catalog.yaml')),
        );
      } catch {
        // only some outputs were copied
      }
    }
  }
  return { files, read: (p) => files.get(p), list: () => [...files.keys()] };
}

/** Mappings with only the outputs that exist here (the data holds a few of each). */
function mappingsOf(tree: ReturnType<typeof communityTree>): TemplateMappingInput[] {
  return templateMappingsFromTree(tree).map((m) => ({
    ...m,
    outputs: m.outputs.filter((o) => tree.files.has(o)),
  }));
}

const noNetwork = async (image: string) => {
  throw new Error(`test: no network for ${image}`);
};

describe('catalog-bot/templates on the real pairs', () => {
  it('clusterpulse and kairos-operator: every committed output is the render', async () => {
    const tree = communityTree(['clusterpulse', 'kairos-operator']);
    const mappings = mappingsOf(tree);
    expect(mappings.flatMap((m) => m.outputs).sort()).toEqual([
      'catalogs/v4.16/kairos-operator/catalog.yaml',
      'catalogs/v4.17/kairos-operator/catalog.yaml',
      'catalogs/v4.18/clusterpulse/catalog.yaml',
    ]);
    const result = await templatesCheck({ mappings, read: tree.read, resolveBundle: noNetwork });
    expect(result.findings).toEqual([]);
    expect(result.conclusion).toBe('success');
    // clusterpulse was rendered by the pipeline's opm v1.46.0
    expect(result.summary).toContain(
      '`catalogs/v4.18/clusterpulse/catalog.yaml`: up to date (rendered as opm v1.46.0 does)',
    );
  });

  it('kairos v4.17 is recognised as migrated to olm.csv.metadata, v4.16 is not', () => {
    const tree = communityTree(['kairos-operator']);
    expect(migrateLevelOf(tree.read('catalogs/v4.16/kairos-operator/catalog.yaml'))).toBeUndefined();
    expect(migrateLevelOf(tree.read('catalogs/v4.17/kairos-operator/catalog.yaml'))).toBe(
      'bundle-object-to-csv-metadata',
    );
  });

  it('ecr-secret-operator: deprecated.yaml is up to date; basic.yaml has two entries its outputs lack', async () => {
    const tree = communityTree(['ecr-secret-operator']);
    const result = await templatesCheck({
      mappings: mappingsOf(tree),
      read: tree.read,
      resolveBundle: noNetwork,
    });
    expect(result.conclusion).toBe('failure');
    expect(result.findings.map((d) => [d.rule, d.file])).toEqual([
      ['TEMPLATE-OUT-OF-DATE', 'catalogs/v4.16/ecr-secret-operator/catalog.yaml'],
      ['TEMPLATE-OUT-OF-DATE', 'catalogs/v4.17/ecr-secret-operator/catalog.yaml'],
    ]);
    const first = result.findings[0]!;
    expect(first.message).toContain('13 lines differ');
    expect(first.hint).toBe(
      'Run `catalog-bot render-template operators/ecr-secret-operator/catalog-templates/basic.yaml -o yaml --bundles-from catalogs/v4.16/ecr-secret-operator/catalog.yaml --output-file catalogs/v4.16/ecr-secret-operator/catalog.yaml` and commit the result, or comment `/render`.',
    );
    expect(result.findings[1]!.hint).toContain('--migrate-level bundle-object-to-csv-metadata');
    // the annotation points at the first changed line of the output
    const committed = tree.read('catalogs/v4.16/ecr-secret-operator/catalog.yaml')!.split('\n');
    expect(committed[first.line! - 1]).toMatch(/^(- name|---|schema)/);
    expect(result.summary).toContain('+- name: ecr-secret-operator.v0.6.0');
    expect(result.summary).toContain('✓ `catalogs/v4.12/ecr-secret-operator/catalog.yaml`: up to date');
    expect(result.annotations.map((a) => a.level)).toEqual(['failure', 'failure']);

    // /render writes exactly the renders, and then the check passes
    const { edits, findings } = await renderTemplateOutputs({
      mappings: mappingsOf(tree),
      read: tree.read,
      resolveBundle: noNetwork,
    });
    expect(findings).toEqual([]);
    expect(edits.map((e) => e.path)).toEqual([
      'catalogs/v4.16/ecr-secret-operator/catalog.yaml',
      'catalogs/v4.17/ecr-secret-operator/catalog.yaml',
    ]);
    for (const e of edits) tree.files.set(e.path, e.after);
    const again = await templatesCheck({
      mappings: mappingsOf(tree),
      read: tree.read,
      resolveBundle: noNetwork,
    });
    expect(again.findings).toEqual([]);
  });

  it('Red Hat product pairs (basic templates, JSON outputs)', async () => {
    const files = new Map<string, string>();
    const mappings: TemplateMappingInput[] = [];
    for (const v of ['v4.16', 'v4.20']) {
      const dir = `cluster-kube-descheduler-operator/${v}`;
      files.set(`${v}/catalog-template.yaml`, read(join(T, dir, 'catalog-template.yaml')));
      const out = `${v}/catalog/cluster-kube-descheduler-operator/catalog.json`;
      files.set(out, read(join(T, dir, 'catalog/cluster-kube-descheduler-operator/catalog.json')));
      mappings.push({ template: `${v}/catalog-template.yaml`, outputs: [out] });
    }
    files.set('mtv/catalog-template.json', read(join(T, 'mtv-fbc/v4.20/catalog-template.json')));
    files.set('mtv/catalog.json', read(join(T, 'mtv-fbc/v4.20/catalog/mtv-operator/catalog.json')));
    mappings.push({
      template: 'mtv/catalog-template.json',
      kind: 'olm.template.basic',
      outputs: ['mtv/catalog.json'],
    });
    const result = await templatesCheck({ mappings, read: (p) => files.get(p), resolveBundle: noNetwork });
    expect(result.findings).toEqual([]);
    expect(result.title).toBe('3 rendered catalogs up to date');
  });
});

describe('catalog-bot/templates on edits', () => {
  const tree = communityTree(['kairos-operator']);
  const template = 'operators/kairos-operator/catalog-templates/semver.yaml';
  const outputs = [
    'catalogs/v4.16/kairos-operator/catalog.yaml',
    'catalogs/v4.17/kairos-operator/catalog.yaml',
  ];
  const withTemplate = (text: string) => (p: string) => (p === template ? text : tree.read(p));

  it('a template that does not parse: a failing finding on its line', async () => {
    const result = await templatesCheck({
      mappings: [{ template, outputs }],
      read: withTemplate('schema: olm.semver\ncandidate:\n  bundles:\n  - image: [unclosed\n'),
    });
    expect(result.conclusion).toBe('failure');
    expect(result.findings).toHaveLength(1);
    expect(result.findings[0]).toMatchObject({ rule: 'TEMPLATE-INVALID', file: template });
    expect(result.findings[0]!.line).toBeGreaterThanOrEqual(4);
  });

  it('a missing template or output is a failure that says what to do', async () => {
    const result = await templatesCheck({
      mappings: [
        {
          template: 'operators/none/catalog-templates/x.yaml',
          outputs: ['catalogs/v4.16/none/catalog.yaml'],
        },
        { template, outputs: [...outputs, 'catalogs/v4.20/kairos-operator/catalog.yaml'] },
      ],
      read: tree.read,
      resolveBundle: noNetwork,
    });
    expect(result.findings.map((d) => d.rule)).toEqual(['TEMPLATE-MISSING', 'TEMPLATE-OUTPUT-MISSING']);
    expect(result.findings[1]!.hint).toContain('--output-file catalogs/v4.20/kairos-operator/catalog.yaml');
  });

  it('only images the outputs lack are pulled; a bundle that cannot be rendered fails the template', async () => {
    const text = tree.read(template)! + '  - Image: quay.io/example/kairos-operator:9.9.9\n';
    expect(text).toMatch(/Candidate:\n\s+Bundles:/);
    const resolveBundle = vi.fn(async (image: string) => {
      throw new Error(`render reference "${image}": manifest unknown`);
    });
    const result = await templatesCheck({
      mappings: [{ template, outputs }],
      read: withTemplate(text),
      resolveBundle,
    });
    expect(resolveBundle.mock.calls.map((c) => c[0])).toEqual(['quay.io/example/kairos-operator:9.9.9']);
    expect(result.findings).toHaveLength(1);
    expect(result.findings[0]).toMatchObject({ rule: 'TEMPLATE-RENDER', file: template });
    expect(result.findings[0]!.message).toContain('manifest unknown');
  });

  it('a new bundle from the registry: the outputs are out of date until re-rendered', async () => {
    // a "registry" serving a copy of v2.0.1 as 2.3.0
    const v416 = tree.read(outputs[0]!)!;
    const old = await bundleResolverFromCatalog([v416])(
      'quay.io/community-operator-pipeline-prod/kairos-operator:2.0.1',
    );
    const blob = JSON.parse(
      JSON.stringify((old as { blob: object }).blob)
        .replaceAll('kairos-operator.v2.0.1', 'kairos-operator.v2.3.0')
        .replaceAll('"version":"2.0.1"', '"version":"2.3.0"'),
    ) as Record<string, unknown>;
    const image = 'quay.io/example/kairos-operator:2.3.0';
    blob.image = image;
    const text = tree.read(template)! + `  - Image: ${image}\n`;
    const resolveBundle = vi.fn(async (i: string) => (i === image ? blob : undefined));
    const result = await templatesCheck({
      mappings: [{ template, outputs }],
      read: withTemplate(text),
      resolveBundle,
      maxDiffChars: 600,
    });
    expect(result.findings.map((d) => [d.rule, d.file])).toEqual([
      ['TEMPLATE-OUT-OF-DATE', outputs[0]],
      ['TEMPLATE-OUT-OF-DATE', outputs[1]],
    ]);
    expect(result.summary).toContain('more diff lines not shown');
    expect(result.summary).toContain('```diff');
    const { edits } = await renderTemplateOutputs({
      mappings: [{ template, outputs }],
      read: withTemplate(text),
      resolveBundle,
    });
    const files = new Map(edits.map((e) => [e.path, e.after]));
    expect(files.get(outputs[0]!)).toContain('kairos-operator.v2.3.0');
    // v4.17 holds the new bundle migrated to olm.csv.metadata
    expect(files.get(outputs[1]!)).toMatch(
      /image: quay.io\/example\/kairos-operator:2.3.0\nname: kairos-operator.v2.3.0\npackage: kairos-operator\nproperties:\n(- type: [^\n]*\n {2}value:\n( {4}[^\n]*\n)+)*- type: olm.csv.metadata/,
    );
    const after = await templatesCheck({
      mappings: [{ template, outputs }],
      read: (p) => files.get(p) ?? withTemplate(text)(p),
      resolveBundle: noNetwork,
    });
    expect(after.findings).toEqual([]);
  });
});
