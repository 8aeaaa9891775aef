import { sql, type AliasedRawBuilder } from 'kysely';
import { orderedQuery, type ListPlan } from '../engine.ts';
import { SORT_COLUMNS } from '../resource.ts';
import { ByteWriter, type EncodedBatch } from './bytes.ts';
import type { ExportLayout, ExportRecord } from './columns.ts';
import type { ExportConnection } from './connection.ts';
import { CsvEncoder, joinedCellsWriter, type CsvOptions } from './csv.ts';
import { lineEncoder } from './ndjson.ts';
import { BatchSource, batchRows, continuedAfter, FIRST_BATCH_ROWS } from './source.ts';
import { sqliteNumbersInRange, type sqliteCsvCells, type sqliteLine } from './sqlite-lines.ts';

/** Batches of lines SQLite wrote, and batches of records encoded here after a number it would write otherwise (the tests read which path an export took). */
export const lineSourceStats = { lineBatches: 0, recordBatches: 0 };

/**
 * What SQLite writes of each row of an export (sqlite-lines.ts), and how a row's text becomes its line: NDJSON's
 * line is the text itself; a CSV record is made from the row's cells, joined into one text (csv.ts).
 */
export interface SqliteLines {
  /** The SQL of a row's text. */
  expr: NonNullable<ReturnType<typeof sqliteLine>>;
  /** Writes the line of a row's text, its line end included; false (nothing written) when the row is JavaScript's to read and encode. */
  write(text: string, bytes: ByteWriter): boolean;
  /** Records encoded here, as the same bytes, into `bytes` (after a row SQLite cannot write); returns its pieces. */
  encode(records: ExportRecord[], bytes: ByteWriter): Buffer[];
}

/** An NDJSON export's lines: SQLite's `json_object` per row (sqliteLine). */
export const ndjsonLines = (layout: ExportLayout, expr: SqliteLines['expr']): SqliteLines => {
  const encode = lineEncoder(layout);
  return {
    expr,
    write: (text, bytes) => {
      bytes.write(`${text}\n`);
      return true;
    },
    encode: (records, bytes) => {
      for (const record of records) bytes.write(`${encode(record)}\n`);
      return bytes.take();
    },
  };
};

/** A CSV export's records: SQLite joins a row's cells (sqliteCsvCells), joinedCellsWriter makes the record. */
export const csvLines = (layout: ExportLayout, options: CsvOptions, cells: NonNullable<ReturnType<typeof sqliteCsvCells>>): SqliteLines => {
  const encoder = new CsvEncoder(layout.columns, options);
  return {
    expr: cells.expr,
    write: joinedCellsWriter(cells.types, options),
    // The layout is an identity one (sqliteCsvCells): a record is its row of cells.
    encode: (records, bytes) => encoder.rows(records, bytes),
  };
};

/**
 * The lines of an export on SQLite, written by SQLite (sqlite-lines.ts: NDJSON lines, or a CSV row's cells joined),
 * read in keyset batches like BatchSource's records (source.ts): the same `orderedQuery`, so filters, sort and a
 * cursor mean exactly the same, and between two batches no statement is left running. Each row brings its text,
 * its id and, sorted otherwise than by id, its sort value (for the next batch's keyset). A batch is sized by the
 * bytes asked for and the last batch's bytes per row, starting from a few rows, so memory stays flat whether rows
 * are 100 bytes or 100 kB.
 *
 * A layout with numbers also brings, per row, whether its numbers are ones printf writes as JavaScript does
 * (`sqliteNumbersInRange`): checked with the line rather than by a pass over the rows before the first byte
 * (0.1-0.2 s for 100 000 products). The first batch holding one that is not, or a row whose text `write` cannot
 * use, is read again as records, from the same keyset position and of the same size, and it and every later
 * batch are encoded here by the format's JavaScript encoder, whose bytes the lines equal.
 */
export class LineSource {
  private plan: ListPlan;
  private done = false;
  private bytesPerRow: number | undefined;
  private readonly inRange: ReturnType<typeof sqliteNumbersInRange>;
  /** Once a batch held a row SQLite would write otherwise: the records of the rest of the export. */
  private records: BatchSource | undefined;

  constructor(
    private readonly conn: ExportConnection,
    private readonly layout: ExportLayout,
    plan: ListPlan,
    private readonly lines: SqliteLines,
    /** What the lines are written into (export.ts, `exportBytes`). */
    private readonly bytes = new ByteWriter(),
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
    // Slots: the text, the id, then the sort value where it is not the id, then whether the numbers are in range.
    const columns: Array<AliasedRawBuilder<unknown, string>> = [this.lines.expr.as('line'), sql.ref('t.id').as('id')];
    if (!byId) columns.push(sql.ref(SORT_COLUMNS[this.plan.sortKey]).as('sort_value'));
    if (this.inRange) columns.push(this.inRange.as('in_range'));
    const query = (await orderedQuery(this.conn.db, this.plan, (q) => q.select(columns))).limit(limit);
    const rows = await this.conn.arrays(query.compile());
    if (!(this.inRange && rows.some((row) => row[row.length - 1] !== 1)) && this.written(rows)) {
      if (rows.length < limit) this.done = true;
      if (rows.length === 0) return undefined;
      const last = rows[rows.length - 1];
      this.plan = continuedAfter(this.plan, last[1], byId ? undefined : last[2]);
      lineSourceStats.lineBatches += 1;
      return this.taken(rows.length);
    }
    // This batch and the rest are JavaScript's to write, from this batch's own keyset position.
    this.records = new BatchSource(this.conn, this.layout, this.plan);
    return this.encoded(await this.records.next(limit));
  }

  /** Writes the rows' lines; false (nothing written) when a row's text is not one `write` can use. */
  private written(rows: unknown[][]): boolean {
    const { bytes, lines } = this;
    for (const row of rows) {
      if (!lines.write(row[0] as string, bytes)) {
        bytes.take();
        return false;
      }
    }
    return true;
  }

  /** A batch of records as the lines the export's JavaScript encoder writes. */
  private encoded(records: ExportRecord[] | undefined): EncodedBatch | undefined {
    if (!records) return undefined;
    lineSourceStats.recordBatches += 1;
    return this.taken(records.length, this.lines.encode(records, this.bytes));
  }

  /** The batch of `rows` rows written, the size of a row noted for the next batch's. */
  private taken(rows: number, pieces = this.bytes.take()): EncodedBatch {
    let size = 0;
    for (const piece of pieces) size += piece.length;
    this.bytesPerRow = Math.max(1, size / rows);
    return { pieces, rows };
  }
}
