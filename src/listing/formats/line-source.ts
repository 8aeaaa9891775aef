import { sql } from 'kysely';
import { filteredQuery, orderedQuery, type ListPlan } from '../engine.ts';
import { SORT_COLUMNS } from '../resource.ts';
import { ByteWriter } from './bytes.ts';
import type { ExportLayout } from './columns.ts';
import type { ExportConnection } from './connection.ts';
import type { EncodedBatch } from './copy-source.ts';
import { batchRows, FIRST_BATCH_ROWS } from './source.ts';
import { sqliteLine, sqliteNumbersInRange } from './sqlite-lines.ts';

/**
 * The lines of an NDJSON export on SQLite, written by SQLite (sqlite-lines.ts), read in keyset batches like
 * BatchSource's records (source.ts): the same `orderedQuery`, so filters, sort and a cursor mean exactly the
 * same, and between two batches no statement is left running. Each row brings its line, its id and its sort
 * value (for the next batch's keyset). A batch is sized by the bytes asked for and the last batch's bytes per
 * row, starting from a few rows, so memory stays flat whether rows are 100 bytes or 100 kB.
 */
export class LineSource {
  private plan: ListPlan;
  private done = false;
  private bytesPerRow: number | undefined;
  private readonly bytes: ByteWriter;

  constructor(
    private readonly conn: ExportConnection,
    layout: ExportLayout,
    plan: ListPlan,
    private readonly line: NonNullable<ReturnType<typeof sqliteLine>>,
  ) {
    this.plan = { ...plan, shape: layout.shape };
    this.bytes = new ByteWriter();
  }

  /** The next batch of about `bytes` bytes of lines, or undefined at the end. */
  async next(bytes: number): Promise<EncodedBatch | undefined> {
    if (this.done) return undefined;
    const limit = this.bytesPerRow === undefined ? FIRST_BATCH_ROWS : batchRows(bytes / this.bytesPerRow);
    // The sort value only where it is not the id: a value fewer per row.
    const byId = this.plan.sortKey === 'id';
    const keyset = byId ? [sql.ref('t.id').as('id')] : [sql.ref('t.id').as('id'), sql.ref(SORT_COLUMNS[this.plan.sortKey]).as('sort_value')];
    const query = (await orderedQuery(this.conn.db, this.plan, (q) => q.select([this.line.as('line'), ...keyset]))).limit(limit);
    const rows = await this.conn.arrays(query.compile());
    if (rows.length < limit) this.done = true;
    if (rows.length === 0) return undefined;
    let chars = 0;
    for (const row of rows) {
      const text = row[0] as string;
      chars += text.length + 1;
      this.bytes.write(`${text}\n`);
    }
    this.bytesPerRow = Math.max(1, chars / rows.length);
    const last = rows[rows.length - 1];
    const id = Number(last[1]);
    this.plan = { ...this.plan, after: byId ? [id] : [String(last[2]), id] };
    return { pieces: this.bytes.take(), rows: rows.length };
  }
}

/**
 * The line expression of an NDJSON export SQLite can write, or undefined when its lines are JavaScript's to
 * write: a layout sqlite-lines.ts does not cover, or a number among the export's rows that printf would write
 * otherwise than JavaScript (checked over the export's own rows, in its transaction: one pass over an index
 * or the table).
 */
export async function sqliteLineOf(conn: ExportConnection, layout: ExportLayout, plan: ListPlan): Promise<ReturnType<typeof sqliteLine>> {
  const line = sqliteLine(layout);
  if (!line) return undefined;
  const inRange = sqliteNumbersInRange(layout);
  if (inRange) {
    const outside = (await filteredQuery(conn.db, { ...plan, shape: layout.shape })).select(sql<number>`1`.as('one')).where(sql<boolean>`not ${inRange}`).limit(1);
    if ((await conn.arrays(outside.compile())).length > 0) return undefined;
  }
  return line;
}
