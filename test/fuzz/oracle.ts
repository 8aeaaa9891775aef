// What every answer must be, whatever was asked: never a 5xx; an error is an RFC 9457 problem (the token
// endpoint's an RFC 6749 error body); a 2xx is documented for the operation and its JSON body validates
// against the documented response schema.
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsPlugin from 'ajv-formats';
import type { JsonSchema, OpenApiDocument, OperationRef } from './document.ts';

// ajv-formats is CommonJS with a `default` beside module.exports; under NodeNext the callable is the default import.
const addFormats = addFormatsPlugin as unknown as typeof addFormatsPlugin.default;

const LEAK = /\n\s+at |\.ts:\d+|node_modules|select .* from|SQLITE_|syntax error|violates|duplicate key/i;

/** What the oracle reads of an answer (an `app.inject` response has these). */
export interface Answer {
  statusCode: number;
  headers: Record<string, unknown>;
  body: string;
}

const mediaType = (header: unknown): string => String(header ?? '').split(';')[0].trim().toLowerCase();

/**
 * The top-level properties an answer to `fields=` may hold (API.md: only those fields, `id` always; an included
 * relation's `brand.name` keeps `brand`, and `include=` adds its relations), or undefined when none was asked.
 */
function askedFields(url: string | undefined): Set<string> | undefined {
  if (url === undefined) return undefined;
  const query = new URL(url, 'http://fuzz.test').searchParams;
  const fields = query.getAll('fields').flatMap((f) => f.split(',')).filter((f) => f !== '');
  if (fields.length === 0) return undefined;
  const include = query.getAll('include').flatMap((i) => i.split(','));
  return new Set(['id', ...fields.map((f) => f.split('.')[0]), ...include]);
}

/**
 * The document's components with every item schema's properties optional but `id`: the schemas describe the
 * full item, and an answer to `fields=` holds only what was asked (docs/listing-and-formats.md, "OpenAPI").
 */
function trimmedComponents(components: OpenApiDocument['components']): OpenApiDocument['components'] {
  const copy = structuredClone(components);
  for (const schema of Object.values(copy?.schemas ?? {}) as JsonSchema[]) {
    const properties = schema.properties as Record<string, unknown> | undefined;
    if (properties?.id && Array.isArray(schema.required)) schema.required = (schema.required as string[]).filter((name) => name === 'id');
  }
  return copy;
}

export class Oracle {
  private readonly ajv: Ajv2020;
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly problem: ValidateFunction;
  private trimmed: OpenApiDocument['components'] | undefined;

  constructor(private readonly doc: OpenApiDocument) {
    // OpenAPI 3.1 schemas are JSON Schema 2020-12. Each response schema is compiled with the document's
    // components beside it, so that its `#/components/schemas/…` references resolve as they are.
    this.ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
    addFormats(this.ajv);
    this.ajv.addFormat('binary', true);
    this.problem = this.compile({ $ref: '#/components/schemas/Problem' });
  }

  private compile(schema: JsonSchema, trimmed = false): ValidateFunction {
    if (trimmed) this.trimmed ??= trimmedComponents(this.doc.components);
    return this.ajv.compile({ ...schema, components: trimmed ? this.trimmed : this.doc.components });
  }

  private validator(o: OperationRef, status: string, type: string, schema: JsonSchema, trimmed = false): ValidateFunction {
    const key = `${o.method} ${o.path} ${status} ${type}${trimmed ? ' fields' : ''}`;
    let v = this.validators.get(key);
    if (!v) this.validators.set(key, (v = this.compile(schema, trimmed)));
    return v;
  }

  /** What is wrong with this answer to a request for `url` (its query says whether `fields` trimmed it), or undefined when it keeps the contract. */
  check(o: OperationRef, res: Answer, url?: string): string | undefined {
    const status = res.statusCode;
    if (status >= 500) return `answered ${status}`;
    const type = mediaType(res.headers['content-type']);
    // Only where the operation takes `fields` (elsewhere it is an unknown parameter, which changes nothing).
    const shaped = (o.op.parameters ?? []).some((p) => p.in === 'query' && p.name === 'fields');
    if (status >= 200 && status < 300) return this.checkSuccess(o, res, type, shaped ? askedFields(url) : undefined);
    if (status === 304) return res.body === '' ? undefined : '304 with a body';
    if (o.path === '/oauth/token') return this.checkOAuthError(o, res, type);
    return this.checkProblem(res, type);
  }

  private checkSuccess(o: OperationRef, res: Answer, type: string, fields?: Set<string>): string | undefined {
    const documented = o.op.responses[String(res.statusCode)];
    if (!documented) return `answered ${res.statusCode}, which the document does not list for this operation`;
    if (!documented.content) return res.body === '' ? undefined : `answered ${res.statusCode} with a body the document does not describe`;
    const media = documented.content[type] ?? this.exportMedia(o, res.statusCode, type);
    if (!media) return `answered ${res.statusCode} as "${type}", not one of ${Object.keys(documented.content).join(', ')}`;
    if (type !== 'application/json' || !media.schema) return undefined; // CSV, XLSX, SSE: status and type only
    let body: unknown;
    try {
      body = JSON.parse(res.body);
    } catch {
      return `answered ${res.statusCode} with a body that is not JSON`;
    }
    const validate = this.validator(o, String(res.statusCode), type, media.schema, fields !== undefined);
    if (!validate(body)) return `a ${res.statusCode} body off its schema: ${this.ajv.errorsText(validate.errors, { separator: '; ' })}`;
    if (fields) {
      // A single item is the body; a listing's items are its `data`.
      const items = (Array.isArray((body as { data?: unknown }).data) ? (body as { data: unknown[] }).data : [body]) as Array<Record<string, unknown>>;
      for (const item of items) {
        const extra = Object.keys(item).find((name) => !fields.has(name));
        if (extra !== undefined) return `a ${res.statusCode} body with \`${extra}\`, which \`fields\` did not ask for`;
      }
    }
    return undefined;
  }

  /**
   * A listing (`GET /api/v2/{collection}`) documents its `200` as JSON only, for generated clients, but still
   * serves the files of its export operation by `format=`/`Accept` (API.md §3): those answers are documented
   * on `GET {path}/export`.
   */
  private exportMedia(o: OperationRef, status: number, type: string): { schema?: JsonSchema } | undefined {
    if (o.method !== 'GET') return undefined;
    return this.doc.paths[`${o.path}/export`]?.get?.responses[String(status)]?.content?.[type];
  }

  private checkProblem(res: Answer, type: string): string | undefined {
    if (type !== 'application/problem+json') return `an error answered as "${type}", not application/problem+json`;
    let body: { status?: unknown; requestId?: unknown };
    try {
      body = JSON.parse(res.body) as typeof body;
    } catch {
      return 'a problem that is not JSON';
    }
    if (!this.problem(body)) return `a problem off its schema: ${this.ajv.errorsText(this.problem.errors, { separator: '; ' })}`;
    if (body.status !== res.statusCode) return `a problem whose status ${String(body.status)} is not the answer's ${res.statusCode}`;
    if (body.requestId !== res.headers['x-request-id']) return 'a problem whose requestId is not the x-request-id header';
    if (LEAK.test(res.body)) return 'a problem that leaks internals (a stack, a file, SQL)';
    return undefined;
  }

  /** RFC 6749 §5.2: `{ error, error_description? }` as JSON, with the documented codes where documented. */
  private checkOAuthError(o: OperationRef, res: Answer, type: string): string | undefined {
    if (type !== 'application/json') return `a token error answered as "${type}", not application/json`;
    let body: { error?: unknown; error_description?: unknown };
    try {
      body = JSON.parse(res.body) as typeof body;
    } catch {
      return 'a token error that is not JSON';
    }
    if (typeof body !== 'object' || body === null || typeof body.error !== 'string') return 'a token error without an `error` code';
    if (body.error_description !== undefined && typeof body.error_description !== 'string') return 'a token error whose error_description is not a string';
    const schema = o.op.responses[String(res.statusCode)]?.content?.['application/json']?.schema;
    if (schema) {
      const validate = this.validator(o, String(res.statusCode), type, schema);
      if (!validate(body)) return `a token error off its schema: ${this.ajv.errorsText(validate.errors, { separator: '; ' })}`;
    }
    if (LEAK.test(res.body)) return 'a token error that leaks internals';
    return undefined;
  }
}
