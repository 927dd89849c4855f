// GitHub's own contract for the fakes: every request a fake receives and every answer it
// gives is checked against GitHub's published REST description (@octokit/openapi,
// api.github.com): the route exists, path and query parameters have the documented names
// and types, the body matches the documented schema (at most 50 annotations, a summary of
// at most 65,535 characters, a conclusion from the enum, ...), and the fake's answer has
// the documented status and shape. A violation is recorded here and fails the test that
// was running (an afterEach hook this module registers when a test file imports it); the
// fake answers a bad request with 422, as GitHub does (docs/architecture.md, "The GitHub port").
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { afterAll, afterEach } from 'vitest';

/** One way a request or an answer differs from GitHub's description. */
export interface Violation {
  /** `POST /repos/{owner}/{repo}/check-runs`, or the raw method and path when no route matches. */
  route: string;
  side: 'request' | 'response';
  /** Where: `path`, `query`, `body`, `status`, and a JSON pointer into it (`body/output/annotations`). */
  pointer: string;
  problem: string;
}

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  schema?: object;
  'x-multi-segment'?: boolean;
}

interface Operation {
  parameters?: (Parameter | { $ref: string })[];
  requestBody?: { required?: boolean; content?: Record<string, { schema?: object }> };
  responses: Record<string, { $ref?: string; content?: Record<string, { schema?: object }> }>;
}

interface Route {
  method: string;
  template: string;
  pattern: RegExp;
  pathNames: string[];
  /** Literal characters of the template: the more, the more specific (`/rules/branches/x` before `/branches/x`). */
  weight: number;
  operation: Operation;
}

interface Spec {
  paths: Record<string, Record<string, Operation>>;
  components: {
    schemas: Record<string, object>;
    parameters: Record<string, Parameter>;
    responses: Record<string, { content?: Record<string, { schema?: object }> }>;
  };
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

let loaded: { spec: Spec; routes: Route[]; ajv: Ajv; params: Ajv } | undefined;
const compiled = new Map<string, ValidateFunction | null>();

/** Measured load and compile time (ms), for the cost of the checker per test file. */
export const contractCost = { loadMs: 0, compileMs: 0, compiled: 0, checked: 0 };

function load() {
  if (loaded) return loaded;
  const start = performance.now();
  const require = createRequire(import.meta.url);
  const file = require.resolve('@octokit/openapi/generated/api.github.com.json');
  const spec = JSON.parse(readFileSync(file, 'utf8')) as Spec;
  const routes: Route[] = [];
  for (const [template, item] of Object.entries(spec.paths))
    for (const method of METHODS) {
      const operation = item[method];
      if (!operation) continue;
      const params = resolveParameters(spec, operation);
      const pathNames: string[] = [];
      const source = template
        .replace(/[.*+?^$()|[\]\\]/g, '\\$&')
        .replace(/\{([^}]+)\}/g, (_, name: string) => {
          pathNames.push(name);
          const multi = params.find((p) => p.in === 'path' && p.name === name)?.['x-multi-segment'];
          return multi ? '(.+)' : '([^/]+)';
        });
      routes.push({
        method: method.toUpperCase(),
        template,
        pattern: new RegExp(`^${source}$`),
        pathNames,
        weight: template.replace(/\{[^}]+\}/g, '').length,
        operation,
      });
    }
  routes.sort((a, b) => b.weight - a.weight);
  // Formats the description uses; the ones Ajv does not know by name are only named here.
  const formats = (ajv: Ajv) => {
    ajv.addFormat('date-time', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/i);
    ajv.addFormat('date', /^\d{4}-\d\d-\d\d$/);
    ajv.addFormat('uri', (s: string) => URL.canParse(s));
    for (const name of [
      'int32',
      'int64',
      'double',
      'repo.nwo',
      'binary',
      'uri-template',
      'email',
      'timestamp',
    ])
      ajv.addFormat(name, true);
  };
  // Component schemas are compiled on first use and shared by the routes that use them.
  const ajv = new Ajv({ strict: false, allErrors: true, inlineRefs: false });
  formats(ajv);
  ajv.addSchema(
    { $id: 'gh', components: { schemas: openapi30(spec.components.schemas) } },
    undefined,
    undefined,
    false,
  );
  // Path and query values arrive as strings: coerced to the documented type first.
  const params = new Ajv({ strict: false, allErrors: true, coerceTypes: 'array' });
  formats(params);
  loaded = { spec, routes, ajv, params };
  contractCost.loadMs += performance.now() - start;
  return loaded;
}

function resolveParameters(spec: Spec, operation: Operation): Parameter[] {
  return (operation.parameters ?? []).map((p) =>
    '$ref' in p ? spec.components.parameters[p.$ref.split('/').pop()!]! : p,
  );
}

/** A schema with its component references pointed at the one shared copy. */
function shared(schema: object): object {
  return openapi30(
    JSON.parse(
      JSON.stringify(schema).replaceAll('"#/components/schemas/', '"gh#/components/schemas/'),
    ) as object,
  );
}

/**
 * OpenAPI 3.0's `nullable` where JSON Schema has no `type` beside it (`allOf`, `anyOf`,
 * `$ref`): Ajv accepts `nullable` only next to `type`, so it becomes "this or null".
 */
function openapi30<T>(schema: T): T {
  if (Array.isArray(schema)) return schema.map(openapi30) as T;
  if (!isObject(schema)) return schema;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema)) out[k] = openapi30(v);
  // `nullable` widens `type` only: an enum of a nullable value takes null too.
  if (out.nullable === true && Array.isArray(out.enum) && !out.enum.includes(null))
    out.enum = [...out.enum, null];
  if (out.nullable === true && out.type === undefined) {
    delete out.nullable;
    return { anyOf: [out, { type: 'null' }] } as T;
  }
  return out as T;
}

function validator(
  key: string,
  make: () => { ajv: Ajv; schema: object } | undefined,
): ValidateFunction | null {
  if (!compiled.has(key)) {
    const start = performance.now();
    const made = make();
    try {
      compiled.set(key, made ? made.ajv.compile(made.schema) : null);
    } catch (error) {
      // A schema this checker cannot read is the checker's fault, said as such.
      throw new Error(`contract checker: cannot compile the schema of ${key}: ${String(error)}`, {
        cause: error,
      });
    }
    contractCost.compileMs += performance.now() - start;
    contractCost.compiled++;
  }
  return compiled.get(key)!;
}

/** The documented route of a request (`/api/v3` of GitHub Enterprise Server taken off). */
export function routeOf(
  method: string,
  path: string,
): { route: Route; values: Record<string, string> } | undefined {
  const bare = path.replace(/^\/api\/v3(?=\/|$)/, '').split('?')[0]!;
  for (const route of load().routes) {
    if (route.method !== method.toUpperCase()) continue;
    const m = route.pattern.exec(bare);
    if (!m) continue;
    const values: Record<string, string> = {};
    route.pathNames.forEach((name, i) => (values[name] = decodeURIComponent(m[i + 1]!)));
    return { route, values };
  }
  return undefined;
}

function problems(
  errors: ErrorObject[] | null | undefined,
  prefix: string,
): { pointer: string; problem: string }[] {
  return (errors ?? []).map((e) => {
    let problem = e.message ?? e.keyword;
    if (e.keyword === 'enum')
      problem += `: ${(e.params as { allowedValues: unknown[] }).allowedValues.join(', ')}`;
    if (e.keyword === 'additionalProperties')
      problem = `unknown parameter \`${(e.params as { additionalProperty: string }).additionalProperty}\``;
    if (e.keyword === 'required')
      problem = `missing \`${(e.params as { missingProperty: string }).missingProperty}\``;
    return { pointer: `${prefix}${e.instancePath}`, problem };
  });
}

/** Differences between a request and GitHub's description of its route. */
export function checkRequest(method: string, url: string, body: unknown): Violation[] {
  contractCost.checked++;
  const [path, search = ''] = url.split('?') as [string, string?];
  const found = routeOf(method, path);
  if (!found)
    return [
      {
        route: `${method} ${path}`,
        side: 'request',
        pointer: 'path',
        problem: 'no such route in GitHub REST API',
      },
    ];
  const { route, values } = found;
  const name = `${route.method} ${route.template}`;
  const out: Violation[] = [];
  const add = (list: { pointer: string; problem: string }[]) =>
    out.push(...list.map((p) => ({ route: name, side: 'request' as const, ...p })));
  const parameters = resolveParameters(load().spec, route.operation);
  for (const where of ['path', 'query'] as const) {
    const check = validator(`${name} ${where}`, () => {
      const list = parameters.filter((p) => p.in === where);
      return {
        ajv: load().params,
        schema: {
          type: 'object',
          properties: Object.fromEntries(list.map((p) => [p.name, p.schema ?? {}])),
          required: list.filter((p) => p.required).map((p) => p.name),
          additionalProperties: false,
        },
      };
    })!;
    const given: Record<string, unknown> = where === 'path' ? { ...values } : {};
    if (where === 'query')
      for (const [k, v] of new URLSearchParams(search)) {
        const key = k.replace(/\[\]$/, '');
        given[key] = k.endsWith('[]') ? [...((given[key] as string[] | undefined) ?? []), v] : v;
      }
    if (!check(given)) add(problems(check.errors, where));
  }
  const hasBody = body !== undefined && body !== '' && !(isObject(body) && Object.keys(body).length === 0);
  const content = route.operation.requestBody?.content?.['application/json'];
  if (!content) {
    if (hasBody) add([{ pointer: 'body', problem: 'this route takes no body' }]);
    return out;
  }
  if (!hasBody && route.operation.requestBody?.required)
    add([{ pointer: 'body', problem: 'missing (required)' }]);
  const check = validator(`${name} body`, () =>
    content.schema ? { ajv: load().ajv, schema: shared(content.schema) } : undefined,
  );
  if (hasBody && check && !check(body)) add(problems(check.errors, 'body'));
  return out;
}

/**
 * A fake's answer made whole: GitHub's documented example answer of the route laid under
 * what the fake says (the fake's fields win; each item of a list the fake gives is laid
 * over the example's first item). The fakes keep only the state the App reads; the rest
 * of what GitHub always sends comes from GitHub's own example, and the whole answer is
 * then checked (checkResponse).
 */
export function documentedAnswer(
  method: string,
  url: string,
  status: number,
  own: unknown,
): { body: unknown; violations: Violation[] } {
  const found = routeOf(method, url.split('?')[0]!);
  const answer = found && documentedResponse(found.route, status);
  const examples = (
    answer?.content?.['application/json'] as { examples?: Record<string, { $ref?: string }> } | undefined
  )?.examples;
  const ref = examples && (examples.default ?? Object.values(examples)[0])?.$ref;
  const example =
    ref &&
    (load().spec.components as unknown as { examples: Record<string, { value?: unknown }> }).examples[
      ref.split('/').pop()!
    ]?.value;
  const body = example === undefined ? own : under(example, own);
  return { body, violations: checkResponse(method, url, status, body, { own, example }) };
}

/** An error said the same wherever it is in a list (an example has one item, the fake many). */
function signature(e: ErrorObject): string {
  return `${e.instancePath.replace(/\/\d+(?=\/|$)/g, '/0')} ${e.keyword} ${JSON.stringify(e.params)}`;
}

const exampleGaps = new Map<string, Set<string>>();

function under(example: unknown, value: unknown): unknown {
  if (value === undefined) return structuredClone(example);
  if (Array.isArray(value)) {
    const item = Array.isArray(example) ? example[0] : undefined;
    return item === undefined ? value : value.map((v) => under(item, v));
  }
  if (isObject(value) && isObject(example)) {
    const out: Record<string, unknown> = { ...structuredClone(example) };
    for (const [k, v] of Object.entries(value)) out[k] = under(example[k], v);
    return out;
  }
  return value;
}

function documentedResponse(route: Route, status: number) {
  const documented = route.operation.responses[String(status)];
  if (!documented) return undefined;
  return documented.$ref ? load().spec.components.responses[documented.$ref.split('/').pop()!]! : documented;
}

/** Differences between a fake's answer and what GitHub documents for the route. */
export function checkResponse(
  method: string,
  url: string,
  status: number,
  body: unknown,
  origin?: { own: unknown; example: unknown },
): Violation[] {
  const found = routeOf(method, url.split('?')[0]!);
  if (!found) return []; // the request was already reported
  const { route } = found;
  const name = `${route.method} ${route.template}`;
  const documented = route.operation.responses[String(status)];
  if (!documented) {
    // GitHub may answer any route with a client or server error it does not list (403, 404, 5xx).
    if (status >= 400) return [];
    const listed = Object.keys(route.operation.responses).join(', ');
    return [
      {
        route: name,
        side: 'response',
        pointer: 'status',
        problem: `${status} is not documented (${listed})`,
      },
    ];
  }
  const schema = documentedResponse(route, status)!.content?.['application/json']?.schema;
  const check = validator(`${name} ${status}`, () =>
    schema ? { ajv: load().ajv, schema: shared(schema) } : undefined,
  );
  if (!check) return [];
  if (check(body)) return [];
  let errors = check.errors!;
  if (origin?.example !== undefined) {
    // GitHub's examples have gaps of their own (a field the schema requires that the
    // example leaves out); what the example alone breaks is not the fake's.
    const key = `${name} ${status}`;
    if (!exampleGaps.has(key)) {
      check(origin.example);
      exampleGaps.set(key, new Set((check.errors ?? []).map(signature)));
    }
    const gaps = exampleGaps.get(key)!;
    errors = errors.filter((e) => !gaps.has(signature(e)));
    if (errors.length === 0) return [];
  }
  return problems(errors, 'body').map((p) => ({ route: name, side: 'response' as const, ...p }));
}

function isObject(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

/** One line per violation: route, side, where, what. */
export function describeViolations(violations: Violation[]): string {
  return violations.map((v) => `${v.side} ${v.route}: ${v.pointer}: ${v.problem}`).join('\n');
}

/**
 * A fake's answer under GitHub's contract: a request GitHub's description does not allow
 * is answered 422 (as GitHub does) and recorded; otherwise `route` answers, its answer is
 * made whole from GitHub's example (documentedAnswer) and checked. A fault of the checker
 * itself is recorded too, and answered 500, so a test never waits on it.
 */
export function underContract(
  method: string,
  url: string,
  body: unknown,
  route: () => [number, unknown, Record<string, string>?],
): [number, unknown, Record<string, string>?] {
  try {
    const refused = checkRequest(method, url, body);
    if (refused.length > 0) {
      record(refused);
      return [422, { message: 'Invalid request.', errors: describeViolations(refused) }];
    }
    const [status, own, headers] = route();
    const answer = documentedAnswer(method, url, status, own);
    record(answer.violations);
    return headers ? [status, answer.body, headers] : [status, answer.body];
  } catch (error) {
    const problem = error instanceof Error ? error.message : String(error);
    record([{ route: `${method} ${url}`, side: 'response', pointer: '', problem }]);
    return [500, { message: problem }];
  }
}

/** Violations seen since the running test began (cleared by the hook below). */
export const recorded: Violation[] = [];

/** Record violations a fake saw, for the running test to fail on. */
export function record(violations: Violation[]): void {
  recorded.push(...violations);
}

/** Fail the test during which a fake saw a violation (and the file, for one seen after the last test). */
function failOnViolations(): void {
  if (recorded.length === 0) return;
  const seen = recorded.splice(0);
  const unique = [...new Set(describeViolations(seen).split('\n'))];
  throw new Error(`GitHub's REST contract was broken (${seen.length}):\n${unique.join('\n')}`);
}

try {
  afterEach(failOnViolations);
  afterAll(() => {
    // CATALOG_BOT_CONTRACT_COST=1 prints what the checker cost this test file.
    if (process.env.CATALOG_BOT_CONTRACT_COST)
      console.log(
        `contract checker: spec loaded in ${contractCost.loadMs.toFixed(0)} ms, ${contractCost.compiled} schemas compiled in ${contractCost.compileMs.toFixed(0)} ms, ${contractCost.checked} requests checked`,
      );
    failOnViolations();
  });
} catch {
  // imported outside a test file's collection: the caller checks `recorded` itself
}
