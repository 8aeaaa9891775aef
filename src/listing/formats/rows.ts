import type { ListPlan } from '../engine.ts';
import type { ExportLayout } from './columns.ts';
import type { ExportConnection } from './connection.ts';
import { copyPlan } from './copy-source.ts';
import type { CsvOptions } from './csv.ts';
import type { ExportRows } from './export.ts';
import type { ExportFormat } from './negotiate.ts';
import { LineSource, type SqliteLines } from './line-source.ts';
import { BatchSource } from './source.ts';
import { sqliteCsvLine, sqliteLine } from './sqlite-lines.ts';

/** What the first batch of an encoded export waits for: one piece, so that a bad query fails before the response starts. */
const FIRST_BYTES = 1 << 16;

/**
 * The rows of a whole export, their first batch read: the lines the database writes itself where it can
 * (CSV and NDJSON of plain layouts; PostgreSQL: pg-lines.ts, SQLite: sqlite-lines.ts),
 * otherwise records read in keyset batches and encoded here. `encodeInDatabase: false` always reads records
 * (tests compare the two).
 */
export async function openExportRows(conn: ExportConnection, layout: ExportLayout, plan: ListPlan, format: ExportFormat, csv: CsvOptions, encodeInDatabase = true): Promise<ExportRows> {
  const copy = encodeInDatabase ? await copyPlan(conn, layout, plan, format, csv) : undefined;
  if (copy !== undefined) {
    const source = conn.copyOut!(copy.statement, copy.reader());
    return { kind: 'encoded', first: await source.next(FIRST_BYTES), next: (bytes) => source.next(bytes) };
  }
  const sqlite = encodeInDatabase && conn.dialect === 'sqlite' ? sqliteLines(layout, format, csv) : undefined;
  if (sqlite) {
    const lines = new LineSource(conn, layout, plan, sqlite);
    return { kind: 'encoded', first: await lines.next(FIRST_BYTES), next: (bytes) => lines.next(bytes) };
  }
  const source = new BatchSource(conn, layout, plan);
  return { kind: 'records', first: await source.next(), next: (rows) => source.next(rows) };
}

/** The lines SQLite writes of this export (sqlite-lines.ts), or undefined where JavaScript must. */
function sqliteLines(layout: ExportLayout, format: ExportFormat, csv: CsvOptions): SqliteLines | undefined {
  if (format === 'ndjson') {
    const line = sqliteLine(layout);
    return line && { format, line };
  }
  if (format === 'csv') {
    const line = sqliteCsvLine(layout, csv);
    return line && { format, line, csv };
  }
  return undefined;
}
