// `catalog-bot graph <root> <package>`: one channel's upgrade graph under classic OLM and
// OLM v1.
import type { ChannelGraph } from '../catalog/olm/graph.js';
import { DirectorySource, validateCatalog } from '../catalog/index.js';
import { tryParseVersion } from '../catalog/versions/semver.js';
import { channelGraph, dot, findChannel, graphText, mermaid } from '../catalog/olm/graph.js';
import { InvalidVersionRangeError } from '../catalog/olm/v1.js';
import { defineCliCommand, EXIT_OK, requireDirectory, UsageError } from './command.js';
import { writeJson } from './output.js';

export const command = defineCliCommand({
  options: {
    channel: { type: 'string' },
    format: { type: 'string', default: 'text' },
    installed: { type: 'string', multiple: true, default: [] },
    'v1-version-range': { type: 'string' },
  },
  formats: ['json', 'text', 'mermaid', 'dot'],
  positionals: { min: 2, message: 'graph needs a catalog root and a package name' },
  async run({ values, positionals }, { out }) {
    const [root, packageName] = positionals as [string, string];
    const installed = values.installed.map((spec) => {
      const at = spec.lastIndexOf('=');
      if (at <= 0) throw new UsageError(`--installed takes <bundle>=<version>, not "${spec}"`);
      const version = tryParseVersion(spec.slice(at + 1));
      if (!version.ok) throw new UsageError(`--installed ${spec}: ${version.error}`);
      return { name: spec.slice(0, at), version: version.version };
    });
    await requireDirectory(root);
    const report = await validateCatalog(new DirectorySource(root));
    const found = findChannel(report.model, packageName, values.channel);
    if ('error' in found) throw new Error(found.error);
    let graph: ChannelGraph;
    try {
      graph = channelGraph(found.pkg, found.channel, {
        installed,
        v1VersionRange: values['v1-version-range'],
      });
    } catch (err) {
      if (err instanceof InvalidVersionRangeError) throw new UsageError(err.message);
      throw err;
    }
    const errors = report.diagnostics.filter((d) => d.level === 'error');
    if (values.format === 'json') {
      writeJson(out, {
        ...graph,
        valid: report.valid,
        note: report.valid
          ? null
          : `the catalog fails validation (${errors.length} errors): classic OLM cannot serve it at all; OLM v1 serves it as shown`,
      });
    } else if (values.format === 'mermaid') {
      out.write(mermaid(graph, found.channel));
    } else if (values.format === 'dot') {
      out.write(dot(graph, found.channel));
    } else {
      out.write(graphText(graph));
      if (!report.valid)
        out.write(
          `note: the catalog fails validation (${errors.length} errors); classic OLM cannot serve it\n`,
        );
    }
    return EXIT_OK;
  },
});
