import type { ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import type { ExportLimits } from '../../config.ts';
import type { Store } from '../../db/database.ts';
import type { ListPlan, Page } from '../engine.ts';
import { exportLayout, recordOf } from './columns.ts';
import { openExportConnection } from './connection.ts';
import type { CsvOptions } from './csv.ts';
import { runExport, type ExportRows } from './export.ts';
import { openExportRows } from './rows.ts';
import { FORMATS, type ExportFormat } from './negotiate.ts';
import { takeExportSlot } from './slots.ts';
import { BatchSource } from './source.ts';
import type { ResourceDef } from '../resource.ts';

export interface ExportOptions {
  format: ExportFormat;
  csv: CsvOptions;
  log: FastifyBaseLogger;
  /** EXPORTS_PER_NODE, EXPORTS_PER_CREDENTIAL and EXPORT_IDLE_TIMEOUT_MS. */
  limits: ExportLimits;
  /** Who asks (the credential's client id): whole exports are capped per credential. */
  owner: string;
  /** The response the export is sent on, watched for a client that stalls or goes away. */
  response?: ServerResponse;
  /** The response is compressed (http/compression.ts): CSV and NDJSON are written in larger pieces (export.ts). */
  compressed?: boolean;
}

/** `attachment; filename="products-2026-11-21.csv"`: the collection and the day (UTC) of the export. */
export function contentDisposition(def: ResourceDef, format: ExportFormat, now = new Date()): string {
  return `attachment; filename="${def.collection}-${now.toISOString().slice(0, 10)}.${FORMATS[format].extension}"`;
}

/** One page (`limit`/`cursor` given) as NDJSON, CSV or XLSX: the items of the JSON page (flattened for CSV and XLSX), in the plan's shape. */
export function exportPage(plan: ListPlan, page: Page, options: ExportOptions): Readable {
  const layout = exportLayout(plan.def, plan.shape);
  return runExport({
    ...options,
    idleTimeoutMs: options.limits.idleTimeoutMs,
    layout,
    rows: { kind: 'records', first: page.data.map((item) => recordOf(layout, item)), next: async () => undefined },
    release: async () => {},
  });
}

/**
 * Every matching row, streamed from a connection of the export's own. The first batch (and the total, when
 * asked) is read before this returns, so a bad filter or a database error is still an ordinary problem answer.
 * Each whole export holds a connection until it ends, so it first takes a place under the node's and the
 * credential's caps (503 or 429 with Retry-After when there is none).
 */
export async function exportAll(store: Store, def: ResourceDef, plan: ListPlan, includeTotal: boolean, label: string, options: ExportOptions): Promise<{ stream: Readable; total?: number }> {
  const layout = exportLayout(def, plan.shape);
  const letGo = takeExportSlot(store, options.owner, options.limits);
  let conn;
  try {
    conn = await openExportConnection(store, label);
  } catch (err) {
    letGo();
    throw err;
  }
  const release = async () => {
    letGo();
    await conn.close();
  };
  let total: number | undefined;
  let rows: ExportRows;
  try {
    if (includeTotal) total = await new BatchSource(conn, layout, plan).total();
    rows = await openExportRows(conn, layout, plan, options.format, options.csv, true, options.compressed);
  } catch (err) {
    await release();
    throw err;
  }
  const stream = runExport({ ...options, idleTimeoutMs: options.limits.idleTimeoutMs, layout, rows, release });
  return { stream, total };
}
