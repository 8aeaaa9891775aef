import type { Readable } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import type { Store } from '../../db/database.ts';
import { AppError } from '../../errors/app-error.ts';
import type { ListPlan, Page } from '../engine.ts';
import { exportLayout, recordOf } from './columns.ts';
import { openExportConnection } from './connection.ts';
import type { CsvOptions } from './csv.ts';
import { runExport } from './export.ts';
import { FORMATS } from './negotiate.ts';
import { BatchSource } from './source.ts';
import type { ResourceDef } from '../resource.ts';

export interface ExportOptions {
  format: 'csv' | 'xlsx';
  csv: CsvOptions;
  log: FastifyBaseLogger;
}

/** Full exports holding a client of each PostgreSQL pool right now. */
const held = new WeakMap<object, number>();

/** `attachment; filename="products-2026-11-21.csv"`: the collection and the day (UTC) of the export. */
export function contentDisposition(def: ResourceDef, format: 'csv' | 'xlsx', now = new Date()): string {
  return `attachment; filename="${def.collection}-${now.toISOString().slice(0, 10)}.${FORMATS[format].extension}"`;
}

/** One page (`limit`/`cursor` given) as CSV or XLSX: the rows of the JSON page, flattened. */
export function exportPage(def: ResourceDef, page: Page, options: ExportOptions): Readable {
  const layout = exportLayout(def);
  return runExport({
    ...options,
    layout,
    first: page.data.map((item) => recordOf(layout, item)),
    next: async () => undefined,
    release: async () => {},
  });
}

/**
 * Every matching row, streamed from a connection of the export's own. The first batch (and the total, when
 * asked) is read before this returns, so a bad filter or a database error is still an ordinary problem answer.
 */
export async function exportAll(store: Store, def: ResourceDef, plan: ListPlan, includeTotal: boolean, label: string, options: ExportOptions): Promise<{ stream: Readable; total?: number }> {
  const layout = exportLayout(def);
  // On PostgreSQL each running export holds a pool client; half the pool stays for everything else.
  const pool: object = store.pgPool ?? store;
  const running = held.get(pool) ?? 0;
  if (store.pgPool && running >= Math.max(1, Math.floor(store.pgPool.options.max / 2))) {
    throw new AppError('service_unavailable', 'Too many full exports are running at once; retry shortly, or page with limit and cursor.', { headers: { 'retry-after': '5' } });
  }
  held.set(pool, running + 1);
  const letGo = () => held.set(pool, (held.get(pool) ?? 1) - 1);
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
  let source: BatchSource;
  let total: number | undefined;
  let first;
  try {
    source = new BatchSource(conn, layout, plan);
    if (includeTotal) total = await source.total();
    first = await source.next();
  } catch (err) {
    await release();
    throw err;
  }
  const stream = runExport({ ...options, layout, first, next: (rows) => source.next(rows), release });
  return { stream, total };
}
