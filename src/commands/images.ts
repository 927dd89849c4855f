// `catalog-bot images <root>`: does every bundle image and related image of the catalog
// exist in its registry? The `catalog-bot/images` check, locally.
import { loadCatalog } from '../catalog/fbc/load.js';
import { DirectorySource } from '../catalog/fbc/source.js';
import { imagesCheck, imageUses } from '../checks/images.js';
import { checkImages } from '../publish/exists.js';
import { credentialHostsFromEnv, RegistryClient } from '../publish/registry.js';
import { CommandFailure, defineCliCommand, isDirectory, UsageError } from './command.js';
import { jsonFinding, writeFindings, writeJson } from './output.js';

const USAGE = `catalog-bot images <root> [--format text|json] [--allowed-registry <host>]...
      [--unverifiable-registry <host>]... [--concurrency <n>]
  Check that every bundle image and related image of the catalog exists in its registry
  (exit 0 all exist, or the ones that could not be checked are on --unverifiable-registry
  registries; 1 missing, disallowed or unchecked images; 2 usage). REGISTRY_USERNAME/
  REGISTRY_PASSWORD go only to the hosts in REGISTRY_CREDENTIAL_HOSTS; REGISTRY_AUTH_FILE
  entries each to their own host.
`;

export const command = defineCliCommand({
  usage: USAGE,
  options: {
    format: { type: 'string', default: 'text' },
    'allowed-registry': { type: 'string', multiple: true, default: [] },
    'unverifiable-registry': { type: 'string', multiple: true, default: [] },
    concurrency: { type: 'string', default: '8' },
  },
  positionals: { min: 1, message: 'images needs exactly one catalog root' },
  formats: ['text', 'json'],
  async run({ values, positionals }, { out, err, env }) {
    const root = positionals[0]!;
    if (!(Number(values.concurrency) >= 1)) throw new UsageError('--concurrency must be a positive number');
    if (!(await isDirectory(root))) throw new UsageError(`${root}: not a directory`);
    const client = RegistryClient.fromEnvSafe(env, err, { credentialHosts: credentialHostsFromEnv(env) });
    if (!client) return 2;
    try {
      const loaded = await loadCatalog(new DirectorySource(root));
      const uses = imageUses(loaded.config, root);
      const results = await checkImages(
        uses.map((u) => u.image),
        { client, concurrency: Number(values.concurrency), allowedRegistries: values['allowed-registry'] },
      );
      const check = imagesCheck(uses, results, {
        unverifiableRegistries: values['unverifiable-registry'],
      });
      if (values.format === 'json') {
        writeJson(out, {
          name: check.name,
          conclusion: check.conclusion,
          images: [...results.values()].map((r) => ({ image: r.ref, status: r.status, reason: r.reason })),
          findings: check.findings.map(jsonFinding),
        });
      } else {
        writeFindings(out, check.findings, 'text');
        out.write(`${check.conclusion}: ${check.title}\n`);
      }
      return check.conclusion === 'failure' ? 1 : 0;
    } catch (problem) {
      throw new CommandFailure((problem as Error).message, 2);
    } finally {
      client.close();
    }
  },
});
