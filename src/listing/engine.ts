import { sql, type CompiledQuery } from 'kysely';
import { readDirect, type Executor } from '../db/database.ts';
import { nameStatement } from '../db/named-statements.ts';
import { invalidParameter } from '../errors/app-error.ts';
import { decodeCursor, encodeCursor, reconcile } from './cursor.ts';
import { decodeFields, loadIncludes, selectAs } from './include.ts';
import { parseIdList, parseInstant } from './parse.ts';
import { requireIncludeScopes, resolveShape, type ResolvedShape, type Shape } from './shape.ts';
import { SORT_COLUMNS, type Field, type LooseQuery, type Resource as ResourceDef, type Row, type SortKey } from '../resources/types.ts';

export type { Shape } from './shape.ts';

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 1000;

/** Parameters every collection understands besides its own filters. */
export const COMMON_FILTERS = ['updatedSince', 'ids'] as const;

export interface ListRequest {
  limit?: number;
  cursor?: string;
  sort?: string;
  includeTotal?: boolean;
  /** Every filter parameter given (the resource's own, plus updatedSince and ids), raw. */
  filters: Record<string, string>;
  /** `fields` and `include`; with a cursor and no shape, the cursor's. */
  shape?: Shape;
  /** The caller's scopes: when given, each include (also one a cursor carries) needs its target's read scope (`403`). */
  scopes?: ReadonlySet<string>;
}

export interface ListPlan {
  def: ResourceDef;
  sort: string;
  sortKey: SortKey;
  descending: boolean;
  filters: Record<string, string>;
  after: Array<string | number> | undefined;
  /** What is selected and shown (the sort key is always selected, hidden when not asked). */
  shape: ResolvedShape;
}

export interface Page {
  data: Row[];
  pagination: { limit: number; nextCursor: string | null; hasMore: boolean; total?: number };
}

export function sortsOf(def: ResourceDef): string[] {
  return def.sorts.flatMap((s) => [s, `-${s}`]);
}

/**
 * Validates sort, cursor and filter names; decides what the query will be. `hashKey` is the installation's
 * (`ctx.hashKey`): a cursor must carry its signature, so its keyset position, sort and filters are ours.
 */
export function plan(def: ResourceDef, request: ListRequest, hashKey: string): ListPlan {
  let sort = request.sort;
  let filters = request.filters;
  let shape = request.shape;
  let after: Array<string | number> | undefined;
  if (request.cursor !== undefined) {
    const cursor = decodeCursor(request.cursor, hashKey);
    ({ sort, filters } = reconcile(cursor, sort, filters));
    after = cursor.after;
    // The shape does not change which rows come next, so a request may change it; sent without one, it keeps the cursor's.
    shape ??= cursor.shape;
  }
  return planOf(def, sort, filters, after, shape);
}

function planOf(def: ResourceDef, sort: string | undefined, filters: Record<string, string>, after: Array<string | number> | undefined, shape?: Shape): ListPlan {
  sort ??= def.defaultSort;
  if (!sortsOf(def).includes(sort)) throw invalidParameter('sort', `must be one of ${sortsOf(def).join(', ')}`);
  const descending = sort.startsWith('-');
  const sortKey = (descending ? sort.slice(1) : sort) as SortKey;
  if (after && !(sortKey === 'id' ? after.length === 1 && typeof after[0] === 'number' : after.length === 2 && typeof after[0] === 'string' && typeof after[1] === 'number')) {
    throw invalidParameter('cursor', 'is not a cursor issued by this API');
  }
  return { def, sort, sortKey, descending, filters, after, shape: resolveShape(def, shape, [sortKey]) };
}

/** The same plan with another shape (the sort key stays selected). */
export function withShape(p: ListPlan, shape: Shape | undefined): ListPlan {
  return { ...p, shape: resolveShape(p.def, shape, [p.sortKey]) };
}

/** What a shape selects, in select order: the shown fields, then the hidden ones. */
export const selectedFields = (shape: ResolvedShape): Field[] => [...shape.shown, ...shape.hidden];

/** The filtered query (no keyset position, no order, no limit), selecting nothing yet. */
export async function filteredQuery(db: Executor, p: ListPlan): Promise<LooseQuery> {
  return (await buildFiltered(db, p)).query;
}

/** The filtered query, and whether it depends on the request alone (no filter consulted the database to build it). */
async function buildFiltered(db: Executor, p: ListPlan): Promise<{ query: LooseQuery; pure: boolean }> {
  let q = p.def.from(db);
  let pure = true;
  for (const [name, raw] of Object.entries(p.filters)) {
    if (name === 'updatedSince') q = q.where('t.updated_at', '>=', parseInstant(name, raw));
    else if (name === 'ids') q = q.where('t.id', 'in', parseIdList(name, raw));
    else {
      const filter = p.def.filters.find((f) => f.name === name);
      if (!filter) throw invalidParameter(name, 'is not a parameter of this collection');
      const applied = filter.apply(q, raw, { db, filters: p.filters });
      if (applied instanceof Promise) pure = false;
      q = await applied;
    }
  }
  return { query: q, pure };
}

/** Selects every field of the resource (or only `fields`), by API name. */
export function selectFields(q: LooseQuery, def: ResourceDef, fields: readonly Field[] = def.fields): LooseQuery {
  return selectAs(q, fields);
}

/**
 * The query of every matching row in sort order, starting after the plan's keyset position. It selects the
 * plan's fields, or what `select` adds (an export whose lines the database writes selects those).
 */
export async function orderedQuery(db: Executor, p: ListPlan, select?: (q: LooseQuery) => LooseQuery): Promise<LooseQuery> {
  return ordered((await buildFiltered(db, p)).query, p, select);
}

function ordered(filtered: LooseQuery, p: ListPlan, select?: (q: LooseQuery) => LooseQuery): LooseQuery {
  let q = select ? select(filtered) : selectFields(filtered, p.def, selectedFields(p.shape));
  const column = SORT_COLUMNS[p.sortKey];
  const op = p.descending ? '<' : '>';
  const direction = p.descending ? 'desc' : 'asc';
  if (p.after) {
    q = p.sortKey === 'id'
      ? q.where('t.id', op, p.after[0])
      // Row-value comparison lets both SQLite and PostgreSQL seek the (column, id) index directly.
      : q.where(sql<boolean>`(${sql.ref(column)}, ${sql.ref('t.id')}) ${sql.raw(op)} (${p.after[0]}, ${p.after[1]})`);
  }
  if (p.sortKey !== 'id') q = q.orderBy(column, direction);
  return q.orderBy('t.id', direction);
}

// Building and compiling a page's query costs a tenth of what SQLite takes to run it, and clients repeat the
// same filters page after page. A page's SQL depends only on the resource, sort, filters and whether there is a
// keyset position, so it is compiled once per such shape; the keyset values and the limit, always its last
// parameters, are put in per request. Filters that had to consult the database are never cached.
const MAX_PAGE_QUERIES = 500;
const pageQueries = new WeakMap<object, Map<string, CompiledQuery<Row>>>();

async function pageQuery(db: Executor, p: ListPlan, limit: number): Promise<CompiledQuery<Row>> {
  const tail = [...(p.after ?? []), limit + 1];
  const adapter = db.getExecutor().adapter;
  let cache = pageQueries.get(adapter);
  if (!cache) pageQueries.set(adapter, (cache = new Map()));
  const key = JSON.stringify([p.def.collection, p.sort, p.filters, p.after?.length ?? 0, p.shape.key]);
  const cached = cache.get(key);
  if (cached) return { ...cached, parameters: [...cached.parameters.slice(0, cached.parameters.length - tail.length), ...tail] };
  const { query, pure } = await buildFiltered(db, p);
  const compiled = ordered(query, p).limit(limit + 1).compile() as CompiledQuery<Row>;
  const ends = compiled.parameters.slice(compiled.parameters.length - tail.length);
  if (pure && ends.length === tail.length && ends.every((v, i) => v === tail[i])) {
    if (cache.size >= MAX_PAGE_QUERIES) cache.delete(cache.keys().next().value as string);
    cache.set(key, compiled);
    // Named (planned once) only without filters: a filtered page's best plan depends on the filter values
    // (status=active&brandId=3 reads the brand's index), and after five runs PostgreSQL would keep a generic
    // plan for them; measured, the filtered page's database CPU per answer tripled (394 -> 1239 µs) while the
    // unfiltered first and deep pages and single items gained 16-57 % (bench/results/core-2026-11-23-helperB.md).
    if (Object.keys(p.filters).length === 0) nameStatement(compiled.sql);
  }
  return compiled;
}

/** The rows of a page or item query: straight from SQLite or the PostgreSQL pool when it can (database.ts, readDirect), else through Kysely. */
async function rowsOf(db: Executor, query: CompiledQuery<Row>): Promise<Row[]> {
  const direct = readDirect(db, query) as Row[] | Promise<Row[]> | undefined;
  return direct ? await direct : (await db.executeQuery(query)).rows;
}

export function decodeRows(def: ResourceDef, rows: Row[]): void {
  decodeFields(def.fields, rows);
}

/**
 * Rows as the answer shows them: stored values decoded, the nested values asked attached, included relations
 * embedded (one query each for all the rows), the hidden fields gone.
 */
export async function completeRows(db: Executor, def: ResourceDef, shape: ResolvedShape, rows: Row[]): Promise<void> {
  if (rows.length === 0) return;
  decodeFields(selectedFields(shape), rows);
  if (def.attach && shape.nested.length) await def.attach(db, rows);
  await loadIncludes(db, shape.includes, rows);
  for (const f of shape.hidden) for (const row of rows) delete row[f.name];
}

/** The signed cursor of the position after `last`. */
export function cursorAfter(p: ListPlan, last: Row, hashKey: string): string {
  const sortField = p.sortKey === 'id' ? undefined : p.sortKey;
  const after = sortField ? [String(last[sortField]), Number(last.id)] : [Number(last.id)];
  return encodeCursor({ sort: p.sort, filters: p.filters, after, shape: p.shape.asked }, hashKey);
}

/** One page of a collection, with its pagination block; cursors in and out are signed with `hashKey`. */
export async function listPage(db: Executor, def: ResourceDef, request: ListRequest, hashKey: string): Promise<Page> {
  return pageOf(db, plan(def, request, hashKey), request, hashKey);
}

/** The page of a plan (`plan(def, request, hashKey)`), for callers that look at the plan first (its shape). */
export async function pageOf(db: Executor, p: ListPlan, request: Pick<ListRequest, 'limit' | 'includeTotal' | 'scopes'>, hashKey: string): Promise<Page> {
  const def = p.def;
  if (request.scopes) requireIncludeScopes(def, p.shape.asked, request.scopes);
  const limit = request.limit ?? DEFAULT_LIMIT;
  const query = await pageQuery(db, p, limit);
  const totalQuery = request.includeTotal
    ? (await filteredQuery(db, p)).select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow()
    : undefined;
  const [rows, total] = await Promise.all([rowsOf(db, query), totalQuery]);
  const hasMore = rows.length > limit;
  if (hasMore) rows.length = limit;
  // Before the rows are completed: the sort key may be a hidden field.
  const nextCursor = hasMore ? cursorAfter(p, rows[rows.length - 1], hashKey) : null;
  await completeRows(db, def, p.shape, rows);
  const pagination: Page['pagination'] = { limit, nextCursor, hasMore };
  if (total) pagination.total = Number((total as { total: number | string }).total);
  return { data: rows, pagination };
}

/** The first `limit` rows matching `filters` in the default order, for callers inside the service that read one bounded page (no cursor in or out). */
export async function firstRows(db: Executor, def: ResourceDef, filters: Record<string, string>, limit: number): Promise<Row[]> {
  const rows = await rowsOf(db, await pageQuery(db, planOf(def, undefined, filters, undefined), limit));
  if (rows.length > limit) rows.length = limit;
  decodeRows(def, rows);
  if (def.attach && rows.length) await def.attach(db, rows);
  return rows;
}

// The single-item query of a shape is built and compiled once per resource and database (building and
// compiling a Kysely query costs more than SQLite takes to answer it); only the id varies. Shapes come from
// clients, so the shapes kept per resource are bounded.
const MAX_ITEM_SHAPES = 200;
const itemQueries = new WeakMap<object, Map<ResourceDef, Map<string, CompiledQuery<Row>>>>();

function itemQuery(db: Executor, def: ResourceDef, shape: ResolvedShape, id: number): CompiledQuery<Row> {
  const adapter = db.getExecutor().adapter;
  let byDef = itemQueries.get(adapter);
  if (!byDef) itemQueries.set(adapter, (byDef = new Map()));
  let byShape = byDef.get(def);
  if (!byShape) byDef.set(def, (byShape = new Map()));
  let compiled = byShape.get(shape.key);
  if (!compiled) {
    compiled = selectFields(def.from(db), def, selectedFields(shape)).where('t.id', '=', id).compile() as CompiledQuery<Row>;
    if (compiled.parameters.length !== 1) throw new Error(`the ${def.collection} item query must have one parameter, the id`);
    if (byShape.size >= MAX_ITEM_SHAPES) byShape.delete(byShape.keys().next().value as string);
    byShape.set(shape.key, compiled);
    nameStatement(compiled.sql);
  }
  return { ...compiled, parameters: [id] };
}

/** What an item's query selects whatever the shape: `updatedAt`, for Last-Modified (when the resource has one). */
const itemNeeds = (def: ResourceDef): string[] => (def.fields.some((f) => f.name === 'updatedAt') ? ['updatedAt'] : []);

// The shape of an item asked without fields= or include= (nearly every request) is resolved once per resource:
// resolving it builds sets, lists and a key on every call, a few µs of a single item's ~50 µs of bare work.
const fullItemShapes = new WeakMap<ResourceDef, ResolvedShape>();

function fullItemShape(def: ResourceDef): ResolvedShape {
  let resolved = fullItemShapes.get(def);
  if (!resolved) fullItemShapes.set(def, (resolved = resolveShape(def, undefined, itemNeeds(def))));
  return resolved;
}

/**
 * One item in a shape, and when it last changed (`updatedAt`, selected even when `fields` leaves it out, for
 * the `Last-Modified` of the answer); undefined when there is no such item.
 */
export async function getItem(db: Executor, def: ResourceDef, id: number, shape?: Shape): Promise<{ item: Row; updatedAt: string | undefined } | undefined> {
  const resolved = shape === undefined ? fullItemShape(def) : resolveShape(def, shape, itemNeeds(def));
  const [row] = (await rowsOf(db, itemQuery(db, def, resolved, id))) as Array<Row | undefined>;
  if (!row) return undefined;
  const updatedAt = row.updatedAt === undefined || row.updatedAt === null ? undefined : String(row.updatedAt);
  await completeRows(db, def, resolved, [row]);
  return { item: row, updatedAt };
}

/** One item (every field, or those of `shape`, with its includes), as `GET /api/v2/{collection}/{id}` answers it. */
export async function getOne(db: Executor, def: ResourceDef, id: number, shape?: Shape): Promise<Row | undefined> {
  return (await getItem(db, def, id, shape))?.item;
}
