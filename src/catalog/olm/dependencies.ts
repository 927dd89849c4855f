/**
 * The dependency model of OLM classic: what bundles provide (`olm.gvk`, `olm.package`) and
 * require (`olm.package.required`, `olm.gvk.required`, `olm.label.required`,
 * `olm.constraint` with `gvk`, `package`, `cel`, `all`, `any`, `not`), and which bundles of
 * a catalog the resolver offers for each requirement, in the resolver's order of preference.
 *
 * Ported from operator-lifecycle-manager v0.46.0 `pkg/controller/registry/resolver`
 * (`resolver.go` predicateConverter, getBundleVariables, sortBundles; `cache/predicates.go`)
 * and operator-framework/api `pkg/constraints` (Parse, the CEL environment with
 * `properties` and `semver_compare`). The rules that matter for checks:
 *
 * - A requirement whose value cannot be converted (bad range, bad CEL, an empty or unknown
 *   constraint) is an error for the whole resolution that reaches the bundle, not a
 *   requirement that is merely unmet.
 * - Candidates come from `sortBundles`: the (package, channel) partitions that hold a
 *   matching bundle, default channels first, then by package and channel name, each
 *   channel in `sortChannel` order (head first). Only entries on the classic replaces
 *   chain are in that order, so a matching bundle that is skipped or off the chain is
 *   never offered. The solver prefers earlier candidates.
 * - A CEL rule is evaluated over the candidate's `properties` (a list of `{type, value}`
 *   maps); an evaluation error means "does not match".
 * - `not` is "none of its constraints"; an empty `all` matches everything, an empty `any`
 *   nothing (the predicates' And/Or over no operands).
 */
import { Environment, type ASTNode, type ParseResult } from '@marcbachmann/cel-js';
import { classicChannelEntries } from './classic.js';
import type { Property } from '../fbc/declcfg.js';
import type { Model, ModelBundle } from '../fbc/model.js';
import { tryParseRange, type VersionRange } from '../versions/range.js';
import { compareVersions, formatVersion, parseVersionTolerant, type Version } from '../versions/semver.js';
import { goFormatFloat } from '../go/gofloat.js';
import {
  PROPERTY_BUNDLE_OBJECT,
  PROPERTY_CONSTRAINT,
  PROPERTY_CSV_METADATA,
  PROPERTY_GVK,
  PROPERTY_GVK_REQUIRED,
  PROPERTY_LABEL,
  PROPERTY_LABEL_REQUIRED,
  PROPERTY_PACKAGE,
  PROPERTY_PACKAGE_REQUIRED,
  packageNames,
  packageVersion,
} from '../property.js';

export interface GVK {
  group: string;
  version: string;
  kind: string;
}

export const gvkKey = (g: GVK): string => `${g.group}/${g.version}/${g.kind}`;

/** `EtcdCluster v1beta2 (etcd.database.coreos.com)`: how people read a GVK. */
export const formatGvk = (g: GVK): string => `${g.kind} ${g.version}${g.group ? ` (${g.group})` : ''}`;

/** One parsed requirement; compound ones nest. */
export type Constraint =
  | { kind: 'package'; packageName: string; versionRange: string; range: VersionRange }
  | { kind: 'gvk'; gvk: GVK }
  | { kind: 'label'; label: string }
  | { kind: 'cel'; rule: string; program: ParseResult }
  | { kind: 'all' | 'any' | 'not'; children: Constraint[] };

export type DependencyType =
  | typeof PROPERTY_PACKAGE_REQUIRED
  | typeof PROPERTY_GVK_REQUIRED
  | typeof PROPERTY_LABEL_REQUIRED
  | typeof PROPERTY_CONSTRAINT;

export type DependencyErrorRule = 'D-CEL-INVALID' | 'D-CEL-COST' | 'D-RANGE-INVALID' | 'D-CONSTRAINT-INVALID';

/** One dependency property of a bundle. */
export interface Dependency {
  type: DependencyType;
  /** The parsed requirement; absent when OLM cannot convert it (see `error`). */
  constraint?: Constraint;
  /** Why OLM fails any resolution that reaches this bundle. */
  error?: { rule: DependencyErrorRule; message: string };
  failureMessage?: string;
  /** Line of the property in the bundle's file. */
  line?: number;
  /** Short human form, e.g. `package etcd in range >=1.0.0`. */
  text: string;
}

/** A bundle as a dependency provider and dependant (one per package and bundle name). */
export interface CatalogBundle {
  name: string;
  package: string;
  /** From `olm.package` (strict), else blang ParseTolerant, as the resolver's cache entry. */
  version?: Version;
  gvks: { gvk: GVK; line?: number }[];
  /** `gvkKey` of every provided API. */
  gvkKeys: Set<string>;
  /** The bundle's package plus every `olm.package` packageName (pkgPredicate). */
  packageNames: string[];
  dependencies: Dependency[];
  properties: Property[];
  /** The bundle's entries, one per channel. */
  entries: ModelBundle[];
  file?: string;
  line?: number;
}

/** One entry the resolver may offer: a bundle in one channel. */
export interface Candidate {
  bundle: CatalogBundle;
  channel: string;
  defaultChannel: boolean;
}

export interface ExternalProviders {
  /** APIs served outside this catalog (the cluster itself, another catalog). */
  gvks?: GVK[];
  /** Packages installable from outside this catalog (any version). */
  packages?: string[];
}

// ---- CEL (operator-framework/api pkg/constraints/cel.go) ----

let celEnvironment: Environment | undefined;
const celPrograms = new Map<string, { program: ParseResult } | { error: string; overBudget?: true }>();

function celEnv(): Environment {
  celEnvironment ??= new Environment({
    limits: {
      maxAstNodes: 10_000,
      maxDepth: 100,
      maxListElements: 1000,
      maxMapEntries: 1000,
      maxCallArguments: 32,
    },
  })
    .registerVariable('properties', 'list<map<string, dyn>>')
    .registerFunction('semver_compare(dyn, dyn): int', (a: unknown, b: unknown) =>
      BigInt(compareVersions(celSemver(a), celSemver(b))),
    );
  return celEnvironment;
}

/** semverCompare: blang ParseTolerant of `fmt.Sprint(value)`; a failure is a CEL error. */
function celSemver(value: unknown): Version {
  const text = goSprint(value);
  try {
    return parseVersionTolerant(text);
  } catch {
    throw new Error(`unable to parse '${text}' to semver format`);
  }
}

/** Go `fmt.Sprint` for the JSON-ish values a CEL expression can pass. */
function goSprint(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'bigint' || typeof value === 'boolean') return String(value);
  if (typeof value === 'number') return goFloat(value);
  if (value === null || value === undefined) return '<nil>';
  if (Array.isArray(value)) return `[${value.map(goSprint).join(' ')}]`;
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1));
    return `map[${entries.map(([k, v]) => `${k}:${goSprint(v)}`).join(' ')}]`;
  }
  return String(value);
}

const goFloat = (n: number): string => goFormatFloat(n, 'v');

/**
 * The CEL cost budget (docs/security.md, bounded work): the estimated evaluation steps of
 * one rule on one bundle. cel-js has no runtime cost limit, and a rule of a few hundred
 * bytes (nested `.all()` over literal lists) can run for hours; a rule over the budget is
 * not evaluated (D-CEL-COST). About 10 ms of evaluation; real rules cost a few thousand.
 */
export const CEL_COST_LIMIT = 100_000;
/** The estimate counts each list or string a rule reads from a bundle as this long. */
export const CEL_INPUT_SIZE = 100;

const MACROS = new Set(['all', 'exists', 'exists_one', 'map', 'filter']);

/** A value's bounds: its length (list, map or string) and the length of anything inside it. */
interface Size {
  len: number;
  elem: number;
}
const INPUT: Size = { len: CEL_INPUT_SIZE, elem: CEL_INPUT_SIZE };

/**
 * Estimated steps to evaluate `node` (every node visited once, a comprehension's body once
 * per element, concatenation per element copied) and the size of its value. Values read
 * from a bundle count as CEL_INPUT_SIZE long: past that, the worker's deadline applies.
 */
export function celCost(node: ASTNode, vars: ReadonlyMap<string, Size> = new Map()): { cost: number } & Size {
  type Est = { cost: number } & Size;
  const sum = (parts: Est[]) => parts.reduce((a, p) => a + p.cost, 1);
  const most = (parts: Est[], k: 'len' | 'elem') => parts.reduce((a, p) => Math.max(a, p[k]), 0);
  const within = (parts: Est[]) => Math.max(most(parts, 'len'), most(parts, 'elem'));
  switch (node.op) {
    case 'value':
      return {
        cost: 1,
        len: typeof node.args === 'string' || node.args instanceof Uint8Array ? node.args.length : 0,
        elem: 0,
      };
    case 'id':
      return { cost: 1, ...(vars.get(node.args) ?? INPUT) };
    case 'list': {
      const parts = node.args.map((n) => celCost(n, vars));
      return { cost: sum(parts), len: parts.length, elem: within(parts) };
    }
    case 'map': {
      const parts = node.args.flat().map((n) => celCost(n, vars));
      return { cost: sum(parts), len: node.args.length, elem: within(parts) };
    }
    case '.':
    case '.?': {
      const obj = celCost(node.args[0], vars);
      return { cost: obj.cost + 1, len: obj.elem, elem: obj.elem };
    }
    case '[]':
    case '[?]': {
      const [obj, key] = node.args.map((n) => celCost(n, vars)) as [Est, Est];
      return { cost: obj.cost + key.cost + 1, len: obj.elem, elem: obj.elem };
    }
    case 'call': {
      const parts = node.args[1].map((n) => celCost(n, vars));
      return { cost: sum(parts), len: most(parts, 'len'), elem: most(parts, 'elem') };
    }
    case 'rcall': {
      const [name, receiver, args] = node.args;
      if (name === 'bind' && receiver.op === 'id' && receiver.args === 'cel' && args.length === 3) {
        const value = celCost(args[1]!, vars);
        const body = celCost(args[2]!, new Map([...vars, [String(args[0]!.args), value]]));
        return { ...body, cost: value.cost + body.cost + 1 };
      }
      const recv = celCost(receiver, vars);
      if (MACROS.has(name) && args[0]?.op === 'id') {
        const item = { len: recv.elem, elem: recv.elem };
        const body = args.slice(1).map((n) => celCost(n, new Map([...vars, [String(args[0]!.args), item]])));
        const cost = recv.cost + 1 + recv.len * sum(body);
        const last = body[body.length - 1]!;
        if (name === 'map') return { cost, len: recv.len, elem: Math.max(last.len, last.elem) };
        if (name === 'filter') return { ...recv, cost };
        return { cost, len: 0, elem: 0 };
      }
      const parts = args.map((n) => celCost(n, vars));
      const cost = recv.cost + sum(parts);
      // split makes a list as long as the string; join a string as long as all the parts.
      if (name === 'split') return { cost: cost + recv.len, len: recv.len + 1, elem: recv.len };
      if (name === 'join')
        return { cost: cost + recv.len, len: recv.len * (recv.elem + most(parts, 'len')), elem: 0 };
      return {
        cost,
        len: Math.max(recv.len, most(parts, 'len')),
        elem: Math.max(recv.elem, most(parts, 'elem')),
      };
    }
    case '+': {
      const [a, b] = node.args.map((n) => celCost(n, vars)) as [Est, Est];
      // Concatenation copies both sides.
      return {
        cost: a.cost + b.cost + 1 + a.len + b.len,
        len: a.len + b.len,
        elem: Math.max(a.elem, b.elem),
      };
    }
    default: {
      // Other operators: every operand once; no value longer than the longest operand.
      const children = (Array.isArray(node.args) ? node.args : [node.args]).filter(
        (n): n is ASTNode => typeof n === 'object' && n !== null && 'op' in n,
      );
      const parts = children.map((n) => celCost(n, vars));
      return { cost: sum(parts), len: most(parts, 'len'), elem: most(parts, 'elem') };
    }
  }
}

/** Compile a rule once (cached by text): a parse or type error, or a non-bool result, is an error. */
export function compileCel(rule: string): { program: ParseResult } | { error: string; overBudget?: true } {
  let compiled = celPrograms.get(rule);
  if (compiled === undefined) {
    try {
      const program = celEnv().parse(rule);
      const checked = program.check();
      if (!checked.valid) compiled = { error: firstLine(checked.error?.message ?? 'type error') };
      else if (checked.type !== 'bool')
        compiled = { error: `cel expressions must have type Bool, this one has type ${checked.type}` };
      else {
        const { cost } = celCost(program.ast);
        compiled =
          cost > CEL_COST_LIMIT
            ? {
                error: `it is over catalog-bot's CEL cost budget: an estimated ${cost > 1e15 ? cost.toExponential(1) : Math.round(cost).toLocaleString('en-US')} evaluation steps per bundle, the limit is ${CEL_COST_LIMIT.toLocaleString('en-US')} (each list the rule reads from a bundle counted as ${CEL_INPUT_SIZE} elements)`,
                overBudget: true,
              }
            : { program };
      }
    } catch (err) {
      compiled = { error: firstLine((err as Error).message) };
    }
    celPrograms.set(rule, compiled);
  }
  return compiled;
}

const firstLine = (s: string): string => s.split('\n')[0]!.trim();

/** The rule's verdict for a bundle; an evaluation error is "no match" (celPredicate.Test). */
export function celMatches(program: ParseResult, bundle: CatalogBundle): boolean {
  try {
    return program({ properties: celProperties(bundle) }) === true;
  } catch {
    return false;
  }
}

const celInputs = new WeakMap<CatalogBundle, unknown[]>();

function celProperties(bundle: CatalogBundle): unknown[] {
  let props = celInputs.get(bundle);
  if (props === undefined) {
    // A value that is not JSON leaves a nil map in Go; here a null element.
    props = bundle.properties.map((p) => (p.value === undefined ? null : { type: p.type, value: p.value }));
    celInputs.set(bundle, props);
  }
  return props;
}

// ---- Parsing dependency properties ----

/** 2 << 16 bytes: constraints.Parse refuses larger values. */
const MAX_CONSTRAINT_SIZE = 2 << 16;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

class ConstraintError extends Error {
  constructor(
    message: string,
    readonly rule: DependencyErrorRule = 'D-CONSTRAINT-INVALID',
  ) {
    super(message);
  }
}

/**
 * Go's encoding/json with DisallowUnknownFields: keys match fields case-insensitively
 * (the last duplicate wins), an unknown key is an error, null leaves a field unset.
 */
function goFields(value: unknown, struct: string, fields: Record<string, string>): Record<string, unknown> {
  if (value === null || value === undefined) return {};
  if (!isObj(value))
    throw new ConstraintError(`json: cannot unmarshal ${jsonKind(value)} into Go value of type ${struct}`);
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    const field = Object.keys(fields).find((f) => f.toLowerCase() === key.toLowerCase());
    if (field === undefined) throw new ConstraintError(`json: unknown field ${JSON.stringify(key)}`);
    if (item === null) continue;
    if (fields[field] === 'string' && typeof item !== 'string') {
      throw new ConstraintError(
        `json: cannot unmarshal ${jsonKind(item)} into Go struct field ${struct}.${field} of type string`,
      );
    }
    out[field] = item;
  }
  return out;
}

function jsonKind(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number' || typeof v === 'bigint') return 'number';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'string') return 'string';
  return 'object';
}

function packageConstraint(packageName: string, versionRange: string): Constraint {
  const parsed = tryParseRange(versionRange);
  if (!parsed.ok) {
    throw new ConstraintError(
      `versionRange ${JSON.stringify(versionRange)} of package ${JSON.stringify(packageName)} is not a valid blang range: ${parsed.error}`,
      'D-RANGE-INVALID',
    );
  }
  return { kind: 'package', packageName, versionRange, range: parsed.range };
}

/** constraints.Parse plus predicateConverter.convertConstraints, on one (nested) constraint. */
function parseConstraint(value: unknown, depth = 0): { constraint: Constraint; failureMessage?: string } {
  if (depth > 100) throw new ConstraintError('olm.constraint is nested too deeply');
  const f = goFields(value, 'constraints.Constraint', {
    failureMessage: 'string',
    cel: 'object',
    package: 'object',
    gvk: 'object',
    all: 'object',
    any: 'object',
    not: 'object',
  });
  const failureMessage = typeof f.failureMessage === 'string' ? f.failureMessage : undefined;
  // Fields are decoded (and rejected) whatever the switch below uses.
  const cel = f.cel === undefined ? undefined : goFields(f.cel, 'constraints.Cel', { rule: 'string' });
  const pkg =
    f.package === undefined
      ? undefined
      : goFields(f.package, 'constraints.PackageConstraint', {
          packageName: 'string',
          versionRange: 'string',
        });
  const gvk =
    f.gvk === undefined
      ? undefined
      : goFields(f.gvk, 'constraints.GVKConstraint', { group: 'string', kind: 'string', version: 'string' });
  const compound = (v: unknown): Constraint[] | undefined => {
    if (v === undefined) return undefined;
    const c = goFields(v, 'constraints.CompoundConstraint', { constraints: 'array' });
    const list = c.constraints ?? [];
    if (!Array.isArray(list)) {
      throw new ConstraintError(
        `json: cannot unmarshal ${jsonKind(list)} into Go struct field CompoundConstraint.constraints of type []constraints.Constraint`,
      );
    }
    return list.map((item) => parseConstraint(item, depth + 1).constraint);
  };
  const all = compound(f.all);
  const any = compound(f.any);
  const not = compound(f.not);
  // convertConstraints: the first set field in this order decides.
  let constraint: Constraint;
  if (gvk)
    constraint = {
      kind: 'gvk',
      gvk: { group: str(gvk.group), version: str(gvk.version), kind: str(gvk.kind) },
    };
  else if (pkg) constraint = packageConstraint(str(pkg.packageName), str(pkg.versionRange));
  else if (all) constraint = { kind: 'all', children: all };
  else if (any) constraint = { kind: 'any', children: any };
  else if (not) constraint = { kind: 'not', children: not };
  else if (cel) {
    const rule = str(cel.rule);
    const compiled = compileCel(rule);
    if ('error' in compiled) {
      if (compiled.overBudget)
        throw new ConstraintError(
          `CEL rule ${JSON.stringify(rule.slice(0, 200))}${rule.length > 200 ? '…' : ''}: ${compiled.error}`,
          'D-CEL-COST',
        );
      throw new ConstraintError(
        `CEL rule ${JSON.stringify(rule)} does not compile: ${compiled.error}`,
        'D-CEL-INVALID',
      );
    }
    constraint = { kind: 'cel', rule, program: compiled.program };
  } else throw new ConstraintError('constraint is empty');
  return { constraint, failureMessage };
}

/** The dependency a property declares, or undefined for properties that are not dependencies. */
export function parseDependency(p: Property): Dependency | undefined {
  const v = isObj(p.value) ? p.value : {};
  try {
    switch (p.type) {
      case PROPERTY_PACKAGE_REQUIRED: {
        const constraint = packageConstraint(str(v.packageName), str(v.versionRange));
        return { type: p.type, constraint, line: p.line, text: describe(constraint) };
      }
      case PROPERTY_GVK_REQUIRED: {
        const constraint: Constraint = {
          kind: 'gvk',
          gvk: { group: str(v.group), version: str(v.version), kind: str(v.kind) },
        };
        return { type: p.type, constraint, line: p.line, text: describe(constraint) };
      }
      case PROPERTY_LABEL_REQUIRED: {
        const constraint: Constraint = { kind: 'label', label: str(v.label) };
        return { type: p.type, constraint, line: p.line, text: describe(constraint) };
      }
      case PROPERTY_CONSTRAINT: {
        const size = JSON.stringify(p.value ?? null).length;
        if (size > MAX_CONSTRAINT_SIZE) {
          throw new ConstraintError(
            `olm.constraint value is greater than max constraint size ${MAX_CONSTRAINT_SIZE} bytes`,
          );
        }
        const { constraint, failureMessage } = parseConstraint(p.value);
        return { type: p.type, constraint, failureMessage, line: p.line, text: describe(constraint) };
      }
      default:
        return undefined;
    }
  } catch (err) {
    if (!(err instanceof ConstraintError)) throw err;
    return {
      type: p.type as DependencyType,
      error: { rule: err.rule, message: err.message },
      failureMessage:
        isObj(p.value) && typeof p.value.failureMessage === 'string' ? p.value.failureMessage : undefined,
      line: p.line,
      text: `${p.type} ${JSON.stringify(p.value ?? null).slice(0, 200)}`,
    };
  }
}

/** A requirement in words. */
export function describe(c: Constraint): string {
  switch (c.kind) {
    case 'package':
      return `package ${c.packageName} in range ${c.versionRange}`;
    case 'gvk':
      return `API ${formatGvk(c.gvk)}`;
    case 'label':
      return `label ${c.label}`;
    case 'cel':
      return `CEL rule ${JSON.stringify(c.rule)}`;
    case 'all':
      return `all of (${c.children.map(describe).join('; ')})`;
    case 'any':
      return `any of (${c.children.map(describe).join('; ')})`;
    case 'not':
      return `none of (${c.children.map(describe).join('; ')})`;
  }
}

// ---- Matching ----

/** Does this bundle satisfy the constraint (the resolver's predicates)? */
export function matches(c: Constraint, b: CatalogBundle): boolean {
  switch (c.kind) {
    case 'package':
      return providesPackage(b, c.packageName) && b.version !== undefined && c.range.covers(b.version);
    case 'gvk':
      return b.gvkKeys.has(gvkKey(c.gvk));
    case 'label':
      return b.properties.some(
        (p) => p.type === PROPERTY_LABEL && isObj(p.value) && p.value.label === c.label,
      );
    case 'cel':
      return celMatches(c.program, b);
    case 'all':
      return c.children.every((child) => matches(child, b));
    case 'any':
      return c.children.some((child) => matches(child, b));
    case 'not':
      return !c.children.some((child) => matches(child, b));
  }
}

/** pkgPredicate: an `olm.package` property names it, or the entry belongs to it. */
function providesPackage(b: CatalogBundle, name: string): boolean {
  return b.package === name || bundlePackageNames(b).includes(name);
}

function bundlePackageNames(b: CatalogBundle): string[] {
  return packageNames(b.properties);
}

/** Met by something outside the catalog? (Listed packages count at any version.) */
export function externallyMet(c: Constraint, ext: ExternalProviders | undefined): boolean {
  if (!ext) return false;
  switch (c.kind) {
    case 'package':
      return (ext.packages ?? []).includes(c.packageName);
    case 'gvk':
      return (ext.gvks ?? []).some((g) => gvkKey(g) === gvkKey(c.gvk));
    case 'all':
      return c.children.length > 0 && c.children.every((child) => externallyMet(child, ext));
    case 'any':
      return c.children.some((child) => externallyMet(child, ext));
    default:
      return false;
  }
}

// ---- The per-catalog index ----

const SCANS_BEFORE_TABLES = 16;

// Properties too big and too common to look at for dependencies.
const BULK = new Set([PROPERTY_CSV_METADATA, PROPERTY_BUNDLE_OBJECT]);

export class DependencyIndex {
  /** Every bundle, keyed `package\0name`. */
  readonly bundles = new Map<string, CatalogBundle>();
  /** Every chain entry of the catalog in sortBundles order: what the resolver can offer. */
  readonly ordered: Candidate[] = [];
  /** Channel heads (first chain entry) of every channel, by package. */
  readonly heads = new Map<string, CatalogBundle[]>();
  /** The head of each package's default channel. */
  readonly defaultHead = new Map<string, CatalogBundle>();
  /** The distinct chain bundles of each package: what users can install or upgrade to. */
  readonly chainBundles = new Map<string, Set<CatalogBundle>>();
  /** Bundles that declare at least one dependency. */
  readonly dependants: CatalogBundle[] = [];
  private readonly candidateCache = new Map<Constraint, Candidate[]>();
  private scans = 0;
  private readonly resolvableByExt = new Map<ExternalProviders | undefined, Map<string, boolean>>();
  private lookupTables?: {
    byGvk: Map<string, Candidate[]>;
    byPackage: Map<string, Candidate[]>;
    allByGvk: Map<string, CatalogBundle[]>;
    allByPackage: Map<string, CatalogBundle[]>;
  };

  constructor(readonly model: Model) {
    for (const pkg of model.values()) {
      for (const ch of pkg.channels.values()) {
        for (const mb of ch.bundles.values()) {
          const key = `${mb.package}\0${mb.name}`;
          const existing = this.bundles.get(key);
          if (existing) existing.entries.push(mb);
          else {
            const b = this.toBundle(mb);
            this.bundles.set(key, b);
            if (b.dependencies.length > 0) this.dependants.push(b);
          }
        }
      }
    }
    // sortBundles: default channels first, then package name, then channel name.
    const channels = [...model.values()].flatMap((pkg) =>
      [...pkg.channels.values()].map((ch) => ({ pkg, ch, isDefault: pkg.defaultChannel?.name === ch.name })),
    );
    channels.sort(
      (a, b) =>
        Number(b.isDefault) - Number(a.isDefault) ||
        compareStrings(a.pkg.name, b.pkg.name) ||
        compareStrings(a.ch.name, b.ch.name),
    );
    for (const { pkg, ch, isDefault } of channels) {
      const chain = classicChannelEntries(ch);
      let mine = this.chainBundles.get(pkg.name);
      if (!mine) this.chainBundles.set(pkg.name, (mine = new Set()));
      for (let i = 0; i < chain.length; i++) {
        const mb = chain[i]!;
        const bundle = this.bundles.get(`${mb.package}\0${mb.name}`)!;
        mine.add(bundle);
        this.ordered.push({ bundle, channel: ch.name, defaultChannel: isDefault });
        if (i === 0) {
          const heads = this.heads.get(pkg.name) ?? [];
          if (!heads.includes(bundle)) heads.push(bundle);
          this.heads.set(pkg.name, heads);
          if (isDefault) this.defaultHead.set(pkg.name, bundle);
        }
      }
    }
  }

  /** Lookups by API and package, built on first use (a check of a change may need none). */
  private tables(): NonNullable<DependencyIndex['lookupTables']> {
    if (!this.lookupTables) {
      const t = (this.lookupTables = {
        byGvk: new Map<string, Candidate[]>(),
        byPackage: new Map<string, Candidate[]>(),
        allByGvk: new Map<string, CatalogBundle[]>(),
        allByPackage: new Map<string, CatalogBundle[]>(),
      });
      for (const candidate of this.ordered) {
        for (const name of candidate.bundle.packageNames) push(t.byPackage, name, candidate);
        for (const key of candidate.bundle.gvkKeys) push(t.byGvk, key, candidate);
      }
      for (const b of this.bundles.values()) {
        push(t.allByPackage, b.package, b);
        for (const key of b.gvkKeys) push(t.allByGvk, key, b);
      }
    }
    return this.lookupTables;
  }

  /** Every bundle (chain or not) by package, for explanations. */
  get allByPackage(): Map<string, CatalogBundle[]> {
    return this.tables().allByPackage;
  }

  /** Every bundle (chain or not) by GVK key, for explanations. */
  get allByGvk(): Map<string, CatalogBundle[]> {
    return this.tables().allByGvk;
  }

  private toBundle(mb: ModelBundle): CatalogBundle {
    const properties = mb.properties;
    let version = mb.version;
    if (version === undefined) {
      const text = packageVersion(properties) ?? '';
      try {
        version = parseVersionTolerant(text);
      } catch {
        version = undefined;
      }
    }
    const gvks: CatalogBundle['gvks'] = [];
    const gvkKeys = new Set<string>();
    const packageNames = [mb.package];
    const dependencies: Dependency[] = [];
    for (const p of properties) {
      if (p.type === PROPERTY_GVK && isObj(p.value)) {
        const gvk = { group: str(p.value.group), version: str(p.value.version), kind: str(p.value.kind) };
        gvks.push({ gvk, line: p.line });
        gvkKeys.add(gvkKey(gvk));
      } else if (p.type === PROPERTY_PACKAGE) {
        // pkgPredicate also accepts the packageName of any olm.package property.
        if (
          isObj(p.value) &&
          typeof p.value.packageName === 'string' &&
          !packageNames.includes(p.value.packageName)
        )
          packageNames.push(p.value.packageName);
      } else if (p.type.startsWith('olm.') && !BULK.has(p.type)) {
        const dep = parseDependency(p);
        if (dep) dependencies.push(dep);
      }
    }
    return {
      name: mb.name,
      package: mb.package,
      version,
      gvks,
      gvkKeys,
      packageNames,
      dependencies,
      properties,
      entries: [mb],
      file: mb.blob?.pos.file,
      line: mb.blob?.pos.line,
    };
  }

  /** Every bundle of a package (chain or not). */
  packageBundles(pkg: string): CatalogBundle[] {
    const out = new Set<CatalogBundle>();
    for (const ch of this.model.get(pkg)?.channels.values() ?? []) {
      for (const name of ch.bundles.keys()) out.add(this.bundles.get(`${pkg}\0${name}`)!);
    }
    return [...out];
  }

  bundle(pkg: string, name: string): CatalogBundle | undefined {
    return this.bundles.get(`${pkg}\0${name}`);
  }

  /** Every entry the resolver offers for the constraint, most preferred first (one per bundle). */
  candidates(c: Constraint): Candidate[] {
    let found = this.candidateCache.get(c);
    if (found === undefined) {
      const seed = this.seed(c) ?? this.ordered;
      const seen = new Set<CatalogBundle>();
      found = [];
      for (const candidate of seed) {
        if (seen.has(candidate.bundle) || !matches(c, candidate.bundle)) continue;
        seen.add(candidate.bundle);
        found.push(candidate);
      }
      this.candidateCache.set(c, found);
    }
    return found;
  }

  /**
   * A preordered superset of the candidates from the lookup tables. The tables cost a
   * pass over every API of the catalog, so the first few queries (all a typical change
   * needs) scan the chain entries instead.
   */
  private seed(c: Constraint): Candidate[] | undefined {
    if (!this.lookupTables && ++this.scans <= SCANS_BEFORE_TABLES) return undefined;
    switch (c.kind) {
      case 'package':
        return this.tables().byPackage.get(c.packageName) ?? [];
      case 'gvk':
        return this.tables().byGvk.get(gvkKey(c.gvk)) ?? [];
      case 'all': {
        const seeds = c.children.map((child) => this.seed(child)).filter((s) => s !== undefined);
        return seeds.length === 0 ? undefined : seeds.reduce((a, b) => (b.length < a.length ? b : a));
      }
      default:
        return undefined;
    }
  }

  /**
   * Can the resolver install this bundle with everything it needs from this catalog (or the
   * external providers)? Every dependency must convert and have a candidate that is itself
   * installable (a greatest fixpoint, so dependency cycles count as installable). Conflicts
   * between picks (one bundle per package, one provider per API) are not considered.
   */
  installable(b: CatalogBundle, ext?: ExternalProviders): boolean {
    const key = `${b.package}\0${b.name}`;
    let resolvable = this.resolvableByExt.get(ext);
    if (!resolvable) this.resolvableByExt.set(ext, (resolvable = new Map()));
    const known = resolvable.get(key);
    if (known !== undefined) return known;
    // The closure of bundles this one may need, then drop the ones that cannot be installed.
    const closure = new Map<string, CatalogBundle>();
    const stack = [b];
    while (stack.length > 0) {
      const next = stack.pop()!;
      const k = `${next.package}\0${next.name}`;
      if (closure.has(k) || resolvable.has(k)) continue;
      closure.set(k, next);
      for (const d of next.dependencies) {
        if (!d.constraint || externallyMet(d.constraint, ext)) continue;
        for (const c of this.candidates(d.constraint))
          if (c.bundle.dependencies.length > 0) stack.push(c.bundle);
      }
    }
    const ok = new Set(closure.keys());
    const usable = (x: CatalogBundle): boolean => {
      const k = `${x.package}\0${x.name}`;
      return resolvable.get(k) ?? (x.dependencies.length === 0 || ok.has(k));
    };
    for (let changed = true; changed;) {
      changed = false;
      for (const [k, x] of closure) {
        if (!ok.has(k)) continue;
        const fine = x.dependencies.every(
          (d) =>
            d.constraint !== undefined &&
            (externallyMet(d.constraint, ext) || this.candidates(d.constraint).some((c) => usable(c.bundle))),
        );
        if (!fine) {
          ok.delete(k);
          changed = true;
        }
      }
    }
    for (const k of closure.keys()) resolvable.set(k, ok.has(k));
    return ok.has(key);
  }

  /** Why nothing satisfies the constraint: the closest candidates, in words. */
  explain(c: Constraint): string {
    switch (c.kind) {
      case 'package': {
        const all = this.allByPackage.get(c.packageName) ?? [];
        if (all.length === 0) return `no bundle of package "${c.packageName}" is in this catalog`;
        const inRange = all.filter((b) => b.version !== undefined && c.range.covers(b.version));
        if (inRange.length > 0) return offChain(inRange);
        const versions = sortedByVersion(all);
        const near = closestVersions(versions, c.range);
        return `${near.map((b) => `${b.package} ${versionText(b)}${providesText(b)}`).join(', ')} ${near.length === 1 ? 'is' : 'are'} the closest; the range ${c.versionRange} excludes ${near.length === 1 ? 'it' : 'them'}`;
      }
      case 'gvk': {
        const exact = this.allByGvk.get(gvkKey(c.gvk)) ?? [];
        if (exact.length > 0) return offChain(exact);
        const similar = [...this.allByGvk.values()]
          .flat()
          .filter((b) => b.gvks.some((g) => g.gvk.kind === c.gvk.kind));
        if (similar.length === 0) return `no bundle in this catalog provides a ${c.gvk.kind} API at all`;
        const near = sortedByVersion([...new Set(similar)]).slice(-3);
        return `${near
          .map(
            (b) =>
              `${b.package} ${versionText(b)} provides ${b.gvks
                .filter((g) => g.gvk.kind === c.gvk.kind)
                .map((g) => formatGvk(g.gvk))
                .join(', ')}`,
          )
          .join('; ')}, but not ${formatGvk(c.gvk)}`;
      }
      case 'label':
        return `no bundle on a channel's replaces chain has the property olm.label ${JSON.stringify(c.label)}`;
      case 'cel':
        return `no bundle on a channel's replaces chain matches the rule`;
      case 'any':
        if (c.children.length === 0) return 'an `any` with no constraints matches nothing';
        return c.children.map((child) => this.explain(child)).join('; and ');
      case 'not':
        return `every bundle on a channel's replaces chain matches ${c.children.map(describe).join(' or ')}`;
      case 'all': {
        const missing = c.children.find((child) => this.candidates(child).length === 0);
        if (missing) return this.explain(missing);
        const first = c.children[0];
        if (!first) return "no bundle is on any channel's replaces chain";
        // Each part has candidates, but no bundle has all parts: show near misses.
        const misses = this.candidates(first)
          .slice(0, 3)
          .flatMap((cand) => {
            const failed = c.children.find((child) => !matches(child, cand.bundle));
            if (!failed) return [];
            return [
              `${cand.bundle.package} ${versionText(cand.bundle)}${providesText(cand.bundle)} matches ${describe(first)} but not ${describe(failed)}${failed.kind === 'package' && cand.bundle.package === failed.packageName ? ` (the range ${failed.versionRange} excludes it)` : ''}`,
            ];
          });
        return `no single bundle satisfies every part: ${misses.join('; ')}`;
      }
    }
  }
}

function offChain(bundles: CatalogBundle[]): string {
  const names = bundles.slice(0, 3).map((b) => `${b.name}`);
  return `${names.join(', ')} would match, but ${bundles.length === 1 ? 'it is' : 'they are'} skipped or off the replaces chain in every channel, and classic OLM offers only chain entries as dependencies`;
}

function providesText(b: CatalogBundle): string {
  return b.gvks.length > 0
    ? ` (provides ${b.gvks
        .slice(0, 2)
        .map((g) => formatGvk(g.gvk))
        .join(', ')}${b.gvks.length > 2 ? ', …' : ''})`
    : '';
}

export const versionText = (b: CatalogBundle): string =>
  b.version ? formatVersion(b.version) : '(no version)';

function sortedByVersion(bundles: CatalogBundle[]): CatalogBundle[] {
  return [...bundles].sort((a, b) =>
    a.version && b.version ? compareVersions(a.version, b.version) : a.version ? 1 : b.version ? -1 : 0,
  );
}

/** The highest version below every comparator, and the lowest above (at most three in all). */
function closestVersions(sorted: CatalogBundle[], range: VersionRange): CatalogBundle[] {
  const versioned = sorted.filter((b) => b.version !== undefined);
  if (versioned.length <= 3) return versioned;
  const bounds = range.groups.flat().map((c) => c.version);
  const picks = new Set<CatalogBundle>();
  for (const bound of bounds) {
    const below = versioned.filter((b) => compareVersions(b.version!, bound) < 0).pop();
    const above = versioned.find((b) => compareVersions(b.version!, bound) >= 0);
    if (below) picks.add(below);
    if (above) picks.add(above);
  }
  if (picks.size === 0) picks.add(versioned[versioned.length - 1]!);
  return sortedByVersion([...picks]).slice(-3);
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/** Go string order (bytewise for ASCII names). */
function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

const indexes = new WeakMap<Model, DependencyIndex>();

/** The index of a catalog, built once per model. */
export function dependencyIndex(model: Model): DependencyIndex {
  let index = indexes.get(model);
  if (index === undefined) {
    index = new DependencyIndex(model);
    indexes.set(model, index);
  }
  return index;
}

/** Every comparator group of the range has a maximum (`<`, `<=` or `=`): newer providers never match. */
export function rangeUpperBounds(range: VersionRange): string[] | undefined {
  const bounds: string[] = [];
  for (const group of range.groups) {
    const upper = group.filter((c) => c.op === '<' || c.op === '<=' || c.op === '=');
    if (upper.length === 0) return undefined;
    bounds.push(...upper.map((c) => `${c.op}${formatVersion(c.version)}`));
  }
  return bounds;
}

/** Lower bounds of the range (`>=`, `>`), for suggesting a minimum-only range. */
export function rangeLowerBound(range: VersionRange): Version | undefined {
  let lowest: Version | undefined;
  for (const group of range.groups) {
    for (const c of group) {
      if (c.op !== '>=' && c.op !== '>' && c.op !== '=') continue;
      if (!lowest || compareVersions(c.version, lowest) < 0) lowest = c.version;
    }
  }
  return lowest;
}
