// `catalog-bot images <root>`: does every bundle image and related image of the catalog
// exist in its registry? The `catalog-bot/images` check, locally.
import { stat } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { loadCatalog } from '../catalog/fbc/load.js';
import { DirectorySource } from '../catalog/fbc/source.js';
import { imagesCheck, imageUses } from '../checks/images.js';
import { checkImages } from '../publish/exists.js';
import { credentialHostsFromEnv, RegistryClient } from '../publish/registry.js';

export const IMAGES_USAGE = `catalog-bot images <root> [--format text|json] [--allowed-registry <host>]...
      [--unverifiable-registry <host>]... [--concurrency <n>]
  Check that every bundle image and related image of the catalog exists in its registry
  (exit 0 all exist, or the ones that could not be checked are on --unverifiable-registry
  registries; 1 missing, disallowed or unchecked images; 2 usage). REGISTRY_USERNAME/
  REGISTRY_PASSWORD go only to the hosts in REGISTRY_CREDENTIAL_HOSTS; REGISTRY_AUTH_FILE
  entries each to their own host.
`;

export async function imagesCommand(
  args: string[],
  out: NodeJS.WritableStream,
  err: NodeJS.WritableStream = process.stderr,
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  let values;
  let positionals;
  try {
    ({ values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: {
        format: { type: 'string', default: 'text' },
        'allowed-registry': { type: 'string', multiple: true, default: [] },
        'unverifiable-registry': { type: 'string', multiple: true, default: [] },
        concurrency: { type: 'string', default: '8' },
      },
    }));
    if (positionals.length !== 1) throw new Error('images needs exactly one catalog root');
    if (values.format !== 'text' && values.format !== 'json')
      throw new Error(`unknown format "${values.format}"`);
    if (!(Number(values.concurrency) >= 1)) throw new Error('--concurrency must be a positive number');
    const info = await stat(positionals[0] as string).catch(() => undefined);
    if (!info?.isDirectory()) throw new Error(`${positionals[0]}: not a directory`);
  } catch (problem) {
    err.write(`catalog-bot images: ${(problem as Error).message}\n\n${IMAGES_USAGE}`);
    return 2;
  }
  const root = positionals[0] as string;
  const client = RegistryClient.fromEnvSafe(env, err, { credentialHosts: credentialHostsFromEnv(env) });
  if (!client) return 2;
  try {
    const loaded = await loadCatalog(new DirectorySource(root));
    const uses = imageUses(loaded.config, root);
    const results = await checkImages(
      uses.map((u) => u.image),
      { client, concurrency: Number(values.concurrency), allowedRegistries: values['allowed-registry'] },
    );
    const check = imagesCheck(uses, results, { unverifiableRegistries: values['unverifiable-registry'] });
    if (values.format === 'json') {
      out.write(
        JSON.stringify(
          {
            name: check.name,
            conclusion: check.conclusion,
            images: [...results.values()].map((r) => ({ image: r.ref, status: r.status, reason: r.reason })),
            findings: check.findings.map((d) => ({
              level: d.level,
              rule: d.rule,
              message: d.message,
              file: d.file ?? null,
              line: d.line ?? null,
              package: d.package ?? null,
            })),
          },
          null,
          2,
        ) + '\n',
      );
    } else {
      for (const d of check.findings)
        out.write(
          `${d.file ? `${d.file}${d.line ? `:${d.line}` : ''}: ` : ''}${d.level} ${d.rule}: ${d.message}\n`,
        );
      out.write(`${check.conclusion}: ${check.title}\n`);
    }
    return check.conclusion === 'failure' ? 1 : 0;
  } catch (problem) {
    err.write(`catalog-bot images: ${(problem as Error).message}\n`);
    return 2;
  } finally {
    client.close();
  }
}
