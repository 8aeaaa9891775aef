// The parts of the live OpenAPI document the fuzz suite reads: operations, their parameters, bodies and
// documented responses. Only what the generator and the oracle need is typed.

export interface JsonSchema {
  $ref?: string;
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  format?: string;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  uniqueItems?: boolean;
  minProperties?: number;
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  default?: unknown;
  examples?: unknown[];
}

export interface Parameter {
  name: string;
  in: 'query' | 'path' | 'header' | 'cookie';
  required?: boolean;
  schema: JsonSchema;
  example?: unknown;
  examples?: Record<string, { value: unknown }>;
}

export interface MediaType {
  schema?: JsonSchema;
}

export interface Operation {
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content: Record<string, MediaType> };
  responses: Record<string, { content?: Record<string, MediaType> }>;
  security?: Array<Record<string, string[]>>;
}

export interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, JsonSchema> };
}

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface OperationRef {
  method: Method;
  path: string;
  op: Operation;
  /** `admin` (admin token), `oauth2` with the scopes the operation needs, or `none` (public). */
  auth: { kind: 'admin' } | { kind: 'oauth2'; scopes: string[] } | { kind: 'none' };
}

const METHODS = new Set(['get', 'post', 'put', 'patch', 'delete']);

/**
 * Every operation of the document, in the order the suite runs them: reads and the public API first, then
 * admin reads, then admin writes, deletes last. Admin writes may change or delete the fixtures the readers
 * use (a credential, an item), so nothing that reads runs after them.
 */
export function operationsOf(doc: OpenApiDocument): OperationRef[] {
  const all: OperationRef[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (!METHODS.has(method)) continue;
      const security = op.security?.[0];
      const auth: OperationRef['auth'] = security?.adminToken ? { kind: 'admin' } : security?.oauth2 ? { kind: 'oauth2', scopes: security.oauth2 } : { kind: 'none' };
      all.push({ method: method.toUpperCase() as Method, path, op, auth });
    }
  }
  const rank = (o: OperationRef): number => {
    if (o.auth.kind !== 'admin') return 0;
    if (o.method === 'GET') return 1;
    if (o.method === 'POST') return 2;
    if (o.method === 'PATCH' || o.method === 'PUT') return 3;
    return 4;
  };
  return all.map((o, i) => ({ o, i })).sort((a, b) => rank(a.o) - rank(b.o) || a.i - b.i).map(({ o }) => o);
}

/** Follows a local `$ref` (`#/components/schemas/X`) to the schema it names. */
export function deref(doc: OpenApiDocument, schema: JsonSchema): JsonSchema {
  let s = schema;
  for (let hops = 0; s.$ref && hops < 10; hops++) {
    const name = /^#\/components\/schemas\/(.+)$/.exec(s.$ref)?.[1];
    if (!name || !doc.components.schemas[name]) throw new Error(`unresolvable $ref ${s.$ref}`);
    s = doc.components.schemas[name];
  }
  return s;
}

/** The schema's types as a list (`type: ["string", "null"]` and `type: "string"` alike). */
export const typesOf = (s: JsonSchema): string[] => (Array.isArray(s.type) ? s.type : s.type ? [s.type] : []);

/** A label for test names and failure messages. */
export const labelOf = (o: OperationRef): string => `${o.method} ${o.path}`;
