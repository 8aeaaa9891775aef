import { CompiledQuery, sql, type Transaction } from 'kysely';
import type { Dialect, Trx } from '../db/database.ts';

// The sync writes several tables through one code path, so it addresses them by name at run time.
type LooseDb = Record<string, Record<string, unknown>>;
type LooseTrx = Transaction<LooseDb>;
const loose = (trx: Trx): LooseTrx => trx as unknown as LooseTrx;

/** Keeps each statement under SQLite's and PostgreSQL's bound-parameter limits. */
const MAX_PARAMS = 30_000;
const ID_CHUNK = 1000;

export function chunks<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

const quote = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/**
 * Inserts rows with their ids, or updates the given columns (but those in `keep`) of rows that exist. The
 * statement is written directly rather than through the query builder: a snapshot sends hundreds of
 * thousands of rows this way, and building a node per value cost more than the database's own work.
 */
export async function upsertById(trx: Trx, dialect: Dialect, table: string, rows: Array<Record<string, unknown>>, keep: string[] = []): Promise<void> {
  if (rows.length === 0) return;
  const columns = Object.keys(rows[0]);
  const updated = columns.filter((c) => c !== 'id' && !keep.includes(c));
  const head = `insert into ${quote(table)} (${columns.map(quote).join(', ')}) values `;
  const tail = ` on conflict (${quote('id')}) do update set ${updated.map((c) => `${quote(c)} = excluded.${quote(c)}`).join(', ')}`;
  for (const part of chunks(rows, Math.max(1, Math.floor(MAX_PARAMS / columns.length)))) {
    const params: unknown[] = [];
    const tuples = part.map((row) => {
      const marks = columns.map((c) => {
        params.push(row[c] ?? null);
        return dialect === 'postgres' ? `$${params.length}` : '?';
      });
      return `(${marks.join(', ')})`;
    });
    await trx.executeQuery(CompiledQuery.raw(head + tuples.join(', ') + tail, params));
  }
}

/** Rows of `table` whose `column` is one of `values`, with the columns asked for. */
export async function rowsWhereIn(trx: Trx, table: string, column: string, values: unknown[], select: string[]): Promise<Array<Record<string, unknown>>> {
  const distinct = [...new Set(values.filter((v) => v !== null && v !== undefined))];
  const out: Array<Record<string, unknown>> = [];
  for (const part of chunks(distinct, ID_CHUNK)) {
    out.push(...(await loose(trx).selectFrom(table).select(select).where(column, 'in', part).execute()));
  }
  return out;
}

export async function existingIds(trx: Trx, table: string, ids: unknown[]): Promise<Set<number>> {
  return new Set((await rowsWhereIn(trx, table, 'id', ids, ['id'])).map((r) => Number(r.id)));
}

/** Ids of `table` in (after, through] (through undefined: no upper bound). */
export async function idsInRange(trx: Trx, table: string, after: number, through: number | undefined): Promise<number[]> {
  let q = loose(trx).selectFrom(table).select('id').where('id', '>', after);
  if (through !== undefined) q = q.where('id', '<=', through);
  return (await q.execute()).map((r) => Number(r.id));
}

/**
 * Gives rows holding a unique value that another row is about to take a value of their own (the old value
 * with `~moved-<id>`): the change that gives them their real value is further on in the feed.
 */
export async function moveAside(trx: Trx, table: string, column: string, ids: number[]): Promise<void> {
  for (const part of chunks(ids, ID_CHUNK)) {
    await loose(trx).updateTable(table)
      .set({ [column]: sql`${sql.ref(column)} || ${'~moved-'} || cast(id as text)` })
      .where('id', 'in', part)
      .execute();
  }
}

export async function deleteIds(trx: Trx, table: string, ids: number[]): Promise<void> {
  for (const part of chunks(ids, ID_CHUNK)) await loose(trx).deleteFrom(table).where('id', 'in', part).execute();
}

export async function clearColumn(trx: Trx, table: string, column: string, ids: number[]): Promise<void> {
  for (const part of chunks(ids, ID_CHUNK)) await loose(trx).updateTable(table).set({ [column]: null }).where('id', 'in', part).execute();
}

/**
 * After rows were inserted with explicit ids, PostgreSQL's identity sequence must be moved past them so
 * that a later local insert does not pick a taken id. (SQLite's AUTOINCREMENT follows by itself.)
 */
export async function bumpSequences(trx: Trx, dialect: Dialect, tables: Iterable<string>): Promise<void> {
  if (dialect !== 'postgres') return;
  for (const table of tables) {
    await sql`select setval(s.name, m.max_id)
      from (select pg_get_serial_sequence(${table}, 'id') as name) s, (select max(id) as max_id from ${sql.table(table)}) m
      where m.max_id is not null and m.max_id > coalesce(pg_sequence_last_value(s.name::regclass), 0)`.execute(trx);
  }
}

/**
 * On PostgreSQL, lets the follower's transactions commit without waiting for the WAL flush. Safe here: the
 * cursor commits with the data, so a crash that loses the last commits only moves the follower back to an
 * earlier consistent point, from which it applies those events again.
 */
export async function relaxedCommit(trx: Trx, dialect: Dialect): Promise<void> {
  if (dialect === 'postgres') await sql`set local synchronous_commit = off`.execute(trx);
}
