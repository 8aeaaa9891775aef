import { AppError, notFound, type FieldError } from '../errors/app-error.ts';
import { recordEvents, type NewEvent, type WriteContext } from '../events/log.ts';
import { getOne } from '../listing/engine.ts';
import { eventFor } from './events.ts';
import { loose } from './loose.ts';
import type { Registry } from './registry.ts';
import type { Input, Resource, Row, Unique } from './types.ts';

/*
 * The generic create, update and delete of every resource, from its declaration and the registry's view of the
 * relations: reference checks, unique checks, delete rules, cascades, row locks and events. Resource-specific
 * steps are the declaration's hooks (prepare, afterWrite, extraEvents). Run them inside `inTransaction`
 * (events/transaction.ts), which commits the write with its events and then wakes the event bus.
 */

async function checkReferences(w: WriteContext, r: Resource, input: Input): Promise<void> {
  const errors: FieldError[] = [];
  for (const rel of r.relations) {
    const value = input[rel.field];
    if (value === undefined || value === null) continue;
    const found = await loose(w.trx).selectFrom(rel.table).select('id').where('id', '=', Number(value)).executeTakeFirst();
    if (!found) errors.push({ name: rel.field, reason: `${rel.label} ${String(value)} does not exist` });
  }
  if (errors.length) throw new AppError('conflict', `${errors[0].name}: ${errors[0].reason}.`, { errors });
}

function clashOf(u: Unique, values: Record<string, unknown>, clashingId: number): AppError {
  if (u.clash) {
    const { message, name, reason } = u.clash(values, clashingId);
    return new AppError('conflict', message, { errors: [{ name, reason }] });
  }
  const field = u.fields[0];
  return new AppError('conflict', `${field} "${String(values[field])}" is already used.`, { errors: [{ name: field, reason: 'is already used by another item' }] });
}

/** Unique fields the row sets, checked before writing so that a clash is a 409 naming the field (a pair takes the unchanged half from `existing`). */
async function checkUniques(w: WriteContext, r: Resource, row: Row, existing: Row | undefined, id: number | undefined): Promise<void> {
  for (const u of r.uniques) {
    if (u.columns.every((c) => row[c] === undefined)) continue;
    const values = Object.fromEntries(u.fields.map((field, i) => [field, row[u.columns[i]] !== undefined ? row[u.columns[i]] : existing?.[field]]));
    if (Object.values(values).some((v) => v === undefined || v === null)) continue;
    let q = loose(w.trx).selectFrom(r.table).select('id');
    u.columns.forEach((c, i) => (q = q.where(c, '=', values[u.fields[i]])));
    if (id !== undefined) q = q.where('id', '!=', id);
    const found = await q.executeTakeFirst();
    if (found) throw clashOf(u, values, Number(found.id));
  }
}

/**
 * Locks an item's row to the end of the transaction (PostgreSQL; on SQLite a write transaction has the
 * database to itself), so that an update and a delete of the same item run one after the other: the second
 * finds what the first left, and an item that vanished meanwhile is a 404, never an update of nothing with an
 * event of nothing. A row that belongs to another (a product's parameter value) locks its owner first, in the
 * order a deletion of the owner takes them (owner, then its rows by cascade), so the two cannot deadlock. An
 * update takes the weaker row lock an UPDATE takes anyway, which lets rows that merely refer to the item be
 * written meanwhile. False when the item (or its owner) does not exist.
 */
async function lockItem(w: WriteContext, registry: Registry, r: Resource, id: number, purpose: 'update' | 'delete'): Promise<boolean> {
  if (w.dialect !== 'postgres') return true;
  const db = loose(w.trx);
  const owner = registry.owner(r);
  if (owner) {
    const row = await db.selectFrom(r.table).select(owner.column).where('id', '=', id).executeTakeFirst();
    if (!row) return false;
    const found = await db.selectFrom(owner.relation.table).select('id').where('id', '=', Number(row[owner.column])).forNoKeyUpdate().executeTakeFirst();
    if (!found) return false;
  }
  const own = db.selectFrom(r.table).select('id').where('id', '=', id);
  return (await (purpose === 'delete' ? own.forUpdate() : own.forNoKeyUpdate()).executeTakeFirst()) !== undefined;
}

/** A change of a row that belongs to another is a change of the owner too: its updatedAt moves and it gets an `.updated` event. */
async function touchOwner(w: WriteContext, registry: Registry, r: Resource, item: Row): Promise<NewEvent[]> {
  const owner = registry.owner(r);
  if (!owner?.resource) return [];
  const ownerId = Number(item[owner.relation.field]);
  const updated = await loose(w.trx).updateTable(owner.resource.table).set({ updated_at: w.now }).where('id', '=', ownerId).executeTakeFirst();
  if (Number(updated.numUpdatedRows) === 0) return [];
  const current = await getOne(w.trx, owner.resource, ownerId);
  return current ? [eventFor(owner.resource, 'updated', ownerId, current)] : [];
}

async function sideEvents(w: WriteContext, registry: Registry, r: Resource, item: Row, existing: Row | undefined, deleted: boolean): Promise<NewEvent[]> {
  return [...(await touchOwner(w, registry, r, item)), ...((await r.extraEvents?.(w, item, existing, deleted)) ?? [])];
}

export async function createItem(w: WriteContext, registry: Registry, r: Resource, raw: Input, explicitId?: number): Promise<Row> {
  const input = r.prepare ? await r.prepare(w, raw, undefined) : raw;
  await checkReferences(w, r, input);
  const row = { ...r.toRow(input, undefined), created_at: w.now, updated_at: w.now, ...(explicitId ? { id: explicitId } : {}) };
  await checkUniques(w, r, row, undefined, undefined);
  const inserted = await loose(w.trx).insertInto(r.table).values(row).returning('id').executeTakeFirstOrThrow();
  const id = Number(inserted.id);
  await r.afterWrite?.(w, id, input, undefined);
  const item = (await getOne(w.trx, r, id))!;
  await recordEvents(w, [eventFor(r, 'created', id, item), ...(await sideEvents(w, registry, r, item, undefined, false))]);
  return item;
}

export async function updateItem(w: WriteContext, registry: Registry, r: Resource, id: number, raw: Input): Promise<Row> {
  const missing = () => notFound(`${r.title} ${id}`);
  if (!(await lockItem(w, registry, r, id, 'update'))) throw missing();
  const existing = await getOne(w.trx, r, id);
  if (!existing) throw missing();
  const input = r.prepare ? await r.prepare(w, raw, existing) : raw;
  await checkReferences(w, r, input);
  const row = { ...r.toRow(input, existing), updated_at: w.now };
  await checkUniques(w, r, row, existing, id);
  await loose(w.trx).updateTable(r.table).set(row).where('id', '=', id).execute();
  await r.afterWrite?.(w, id, input, existing);
  const item = await getOne(w.trx, r, id);
  if (!item) throw missing();
  await recordEvents(w, [eventFor(r, 'updated', id, item), ...(await sideEvents(w, registry, r, item, existing, false))]);
  return item;
}

/**
 * Deletes an item: refused (409) while rows of a `restrict` relation point to it; rows of a `cascade`
 * relation go with it (their foreign key says `on delete cascade`) and their deletions are recorded first.
 */
export async function deleteItem(w: WriteContext, registry: Registry, r: Resource, id: number): Promise<void> {
  const missing = () => notFound(`${r.title} ${id}`);
  if (!(await lockItem(w, registry, r, id, 'delete'))) throw missing();
  const existing = await getOne(w.trx, r, id);
  if (!existing) throw missing();
  const db = loose(w.trx);
  const links = registry.incoming(r);
  for (const link of links.filter((l) => l.relation.onDelete !== 'cascade')) {
    const found = await db.selectFrom(link.resource.table).select('id').where(link.column, '=', id).limit(1).executeTakeFirst();
    const label = link.relation.referencedAs ?? link.resource.collection;
    if (found) throw new AppError('conflict', `${r.title} ${id} is still used by ${label}; change or delete them first.`, { errors: [{ name: 'id', reason: `referenced by ${label}` }] });
  }
  const cascaded: NewEvent[] = [];
  for (const link of links.filter((l) => l.relation.onDelete === 'cascade')) {
    const rows = await db.selectFrom(link.resource.table).select('id').where(link.column, '=', id).execute();
    cascaded.push(...rows.map((row) => eventFor(link.resource, 'deleted', Number(row.id), { id: Number(row.id) })));
  }
  const deleted = await db.deleteFrom(r.table).where('id', '=', id).executeTakeFirst();
  if (Number(deleted.numDeletedRows) === 0) throw missing();
  await recordEvents(w, [...cascaded, eventFor(r, 'deleted', id, { id }), ...(await sideEvents(w, registry, r, existing, existing, true))]);
}
