// opm-equivalent validation: operator-registry's ConvertToModel plus Model.Validate.
// opm stops at the first conversion error; here every problem is collected, each with
// the file and line to change and a hint. A catalog is valid exactly when opm says so.
import type { Bundle, ChannelEntry, DeclarativeConfig, Deprecation, Position } from './declcfg.js';
import { checkBundleBlob } from './blob-check.js';
import type { Diagnostic } from '../diagnostics.js';
import {
  versionString,
  type Model,
  type ModelBundle,
  type ModelChannel,
  type ModelPackage,
} from './model.js';
import { goQuote, goStringCompare } from '../go/gostrings.js';
import { tryParseRange } from '../versions/range.js';
import { compareVersions, formatVersion } from '../versions/semver.js';
import { SCHEMA_BUNDLE, SCHEMA_CHANNEL, SCHEMA_PACKAGE } from '../property.js';

export interface ValidationResult {
  model: Model;
  diagnostics: Diagnostic[];
}

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** k8s validation.IsDNS1123Label messages. */
function dns1123LabelErrors(name: string): string[] {
  const errs: string[] = [];
  if (name.length > 63) errs.push('must be no more than 63 characters');
  if (!DNS1123_LABEL.test(name)) {
    errs.push(
      DNS1123_SUBDOMAIN.test(name)
        ? 'must not contain dots'
        : "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
    );
  }
  return errs;
}

const HINTS: Record<string, string> = {
  'P-NO-NAME': 'Give the olm.package blob a `name`.',
  'P-DUPLICATE': 'Each package must be defined by exactly one olm.package blob: remove the copy.',
  'P-INVALID-NAME':
    'Package names must be lower-case DNS-1123 labels: letters, digits and `-`, at most 63 characters.',
  'P-NO-DEFAULT-CHANNEL': 'Add `defaultChannel: <channel>` to the olm.package blob.',
  'P-NO-CHANNELS': 'Add an olm.channel blob for this package, listing its bundles.',
  'P-DEFAULT-CHANNEL-MISSING': 'Point `defaultChannel` at an existing channel, or add that channel.',
  'P-DUPLICATE-VERSIONS':
    'Every bundle of a package needs its own `olm.package` version (build metadata counts).',
  'C-UNKNOWN-PACKAGE':
    "Fix the channel's `package`, or add the olm.package blob (a missing `---` can merge two documents).",
  'C-NO-NAME': 'Give the olm.channel blob a `name`.',
  'C-DUPLICATE': 'Each channel must be defined once per package: merge the two blobs or rename one.',
  'C-DUPLICATE-ENTRY': 'List each bundle once per channel.',
  'C-ENTRY-NO-BUNDLE':
    'Add the olm.bundle blob for this entry, or remove the entry (check the name for typos).',
  'C-EMPTY': 'A channel needs at least one entry.',
  'C-NO-HEAD':
    'Every entry is replaced or skipped by another: remove the edge that points back at the newest bundle.',
  'C-MULTIPLE-HEADS':
    'Only one entry may be unreferenced: make the newest bundle `replaces` (or `skips`) the other heads.',
  'C-CYCLE': 'Break the cycle: an entry must not (indirectly) replace itself.',
  'C-STRANDED':
    'Connect these entries: have a newer entry `replaces` or `skips` them, or remove them from the channel.',
  'B-NO-PACKAGE': "Set the bundle's `package`.",
  'B-UNKNOWN-PACKAGE': "Fix the bundle's `package`, or add the olm.package blob.",
  'B-DUPLICATE': 'Each bundle must be defined once per package: remove the copy.',
  'B-IMAGE-PULLSPEC':
    'Use a valid image reference: lower-case repository, tag of [A-Za-z0-9_.-], or a full sha256 digest.',
  'B-RELATED-IMAGE-PULLSPEC':
    'Use a valid image reference: lower-case repository, tag of [A-Za-z0-9_.-], or a full sha256 digest.',
  'B-NOT-IN-CHANNEL': "Add the bundle to a channel's `entries`, or remove the bundle.",
  'B-NO-NAME': 'Give the bundle and its channel entries a `name`.',
  'B-NAME-NOT-NORMALIZED': 'With a `release`, the bundle must be named `<package>-v<version>-<release>`.',
  'B-NO-IMAGE': "Set the bundle's `image` (or include its manifests as olm.bundle.object properties).",
  'B-SKIP-EMPTY': 'Remove the empty item from `skips`.',
  'B-SKIPRANGE':
    'skipRange uses blang syntax: space-separated comparators like ">=1.0.0 <1.2.0", `||` for OR; no `~`, `^`, commas, `v` prefixes or two-part versions.',
  'B-BUILD-METADATA-WITH-RELEASE': 'Drop the build metadata from the version, or drop the release.',
  'PR-PARSE': 'Give the property value the shape its type expects (strings must be quoted in YAML).',
  'PR-PACKAGE-COUNT':
    'A bundle needs exactly one `olm.package` property: `{type: olm.package, value: {packageName, version}}`.',
  'PR-PACKAGE-MISMATCH': "The `olm.package` property's packageName must equal the bundle's `package`.",
  'PR-VERSION':
    'Versions are strict semver: MAJOR.MINOR.PATCH, no `v` prefix, no leading zeros (quote it in YAML).',
  'PR-RELEASE':
    'A release is dot-separated [0-9A-Za-z-] identifiers, at most 20 characters, no leading zeros.',
  'DEP-NO-PACKAGE': "Set the olm.deprecations blob's `package`.",
  'DEP-UNKNOWN-PACKAGE': 'Fix the `package`, or remove the olm.deprecations blob.',
  'DEP-DUPLICATE': 'Merge the olm.deprecations blobs of this package into one.',
  'DEP-ENTRY-NO-SCHEMA': 'Set `reference.schema` to olm.package, olm.channel or olm.bundle.',
  'DEP-DUPLICATE-ENTRY': 'Deprecate each object once.',
  'DEP-BUNDLE-NOT-FOUND': 'Fix the bundle name, or remove the entry.',
  'DEP-CHANNEL-NOT-FOUND': 'Fix the channel name, or remove the entry.',
  'DEP-PACKAGE-NAME-SET': 'An olm.package deprecation reference has no `name`: remove it.',
  'DEP-UNKNOWN-SCHEMA': 'Deprecations can reference olm.package, olm.channel or olm.bundle only.',
  'DEP-MESSAGE-EMPTY': 'Give the deprecation a `message` for users.',
};

class Reporter {
  readonly diagnostics: Diagnostic[] = [];
  error(
    rule: string,
    message: string,
    pos: Partial<Position> | undefined,
    pkg?: string,
    hint?: string,
  ): void {
    this.diagnostics.push({
      rule,
      level: 'error',
      message,
      ...(pos?.file !== undefined ? { file: pos.file } : {}),
      ...(pos?.line !== undefined ? { line: pos.line } : {}),
      ...(pos?.column !== undefined ? { column: pos.column } : {}),
      ...(pkg !== undefined ? { package: pkg } : {}),
      hint: hint ?? HINTS[rule],
    });
  }
}

const entryPos = (
  pos: Position | undefined,
  entry: ChannelEntry | undefined,
): Partial<Position> | undefined =>
  pos && entry?.line !== undefined ? { file: pos.file, line: entry.line } : pos;

/** opm's ConvertToModel and Model.Validate: the packages, their channels, bundles and deprecations. */
export function validateConfig(cfg: DeclarativeConfig): ValidationResult {
  const r = new Reporter();
  const { model, defaultChannels } = convertPackages(cfg, r);
  const channels = convertChannels(cfg, model, defaultChannels, r);
  const bundleNames = new Map<string, Set<string>>();
  for (const b of cfg.bundles) convertBundle(b, model, bundleNames, channels.pendingByPackage, r);
  reportEntriesWithoutBundle(channels, r);
  reportMissingDefaultChannels(model, defaultChannels, r);
  convertDeprecations(cfg, model, bundleNames, r);
  validateModel(model, r);
  return { model, diagnostics: r.diagnostics };
}

function convertPackages(
  cfg: DeclarativeConfig,
  r: Reporter,
): { model: Model; defaultChannels: Map<string, string> } {
  const model: Model = new Map();
  const defaultChannels = new Map<string, string>();
  for (const p of cfg.packages) {
    if (p.name === '') {
      r.error('P-NO-NAME', 'config contains package with no name', p.pos);
      continue;
    }
    if (model.has(p.name)) {
      r.error('P-DUPLICATE', `duplicate package ${goQuote(p.name)}`, p.pos, p.name);
      continue;
    }
    const errs = dns1123LabelErrors(p.name);
    if (errs.length > 0)
      r.error(
        'P-INVALID-NAME',
        `invalid package name ${goQuote(p.name)}: [${errs.join(' ')}]`,
        p.pos,
        p.name,
      );
    model.set(p.name, { name: p.name, description: p.description, channels: new Map(), pos: p.pos });
    defaultChannels.set(p.name, p.defaultChannel);
  }
  return { model, defaultChannels };
}

/** Channels converted so far, with the entries still waiting for their olm.bundle blob. */
interface ConvertedChannels {
  /** Channel entries still waiting for their olm.bundle blob, per channel. */
  pendingEntries: Map<ModelChannel, Set<string>>;
  /** The same, by package: each blob looks only at its own package's channels. */
  pendingByPackage: Map<string, [ModelChannel, Set<string>][]>;
  channelPos: Map<ModelChannel, Position>;
}

function convertChannels(
  cfg: DeclarativeConfig,
  model: Model,
  defaultChannels: Map<string, string>,
  r: Reporter,
): ConvertedChannels {
  const pendingEntries = new Map<ModelChannel, Set<string>>();
  const pendingByPackage = new Map<string, [ModelChannel, Set<string>][]>();
  const channelPos = new Map<ModelChannel, Position>();
  for (const c of cfg.channels) {
    const mpkg = model.get(c.package);
    if (!mpkg) {
      r.error(
        'C-UNKNOWN-PACKAGE',
        `unknown package ${goQuote(c.package)} for channel ${goQuote(c.name)}`,
        c.pos,
        c.package,
      );
      continue;
    }
    if (c.name === '') {
      r.error('C-NO-NAME', `package ${goQuote(c.package)} contains channel with no name`, c.pos, c.package);
      continue;
    }
    if (mpkg.channels.has(c.name)) {
      r.error(
        'C-DUPLICATE',
        `package ${goQuote(c.package)} has duplicate channel ${goQuote(c.name)}`,
        c.pos,
        c.package,
      );
      continue;
    }
    const mch: ModelChannel = { name: c.name, package: c.package, bundles: new Map(), pos: c.pos };
    const pending = new Set<string>();
    for (const entry of c.entries) {
      if (mch.bundles.has(entry.name)) {
        r.error(
          'C-DUPLICATE-ENTRY',
          `invalid package ${goQuote(c.package)}, channel ${goQuote(c.name)}: duplicate entry ${goQuote(entry.name)}`,
          entryPos(c.pos, entry),
          c.package,
        );
        continue;
      }
      pending.add(entry.name);
      mch.bundles.set(entry.name, {
        name: entry.name,
        package: c.package,
        channel: c.name,
        replaces: entry.replaces,
        skips: entry.skips,
        skipRange: entry.skipRange,
        entry,
        image: '',
        properties: [],
        relatedImages: [],
        release: [],
      });
    }
    pendingEntries.set(mch, pending);
    const ofPackage = pendingByPackage.get(c.package);
    if (ofPackage) ofPackage.push([mch, pending]);
    else pendingByPackage.set(c.package, [[mch, pending]]);
    channelPos.set(mch, c.pos);
    mpkg.channels.set(c.name, mch);
    if (defaultChannels.get(c.package) === c.name) mpkg.defaultChannel = mch;
  }
  return { pendingEntries, pendingByPackage, channelPos };
}

/** Channel entries no olm.bundle blob came for: reported, and left out of the graph checks. */
function reportEntriesWithoutBundle({ pendingEntries, channelPos }: ConvertedChannels, r: Reporter): void {
  for (const [mch, pending] of pendingEntries) {
    for (const name of [...pending].sort(goStringCompare)) {
      const entry = mch.bundles.get(name)?.entry;
      r.error(
        'C-ENTRY-NO-BUNDLE',
        `no olm.bundle blobs found in package ${goQuote(mch.package)} for olm.channel entries [${name}]`,
        entryPos(channelPos.get(mch), entry),
        mch.package,
      );
      mch.bundles.delete(name); // reported; keep it out of the graph checks
    }
  }
}

function reportMissingDefaultChannels(model: Model, defaultChannels: Map<string, string>, r: Reporter): void {
  for (const mpkg of model.values()) {
    const name = defaultChannels.get(mpkg.name) ?? '';
    if (name !== '' && !mpkg.defaultChannel) {
      r.error(
        'P-DEFAULT-CHANNEL-MISSING',
        `invalid channel ${goQuote(name)}: channel must contain at least one bundle (defaultChannel ${goQuote(name)} of package ${goQuote(mpkg.name)} names no channel)`,
        mpkg.pos,
        mpkg.name,
      );
      const dch: ModelChannel = { name, package: mpkg.name, bundles: new Map() };
      mpkg.defaultChannel = dch;
      mpkg.channels.set(name, dch);
    }
  }
}

function convertBundle(
  b: Bundle,
  model: Model,
  bundleNames: Map<string, Set<string>>,
  pendingByPackage: Map<string, [ModelChannel, Set<string>][]>,
  r: Reporter,
): void {
  const q = goQuote;
  if (b.package === '')
    return r.error('B-NO-PACKAGE', `package name must be set for bundle ${q(b.name)}`, b.pos);
  const mpkg = model.get(b.package);
  if (!mpkg)
    return r.error(
      'B-UNKNOWN-PACKAGE',
      `unknown package ${q(b.package)} for bundle ${q(b.name)}`,
      b.pos,
      b.package,
    );
  const names = bundleNames.get(b.package) ?? new Set<string>();
  bundleNames.set(b.package, names);
  if (names.has(b.name)) {
    return r.error(
      'B-DUPLICATE',
      `package ${q(b.package)} has duplicate bundle ${q(b.name)}`,
      b.pos,
      b.package,
    );
  }
  names.add(b.name);

  // The blob belongs to its entries even if it has errors, so they are not reported twice.
  const entries: ModelBundle[] = [];
  for (const [mch, pending] of pendingByPackage.get(b.package) ?? []) {
    const mb = mch.bundles.get(b.name);
    if (!mb) continue;
    pending.delete(b.name);
    mb.blob = b;
    mb.image = b.image;
    mb.properties = b.properties;
    mb.relatedImages = b.relatedImages;
    entries.push(mb);
  }

  // Checked as the blob was read when validating (fast/checked-values.ts), else now.
  const checked = b.checked ?? checkBundleBlob(b);
  for (const f of checked.findings) r.error(f.rule, f.message, f.pos, f.package);
  const ok = checked.passed;
  if (entries.length === 0) {
    r.error(
      'B-NOT-IN-CHANNEL',
      `package ${q(b.package)}, bundle ${q(b.name)} not found in any channel entries`,
      b.pos,
      b.package,
    );
  }
  if (ok) {
    for (const mb of entries) {
      mb.version = ok.version;
      mb.release = ok.release;
    }
  }
}

function convertDeprecations(
  cfg: DeclarativeConfig,
  model: Model,
  bundleNames: Map<string, Set<string>>,
  r: Reporter,
): void {
  const q = goQuote;
  const seen = new Set<string>();
  cfg.deprecations.forEach((d, i) => {
    if (d.package === '')
      return r.error('DEP-NO-PACKAGE', `package name must be set for deprecation item ${i}`, d.pos);
    const mpkg = model.get(d.package);
    if (!mpkg)
      return r.error(
        'DEP-UNKNOWN-PACKAGE',
        `cannot apply deprecations to an unknown package ${q(d.package)}`,
        d.pos,
        d.package,
      );
    if (seen.has(d.package)) {
      return r.error(
        'DEP-DUPLICATE',
        `expected a maximum of one deprecation per package: ${q(d.package)}`,
        d.pos,
        d.package,
      );
    }
    seen.add(d.package);
    const refs = new Set<string>();
    d.entries.forEach((entry, j) => {
      const pos = entry.line !== undefined ? { file: d.pos.file, line: entry.line } : d.pos;
      const ref = entry.reference;
      const goRef = `declcfg.PackageScopedReference{Schema:${q(ref.schema)}, Name:${q(ref.name)}}`;
      if (ref.schema === '') {
        return r.error(
          'DEP-ENTRY-NO-SCHEMA',
          `schema must be set for deprecation entry [${j}] for package ${q(d.package)}`,
          pos,
          d.package,
        );
      }
      const key = `${ref.schema}\u0000${ref.name}`;
      if (refs.has(key)) {
        return r.error(
          'DEP-DUPLICATE-ENTRY',
          `duplicate deprecation entry ${goRef} for package ${q(d.package)}`,
          pos,
          d.package,
        );
      }
      refs.add(key);
      applyDeprecation(d.package, mpkg, bundleNames, entry, j, pos, r);
    });
  });
}

/** Mark what one deprecation entry names as deprecated, or report that it names nothing. */
function applyDeprecation(
  pkg: string,
  mpkg: ModelPackage,
  bundleNames: Map<string, Set<string>>,
  entry: Deprecation['entries'][number],
  j: number,
  pos: Partial<Position>,
  r: Reporter,
): void {
  const q = goQuote;
  const ref = entry.reference;
  const goRef = `declcfg.PackageScopedReference{Schema:${q(ref.schema)}, Name:${q(ref.name)}}`;
  const deprecation = { message: entry.message };
  switch (ref.schema) {
    case SCHEMA_BUNDLE:
      if (!bundleNames.get(pkg)?.has(ref.name)) {
        return r.error(
          'DEP-BUNDLE-NOT-FOUND',
          `cannot deprecate bundle ${q(ref.name)} for package ${q(pkg)}: bundle not found`,
          pos,
          pkg,
        );
      }
      for (const ch of mpkg.channels.values()) {
        const mb = ch.bundles.get(ref.name);
        if (mb) mb.deprecation = deprecation;
      }
      return;
    case SCHEMA_CHANNEL: {
      const ch = mpkg.channels.get(ref.name);
      if (!ch) {
        return r.error(
          'DEP-CHANNEL-NOT-FOUND',
          `cannot deprecate channel ${q(ref.name)} for package ${q(pkg)}: channel not found`,
          pos,
          pkg,
        );
      }
      ch.deprecation = deprecation;
      return;
    }
    case SCHEMA_PACKAGE:
      if (ref.name !== '') {
        return r.error(
          'DEP-PACKAGE-NAME-SET',
          `package name must be empty for deprecated package ${q(pkg)} (specified ${q(ref.name)})`,
          pos,
          pkg,
        );
      }
      mpkg.deprecation = deprecation;
      return;
    default:
      return r.error(
        'DEP-UNKNOWN-SCHEMA',
        `cannot deprecate object ${goRef} referenced by entry ${j} for package ${q(pkg)}: object schema unknown`,
        pos,
        pkg,
      );
  }
}

// ---------------------------------------------------------------- Model.Validate

function validateModel(model: Model, r: Reporter): void {
  for (const mpkg of model.values()) validatePackage(mpkg, r);
}

function validatePackage(mpkg: ModelPackage, r: Reporter): void {
  const q = goQuote;
  const at = `invalid package ${q(mpkg.name)}`;
  if (!mpkg.defaultChannel)
    r.error('P-NO-DEFAULT-CHANNEL', `${at}: default channel must be set`, mpkg.pos, mpkg.name);
  if (mpkg.channels.size === 0)
    r.error('P-NO-CHANNELS', `${at}: package must contain at least one channel`, mpkg.pos, mpkg.name);

  const checkedBlobs = new Set<Bundle>();
  for (const ch of mpkg.channels.values()) {
    if (ch.pos === undefined) continue; // the missing default channel, already reported
    validateChannel(mpkg, ch, checkedBlobs, r);
  }

  // Versions must be unique per package, build metadata and release included.
  const byVersion = new Map<string, { names: Set<string>; last: ModelBundle }>();
  for (const ch of mpkg.channels.values()) {
    for (const mb of ch.bundles.values()) {
      if (!mb.version) continue;
      const key = versionString(mb.version, mb.release, formatVersion);
      const group = byVersion.get(key) ?? { names: new Set<string>(), last: mb };
      group.names.add(mb.name);
      group.last = mb;
      byVersion.set(key, group);
    }
  }
  for (const key of [...byVersion.keys()].sort(goStringCompare)) {
    const { names, last } = byVersion.get(key)!;
    if (names.size > 1) {
      r.error(
        'P-DUPLICATE-VERSIONS',
        `${at}: duplicate versions found in bundles: [{${key}: [${[...names].sort(goStringCompare).join(', ')}]}]`,
        last.blob?.pos ?? mpkg.pos,
        mpkg.name,
      );
    }
  }
  if (mpkg.deprecation && mpkg.deprecation.message === '') {
    r.error('DEP-MESSAGE-EMPTY', `${at}: invalid deprecation: message must be set`, mpkg.pos, mpkg.name);
  }
}

function validateChannel(mpkg: ModelPackage, ch: ModelChannel, checkedBlobs: Set<Bundle>, r: Reporter): void {
  const q = goQuote;
  const at = `invalid package ${q(mpkg.name)}, channel ${q(ch.name)}`;
  if (ch.bundles.size === 0) {
    r.error('C-EMPTY', `${at}: channel must contain at least one bundle`, ch.pos, mpkg.name);
  } else {
    const chain = replacesChainError(ch);
    if (chain) {
      r.error(chain.rule, `${at}: ${chain.message}`, entryPos(ch.pos, chain.entry), mpkg.name, chain.hint);
    }
  }
  for (const mb of ch.bundles.values()) {
    const bAt = `${at}, bundle ${q(mb.name)}`;
    const pos = entryPos(ch.pos, mb.entry);
    mb.skips.forEach((skip, i) => {
      if (skip === '') r.error('B-SKIP-EMPTY', `${bAt}: skip[${i}] is empty`, pos, mpkg.name);
    });
    if (mb.skipRange !== '') {
      const parsed = tryParseRange(mb.skipRange);
      if (!parsed.ok)
        r.error(
          'B-SKIPRANGE',
          `${bAt}: invalid skipRange ${q(mb.skipRange)}: ${parsed.error}`,
          pos,
          mpkg.name,
        );
    }
    if (mb.name === '') r.error('B-NO-NAME', `${bAt}: name must be set`, pos, mpkg.name);
    if (mb.deprecation && mb.deprecation.message === '') {
      r.error('DEP-MESSAGE-EMPTY', `${bAt}: invalid deprecation: message must be set`, pos, mpkg.name);
    }
    // Checks of the blob itself: once per bundle, not once per channel.
    const blob = mb.blob;
    if (!blob || checkedBlobs.has(blob)) continue;
    checkedBlobs.add(blob);
    const bundleAt = `invalid package ${q(mpkg.name)}, bundle ${q(mb.name)}`;
    if (mb.version && mb.release.length > 0) {
      const normalized = `${mpkg.name}-v${versionString(mb.version, mb.release, formatVersion)}`;
      if (mb.name !== normalized) {
        r.error(
          'B-NAME-NOT-NORMALIZED',
          `${bundleAt}: name ${q(mb.name)} does not match normalized name ${q(normalized)}`,
          blob.pos,
          mpkg.name,
        );
      }
      if (mb.version.build.length > 0) {
        r.error(
          'B-BUILD-METADATA-WITH-RELEASE',
          `${bundleAt}: cannot use build metadata in version with a release version`,
          blob.pos,
          mpkg.name,
        );
      }
    }
    if (blob.image === '' && blob.objectCount === 0)
      r.error('B-NO-IMAGE', `${bundleAt}: bundle image must be set`, blob.pos, mpkg.name);
  }
  if (ch.deprecation && ch.deprecation.message === '') {
    r.error('DEP-MESSAGE-EMPTY', `${at}: invalid deprecation: message must be set`, ch.pos, mpkg.name);
  }
}

interface ChainError {
  rule: string;
  message: string;
  entry?: ChannelEntry;
  hint?: string;
}

/** model.Channel.Head + validateReplacesChain, literally (including the "" corner cases). */
function replacesChainError(ch: ModelChannel): ChainError | undefined {
  const incoming = new Map<string, number>();
  for (const b of ch.bundles.values()) {
    if (b.replaces !== '') incoming.set(b.replaces, (incoming.get(b.replaces) ?? 0) + 1);
    for (const s of b.skips) incoming.set(s, (incoming.get(s) ?? 0) + 1);
  }
  const heads = [...ch.bundles.values()].filter((b) => !incoming.has(b.name));
  if (heads.length === 0) return { rule: 'C-NO-HEAD', message: 'no channel head found in graph' };
  if (heads.length > 1) {
    const names = heads.map((h) => h.name).sort(goStringCompare);
    return {
      rule: 'C-MULTIPLE-HEADS',
      message: `multiple channel heads found in graph: ${names.join(', ')}`,
      entry: heads[heads.length - 1]?.entry,
      hint: multipleHeadsHint(heads),
    };
  }
  const head = heads[0]!;
  const all = new Set(ch.bundles.keys());
  const skipped = new Set<string>();
  for (const b of ch.bundles.values()) for (const s of b.skips) skipped.add(s);

  // opm keeps, for every bundle on the chain, the chain from it on (quadratic: 18 s for a
  // chain of 8,000); the visit order and where each bundle is in it give the same lists.
  const order: string[] = [];
  const orderIndex = new Map<string, number>();
  const chain = new Set<string>([head.name]);
  let cur: ModelBundle | undefined = head;
  while (cur) {
    if (!orderIndex.has(cur.name)) {
      orderIndex.set(cur.name, order.length);
      order.push(cur.name);
    }
    if (skipped.has(cur.replaces)) break;
    if (chain.has(cur.replaces)) {
      const from = orderIndex.get(cur.replaces);
      const path = from === undefined ? [] : [...order.slice(from), cur.replaces];
      return {
        rule: 'C-CYCLE',
        message: `detected cycle in replaces chain of upgrade graph: ${path.join(' -> ')}`,
        entry: cur.entry,
      };
    }
    chain.add(cur.replaces);
    cur = ch.bundles.get(cur.replaces);
  }
  const stranded = [...all].filter((n) => !chain.has(n) && !skipped.has(n)).sort(goStringCompare);
  if (stranded.length > 0) {
    return {
      rule: 'C-STRANDED',
      message: `channel contains one or more stranded bundles: ${stranded.join(', ')}`,
      entry: ch.bundles.get(stranded[0]!)?.entry,
      hint: strandedHint(ch, chain, stranded),
    };
  }
  return undefined;
}

/** Suggest the smallest edit: the next newer bundle on the chain skips each stranded one. */
function strandedHint(ch: ModelChannel, chain: Set<string>, stranded: string[]): string {
  const onChain = [...chain]
    .map((n) => ch.bundles.get(n))
    .filter((b): b is ModelBundle => b?.version !== undefined);
  const fixes: string[] = [];
  for (const name of stranded) {
    const s = ch.bundles.get(name);
    if (!s?.version) continue;
    const newer = onChain
      .filter((b) => compareVersions(b.version!, s.version!) > 0)
      .sort((a, b) => compareVersions(a.version!, b.version!))[0];
    if (newer) fixes.push(`add \`${name}\` to the \`skips\` of ${newer.name}`);
  }
  return fixes.length > 0
    ? `Give users of these bundles a way forward: ${fixes.join('; ')} (or make an entry \`replaces\` it, or remove it from the channel).`
    : HINTS['C-STRANDED']!;
}

function multipleHeadsHint(heads: ModelBundle[]): string {
  const versioned = heads.filter((h) => h.version);
  if (versioned.length !== heads.length) return HINTS['C-MULTIPLE-HEADS']!;
  const sorted = [...versioned].sort((a, b) => compareVersions(b.version!, a.version!));
  const [top, ...rest] = sorted;
  const edges = rest.map((h) => h.name);
  return `Make ${top!.name} the only head: add \`${edges.length === 1 ? `replaces: ${edges[0]}` : `skips: [${edges.join(', ')}]`}\` to its entry (or remove the other heads).`;
}
