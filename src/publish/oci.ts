// OCI and Docker v2 media types, descriptors and digests: the vocabulary of images.
import { createHash } from 'node:crypto';

export const OCI_INDEX = 'application/vnd.oci.image.index.v1+json';
export const OCI_MANIFEST = 'application/vnd.oci.image.manifest.v1+json';
export const OCI_CONFIG = 'application/vnd.oci.image.config.v1+json';
export const OCI_LAYER_GZIP = 'application/vnd.oci.image.layer.v1.tar+gzip';
export const OCI_LAYER_TAR = 'application/vnd.oci.image.layer.v1.tar';
export const DOCKER_LIST = 'application/vnd.docker.distribution.manifest.list.v2+json';
export const DOCKER_MANIFEST = 'application/vnd.docker.distribution.manifest.v2+json';
export const DOCKER_CONFIG = 'application/vnd.docker.container.image.v1+json';
export const DOCKER_LAYER_GZIP = 'application/vnd.docker.image.rootfs.diff.tar.gzip';

/** What we accept when reading a manifest, most specific first. */
export const MANIFEST_ACCEPT = [OCI_INDEX, OCI_MANIFEST, DOCKER_LIST, DOCKER_MANIFEST];

export const isIndex = (mediaType: string): boolean => mediaType === OCI_INDEX || mediaType === DOCKER_LIST;
export const isManifest = (mediaType: string): boolean =>
  mediaType === OCI_MANIFEST || mediaType === DOCKER_MANIFEST;

/** Docker media types mapped to their OCI twins (same bytes, other name). */
const TO_OCI: Record<string, string> = {
  [DOCKER_LIST]: OCI_INDEX,
  [DOCKER_MANIFEST]: OCI_MANIFEST,
  [DOCKER_CONFIG]: OCI_CONFIG,
  [DOCKER_LAYER_GZIP]: OCI_LAYER_GZIP,
  'application/vnd.docker.image.rootfs.diff.tar': OCI_LAYER_TAR,
};
export const ociMediaType = (mediaType: string): string => TO_OCI[mediaType] ?? mediaType;

export interface Platform {
  architecture: string;
  os: string;
  variant?: string;
  'os.version'?: string;
  'os.features'?: string[];
}

export interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
  platform?: Platform;
  annotations?: Record<string, string>;
}

export interface ImageManifest {
  schemaVersion: 2;
  mediaType?: string;
  config: Descriptor;
  layers: Descriptor[];
  annotations?: Record<string, string>;
}

export interface ImageIndex {
  schemaVersion: 2;
  mediaType?: string;
  manifests: Descriptor[];
  annotations?: Record<string, string>;
}

export function sha256(data: Buffer | string): string {
  return 'sha256:' + createHash('sha256').update(data).digest('hex');
}

/** A blob or manifest held in memory with its descriptor. */
export interface Blob {
  descriptor: Descriptor;
  data: Buffer;
}

export function blob(mediaType: string, data: Buffer): Blob {
  return { descriptor: { mediaType, digest: sha256(data), size: data.length }, data };
}

export function platformString(p: Platform | undefined): string {
  if (!p) return 'unknown';
  return `${p.os}/${p.architecture}${p.variant ? `/${p.variant}` : ''}`;
}

/**
 * The manifest of an index to read: `want`'s platform (linux/amd64 unless said: what opm on a
 * usual host pulls), else the first that is not an attestation (`unknown/unknown`), else the
 * first.
 */
export function pickPlatform(
  index: ImageIndex,
  want: Platform = { os: 'linux', architecture: 'amd64' },
): Descriptor | undefined {
  const list = index.manifests ?? [];
  return (
    list.find((d) => d.platform?.os === want.os && d.platform.architecture === want.architecture) ??
    list.find((d) => !d.platform || d.platform.architecture !== 'unknown') ??
    list[0]
  );
}
