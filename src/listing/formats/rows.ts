import type { ListPlan } from '../engine.ts';
import type { ExportLayout } from './columns.ts';
import type { ExportConnection } from './connection.ts';
import { copyPlan } from './copy-source.ts';
import type { CsvOptions } from './csv.ts';
import { exportBytes, type ExportRows } from './export.ts';
import type { ExportFormat } from './negotiate.ts';
import { csvLines, LineSource, ndjsonLines, type SqliteLines } from './line-source.ts';
import { BatchSource } from './source.ts';
import { sqliteCsvCells, sqliteLine } from './sqlite-lines.ts';

/** What the first batch of an encoded export waits for: one piece, so that a bad query fails before the response starts. */
const FIRST_BYTES = 1 << 16;

/**
 * The rows of a whole export, their first batch read: the lines the database writes itself where it can
 * (PostgreSQL: CSV, NDJSON and XLSX cells of plain layouts, pg-lines.ts; SQLite: NDJSON of plain layouts, and their CSV rows'
 * cells joined, sqlite-lines.ts), otherwise records read in keyset batches and encoded here.
 * `encodeInDatabase: false` always reads records (tests compare the two). `compressed`: the bytes go to a
 * compressor (export.ts, `exportBytes`).
 */
export async function openExportRows(conn: ExportConnection, layout: ExportLayout, plan: ListPlan, format: ExportFormat, csv: CsvOptions, encodeInDatabase = true, compressed = false): Promise<ExportRows> {
  const copy = encodeInDatabase ? await copyPlan(conn, layout, plan, format, csv) : undefined;
  if (copy !== undefined) {
    const source = conn.copyOut!(copy.statement, copy.reader(), exportBytes(format, compressed));
    return { kind: 'encoded', first: await source.next(FIRST_BYTES), next: (bytes) => source.next(bytes) };
  }
  const lines = encodeInDatabase && conn.dialect === 'sqlite' ? sqliteLines(layout, format, csv) : undefined;
  if (lines) {
    const source = new LineSource(conn, layout, plan, lines, exportBytes(format, compressed));
    return { kind: 'encoded', first: await source.next(FIRST_BYTES), next: (bytes) => source.next(bytes) };
  }
  const source = new BatchSource(conn, layout, plan);
  return { kind: 'records', first: await source.next(), next: (rows) => source.next(rows) };
}

/** What SQLite writes of each row of this export (sqlite-lines.ts), or undefined where JavaScript encodes it all. */
function sqliteLines(layout: ExportLayout, format: ExportFormat, csv: CsvOptions): SqliteLines | undefined {
  if (format === 'ndjson') {
    const line = sqliteLine(layout);
    return line && ndjsonLines(layout, line);
  }
  const cells = format === 'csv' ? sqliteCsvCells(layout, csv) : undefined;
  return cells && csvLines(layout, csv, cells);
}
