// What the old index read of a bundle directory besides its CSV: the annotations of
// `metadata/annotations.yaml` (docs/legacy-index.md).
import { parseDocument } from 'yaml';
import type { JsonObject } from '../templates/write.js';
import { parseVersion, SemverError } from '../versions/semver.js';
import { parseOcpMinor } from '../olm/ocp-continuity.js';
import { parseOpenShiftVersions, OPENSHIFT_VERSIONS_ANNOTATION } from './openshift-versions.js';
import type { LegacyBundle } from './index-graph.js';

export const CHANNELS_ANNOTATION = 'operators.operatorframework.io.bundle.channels.v1';
export const DEFAULT_CHANNEL_ANNOTATION = 'operators.operatorframework.io.bundle.channel.default.v1';

/** Why a bundle directory cannot go into the index; the message names the file. */
export class LegacyBundleError extends Error {
  constructor(
    message: string,
    readonly file?: string,
  ) {
    super(message);
    this.name = 'LegacyBundleError';
  }
}

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);
const text = (v: unknown): string => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '');

/** The annotations map of an annotations.yaml text. */
export function readAnnotations(path: string, source: string): Record<string, string> {
  const doc = parseDocument(source, { uniqueKeys: false });
  if (doc.errors.length > 0)
    throw new LegacyBundleError(`${path} is not valid YAML: ${doc.errors[0]!.message.split('\n')[0]}`, path);
  const top: unknown = doc.toJS({ maxAliasCount: 100 });
  const annotations = isObject(top) ? top.annotations : undefined;
  if (!isObject(annotations)) throw new LegacyBundleError(`${path} has no "annotations:" mapping`, path);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(annotations)) out[k] = text(v);
  return out;
}

/**
 * A bundle as the index sees it: its annotations and CSV (`csv` as parsed by opm's rules).
 * Throws LegacyBundleError when opm index add would refuse it or the annotation is unreadable.
 */
export function legacyBundle(
  dir: string,
  annotations: Record<string, string>,
  csv: JsonObject,
  name: string,
): LegacyBundle {
  const annotationsPath = `${dir}/metadata/annotations.yaml`;
  const channels = (annotations[CHANNELS_ANNOTATION] ?? '')
    .split(',')
    .map((c) => c.trim())
    .filter((c) => c !== '');
  if (channels.length === 0)
    throw new LegacyBundleError(
      `${annotationsPath} names no channel (${CHANNELS_ANNOTATION}); opm index add refuses a bundle without one`,
      annotationsPath,
    );
  const range = parseOpenShiftVersions(annotations[OPENSHIFT_VERSIONS_ANNOTATION]);
  if (!range.ok) throw new LegacyBundleError(`${annotationsPath}: ${range.error}`, annotationsPath);
  const spec = isObject(csv.spec) ? csv.spec : {};
  const metadata = isObject(csv.metadata) ? csv.metadata : {};
  const csvAnnotations = isObject(metadata.annotations) ? metadata.annotations : {};
  const versionText = text(spec.version);
  let version;
  try {
    version = parseVersion(versionText);
  } catch (err) {
    if (!(err instanceof SemverError)) throw err;
    throw new LegacyBundleError(
      `${dir}: the CSV ${name} has spec.version "${versionText}", not a semantic version (${err.message})`,
      dir,
    );
  }
  const skips = Array.isArray(spec.skips) ? spec.skips.map(text).filter((s) => s !== '') : [];
  return {
    name,
    version,
    channels,
    defaultChannel: (annotations[DEFAULT_CHANNEL_ANNOTATION] ?? '').trim(),
    replaces: text(spec.replaces),
    skips,
    skipRange: text(csvAnnotations['olm.skipRange']),
    openshift: range.range,
    maxOpenShiftVersion: maxOpenShift(text(csvAnnotations['olm.properties'])),
  };
}

/** `olm.maxOpenShiftVersion` from the CSV's `olm.properties` annotation, when it is one version. */
function maxOpenShift(properties: string): ReturnType<typeof parseOcpMinor> {
  if (properties === '') return null;
  try {
    const list: unknown = JSON.parse(properties);
    if (!Array.isArray(list)) return null;
    for (const p of list)
      if (isObject(p) && p.type === 'olm.maxOpenShiftVersion')
        return parseOcpMinor(typeof p.value === 'number' ? String(p.value) : text(p.value));
  } catch {
    return null;
  }
  return null;
}
