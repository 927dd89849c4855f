// `catalog-bot build <root> --tag <image>...`: build the catalog image natively; print its
// digests, write it as an OCI layout (--oci-dir), or push it to every tag (--push).
import { DirectorySource, GitTreeSource, type CatalogSource } from '../catalog/fbc/source.js';
import { writeOciLayout } from '../publish/layout.js';
import { buildCatalogImage, expandTags, parseTarget, pushImage } from '../publish/publish.js';
import { credentialHostsFromEnv, credentialHostsOf, RegistryClient } from '../publish/registry.js';
import { platformString } from '../publish/oci.js';
import { CommandFailure, defineCliCommand, isDirectory, UsageError } from './command.js';

export const DEFAULT_BASE_IMAGE = 'quay.io/operator-framework/opm:latest';

const BUILD_USAGE = `catalog-bot build <root> --tag <image> [--tag <image>]... [--base <image>]
      [--push | --oci-dir <dir>] [--repo-url <url>] [--commit <sha>] [--rev <git-rev> [--repo <dir>]]
      [--format text|json]
  Build the catalog image (the base image's platforms plus <root> at /configs, served by
  opm) without Docker. Prints each tag's digest; --push pushes to every tag, --oci-dir
  writes an OCI image layout. {root} and {sha} in tags are expanded. With --rev the root
  is read from that git commit (no checkout). Registry credentials: REGISTRY_AUTH_FILE (each
  entry for its own host) or REGISTRY_USERNAME/REGISTRY_PASSWORD (only for the --tag and --base
  hosts and those in REGISTRY_CREDENTIAL_HOSTS); plain HTTP only for REGISTRY_INSECURE_HOSTS.
  Exit 0 built (or pushed), 1 a build or push failure, 2 usage or I/O error.
`;

export const command = defineCliCommand({
  usage: BUILD_USAGE,
  options: {
    tag: { type: 'string', multiple: true, default: [] },
    base: { type: 'string', default: DEFAULT_BASE_IMAGE },
    push: { type: 'boolean', default: false },
    'oci-dir': { type: 'string' },
    'repo-url': { type: 'string' },
    commit: { type: 'string' },
    rev: { type: 'string' },
    repo: { type: 'string', default: '.' },
    format: { type: 'string', default: 'text' },
  },
  positionals: { min: 1, message: 'build needs exactly one catalog root' },
  formats: ['text', 'json'],
  async run({ values, positionals }, { out, err, env }) {
    if (values.tag.length === 0) throw new UsageError('build needs at least one --tag');
    const root = positionals[0] as string;
    // A missing root is a usage error (exit 2), found before any registry is asked.
    if (!values.rev && !(await isDirectory(root))) throw new UsageError(`${root}: not a directory`);
    // REGISTRY_USERNAME/REGISTRY_PASSWORD go only to the hosts named here (docs/security.md).
    const client = RegistryClient.fromEnvSafe(env, err, {
      credentialHosts: [...credentialHostsOf([...values.tag, values.base]), ...credentialHostsFromEnv(env)],
    });
    if (!client) return 2;
    try {
      let source: CatalogSource;
      if (values.rev) {
        source = new GitTreeSource(values.repo, values.rev, root);
      } else {
        source = new DirectorySource(root);
      }
      const commit = values.commit ?? values.rev ?? '';
      const tags = expandTags(values.tag, root, commit);
      for (const t of tags) parseTarget(t);
      const started = performance.now();
      const image = await buildCatalogImage({
        source,
        baseImage: values.base,
        client,
        root,
        ...(values['repo-url'] ? { repoUrl: values['repo-url'] } : {}),
        ...(values.commit ? { commit: values.commit } : {}),
        reuseCacheFrom: tags, // opm's cache is not reproducible: reuse the one already pushed
      });
      if (values['oci-dir'])
        await writeOciLayout(
          values['oci-dir'],
          image,
          tags.map((t) => parseTarget(t).tag),
          client,
        );
      const results = values.push
        ? await pushImage(client, image, tags)
        : tags.map((tag) => ({ tag, digest: image.top.descriptor.digest }));
      const seconds = (performance.now() - started) / 1000;
      if (values.format === 'json') {
        out.write(
          JSON.stringify(
            {
              pushed: values.push,
              results,
              layer: { digest: image.layer.digest, diffId: image.layer.diffId, size: image.layer.size },
              platforms: image.platforms.map((p) => ({
                platform: platformString(p.platform),
                digest: p.manifest.descriptor.digest,
              })),
            },
            null,
            2,
          ) + '\n',
        );
      } else {
        for (const r of results) out.write(`${r.tag} ${r.digest}\n`);
        out.write(
          `${values.push ? 'pushed' : 'built'} ${image.layer.files} files (layer ${image.layer.digest}, ` +
            `${image.layer.size} bytes) on ${image.platforms.map((p) => platformString(p.platform)).join(', ')}` +
            `${values['oci-dir'] ? `; OCI layout in ${values['oci-dir']}` : ''} in ${seconds.toFixed(2)} s\n`,
        );
      }
      return 0;
    } catch (problem) {
      throw new CommandFailure((problem as Error).message, 1);
    } finally {
      client.close();
    }
  },
});
