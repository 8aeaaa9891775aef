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

/** Statement texts by dialect, table, columns and row count: a copy sends thousands of statements of a few shapes. */
const texts = new Map<string, string>();

function upsertText(dialect: Dialect, table: string, columns: string[], keep: string[], rows: number): string {
  const key = `${dialect}\u0000${table}\u0000${columns.join(',')}\u0000${keep.join(',')}\u0000${rows}`;
  let text = texts.get(key);
  if (text === undefined) {
    const updated = columns.filter((c) => c !== 'id' && !keep.includes(c));
    const tuples: string[] = [];
    for (let r = 0; r < rows; r++) tuples.push(`(${placeholders(dialect, columns.length, r * columns.length)})`);
    text = `insert into ${quote(table)} (${columns.map(quote).join(', ')}) values ${tuples.join(', ')}`
      + ` on conflict (${quote('id')}) do update set ${updated.map((c) => `${quote(c)} = excluded.${quote(c)}`).join(', ')}`;
    // Bounded: a handful of tables, each with a full chunk and a last one of any size.
    if (texts.size > 1000) texts.clear();
    texts.set(key, text);
  }
  return text;
}

const placeholders = (dialect: Dialect, n: number, offset: number): string =>
  Array.from({ length: n }, (_, i) => (dialect === 'postgres' ? `$${offset + i + 1}` : '?')).join(', ');

/**
 * Inserts rows with their ids, or updates the given columns (but those in `keep`) of rows that exist. The
 * statement is written directly rather than through the query builder, and its text is kept by shape: a
 * snapshot sends hundreds of thousands of rows this way, and building a node per value cost more than the
 * database's own work.
 */
export async function upsertById(trx: Trx, dialect: Dialect, table: string, rows: Array<Record<string, unknown>>, keep: string[] = []): Promise<void> {
  if (rows.length === 0) return;
  const columns = Object.keys(rows[0]);
  for (const part of chunks(rows, Math.max(1, Math.floor(MAX_PARAMS / columns.length)))) {
    const params: unknown[] = [];
    for (const row of part) for (const c of columns) params.push(row[c] ?? null);
    await trx.executeQuery(CompiledQuery.raw(upsertText(dialect, table, columns, keep, part.length), params));
  }
}

/**
 * Rows of `table` whose `column` is one of `values`, with the columns asked for. Written directly, like
 * upsertById: the copy asks this of every batch (references, lookups), with up to a thousand values each.
 */
export async function rowsWhereIn(trx: Trx, dialect: Dialect, table: string, column: string, values: unknown[], select: string[]): Promise<Array<Record<string, unknown>>> {
  const distinct = [...new Set(values.filter((v) => v !== null && v !== undefined))];
  const out: Array<Record<string, unknown>> = [];
  const head = `select ${select.map(quote).join(', ')} from ${quote(table)} where ${quote(column)} in (`;
  for (const part of chunks(distinct, ID_CHUNK)) {
    const r = await trx.executeQuery<Record<string, unknown>>(CompiledQuery.raw(`${head}${placeholders(dialect, part.length, 0)})`, part));
    out.push(...r.rows);
  }
  return out;
}

export async function existingIds(trx: Trx, dialect: Dialect, table: string, ids: unknown[]): Promise<Set<number>> {
  return new Set((await rowsWhereIn(trx, dialect, table, 'id', ids, ['id'])).map((r) => Number(r.id)));
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
