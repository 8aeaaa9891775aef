import { sql } from 'kysely';
import type { Store } from '../db/database.ts';
import { nowIso } from '../db/database.ts';
import { DEFAULT_WRITE_WAIT_MS, WriteQueue } from '../db/write-queue.ts';
import { AppError, notFound, type FieldError } from '../errors/app-error.ts';
import { recordEvents, type NewEvent, type WriteContext } from '../events/log.ts';
import { getOne } from '../listing/engine.ts';
import type { JsonSchema, ResourceDef, Row } from '../listing/resource.ts';

export type Input = Record<string, unknown>;
type TableName = 'products' | 'categories' | 'brands' | 'product_parameters' | 'product_filters' | 'orders';

export interface Reference {
  field: string;
  table: 'products' | 'categories' | 'brands' | 'parameters' | 'filters' | 'filter_values';
  label: string;
}

export interface Dependent {
  table: 'products' | 'categories' | 'product_parameters' | 'product_filters';
  column: string;
  label: string;
}

/** How one resource is written. The generic create/update/delete below does the rest, events included. */
export interface WritableResource {
  def: ResourceDef;
  table: TableName;
  createSchema: JsonSchema;
  patchSchema: JsonSchema;
  references: Reference[];
  /** Unique columns, checked before writing so that a clash is a 409 naming the field. */
  uniques: Array<{ field: string; column: string }>;
  /** Rows elsewhere that block a delete. */
  dependents?: Dependent[];
  /** The product a row belongs to (parameter and filter values): a change locks it first, see lockItem. */
  owner?: { table: 'products'; column: 'product_id' };
  /** Resolves derived inputs (parameterName → parameterId) before references are checked. */
  prepare?(w: WriteContext, input: Input, existing: Row | undefined): Promise<Input>;
  /** Columns to store for the given input (all of them on create, the changed ones on update). */
  toRow(input: Input, existing: Row | undefined): Record<string, unknown>;
  /** Writes that belong to the same change (order items), after the row itself. */
  afterWrite?(w: WriteContext, id: number, input: Input, existing: Row | undefined): Promise<void>;
  /** Extra events of a change (product.updated for a parameter value, order.status_changed). */
  sideEvents?(w: WriteContext, item: Row, existing: Row | undefined, deleted: boolean): Promise<NewEvent[]>;
  /** Rows removed along with this one (cascades), so that their deletions are recorded too. */
  cascades?(w: WriteContext, id: number): Promise<NewEvent[]>;
}

const queues = new WeakMap<Store, WriteQueue>();

/**
 * PostgreSQL: the line this store's writers queue in (see WriteQueue), with half the pool's connections as
 * slots. SQLite needs none: its one connection is the line (see WaitingSqliteDriver).
 */
export function writeQueueOf(store: Store): WriteQueue | undefined {
  if (!store.pgPool) return undefined;
  let queue = queues.get(store);
  if (!queue) queues.set(store, (queue = new WriteQueue(Math.floor((store.pgPool.options.max ?? 10) / 2), store.writeWaitMs ?? DEFAULT_WRITE_WAIT_MS)));
  return queue;
}

/**
 * Runs a write (a change through the admin API, an import) in a transaction of its own. On PostgreSQL it
 * waits its turn in the store's write queue first, and waits for row locks no longer than the queue would
 * (lock_timeout: a row that an import holds until its commit), failing then as busy (503, Retry-After).
 */
export async function inTransaction<T>(store: Store, work: (w: WriteContext) => Promise<T>, after?: () => void): Promise<T> {
  const write = () => store.db.transaction().execute(async (trx) => {
    if (store.dialect === 'postgres') await sql`select set_config('lock_timeout', ${`${store.writeWaitMs ?? DEFAULT_WRITE_WAIT_MS}ms`}, true)`.execute(trx);
    return work({ trx, dialect: store.dialect, now: nowIso() });
  });
  const queue = writeQueueOf(store);
  const result = await (queue ? queue.run(write) : write()).catch((error: unknown) => {
    throw LOCK_WAIT_ENDED.has(String((error as { code?: unknown }).code)) ? busy() : error;
  });
  after?.();
  return result;
}

// lock_not_available (lock_timeout passed), deadlock_detected: passing conditions; the write can be retried.
const LOCK_WAIT_ENDED = new Set(['55P03', '40P01']);
const busy = () => new AppError('service_unavailable', 'Another change of the same data (an import) is in progress; retry shortly.', { headers: { 'retry-after': '1' } });

async function checkReferences(w: WriteContext, r: WritableResource, input: Input): Promise<void> {
  const errors: FieldError[] = [];
  for (const ref of r.references) {
    const value = input[ref.field];
    if (value === undefined || value === null) continue;
    const found = await w.trx.selectFrom(ref.table).select('id').where('id', '=', Number(value)).executeTakeFirst();
    if (!found) errors.push({ name: ref.field, reason: `${ref.label} ${String(value)} does not exist` });
  }
  if (errors.length) throw new AppError('conflict', `${errors[0].name}: ${errors[0].reason}.`, { errors });
}

async function checkUniques(w: WriteContext, r: WritableResource, row: Record<string, unknown>, id: number | undefined): Promise<void> {
  for (const u of r.uniques) {
    if (row[u.column] === undefined) continue;
    let q = w.trx.selectFrom(r.table).select('id').where(u.column as 'id', '=', row[u.column] as number);
    if (id !== undefined) q = q.where('id', '!=', id);
    if (await q.executeTakeFirst()) {
      throw new AppError('conflict', `${u.field} "${String(row[u.column])}" is already used.`, { errors: [{ name: u.field, reason: 'is already used by another item' }] });
    }
  }
}

/**
 * Locks an item's row to the end of the transaction (PostgreSQL; on SQLite a write transaction has the
 * database to itself), so that an update and a delete of the same item run one after the other: the second
 * finds what the first left, and an item that vanished meanwhile is a 404, never an update of nothing with an
 * event of nothing. A value that belongs to a product locks the product first, in the order a deletion of the
 * product takes them (product, then its values by cascade), so the two cannot deadlock. An update takes the
 * weaker row lock an UPDATE takes anyway, which lets rows that merely refer to the item be written meanwhile.
 * False when the item (or its product) does not exist.
 */
async function lockItem(w: WriteContext, r: WritableResource, id: number, purpose: 'update' | 'delete'): Promise<boolean> {
  if (w.dialect !== 'postgres') return true;
  if (r.owner) {
    const row: Record<string, unknown> | undefined = await w.trx.selectFrom(r.table).select(r.owner.column as 'id').where('id', '=', id).executeTakeFirst();
    if (!row) return false;
    const owner = await w.trx.selectFrom(r.owner.table).select('id').where('id', '=', Number(row[r.owner.column])).forNoKeyUpdate().executeTakeFirst();
    if (!owner) return false;
  }
  const own = w.trx.selectFrom(r.table).select('id').where('id', '=', id);
  return (await (purpose === 'delete' ? own.forUpdate() : own.forNoKeyUpdate()).executeTakeFirst()) !== undefined;
}

const eventOf = (r: WritableResource, action: string, id: number, data: unknown): NewEvent => ({ type: `${r.def.event}.${action}`, resource: r.def.event, resourceId: id, data });

export async function createItem(w: WriteContext, r: WritableResource, raw: Input, explicitId?: number): Promise<Row> {
  const input = r.prepare ? await r.prepare(w, raw, undefined) : raw;
  await checkReferences(w, r, input);
  const row = { ...r.toRow(input, undefined), created_at: w.now, updated_at: w.now, ...(explicitId ? { id: explicitId } : {}) };
  await checkUniques(w, r, row, undefined);
  const inserted = await w.trx.insertInto(r.table).values(row as never).returning('id').executeTakeFirstOrThrow();
  const id = Number(inserted.id);
  await r.afterWrite?.(w, id, input, undefined);
  const item = (await getOne(w.trx, r.def, id))!;
  await recordEvents(w, [eventOf(r, 'created', id, item), ...((await r.sideEvents?.(w, item, undefined, false)) ?? [])]);
  return item;
}

export async function updateItem(w: WriteContext, r: WritableResource, id: number, raw: Input): Promise<Row> {
  const missing = () => notFound(`${r.def.title} ${id}`);
  if (!(await lockItem(w, r, id, 'update'))) throw missing();
  const existing = await getOne(w.trx, r.def, id);
  if (!existing) throw missing();
  const input = r.prepare ? await r.prepare(w, raw, existing) : raw;
  await checkReferences(w, r, input);
  const row = { ...r.toRow(input, existing), updated_at: w.now };
  await checkUniques(w, r, row, id);
  await w.trx.updateTable(r.table).set(row as never).where('id', '=', id).execute();
  await r.afterWrite?.(w, id, input, existing);
  const item = await getOne(w.trx, r.def, id);
  if (!item) throw missing();
  await recordEvents(w, [eventOf(r, 'updated', id, item), ...((await r.sideEvents?.(w, item, existing, false)) ?? [])]);
  return item;
}

export async function deleteItem(w: WriteContext, r: WritableResource, id: number): Promise<void> {
  const missing = () => notFound(`${r.def.title} ${id}`);
  if (!(await lockItem(w, r, id, 'delete'))) throw missing();
  const existing = await getOne(w.trx, r.def, id);
  if (!existing) throw missing();
  for (const d of r.dependents ?? []) {
    const found = await w.trx.selectFrom(d.table).select('id').where(d.column as 'id', '=', id).limit(1).executeTakeFirst();
    if (found) throw new AppError('conflict', `${r.def.title} ${id} is still used by ${d.label}; change or delete them first.`, { errors: [{ name: 'id', reason: `referenced by ${d.label}` }] });
  }
  const cascaded = (await r.cascades?.(w, id)) ?? [];
  const deleted = await w.trx.deleteFrom(r.table).where('id', '=', id).executeTakeFirst();
  if (Number(deleted.numDeletedRows) === 0) throw missing();
  await recordEvents(w, [...cascaded, eventOf(r, 'deleted', id, { id }), ...((await r.sideEvents?.(w, existing, existing, true)) ?? [])]);
}

/** Fields of `input` that are present, mapped to columns through `map`. */
export function pick(input: Input, map: Record<string, string>, transform: Record<string, (v: unknown) => unknown> = {}): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [field, column] of Object.entries(map)) {
    if (input[field] === undefined) continue;
    const t = transform[field] as ((v: unknown) => unknown) | undefined;
    out[column] = t && input[field] !== null ? t(input[field]) : input[field];
  }
  return out;
}

export function slugify(text: string): string {
  return text.normalize('NFKD').replace(/[\u0300-\u036f]/g, '').toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 80) || 'item';
}
