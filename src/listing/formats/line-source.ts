import { sql, type AliasedRawBuilder } from 'kysely';
import { orderedQuery, type ListPlan } from '../engine.ts';
import { SORT_COLUMNS } from '../resource.ts';
import { ByteWriter, type EncodedBatch } from './bytes.ts';
import type { ExportLayout, ExportRecord } from './columns.ts';
import type { ExportConnection } from './connection.ts';
import { lineEncoder } from './ndjson.ts';
import { BatchSource, batchRows, continuedAfter, FIRST_BATCH_ROWS } from './source.ts';
import { sqliteNumbersInRange, type sqliteLine } from './sqlite-lines.ts';

/** Batches of lines SQLite wrote, and batches of records encoded here after a number it would write otherwise (the tests read which path an export took). */
export const lineSourceStats = { lineBatches: 0, recordBatches: 0 };

/**
 * The lines of an NDJSON export on SQLite, written by SQLite (sqlite-lines.ts), read in keyset batches like
 * BatchSource's records (source.ts): the same `orderedQuery`, so filters, sort and a cursor mean exactly the
 * same, and between two batches no statement is left running. Each row brings its line, its id and, sorted
 * otherwise than by id, its sort value (for the next batch's keyset). A batch is sized by the bytes asked for
 * and the last batch's bytes per row, starting from a few rows, so memory stays flat whether rows are 100
 * bytes or 100 kB.
 *
 * A layout with numbers also brings, per row, whether its numbers are ones printf writes as JavaScript does
 * (`sqliteNumbersInRange`): checked with the line rather than by a pass over the rows before the first byte
 * (0.1-0.2 s for 100 000 products). The first batch holding one that is not is read again as records, from the
 * same keyset position and of the same size, and it and every later batch are encoded here by the line encoder
 * (ndjson.ts), whose bytes the lines equal.
 */
export class LineSource {
  private plan: ListPlan;
  private done = false;
  private bytesPerRow: number | undefined;
  private readonly bytes = new ByteWriter();
  private readonly inRange: ReturnType<typeof sqliteNumbersInRange>;
  /** Once a batch held a number SQLite would write otherwise: the records of the rest of the export. */
  private records: BatchSource | undefined;

  constructor(
    private readonly conn: ExportConnection,
    private readonly layout: ExportLayout,
    plan: ListPlan,
    private readonly line: NonNullable<ReturnType<typeof sqliteLine>>,
  ) {
    this.plan = { ...plan, shape: layout.shape };
    this.inRange = sqliteNumbersInRange(layout);
  }

  /** The next batch of about `bytes` bytes of lines, or undefined at the end. */
  async next(bytes: number): Promise<EncodedBatch | undefined> {
    const limit = this.bytesPerRow === undefined ? FIRST_BATCH_ROWS : batchRows(bytes / this.bytesPerRow);
    if (this.records) return this.encoded(await this.records.next(limit));
    if (this.done) return undefined;
    const byId = this.plan.sortKey === 'id';
    // Slots: the line, the id, then the sort value where it is not the id, then whether the numbers are in range.
    const columns: Array<AliasedRawBuilder<unknown, string>> = [this.line.as('line'), sql.ref('t.id').as('id')];
    if (!byId) columns.push(sql.ref(SORT_COLUMNS[this.plan.sortKey]).as('sort_value'));
    if (this.inRange) columns.push(this.inRange.as('in_range'));
    const query = (await orderedQuery(this.conn.db, this.plan, (q) => q.select(columns))).limit(limit);
    const rows = await this.conn.arrays(query.compile());
    if (this.inRange && rows.some((row) => row[row.length - 1] !== 1)) {
      // This batch and the rest are JavaScript's to write, from this batch's own keyset position.
      this.records = new BatchSource(this.conn, this.layout, this.plan);
      return this.encoded(await this.records.next(limit));
    }
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
    this.plan = continuedAfter(this.plan, last[1], byId ? undefined : last[2]);
    lineSourceStats.lineBatches += 1;
    return { pieces: this.bytes.take(), rows: rows.length };
  }

  /** A batch of records as the lines the export's JavaScript encoder writes. */
  private encoded(records: ExportRecord[] | undefined): EncodedBatch | undefined {
    if (!records) return undefined;
    const encode = lineEncoder(this.layout);
    let chars = 0;
    for (const record of records) {
      const text = encode(record);
      chars += text.length + 1;
      this.bytes.write(`${text}\n`);
    }
    this.bytesPerRow = Math.max(1, chars / records.length);
    lineSourceStats.recordBatches += 1;
    return { pieces: this.bytes.take(), rows: records.length };
  }
}
