import type { Dialect, Trx } from '../db/database.ts';
import { recordEvents, type NewEvent, type WriteContext } from '../events/log.ts';
import { decodeRows, selectFields } from '../listing/engine.ts';
import { appRegistry } from '../modules/registry.ts';
import { normalizeMoney } from '../money.ts';
import { eventFor } from '../resources/events.ts';
import type { Resource as ResourceDef, Row } from '../resources/types.ts';
import type { ChangeEvent } from './client.ts';
import { upsertDefinitions } from './definitions.ts';
import { mirrorsOf, type Mirror, type Mirrors } from './mirrors.ts';
import { bumpSequences, chunks, clearColumn, deleteIds, existingIds, moveAside, rowsWhereIn, upsertById } from './rows.ts';

/**
 * What is to be applied in one local transaction: the latest state of each item by collection, and the ids
 * to delete. Several events of one item collapse into its last, so a batch writes each row once.
 */
export interface ChangeSet {
  upserts: Map<string, Map<number, Row>>;
  deletes: Map<string, Set<number>>;
}

export interface ApplyResult {
  /** Rows written or deleted here (rows already equal to the main store's are not written again). */
  changed: number;
  /** Items left for a later change of the feed: they referred to rows that do not exist (yet or any more). */
  deferred: number;
}

export const emptyChangeSet = (): ChangeSet => ({ upserts: new Map(), deletes: new Map() });

function entry<K, V>(map: Map<K, V>, key: K, make: () => V): V {
  let v = map.get(key);
  if (v === undefined) map.set(key, (v = make()));
  return v;
}

export function positiveId(value: unknown, what: string): number {
  const id = Number(value);
  if (!Number.isSafeInteger(id) || id < 1) throw new Error(`the main store sent ${what} without a valid id (${JSON.stringify(value)})`);
  return id;
}

export function addUpsert(set: ChangeSet, collection: string, item: Row): void {
  const id = positiveId(item.id, `a ${collection} item`);
  set.deletes.get(collection)?.delete(id);
  entry(set.upserts, collection, () => new Map()).set(id, item);
}

export function addDelete(set: ChangeSet, collection: string, id: number): void {
  set.upserts.get(collection)?.delete(id);
  entry(set.deletes, collection, () => new Set()).add(id);
}

/** The followed collections of the store's own resources: what a follower copies unless told of others. */
export const ownMirrors = (): Mirrors => mirrorsOf(appRegistry());

/** Events of the main store's feed as a change set; events of collections not followed (orders) are left out. */
export function changeSetOfEvents(events: ChangeEvent[], mirrors: Mirrors = ownMirrors()): { set: ChangeSet; ignored: number } {
  const set = emptyChangeSet();
  let ignored = 0;
  for (const e of events) {
    const mirror = mirrors.byEvent.get(e.resource);
    const action = e.type.startsWith(`${e.resource}.`) ? e.type.slice(e.resource.length + 1) : '';
    if (!mirror || !['created', 'updated', 'deleted'].includes(action)) {
      ignored++;
      continue;
    }
    const collection = mirror.def.collection;
    const id = positiveId(e.resourceId, `event ${e.seq}`);
    if (action === 'deleted') addDelete(set, collection, id);
    else addUpsert(set, collection, { ...e.data, id });
  }
  return { set, ignored };
}

/** Rows this transaction changed, with whether each existed before it: what the follower's own events tell. */
class Touched {
  readonly byCollection = new Map<string, Map<number, boolean>>();
  /** Items written as the main store sent them and not touched otherwise: their event needs no read-back. */
  readonly written = new Map<string, Map<number, Row>>();
  private readonly sideEffects = new Map<string, Set<number>>();
  add(collection: string, id: number, existed: boolean): void {
    const m = entry(this.byCollection, collection, () => new Map<number, boolean>());
    if (!m.has(id)) m.set(id, existed);
  }
  /** A row changed other than by writing the main store's state of it (moved aside, cleared, deleted). */
  side(collection: string, id: number): void {
    this.add(collection, id, true);
    entry(this.sideEffects, collection, () => new Set<number>()).add(id);
  }
  write(collection: string, id: number, existed: boolean, item: Row): void {
    this.add(collection, id, existed);
    entry(this.written, collection, () => new Map<number, Row>()).set(id, item);
  }
  /** The item as this store's API shows it, if it is certainly the one written. */
  asWritten(collection: string, id: number): Row | undefined {
    return this.sideEffects.get(collection)?.has(id) ? undefined : this.written.get(collection)?.get(id);
  }
  get size(): number {
    let n = 0;
    for (const m of this.byCollection.values()) n += m.size;
    return n;
  }
}

/** Items as this store's own API shows them. */
async function currentItems(trx: Trx, def: ResourceDef, ids: number[]): Promise<Map<number, Row>> {
  const out = new Map<number, Row>();
  for (const part of chunks(ids, 1000)) {
    const rows = (await selectFields(def.from(trx), def).where('t.id', 'in', part).execute()) as Row[];
    decodeRows(def, rows);
    for (const r of rows) out.set(Number(r.id), r);
  }
  return out;
}

function comparable(def: ResourceDef, item: Row, field: string): string {
  const type = def.fields.find((f) => f.name === field)?.type;
  const v = item[field] ?? null;
  if (v === null) return 'null';
  if (type === 'money') return normalizeMoney(String(v));
  if (type === 'id' || type === 'integer' || type === 'number') return String(Number(v));
  return JSON.stringify(v);
}

/** The main store's item with exactly the fields of this store's API, in its order: what the follower's API shows once it is written. */
function shown(def: ResourceDef, item: Row): Row {
  const out: Row = {};
  for (const f of def.fields) {
    const v = item[f.name] ?? null;
    out[f.name] = v !== null && f.type === 'money' ? normalizeMoney(String(v)) : v;
  }
  return out;
}

function sameItem(def: ResourceDef, stored: Row | undefined, incoming: Row): boolean {
  return stored !== undefined && def.fields.every((f) => comparable(def, stored, f.name) === comparable(def, incoming, f.name));
}

/** Rows whose references exist, in an order in which each can be written (parents before children). */
export async function writable(trx: Trx, dialect: Dialect, m: Mirror, rows: Array<Record<string, unknown> & { id: number }>): Promise<Array<Record<string, unknown> & { id: number }>> {
  let ready = rows;
  for (const req of m.requires.filter((r) => r.table !== m.table)) {
    const present = await existingIds(trx, dialect, req.table, ready.map((r) => r[req.column]));
    ready = ready.filter((r) => r[req.column] === null || present.has(Number(r[req.column])));
  }
  const self = m.requires.find((r) => r.table === m.table);
  if (!self) return ready;
  const available = await existingIds(trx, dialect, m.table, ready.map((r) => r[self.column]));
  const ordered: typeof rows = [];
  let pending = ready;
  for (;;) {
    const next = pending.filter((r) => r[self.column] === null || available.has(Number(r[self.column])));
    if (next.length === 0) break;
    for (const r of next) available.add(r.id);
    ordered.push(...next);
    const taken = new Set(next);
    pending = pending.filter((r) => !taken.has(r));
  }
  return ordered;
}

async function upsertMirror(w: WriteContext, m: Mirror, items: Row[], touched: Touched, written: Set<string>): Promise<number> {
  const collection = m.def.collection;
  const current = await currentItems(w.trx, m.def, items.map((i) => Number(i.id)));
  const changed = items.filter((i) => !sameItem(m.def, current.get(Number(i.id)), i));
  if (changed.length === 0) return 0;
  const lookups = m.def.lookups ?? [];
  await upsertDefinitions(w.trx, w.dialect, lookups, changed, w.now);
  for (const lookup of lookups) written.add(lookup.table);
  const rows = await writable(w.trx, w.dialect, m, changed.map((i) => ({ id: Number(i.id), ...m.toRow(i) })));
  const deferred = changed.length - rows.length;
  if (rows.length === 0) return deferred;

  for (const column of m.uniqueText) {
    const owner = new Map(rows.map((r) => [String(r[column]), r.id]));
    const holders = await rowsWhereIn(w.trx, w.dialect, m.table, column, [...owner.keys()], ['id', column]);
    const clashing = holders.filter((h) => owner.get(String(h[column])) !== Number(h.id)).map((h) => Number(h.id));
    if (clashing.length === 0) continue;
    await moveAside(w.trx, m.table, column, clashing);
    for (const id of clashing) touched.side(collection, id);
  }
  for (const [a, b] of m.uniquePairs) {
    const key = (r: Record<string, unknown>) => `${String(r[a])}:${String(r[b])}`;
    const owner = new Map(rows.map((r) => [key(r), r.id]));
    const holders = await rowsWhereIn(w.trx, w.dialect, m.table, a, rows.map((r) => r[a]), ['id', a, b]);
    const clashing = holders.filter((h) => owner.has(key(h)) && owner.get(key(h)) !== Number(h.id)).map((h) => Number(h.id));
    if (clashing.length === 0) continue;
    // Values of products are leaves: the one in the way goes, and its own later event brings it back if it lives on.
    await deleteIds(w.trx, m.table, clashing);
    for (const id of clashing) touched.side(collection, id);
  }

  const incoming = new Map(changed.map((i) => [Number(i.id), i]));
  for (const r of rows) touched.write(collection, r.id, current.has(r.id), shown(m.def, incoming.get(r.id)!));
  await upsertById(w.trx, w.dialect, m.table, rows);
  written.add(m.table);
  return deferred;
}

async function deleteMirror(w: WriteContext, mirrors: Mirrors, m: Mirror, ids: number[], touched: Touched): Promise<void> {
  const present = [...(await existingIds(w.trx, w.dialect, m.table, ids))];
  if (present.length === 0) return;
  for (const ref of m.referencedBy) {
    const other = mirrors.byCollection.get(ref.collection)!;
    const dependents = (await rowsWhereIn(w.trx, w.dialect, other.table, ref.column, present, ['id'])).map((r) => Number(r.id));
    if (dependents.length === 0) continue;
    if (ref.action === 'delete') {
      await deleteMirror(w, mirrors, other, dependents, touched);
    } else {
      // Only a state in between can still point here (the main store refuses such deletes): its next change sets it right.
      await clearColumn(w.trx, other.table, ref.column, dependents);
      for (const id of dependents) touched.side(other.def.collection, id);
    }
  }
  await deleteIds(w.trx, m.table, present);
  for (const id of present) touched.side(m.def.collection, id);
}

/** The follower's own events for what this transaction changed, as its own API now shows each item. */
async function eventsOf(w: WriteContext, mirrors: Mirrors, touched: Touched): Promise<NewEvent[]> {
  const upserted: NewEvent[] = [];
  const deleted: NewEvent[][] = [];
  for (const m of mirrors.list) {
    const rows = touched.byCollection.get(m.def.collection);
    if (!rows?.size) continue;
    const now = await currentItems(w.trx, m.def, [...rows.keys()].filter((id) => !touched.asWritten(m.def.collection, id)));
    for (const id of rows.keys()) {
      const item = touched.asWritten(m.def.collection, id);
      if (item) now.set(id, item);
    }
    const gone: NewEvent[] = [];
    for (const [id, existed] of rows) {
      const item = now.get(id);
      if (item) upserted.push(eventFor(m.def, existed ? 'updated' : 'created', id, item));
      else if (existed) gone.push(eventFor(m.def, 'deleted', id, { id }));
    }
    deleted.push(gone);
  }
  // Deletions after every upsert, values of products before products: a follower of this store can apply them in order.
  return [...upserted, ...deleted.reverse().flat()];
}

/**
 * Applies a change set in the caller's transaction: upserts by the main store's ids (referenced
 * collections first), then deletes (referencing collections first), then records this store's own events.
 * Applying the same set twice changes nothing the second time and records no event.
 */
export async function applyChangeSet(w: WriteContext, set: ChangeSet, mirrors: Mirrors = ownMirrors()): Promise<ApplyResult> {
  const touched = new Touched();
  const written = new Set<string>();
  let deferred = 0;
  for (const m of mirrors.list) {
    const items = set.upserts.get(m.def.collection);
    if (items?.size) deferred += await upsertMirror(w, m, [...items.values()], touched, written);
  }
  for (const m of [...mirrors.list].reverse()) {
    const ids = set.deletes.get(m.def.collection);
    if (ids?.size) await deleteMirror(w, mirrors, m, [...ids], touched);
  }
  await bumpSequences(w.trx, w.dialect, written);
  await recordEvents(w, await eventsOf(w, mirrors, touched));
  return { changed: touched.size, deferred };
}
