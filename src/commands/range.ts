// `catalog-bot range <skipRange> <version>...`: a skipRange under OLM's (blang/semver v4)
// semantics, and which versions it matches.
import { tryParseRange } from '../catalog/versions/range.js';
import { tryParseVersion } from '../catalog/versions/semver.js';
import { defineCliCommand, EXIT_FAIL, EXIT_OK } from './command.js';
import { writeJson } from './output.js';

export const command = defineCliCommand({
  options: { format: { type: 'string', default: 'json' } },
  formats: ['json', 'text'],
  positionals: { min: 1, max: Infinity, message: 'range needs a skipRange (quote it) and versions to test' },
  run({ values, positionals }, { out }) {
    const [range, ...versions] = positionals as [string, ...string[]];
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
      writeJson(out, {
        valid: parsed.ok,
        error: parsed.ok ? null : parsed.error,
        meaning: parsed.ok ? parsed.range.toString() : null,
        matches,
        ...(Object.keys(versionErrors).length > 0 ? { versionErrors } : {}),
      });
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
  },
});
