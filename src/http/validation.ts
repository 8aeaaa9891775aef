import { Ajv, type AnySchema, type Options, type ValidateFunction } from 'ajv';
import type { FastifyInstance, FastifySchema, FastifyServerOptions, RouteOptions } from 'fastify';
import { addFormats } from '../ajv-formats.ts';
import { AppError, invalidParameter } from '../errors/app-error.ts';

type RouteSchema = { schema: AnySchema; httpPart?: string };

/**
 * Fastify's validator factory with one change: query strings and path parameters are text on the wire, so
 * their validator coerces ("50" → 50), but JSON bodies are typed already, so theirs does not. Coercing a
 * body would read `"brandId": true` as brand 1 and `"categoryId": ""` as null instead of refusing them.
 */
function buildValidator(externalSchemas: Record<string, AnySchema>, ajvOptions?: { customOptions?: Options }): (route: RouteSchema) => ValidateFunction {
  const make = (coerceTypes: Options['coerceTypes']): Ajv => {
    const ajv = new Ajv({ useDefaults: true, removeAdditional: false, addUsedSchema: false, allErrors: true, ...ajvOptions?.customOptions, coerceTypes });
    addFormats(ajv);
    for (const schema of Object.values(externalSchemas)) ajv.addSchema(schema);
    return ajv;
  };
  const lenient = make(ajvOptions?.customOptions?.coerceTypes ?? true);
  const strict = make(false);
  return ({ schema, httpPart }) => {
    const ajv = httpPart === 'body' ? strict : lenient;
    const id = typeof schema === 'object' && schema !== null && '$id' in schema ? String(schema.$id) : undefined;
    return (id && ajv.getSchema(id)) || ajv.compile(schema);
  };
}

// Fastify's types describe the compiler it is handed as Ajv's own compile; at run time it gets route definitions.
export const strictBodies = { compilersFactory: { buildValidator } } as unknown as FastifyServerOptions['schemaController'];

const INTEGER = /^-?\d{1,16}$/;

interface IntegerParam {
  part: 'query' | 'params';
  name: string;
  reason: string;
}

function integerParams(part: IntegerParam['part'], schema: unknown): IntegerParam[] {
  const properties = (schema as { properties?: Record<string, { type?: unknown; minimum?: number; maximum?: number }> } | undefined)?.properties ?? {};
  return Object.entries(properties)
    .filter(([, p]) => p.type === 'integer' || (Array.isArray(p.type) && p.type.includes('integer')))
    .map(([name, p]) => ({
      part,
      name,
      reason: p.minimum !== undefined && p.maximum !== undefined
        ? `must be an integer between ${p.minimum} and ${p.maximum}`
        : p.minimum === 1 ? 'must be a positive integer' : 'must be an integer',
    }));
}

const hasNul = (v: unknown): boolean => typeof v === 'string' && v.includes('\u0000');

/** The name of the first path or query parameter whose value (or one of whose repeated values) holds a NUL character. */
function nulParameter(values: unknown): string | undefined {
  if (values === null || typeof values !== 'object') return undefined;
  for (const name in values) {
    const value = (values as Record<string, unknown>)[name];
    if (Array.isArray(value) ? value.some(hasNul) : hasNul(value)) return name;
  }
  return undefined;
}

/** The first string in a parsed body that holds a NUL character, as a dotted path ('' for the body itself). */
function nulPath(value: unknown, path: string, depth = 0): string | undefined {
  if (typeof value === 'string') return value.includes('\u0000') ? path : undefined;
  if (value === null || typeof value !== 'object' || depth > 32) return undefined;
  for (const [key, inner] of Object.entries(value)) {
    const found = nulPath(inner, path ? `${path}.${key}` : key, depth + 1);
    if (found !== undefined) return found;
  }
  return undefined;
}

/**
 * Checks that schemas cannot express, before the schema sees the input:
 * - Ajv's coercion reads `limit=1e2` as 100 and `limit=0x10` as 16, and path ids beyond 2^53 as rounded
 *   numbers that PostgreSQL refuses; integer query and path parameters must be plain decimal digits of a
 *   safe integer.
 * - PostgreSQL cannot store a NUL character in text and fails the whole statement; a NUL in a path or query
 *   value or a body string is refused up front as bad input (SQLite would store it, but the API must not differ).
 */
export function addInputGuards(app: FastifyInstance): void {
  // Callback hooks, without copying the parameters: they run on every request.
  app.addHook('preValidation', (request, _reply, done) => {
    // Path segments too: `/deliveries/%00` decodes to a NUL that would reach a text column.
    const name = nulParameter(request.params) ?? nulParameter(request.query);
    if (name !== undefined) return done(invalidParameter(name, 'must not contain a NUL character'));
    const path = nulPath(request.body, '');
    if (path !== undefined) {
      const field = path || '(body)';
      return done(new AppError('invalid_body', `Field "${field}" must not contain a NUL character.`, { errors: [{ name: field, reason: 'must not contain a NUL character' }] }));
    }
    done();
  });

  app.addHook('onRoute', (route: RouteOptions) => {
    const schema = route.schema as FastifySchema | undefined;
    const checks = [...integerParams('query', schema?.querystring), ...integerParams('params', schema?.params)];
    if (checks.length === 0) return;
    const hook = (request: { query: unknown; params: unknown }, _reply: unknown, done: (err?: Error) => void) => {
      for (const c of checks) {
        const raw = (request[c.part] as Record<string, unknown> | undefined)?.[c.name];
        if (typeof raw === 'string' && !(INTEGER.test(raw) && Number.isSafeInteger(Number(raw)))) return done(invalidParameter(c.name, c.reason));
      }
      done();
    };
    const existing = route.preValidation;
    route.preValidation = existing === undefined ? [hook] : [hook, ...(Array.isArray(existing) ? existing : [existing])];
  });
}
