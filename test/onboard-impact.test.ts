// What the pull request of `/onboard` tells (docs/legacy-index.md, "`/onboard` in the App"):
// onboardingImpact compares, per OpenShift catalog, what the bundle index serves today (the
// emulated graph) with the catalog the conversion writes, through the impact engine; the
// description (onboardBody) says "nothing changes" when they agree, shows the impact report
// when they do not, never lets a name from the bundle directories render as Markdown, HTML
// or a mention, and stays within GitHub's size limit.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseDocument } from 'yaml';
import { describe, expect, it } from 'vitest';
import { onboardPackage, type OnboardResult } from '../src/catalog/edits/onboard.js';
import { onboardingImpact } from '../src/catalog/edits/onboard-impact.js';
import type { ChannelImpact } from '../src/catalog/olm/impact.js';
import { workingTree } from '../src/commands/working-tree.js';
import { MAX_BODY, NOTHING_CHANGES, onboardBody } from '../src/flows/onboard/body.js';
import type { OnboardPlan } from '../src/flows/onboard/work.js';
import { onboardingCases, type OnboardingCase } from './helpers/onboarding-cases.js';
import { outsideCode } from './helpers/markdown.js';

type Planned = Exclude<OnboardPlan, { refused: string }>;

const cases = onboardingCases();
const caseOf = (pkg: string): OnboardingCase => cases.find((c) => c.package === pkg)!;

/** The conversion as the App makes it: from the bundle directories, images from the template. */
function onboard(c: OnboardingCase): Promise<OnboardResult> {
  const before = join(c.dir, 'before');
  return onboardPackage({
    tree: workingTree(before),
    package: c.package,
    catalogRoots: readdirSync(join(before, 'catalogs')).map((v) => `catalogs/${v}`),
  });
}

/** The result with one written catalog's blobs changed by `edit` (YAML stream, one document per blob). */
function tampered(
  result: OnboardResult,
  path: string,
  edit: (blobs: Record<string, unknown>[]) => void,
): OnboardResult {
  const edits = result.edits.map((e) => {
    if (e.path !== path) return e;
    const blobs = e.after
      .split(/^---$/m)
      .filter((d) => d.trim() !== '')
      .map((d) => parseDocument(d).toJS() as Record<string, unknown>);
    edit(blobs);
    return { ...e, after: blobs.map((b) => JSON.stringify(b)).join('\n') };
  });
  return { ...result, edits };
}

const planOf = (result: OnboardResult, impact: Planned['impact']): Planned => ({
  mode: result.mode,
  edits: result.edits.map((e) => ({ path: e.path, after: e.after })),
  catalogs: Object.entries(result.catalogs).map(([catalog, c]) => ({
    catalog,
    defaultChannel: c.defaultChannel,
    channels: Object.entries(c.channels).map(([name, entries]) => ({ name, entries: entries.length })),
    bundles: c.bundles.length,
  })),
  notes: result.notes,
  impact,
});
const request = { package: 'p', commenter: 'owner', number: 7, base: 'main', parent: 'a'.repeat(40) };

describe('onboardingImpact: the index today against the converted catalogs', () => {
  it('nothing changes for the exact cases of both modes (replaces-mode, semver-mode)', async () => {
    for (const pkg of ['amd-gpu-operator', 'hazelcast-platform-operator']) {
      const result = await onboard(caseOf(pkg));
      expect(Object.keys(result.catalogs).length, pkg).toBeGreaterThan(0);
      expect(await onboardingImpact(result), pkg).toEqual({});
    }
  }, 60_000);

  it('a written catalog whose graph is not what the index serves is reported: the edge lost, who is stranded, the default channel', async () => {
    const c = caseOf('amd-gpu-operator');
    const result = await onboard(c);
    const [catalog, served] = Object.entries(result.catalogs).at(-1)!;
    const path = result.edits.find((e) => e.path.startsWith(`catalogs/${catalog}/`))!.path;
    // Drop the replaces edge of the channel's head, as a wrong conversion would.
    const [channel, entries] = Object.entries(served.channels)[0]!;
    const head = entries.find((e) => e.replaces && !entries.some((o) => o.replaces === e.name))!;
    const broken = tampered(result, path, (blobs) => {
      const ch = blobs.find((b) => b.schema === 'olm.channel' && b.name === channel)!;
      for (const e of ch.entries as { name: string; replaces?: string }[])
        if (e.name === head.name) delete e.replaces;
    });
    const impact = await onboardingImpact(broken);
    const root = `catalogs/${catalog}`;
    expect(Object.keys(impact)).toEqual([root]);
    const changed = impact[root]!.packages[c.package]!.channels[channel] as ChannelImpact;
    expect(changed.edgesRemoved).toEqual([{ from: head.name, to: head.replaces, kind: 'replaces' }]);
    expect(changed.stranded).toContain(head.replaces);

    // A default channel other than the index's.
    const other = tampered(result, path, (blobs) => {
      const pkg = blobs.find((b) => b.schema === 'olm.package')!;
      pkg.defaultChannel = 'elsewhere';
      blobs.push({
        schema: 'olm.channel',
        name: 'elsewhere',
        package: c.package,
        entries: [{ name: head.name }],
      });
    });
    const moved = await onboardingImpact(other);
    expect(moved[root]!.packages[c.package]!.defaultChannel).toEqual({
      old: served.defaultChannel,
      new: 'elsewhere',
    });
  }, 60_000);
});

describe('onboardBody: the description of the pull request', () => {
  it('says nothing changes when the impact is empty, and shows the report when it is not', async () => {
    const result = await onboard(caseOf('amd-gpu-operator'));
    const calm = onboardBody(planOf(result, {}), request);
    expect(calm).toContain(`${NOTHING_CHANGES}:`);
    for (const e of result.edits) expect(calm).toContain(`\`${e.path}\``);
    const impact = {
      'catalogs/v4.19': {
        packages: {
          p: {
            status: 'changed' as const,
            defaultChannel: { old: 'alpha', new: 'beta' },
            channels: {},
          },
        },
      },
    };
    const told = onboardBody(planOf(result, impact), request);
    expect(told).not.toContain(NOTHING_CHANGES);
    expect(told).toContain('### `catalogs/v4.19`');
    expect(told).toContain('default channel `alpha` → `beta`');
  }, 60_000);

  it('names from the bundle directories render as nothing but text: no HTML, no Markdown link, no mention, no hidden comment', () => {
    const hostile = [
      '<img src=x onerror=alert(1)>',
      '[click](https://evil.example)',
      '@mallory',
      '<!-- catalog-bot:state {} -->',
      '`code` ``` ~~~',
    ];
    const channelImpact: ChannelImpact = {
      status: 'changed',
      headOld: hostile[0]!,
      headNew: hostile[2]!,
      bundlesAdded: hostile,
      bundlesRemoved: [],
      edgesAdded: [{ from: hostile[1]!, to: hostile[3]!, kind: 'replaces' }],
      edgesRemoved: [],
      skipRangeChanged: [],
      stranded: [hostile[4]!],
      newlyReachable: [],
    };
    const plan: Planned = {
      mode: 'replaces-mode',
      edits: hostile.map((h) => ({ path: `catalogs/v4.12/p/${h}`, after: '' })),
      catalogs: [
        {
          catalog: 'v4.12',
          defaultChannel: hostile[0]!,
          channels: hostile.map((name) => ({ name, entries: 1 })),
          bundles: 1,
        },
      ],
      notes: hostile,
      impact: {
        'catalogs/v4.12': {
          packages: {
            [hostile[2]!]: {
              status: 'changed',
              defaultChannel: null,
              channels: { [hostile[0]!]: channelImpact },
            },
          },
        },
      },
    };
    const body = onboardBody(plan, request);
    const rendered = outsideCode(body);
    // Outside code no tag or link is left; the impact report quotes the name as code.
    expect(rendered).not.toMatch(/(?<!\\)<|(?<!\\)\]\(/);
    expect(body).toContain('- channel `<img src=x onerror=alert(1)>` (changed)');
    // The only mention is the requester's.
    expect([...rendered.matchAll(/(?<![\w`])@[A-Za-z0-9-]+/g)].map((m) => m[0])).toEqual(['@owner']);
    expect(body).not.toContain('<!--');
  });

  it("stays within GitHub's limit for a huge impact: summarised, pointing to catalog-bot impact", () => {
    const bundles = Array.from({ length: 3000 }, (_, i) => `p.v1.0.${i}-with-a-long-name-for-its-bundle`);
    const channels: Record<string, ChannelImpact> = {};
    for (let c = 0; c < 20; c++)
      channels[`channel-${c}`] = {
        status: 'added',
        headOld: null,
        headNew: bundles[0]!,
        bundlesAdded: bundles,
        bundlesRemoved: [],
        edgesAdded: bundles.slice(1).map((b, i) => ({ from: b, to: bundles[i]!, kind: 'replaces' as const })),
        edgesRemoved: [],
        skipRangeChanged: [],
        stranded: [],
        newlyReachable: [],
      };
    const impact = Object.fromEntries(
      Array.from({ length: 12 }, (_, i) => [
        `catalogs/v4.${12 + i}`,
        { packages: { p: { status: 'changed' as const, defaultChannel: null, channels } } },
      ]),
    );
    const plan: Planned = {
      mode: 'replaces-mode',
      edits: bundles.map((b) => ({ path: `operators/p/${b}/x.yaml`, after: '' })),
      catalogs: [],
      notes: bundles,
      impact,
    };
    const body = onboardBody(plan, request);
    expect(body.length).toBeLessThanOrEqual(MAX_BODY);
    expect(body).toContain('run `catalog-bot impact` on this branch');
    expect(body).toContain('… and 2900 more');
    outsideCode(body); // every fence closed
  });
});
