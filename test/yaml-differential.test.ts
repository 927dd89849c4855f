// The YAML and JSON differential (docs/security.md, "The bot reads files exactly as opm does"):
// every generated corner (test/helpers/yaml-corners.ts) goes to the real opm v1.73.0 and to
// catalog-bot. They must give the same verdict and, when both accept the catalog, the same
// rendered objects. Where opm accepts and catalog-bot refuses, the refusal must be one of the
// listed rules (READ_REFUSALS), never an accident. A catalog catalog-bot accepts that opm
// serves differently (a silent hide) always fails the test.
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { DirectorySource, renderJson, validateCatalog } from '../src/catalog/index.js';
import { READ_REFUSALS } from '../src/catalog/fbc/decode.js';
import { sortedJson } from '../src/catalog/fbc/load.js';
import { mapLimit } from '../src/catalog/map-limit.js';
import { haveOpm, jsonStream, OPM, removeTree, writeTree } from './helpers/oracle.js';
import { cornerTree, yamlCorners, type Corner } from './helpers/yaml-corners.js';

const run = promisify(execFile);

// opm without Go's garbage collector up to 1 GiB: a corner is a few kB, so the collector
// only spends start-up CPU (a quarter of each short run here, over a thousand runs); the
// verdicts and objects are opm's own either way.
const OPM_ENV = { ...process.env, GOGC: 'off', GOMEMLIMIT: '1GiB' };

interface Verdict {
  valid: boolean;
  /** The rendered objects (JSON text of each), when valid. */
  objects?: string[];
  /** Rule ids of the errors, for ours. */
  rules?: string[];
  message?: string;
}

/** The objects of a JSON stream, each re-serialised with sorted keys (order of objects kept). */
const objectsOf = (stream: string): string[] => jsonStream(stream).map(sortedJson);

async function opmVerdict(dir: string): Promise<Verdict> {
  try {
    await run(OPM, ['validate', dir], { timeout: 60_000, env: OPM_ENV });
  } catch (err) {
    const stderr = String((err as { stderr?: string }).stderr ?? err);
    return { valid: false, message: /msg="((?:[^"\\]|\\.)*)"/.exec(stderr)?.[1] ?? stderr.trim() };
  }
  const { stdout } = await run(OPM, ['render', dir, '-o', 'json'], {
    timeout: 60_000,
    env: OPM_ENV,
    maxBuffer: 64 * 2 ** 20,
  });
  return { valid: true, objects: objectsOf(stdout) };
}

async function ourVerdict(dir: string): Promise<Verdict> {
  const report = await validateCatalog(new DirectorySource(dir), { keepBundleObjects: true });
  const errors = report.diagnostics.filter((d) => d.level === 'error');
  if (errors.length > 0)
    return {
      valid: false,
      rules: [...new Set(errors.map((d) => d.rule))],
      message: errors.map((d) => `${d.rule} ${d.message}`).join('; '),
    };
  return { valid: true, objects: objectsOf([...renderJson(report.config)].join('')) };
}

type Outcome = 'same' | 'both invalid' | 'refused' | 'DIFFERENT OBJECTS' | 'OPM REJECTS' | 'WE REJECT';

interface Row {
  corner: Corner;
  outcome: Outcome;
  opm: Verdict;
  ours: Verdict;
}

function judge(opm: Verdict, ours: Verdict): Outcome {
  if (opm.valid && ours.valid)
    return JSON.stringify(opm.objects) === JSON.stringify(ours.objects) ? 'same' : 'DIFFERENT OBJECTS';
  if (!opm.valid && !ours.valid) return 'both invalid';
  if (!opm.valid) return 'OPM REJECTS';
  return (ours.rules ?? []).some((r) => r in READ_REFUSALS) ? 'refused' : 'WE REJECT';
}

const corners = yamlCorners();
const rows: Row[] = [];

describe.runIf(haveOpm)('YAML and JSON corners read as opm reads them', () => {
  afterAll(() => {
    // CATALOG_BOT_DIFFERENTIAL_REPORT=<file> writes the table (docs/security.md cites its counts).
    const file = process.env.CATALOG_BOT_DIFFERENTIAL_REPORT;
    if (file)
      writeFileSync(
        file,
        rows
          .map(
            (r) =>
              `${r.outcome}\t${r.corner.name}\topm: ${r.opm.valid ? 'valid' : `invalid ${r.opm.message}`}\tours: ${
                r.ours.valid ? 'valid' : `invalid ${r.ours.message}`
              }`,
          )
          .join('\n') + '\n',
      );
  });

  it(`generates at least 300 corners (${corners.length})`, () => {
    expect(corners.length).toBeGreaterThanOrEqual(300);
  });

  it('gives opm verdict and objects on every corner, or refuses it with a listed rule', async () => {
    const results = await mapLimit(corners, 2, async (corner) => {
      const dir = writeTree(cornerTree(corner));
      try {
        const [opm, ours] = await Promise.all([opmVerdict(dir), ourVerdict(dir)]);
        return { corner, opm, ours, outcome: judge(opm, ours) };
      } finally {
        removeTree(dir);
      }
    });
    rows.push(...results);
    const wrong = results
      .filter((r) => r.outcome === r.outcome.toUpperCase())
      .map(
        (r) =>
          `${r.outcome}: ${r.corner.name}\n  opm:  ${r.opm.valid ? 'valid' : r.opm.message}\n  ours: ${
            r.ours.valid ? 'valid' : r.ours.message
          }${r.outcome === 'DIFFERENT OBJECTS' ? `\n  opm objects:  ${r.opm.objects?.join(' ')}\n  our objects: ${r.ours.objects?.join(' ')}` : ''}`,
      );
    expect(wrong, wrong.join('\n')).toEqual([]);
  }, 600_000);
});

describe('the attack of issue 29, item 1', () => {
  it("fails bar's file that hides a foo channel and bundle behind U+2028 in a comment, at its line", async () => {
    for (const br of ['\u2028', '\u2029', '\u0085']) {
      const hidden = [
        'schema: olm.channel',
        'package: foo',
        'name: evil',
        'entries: [{name: foo.v9.9.9, skipRange: "<9.9.9"}]',
      ].join(br);
      const dir = writeTree(
        cornerTree({
          name: 'attack',
          files: { 'bar/notes.yaml': `# release notes${br}${hidden}\nnotes: |\n  nothing to see\n` },
        }),
      );
      try {
        const report = await validateCatalog(new DirectorySource(dir));
        const refusal = report.diagnostics.find((d) => d.rule === 'L-YAML-LINE-BREAK');
        expect(report.valid).toBe(false);
        expect(refusal).toMatchObject({ level: 'error', file: 'bar/notes.yaml', line: 1 });
        expect(refusal?.hint).toMatch(/plain line break/);
      } finally {
        removeTree(dir);
      }
    }
  });
});

describe('a flow mapping read as YAML 1.1', () => {
  it("fails bar's channel that opm reads as foo's through `?package` in a flow mapping, at its line", async () => {
    // go-yaml v2 starts a key at `?` inside `{ }`: opm serves a channel of foo with foo's
    // bundle, where a YAML 1.2 reader sees bar's channel with two odd keys.
    const dir = writeTree(
      cornerTree({
        name: 'attack',
        files: {
          'bar/notes.yaml':
            '# release notes\n{schema: olm.channel, package: bar, name: evil, entries: [{name: bar.v1.0.0}],\n  ?package: foo, ?entries: [{name: foo.v1.0.0}]}\n',
        },
      }),
    );
    try {
      const report = await validateCatalog(new DirectorySource(dir));
      const refusal = report.diagnostics.find((d) => d.rule === 'L-YAML-FLOW');
      expect(report.valid).toBe(false);
      expect(refusal).toMatchObject({ level: 'error', file: 'bar/notes.yaml', line: 3 });
    } finally {
      removeTree(dir);
    }
  });
});
