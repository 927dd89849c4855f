// The `olm.template.basic` template (operator-registry alpha/template/basic/basic.go): a
// list of FBC blobs; each `olm.bundle` given only by `schema` and `image` is replaced by
// the rendered bundle, and everything else is copied as written (no edges are made up).
import type { Channel, DeclarativeConfig, Deprecation, Package, Property } from '../fbc/declcfg.js';
import { channelJson, deprecationJson, metaJson, packageJson } from '../fbc/render.js';
import { TemplateError } from './semver.js';
import type { FbcObject, JsonObject, OutputConfig } from './write.js';
import { SCHEMA_BASIC_TEMPLATE } from '../property.js';

/** basic.go parseSpec: `schema` and `entries` (any case); other keys are ignored. */
export function readBasicTemplate(doc: unknown): unknown[] {
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) {
    throw new TemplateError(
      'unmarshalling template: json: cannot unmarshal into Go value of type basic.BasicTemplateData',
    );
  }
  const field = (name: string): unknown => {
    const o = doc as JsonObject;
    if (name in o) return o[name];
    const key = Object.keys(o).find((k) => k.toLowerCase() === name.toLowerCase());
    return key === undefined ? undefined : o[key];
  };
  const schema = field('schema');
  if (schema !== SCHEMA_BASIC_TEMPLATE) {
    throw new TemplateError(
      `template has unknown schema (${JSON.stringify(typeof schema === 'string' ? schema : '')}), should be "olm.template.basic"`,
    );
  }
  const entries = field('entries') ?? [];
  if (!Array.isArray(entries)) {
    throw new TemplateError(
      'unmarshalling template: json: cannot unmarshal into Go struct field BasicTemplateData.entries',
    );
  }
  return entries;
}

/** isBundleTemplate: schema and image, and no package, properties or related images. */
export function isBundleTemplate(b: DeclarativeConfig['bundles'][number]): boolean {
  return (
    b.schema !== '' &&
    b.image !== '' &&
    b.package === '' &&
    b.properties.length === 0 &&
    b.relatedImages.length === 0
  );
}

// Copied blobs went through declcfg.Meta, which re-encodes them with sorted keys, and
// then through the typed structs (fields in struct order, empty optional ones left out).
function properties(props: Property[]): JsonObject {
  return props.length === 0
    ? {}
    : { properties: props.map((p) => ({ type: p.type, value: metaJson(p.value) })) };
}

export function packageObject(p: Package): FbcObject {
  return { schema: p.schema, package: '', name: p.name, value: packageJson(p, properties) };
}

export function channelObject(c: Channel): FbcObject {
  return { schema: c.schema, package: c.package, name: c.name, value: channelJson(c, properties) };
}

export function deprecationObject(d: Deprecation): FbcObject {
  return { schema: d.schema, package: d.package, name: '', value: deprecationJson(d) };
}

/**
 * basic.go Render, given the loaded entries and the rendered bundle for each template
 * bundle (in template order).
 */
export function renderBasic(cfg: DeclarativeConfig, renderedBundles: FbcObject[]): OutputConfig {
  return {
    packages: cfg.packages.map(packageObject),
    channels: cfg.channels.map(channelObject),
    bundles: renderedBundles,
    others: cfg.others.map((o) => ({
      schema: o.schema,
      package: o.package,
      name: o.name,
      value: metaJson(o.value),
    })),
    deprecations: cfg.deprecations.map(deprecationObject),
  };
}
