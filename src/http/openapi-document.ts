// The last pass over the generated OpenAPI document (@fastify/swagger's `transformObject`): what no single
// route schema can say, derived over the whole document so that routes added later get it too.
import { deriveOperationId } from './openapi-operation-ids.ts';

type Json = Record<string, unknown>;
export interface Parameter extends Json {
  name: string;
  in: string;
  description?: string;
  schema?: Json;
}
export interface Operation extends Json {
  operationId?: string;
  summary?: string;
  description?: string;
  tags?: string[];
  parameters?: Parameter[];
  responses?: Record<string, Json & { description?: string; content?: Record<string, unknown>; headers?: Json }>;
  security?: Array<Record<string, string[]>>;
}
export interface Tag {
  name: string;
  description?: string;
}
export interface Document extends Json {
  paths?: Record<string, Record<string, Operation>>;
  tags?: Tag[];
}

/** What the pass needs of a declared collection (a resource of `ctx.resources` has these). */
export interface CollectionInfo {
  collection: string;
  description: string;
}

export interface PolishOptions {
  /** The declared collections, in the registry's order (the document's tag order follows it). */
  collections: readonly CollectionInfo[];
  /** Tags that are not a collection's, with what they hold: the public ones in their order, then `last` (admin, operations). */
  tags: { public: readonly Tag[]; last: readonly Tag[] };
  /** Operation ids named by hand, by `METHOD /path`, where the derived one would read badly (`POST /oauth/token`). */
  operationIds: Readonly<Record<string, string>>;
  /** The documented default of `limit`, by listing path. Documented only: the runtime schema has none, since without `limit` an export streams every row. */
  limitDefaults: Readonly<Record<string, number>>;
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
const JSON_TYPES = /^application\/(?:[\w.+-]+\+)?json$/;

const operationsOf = (doc: Document): Array<[string, string, Operation]> =>
  Object.entries(doc.paths ?? {}).flatMap(([path, item]) => METHODS.filter((m) => item[m]).map((m): [string, string, Operation] => [path, m, item[m]]));

/** A download of the public API: a GET whose `200` offers something other than JSON (an export's CSV, NDJSON or XLSX, a snapshot's file). */
const isDownload = (path: string, method: string, op: Operation): boolean =>
  path.startsWith('/api/v2/') && method === 'get' && Object.keys(op.responses?.['200']?.content ?? {}).some((type) => !JSON_TYPES.test(type));

/** Polishes `doc` in place and returns it. */
export function polishDocument(doc: Document, options: PolishOptions): Document {
  documentExportHeads(doc);
  nameOperations(doc, options);
  for (const [path, method, op] of operationsOf(doc)) {
    for (const p of op.parameters ?? []) if (p.in === 'query') moveExamplesToDescription(p);
    const limit = op.parameters?.find((p) => p.in === 'query' && p.name === 'limit');
    const limitDefault = options.limitDefaults[path];
    if (method === 'get' && limit?.schema && limitDefault !== undefined) limit.schema.default = limitDefault;
    op.description ||= describeAccess(op);
  }
  defineTags(doc, options);
  return doc;
}

/**
 * Fastify answers HEAD on every GET, and @fastify/swagger leaves those out. On a download (an export) the HEAD
 * is worth knowing: its headers (type, file name, `X-Total-Count`) and its parameters checked, without the body.
 */
function documentExportHeads(doc: Document): void {
  for (const [path, method, get] of operationsOf(doc)) {
    const item = doc.paths![path];
    if (!isDownload(path, method, get) || item.head) continue;
    const responses = Object.fromEntries(
      Object.entries(get.responses ?? {}).map(([status, r]) => {
        const { content: _body, ...rest } = r;
        return [status, status === '200' ? { ...rest, description: 'The headers the GET would send (`Content-Type`, `Content-Disposition`, and for an export `X-Total-Count` with `includeTotal=true`), no body.' } : rest];
      }),
    );
    // A copy: the two operations must not share parameter objects (the GET's alone gets a documented default).
    const { operationId: _named, ...rest } = structuredClone(get);
    // Its operationId follows the GET's (nameOperations).
    item.head = {
      ...rest,
      summary: `${get.summary ?? path}: headers only`,
      description: 'The same request as the GET, its parameters checked and its headers sent, without the body: a cheap check before a long download.',
      responses,
    };
  }
}

/** An `operationId` on every operation: kept when the route names one, else by hand, else derived; unique or an error. */
function nameOperations(doc: Document, options: PolishOptions): void {
  const paths = Object.keys(doc.paths ?? {});
  const declared = new Set(options.collections.flatMap((c) => [`/api/v2/${c.collection}`, `/admin/api/${c.collection}`]));
  // A collection: a declared resource's path, or one with items below it (`/admin/api/credentials/{id}`).
  const isCollection = (path: string) => declared.has(path) || paths.some((p) => p.startsWith(`${path}/{`) && !p.slice(path.length + 2).includes('/'));
  const seen = new Map<string, string>();
  // HEADs last: theirs follow their GET's name.
  const ops = operationsOf(doc).sort(([, a], [, b]) => Number(a === 'head') - Number(b === 'head'));
  for (const [path, method, op] of ops) {
    const key = `${method.toUpperCase()} ${path}`;
    if (method === 'head' && !op.operationId) {
      const get = doc.paths![path].get?.operationId;
      if (get) op.operationId = `${get}Head`;
    }
    op.operationId ||= options.operationIds[key] ?? deriveOperationId(method, path, isCollection);
    const clash = seen.get(op.operationId);
    if (clash) throw new Error(`OpenAPI: operationId ${op.operationId} of ${key} is also that of ${clash}; name one in src/http/openapi.ts (OPERATION_IDS)`);
    seen.set(op.operationId, key);
  }
}

/**
 * Swagger UI fills "Try it out" with a query parameter's example, so a filter's example (`status=active,draft`,
 * `brandId=1,2,3`) would turn the first Execute into an empty page. The example stays readable in the description.
 */
function moveExamplesToDescription(p: Parameter): void {
  const values: unknown[] = [];
  const take = (holder: Json) => {
    if ('example' in holder) values.push(holder.example);
    if (Array.isArray(holder.examples)) values.push(...(holder.examples as unknown[]));
    else if (holder.examples && typeof holder.examples === 'object') {
      values.push(...Object.values(holder.examples as Record<string, { value?: unknown }>).map((e) => e.value));
    }
    delete holder.example;
    delete holder.examples;
  };
  take(p);
  if (p.schema) take(p.schema);
  const shown = values.filter((v) => v !== undefined).map((v) => `\`${typeof v === 'string' ? v : JSON.stringify(v)}\``);
  if (shown.length) p.description = `${p.description ? `${p.description.replace(/\s+$/, '')} ` : ''}Example${shown.length > 1 ? 's' : ''}: ${[...new Set(shown)].join(', ')}.`;
}

/** A description for an operation that has none: how it is authenticated (what a reader looks for first). */
function describeAccess(op: Operation): string {
  const schemes = (op.security ?? []).flatMap((s) => Object.entries(s));
  const summary = op.summary ? `${op.summary.replace(/\.$/, '')}. ` : '';
  if (schemes.length === 0) return `${summary}No authentication.`;
  return summary + schemes.map(([name, scopes]) => (name === 'adminToken' ? 'Needs the admin token (`Authorization: Bearer <ADMIN_TOKEN>`).' : scopes.length ? `Needs scope ${scopes.map((s) => `\`${s}\``).join(', ')}.` : `Needs ${name}.`)).join(' ');
}

/**
 * Every tag used is defined, in reading order: the token endpoint, each collection (described by its
 * declaration), the other public tags, then the admin API and operations. Paths follow the same order, so a
 * generator or a reader of the raw document meets the public API first.
 */
function defineTags(doc: Document, options: PolishOptions): void {
  const byName = new Map<string, Tag>();
  const rank = new Map<string, number>();
  const add = (tag: Tag, r: number) => {
    if (!byName.has(tag.name)) byName.set(tag.name, tag);
    if (!rank.has(tag.name)) rank.set(tag.name, r);
  };
  const [first, ...otherPublic] = options.tags.public;
  if (first) add(first, 0);
  for (const c of options.collections) {
    const listing = doc.paths?.[`/api/v2/${c.collection}`]?.get;
    for (const name of listing?.tags ?? []) add({ name, description: c.description }, 1);
  }
  otherPublic.forEach((t) => add(t, 2));
  options.tags.last.forEach((t) => add(t, 4));
  for (const [, , op] of operationsOf(doc)) for (const name of op.tags ?? []) add({ name }, 3);
  const order = (name: string) => rank.get(name) ?? 3;
  const used = new Set(operationsOf(doc).flatMap(([, , op]) => op.tags ?? []));
  doc.tags = [...byName.values()].filter((t) => used.has(t.name)).map((t, i) => ({ t, i })).sort((a, b) => order(a.t.name) - order(b.t.name) || a.i - b.i).map(({ t }) => t);

  const tagIndex = new Map(doc.tags.map((t, i) => [t.name, i]));
  const pathRank = (item: Record<string, Operation>) => Math.min(...METHODS.flatMap((m) => item[m]?.tags ?? []).map((n) => tagIndex.get(n) ?? Infinity));
  if (doc.paths) {
    const entries = Object.entries(doc.paths).map((e, i) => ({ e, i }));
    entries.sort((a, b) => pathRank(a.e[1]) - pathRank(b.e[1]) || a.i - b.i);
    doc.paths = Object.fromEntries(entries.map(({ e }) => e));
  }
}
