// The declarative config: FBC blobs as files hold them (operator-registry `declcfg`),
// before any cross-object validation. Every object remembers where it came from.
import type { PrereleasePart, Version } from '../versions/semver.js';
import {
  goBool,
  goBytes,
  goRaw,
  goSlice,
  goString,
  goStringMap,
  goStringSlice,
  goStruct,
  type GoType,
} from '../go/gojson.js';
import {
  PROPERTY_BUNDLE_OBJECT,
  PROPERTY_CHANNEL,
  PROPERTY_CSV_METADATA,
  PROPERTY_GVK,
  PROPERTY_GVK_REQUIRED,
  PROPERTY_PACKAGE,
  PROPERTY_PACKAGE_REQUIRED,
} from '../property.js';

export { SCHEMA_BUNDLE, SCHEMA_CHANNEL, SCHEMA_DEPRECATIONS, SCHEMA_PACKAGE } from '../property.js';

export interface Position {
  /** Path relative to the catalog root, with forward slashes. */
  file: string;
  line: number;
  column: number;
}

export interface Property {
  type: string;
  /** Any JSON; undefined when the `value` key is missing (an error for opm). */
  value: unknown;
  line?: number;
}

export interface Package {
  schema: string;
  name: string;
  defaultChannel: string;
  icon?: { base64data?: string; mediatype?: string };
  description: string;
  properties: Property[];
  pos: Position;
}

export interface ChannelEntry {
  name: string;
  replaces: string;
  skips: string[];
  skipRange: string;
  line?: number;
}

export interface Channel {
  schema: string;
  name: string;
  package: string;
  entries: ChannelEntry[];
  properties: Property[];
  pos: Position;
}

export interface RelatedImage {
  name: string;
  image: string;
}

export interface Bundle {
  schema: string;
  name: string;
  package: string;
  image: string;
  properties: Property[];
  relatedImages: RelatedImage[];
  /** Number of `olm.bundle.object` objects read (any makes `image` optional). */
  objectCount: number;
  /** The objects as JSON text; kept only when loading with `keepBundleObjects`. */
  objects?: string[];
  /** What the per-blob checks found, when run as the blob was read (`validationOnly`). */
  checked?: BlobCheck;
  pos: Position;
}

/** What one of the per-blob checks (blob-check.ts) found. */
export interface BlobFinding {
  rule: string;
  message: string;
  pos: Partial<Position>;
  package: string;
}

export interface BlobCheck {
  findings: BlobFinding[];
  /** The parsed version, when every check that stops conversion passed. */
  passed?: { version: Version; release: PrereleasePart[] };
}

export interface DeprecationEntry {
  reference: { schema: string; name: string };
  message: string;
  line?: number;
}

export interface Deprecation {
  schema: string;
  package: string;
  entries: DeprecationEntry[];
  pos: Position;
}

/** A blob of a schema opm does not know (templates, custom data): kept, never checked. */
export interface Other {
  schema: string;
  package: string;
  name: string;
  value: Record<string, unknown>;
  pos: Position;
}

export interface DeclarativeConfig {
  packages: Package[];
  channels: Channel[];
  bundles: Bundle[];
  deprecations: Deprecation[];
  others: Other[];
}

export function emptyConfig(): DeclarativeConfig {
  return { packages: [], channels: [], bundles: [], deprecations: [], others: [] };
}

// ---- Go shapes of the same objects, for decoding with opm's type rules.

const goProperty = goStruct('property.Property', { type: goString, value: goRaw });
const goProperties = goSlice(goProperty);

export const GO_PACKAGE = goStruct('declcfg.Package', {
  schema: goString,
  name: goString,
  defaultChannel: goString,
  icon: goStruct('declcfg.Icon', { base64data: goBytes, mediatype: goString }),
  description: goString,
  properties: goProperties,
});

export const GO_CHANNEL = goStruct('declcfg.Channel', {
  schema: goString,
  name: goString,
  package: goString,
  entries: goSlice(
    goStruct('declcfg.ChannelEntry', {
      name: goString,
      replaces: goString,
      skips: goStringSlice,
      skipRange: goString,
    }),
  ),
  properties: goProperties,
});

export const GO_BUNDLE = goStruct('declcfg.Bundle', {
  schema: goString,
  name: goString,
  package: goString,
  image: goString,
  properties: goProperties,
  relatedImages: goSlice(goStruct('declcfg.RelatedImage', { name: goString, image: goString })),
});

export const GO_DEPRECATION = goStruct('declcfg.Deprecation', {
  schema: goString,
  package: goString,
  entries: goSlice(
    goStruct('declcfg.DeprecationEntry', {
      reference: goStruct('declcfg.PackageScopedReference', { schema: goString, name: goString }),
      message: goString,
    }),
  ),
});

// ---- Property value shapes (operator-registry alpha/property, v1.73.0).

const goGVK = (name: string): GoType =>
  goStruct(name, { group: goString, kind: goString, version: goString });
const goDescriptor = (name: string): GoType =>
  goStruct(name, {
    path: goString,
    displayName: goString,
    description: goString,
    'x-descriptors': goStringSlice,
    value: goRaw,
  });
const goResourceRef = goStruct('v1alpha1.APIResourceReference', {
  name: goString,
  kind: goString,
  version: goString,
});
const goDescriptorLists = {
  resources: goSlice(goResourceRef),
  statusDescriptors: goSlice(goDescriptor('v1alpha1.StatusDescriptor')),
  specDescriptors: goSlice(goDescriptor('v1alpha1.SpecDescriptor')),
  actionDescriptors: goSlice(goDescriptor('v1alpha1.ActionDescriptor')),
};
const goCRDDescription = goStruct('v1alpha1.CRDDescription', {
  name: goString,
  version: goString,
  kind: goString,
  displayName: goString,
  description: goString,
  ...goDescriptorLists,
});
const goAPIServiceDescription = goStruct('v1alpha1.APIServiceDescription', {
  name: goString,
  group: goString,
  version: goString,
  kind: goString,
  deploymentName: goString,
  containerPort: { kind: 'int', bits: 32 },
  displayName: goString,
  description: goString,
  ...goDescriptorLists,
});
const goAppLink = goStruct('v1alpha1.AppLink', { name: goString, url: goString });

// No prototype: a property type a pull request writes (`constructor`, `__proto__`) finds nothing.
export const GO_PROPERTY_VALUES: Readonly<Record<string, GoType>> = Object.assign(
  Object.create(null) as Record<string, GoType>,
  {
    [PROPERTY_PACKAGE]: goStruct('property.Package', {
      packageName: goString,
      version: goString,
      release: goString,
    }),
    [PROPERTY_PACKAGE_REQUIRED]: goStruct('property.PackageRequired', {
      packageName: goString,
      versionRange: goString,
    }),
    [PROPERTY_GVK]: goGVK('property.GVK'),
    [PROPERTY_GVK_REQUIRED]: goGVK('property.GVKRequired'),
    [PROPERTY_BUNDLE_OBJECT]: goStruct('property.BundleObject', { data: goBytes }),
    [PROPERTY_CHANNEL]: goStruct('property.Channel', {
      channelName: goString,
      priority: { kind: 'int', bits: 64 },
    }),
    [PROPERTY_CSV_METADATA]: goStruct('property.CSVMetadata', {
      annotations: goStringMap,
      apiServiceDefinitions: goStruct('v1alpha1.APIServiceDefinitions', {
        owned: goSlice(goAPIServiceDescription),
        required: goSlice(goAPIServiceDescription),
      }),
      crdDescriptions: goStruct('v1alpha1.CustomResourceDefinitions', {
        owned: goSlice(goCRDDescription),
        required: goSlice(goCRDDescription),
      }),
      description: goString,
      displayName: goString,
      installModes: goSlice(goStruct('v1alpha1.InstallMode', { type: goString, supported: goBool })),
      keywords: goStringSlice,
      labels: goStringMap,
      links: goSlice(goAppLink),
      maintainers: goSlice(goStruct('v1alpha1.Maintainer', { name: goString, email: goString })),
      maturity: goString,
      minKubeVersion: goString,
      nativeAPIs: goSlice(
        goStruct('v1.GroupVersionKind', { group: goString, version: goString, kind: goString }),
      ),
      provider: goAppLink,
    }),
  },
);
