// Write a built image as an OCI image layout directory (what `skopeo copy oci:` and
// `umoci` read), base layers included.
import { mkdir, writeFile, access } from 'node:fs/promises';
import { join } from 'node:path';
import type { BuiltImage } from './image.js';
import type { RegistryClient } from './registry.js';

export async function writeOciLayout(
  dir: string,
  image: BuiltImage,
  refNames: string[],
  client: RegistryClient,
): Promise<void> {
  const blobs = join(dir, 'blobs', 'sha256');
  await mkdir(blobs, { recursive: true });
  const put = async (digest: string, data: Buffer | (() => Promise<Buffer>)): Promise<void> => {
    const path = join(blobs, digest.slice('sha256:'.length));
    try {
      await access(path);
      return; // content-addressed: already there means already right
    } catch {
      await writeFile(path, typeof data === 'function' ? await data() : data);
    }
  };
  const baseLayers = new Set(image.platforms.flatMap((p) => p.baseLayers.map((l) => l.digest)));
  for (const digest of baseLayers) await put(digest, () => client.getBlob(image.base.ref, digest));
  await put(image.layer.digest, image.layer.data);
  if (image.cache) await put(image.cache.digest, image.cache.data);
  for (const p of image.platforms) {
    await put(p.config.descriptor.digest, p.config.data);
    await put(p.manifest.descriptor.digest, p.manifest.data);
  }
  await put(image.top.descriptor.digest, image.top.data);
  const names = refNames.length > 0 ? refNames : ['latest'];
  const index = {
    schemaVersion: 2,
    manifests: names.map((name) => ({
      ...image.top.descriptor,
      annotations: { 'org.opencontainers.image.ref.name': name },
    })),
  };
  await writeFile(join(dir, 'oci-layout'), JSON.stringify({ imageLayoutVersion: '1.0.0' }));
  await writeFile(join(dir, 'index.json'), JSON.stringify(index));
}
