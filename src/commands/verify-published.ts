// `catalog-bot verify-published <root> --image <ref>`: is the catalog at <root> what the
// image serves? Pulls the image's catalog layer and compares packages, channels and bundles
// (docs/publishing.md, "verify-published").
import { loadCatalog, DirectorySource } from '../catalog/index.js';
import { compareCatalogs } from '../catalog/compare.js';
import { memoryCatalog } from '../checks/prune.js';
import { hostPlatform } from '../publish/cache.js';
import { readCatalogLayer } from '../publish/published-catalog.js';
import { credentialHostsFromEnv, RegistryClient } from '../publish/registry.js';
import {
  CommandFailure,
  defineCliCommand,
  EXIT_FAIL,
  EXIT_OK,
  EXIT_USAGE,
  isDirectory,
  UsageError,
} from './command.js';

const USAGE = `catalog-bot verify-published <root> --image <image> [--format text|json]
  Pull the catalog of a published catalog image (its ${'`operators.operatorframework.io.index.configs.v1`'}
  directory, from the top layer that holds it: at most the top 4 layers, 512 MiB) and
  compare it with the FBC catalog at <root>: the same packages, default channels, channel
  entries and edges, and bundles. Exit 0 the same, 1 different (each difference named), 2 usage or error.
  Registry credentials: REGISTRY_AUTH_FILE (each entry for its own host), or
  REGISTRY_USERNAME/REGISTRY_PASSWORD only for hosts in REGISTRY_CREDENTIAL_HOSTS; plain HTTP
  only for REGISTRY_INSECURE_HOSTS.
`;

export const command = defineCliCommand({
  usage: USAGE,
  options: {
    image: { type: 'string' },
    format: { type: 'string', default: 'text' },
  },
  positionals: { min: 1, message: 'verify-published needs exactly one catalog root' },
  formats: ['text', 'json'],
  async run({ values, positionals }, { out, err, env }) {
    const root = positionals[0]!;
    if (!values.image) throw new UsageError('verify-published needs --image <image>');
    if (!(await isDirectory(root))) throw new UsageError(`${root}: not a directory`);
    // Shared credentials only where the operator listed them: the image is named on the
    // command line, possibly copied from a comment (docs/security.md, "Credentials stay home").
    const client = RegistryClient.fromEnvSafe(env, err, { credentialHosts: credentialHostsFromEnv(env) });
    if (!client) return EXIT_USAGE;
    try {
      const local = await loadCatalog(new DirectorySource(root));
      const localErrors = local.diagnostics.filter((d) => d.level === 'error');
      if (localErrors.length > 0)
        throw new CommandFailure(
          `${root} does not load (${localErrors.length} error${localErrors.length === 1 ? '' : 's'}; see catalog-bot validate)`,
          EXIT_USAGE,
        );
      let published;
      try {
        // The same bounded read as the pruning guard's (at most the top layers, 512 MiB);
        // what it refuses is named in the error.
        published = await readCatalogLayer(client, values.image, { platform: hostPlatform(), serving: true });
      } catch (problem) {
        throw new CommandFailure(`cannot read ${values.image}: ${(problem as Error).message}`, EXIT_USAGE);
      }
      const remote = await loadCatalog(memoryCatalog(values.image, published.files));
      const remoteErrors = remote.diagnostics.filter((d) => d.level === 'error');
      if (remoteErrors.length > 0)
        throw new CommandFailure(
          `the catalog in ${values.image} does not load (${remoteErrors.length} error${remoteErrors.length === 1 ? '' : 's'})`,
          EXIT_USAGE,
        );
      const differences = compareCatalogs(local.config, remote.config, {
        left: 'the root',
        right: 'the image',
      });
      if (values.format === 'json')
        out.write(
          JSON.stringify(
            {
              image: values.image,
              digest: published.digest,
              root,
              same: differences.length === 0,
              differences,
            },
            null,
            2,
          ) + '\n',
        );
      else if (differences.length === 0)
        out.write(
          `${values.image} (${published.digest}) serves the same catalog as ${root}: ${local.config.packages.length} packages, ${local.config.channels.length} channels, ${local.config.bundles.length} bundles\n`,
        );
      else {
        out.write(`${values.image} (${published.digest}) differs from ${root}:\n`);
        for (const d of differences) out.write(`  - ${d}\n`);
      }
      return differences.length === 0 ? EXIT_OK : EXIT_FAIL;
    } finally {
      client.close();
    }
  },
});
