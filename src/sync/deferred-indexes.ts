import { sql } from 'kysely';
import type { Store, Trx } from '../db/database.ts';
import { getSetting, setSetting } from '../db/settings.ts';

/**
 * A first copy into an empty table (first-copy.ts) writes it without its secondary indexes and builds them
 * once at the end: keeping three or four indexes up to date row by row cost about three times the rows'
 * own writing on SQLite (bench/results/snapshots-2026-11-23.md), and one sort per index is a fraction of
 * that. Only plain indexes are deferred: primary keys and unique indexes stay, since they keep the copy
 * correct (a clash still fails the batch, which is then applied by the general path). The definitions
 * are kept in `settings` in the same transaction as the drop, so a copy cut off by a crash gets them
 * back when the follower next takes a snapshot (snapshot.ts), before it copies anything.
 */

const KEY = 'sync_deferred_indexes';

interface IndexDefinition {
  name: string;
  sql: string;
}

type Deferred = Record<string, IndexDefinition[]>;

async function readDeferred(trx: Trx): Promise<Deferred> {
  const raw = await getSetting(trx, KEY);
  return raw ? (JSON.parse(raw) as Deferred) : {};
}

async function saveDeferred(trx: Trx, deferred: Deferred): Promise<void> {
  if (Object.keys(deferred).length === 0) await trx.deleteFrom('settings').where('key', '=', KEY).execute();
  else await setSetting(trx, KEY, JSON.stringify(deferred));
}

/** The table's indexes that are neither its primary key nor unique, as statements that create them again. */
async function plainIndexes(trx: Trx, store: Store, table: string): Promise<IndexDefinition[]> {
  if (store.dialect === 'postgres') {
    const r = await sql<IndexDefinition>`select i.relname as name, pg_get_indexdef(i.oid) as sql
      from pg_index x join pg_class i on i.oid = x.indexrelid join pg_class t on t.oid = x.indrelid
      where t.relname = ${table} and t.relnamespace = to_regnamespace(current_schema()) and not x.indisunique and not x.indisprimary
      order by i.relname`.execute(trx);
    return r.rows;
  }
  // sqlite_master has no sql for the indexes of constraints (sqlite_autoindex_…); those are unique anyway.
  const r = await sql<IndexDefinition>`select name, sql from sqlite_master
    where type = 'index' and tbl_name = ${table} and sql is not null and upper(sql) not like 'CREATE UNIQUE%'
    order by name`.execute(trx);
  return r.rows;
}

const quote = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/** Drops the table's plain indexes for a first copy, remembering them; nothing when they are already deferred. */
export async function deferIndexes(store: Store, table: string): Promise<void> {
  await store.db.transaction().execute(async (trx) => {
    const deferred = await readDeferred(trx);
    if (deferred[table]) return;
    const indexes = await plainIndexes(trx, store, table);
    if (indexes.length === 0) return;
    deferred[table] = indexes;
    await saveDeferred(trx, deferred);
    for (const index of indexes) await sql.raw(`drop index ${quote(index.name)}`).execute(trx);
  });
}

/** Builds the deferred indexes again: of one table (its first copy ended), or of every table (a snapshot begins after a copy was cut off). */
export async function restoreIndexes(store: Store, table?: string): Promise<void> {
  await store.db.transaction().execute(async (trx) => {
    const deferred = await readDeferred(trx);
    const tables = table === undefined ? Object.keys(deferred) : Object.keys(deferred).filter((t) => t === table);
    if (tables.length === 0) return;
    const present = new Set<string>();
    for (const t of tables) for (const index of await plainIndexes(trx, store, t)) present.add(index.name);
    for (const t of tables) {
      for (const index of deferred[t]) if (!present.has(index.name)) await sql.raw(index.sql).execute(trx);
      delete deferred[t];
    }
    await saveDeferred(trx, deferred);
  });
}

