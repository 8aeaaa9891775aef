import type { Readable } from 'node:stream';
import { withShape, type ListPlan } from '../engine.ts';
import type { Shape } from '../shape.ts';
import type { ResourceDef } from '../resource.ts';
import { exportLayout } from './columns.ts';
import type { ExportConnection } from './connection.ts';
import { CSV_DEFAULTS, type CsvOptions } from './csv.ts';
import { runExport, type ExportLog } from './export.ts';
import type { ExportFormat } from './negotiate.ts';
import { openExportRows } from './rows.ts';

export interface StreamExportOptions {
  format: ExportFormat;
  /** CSV only; what is left out is the API's default (`,`, no BOM, formulas escaped). */
  csv?: Partial<CsvOptions>;
  /** Where a failure is logged (nothing by default). */
  log?: ExportLog;
  /** False: the rows are read and encoded here even where PostgreSQL could write the lines (rows.ts); for tests. */
  encodeInDatabase?: boolean;
  /** Told the number of items of each batch once it is written (a CSV/XLSX order gives one row per item line, counted once here). */
  onBatch?(items: number): void;
  /** The stream goes to a compressor: CSV and NDJSON come in pieces of COMPRESSED_PIECE_BYTES (export.ts). */
  compressed?: boolean;
}

const silent: ExportLog = { info: () => {}, error: () => {} };

/**
 * The whole export of a listing (every row of `plan`, in `shape`) as a byte stream, read through an export
 * connection the caller has opened and closes once the stream has ended or failed: no HTTP response, no
 * export slot (the caller bounds its own concurrency), no idle timeout (the caller's consumer decides how
 * fast it reads; the writer waits for it). The first batch is read before this resolves, so a bad filter
 * rejects here; a later failure destroys the stream with the error. Destroying the stream stops the export.
 * `shape` undefined keeps the plan's (its `fields`/`include`, or every field).
 */
export async function streamExport(conn: ExportConnection, def: ResourceDef, plan: ListPlan, shape: Shape | undefined, options: StreamExportOptions): Promise<Readable> {
  const shaped = shape === undefined ? plan : withShape({ ...plan, def }, shape);
  const layout = exportLayout(def, shaped.shape);
  const csv = { ...CSV_DEFAULTS, ...options.csv };
  const rows = await openExportRows(conn, layout, shaped, options.format, csv, options.encodeInDatabase, options.compressed);
  return runExport({
    format: options.format,
    layout,
    csv,
    rows,
    release: async () => {},
    log: options.log ?? silent,
    onBatch: options.onBatch,
    compressed: options.compressed,
  });
}
