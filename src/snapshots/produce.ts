import { once } from 'node:events';
import { PassThrough } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import type { Store } from '../db/database.ts';
import { plan } from '../listing/engine.ts';
import { exportLayout, flatten, type ExportRecord } from '../listing/formats/columns.ts';
import { openExportConnection } from '../listing/formats/connection.ts';
import { CsvEncoder } from '../listing/formats/csv.ts';
import { BatchSource, FIRST_BATCH_ROWS } from '../listing/formats/source.ts';
import { XlsxExportWriter } from '../listing/formats/xlsx.ts';
import type { ResourceDef } from '../listing/resource.ts';
import { ChunkSink } from './chunks.ts';
import type { SnapshotJob } from './jobs.repository.ts';
import { snapshotTables } from './tables.ts';
import { itemMaker, keptColumns } from './shape.ts';

/**
 * gzip level 3: on this machine's NDJSON of products it is about twice as fast as the default 6 and the file
 * only ~10 % larger; the job is CPU-bound, and download bandwidth is rarely what an integrator lacks.
 */
export const GZIP_LEVEL = 3;
/** Bytes the export's stream holds before the reader waits for gzip and the database. */
const OUT_BUFFER = 1 << 18;
/** What one batch should come to (text characters), as for a streamed export; the next batch's row count follows from it. */
const BATCH_CHARS = 1 << 19;

export interface Produced {
  rows: number;
  size: number;
  sha256: string;
  seq: number;
}

/** Where a batch of records goes: lines of NDJSON, CSV text, or rows of a workbook. */
interface Writer {
  write(records: ExportRecord[]): Promise<number>;
  finish(): Promise<void>;
  abort(): void;
}

async function put(out: PassThrough, text: string, signal: AbortSignal): Promise<void> {
  if (!out.write(text)) await once(out, 'drain', { signal });
}

function writerFor(job: SnapshotJob, def: ResourceDef, out: PassThrough, signal: AbortSignal): Writer {
  const layout = exportLayout(def);
  if (job.format === 'ndjson') {
    const item = itemMaker(layout, job.fields);
    return {
      write: async (records) => {
        let text = '';
        for (const r of records) text += `${JSON.stringify(item(r))}\n`;
        await put(out, text, signal);
        return text.length;
      },
      finish: async () => {
        out.end();
      },
      abort: () => {},
    };
  }
  const { columns, positions } = keptColumns(layout, job.fields);
  const cellsOf = (records: ExportRecord[]) => {
    const rows = flatten(layout, records);
    return positions ? rows.map((row) => positions.map((i) => row[i])) : rows;
  };
  if (job.format === 'csv') {
    const encoder = new CsvEncoder(columns, { delimiter: ',', bom: false, escapeFormulas: true });
    out.write(encoder.head());
    return {
      write: async (records) => {
        const text = encoder.rows(cellsOf(records));
        await put(out, text, signal);
        return text.length;
      },
      finish: async () => {
        out.end();
      },
      abort: () => {},
    };
  }
  const workbook = new XlsxExportWriter(out, def.collection, columns);
  return { write: (records) => workbook.write(cellsOf(records), signal), finish: () => workbook.finish(), abort: () => workbook.abort() };
}

/**
 * Writes the file of `job` into the database: one read-only transaction of the export's own (REPEATABLE READ
 * on PostgreSQL; on SQLite a read transaction of a connection of its own, whose first read fixes the view)
 * gives the feed's head `seq` and then every row, so the file is exactly the data at `seq`. Rows go through
 * the format, gzip (not XLSX: it is a zip already) and into pieces of the file, each stage waiting for the
 * next: memory stays flat whatever the row count. `progress` is told the rows written so far after each batch
 * (the next batch waits for it).
 */
export async function produceSnapshot(store: Store, def: ResourceDef, job: SnapshotJob, hashKey: string, signal: AbortSignal, progress: (rows: number) => void | Promise<void>): Promise<Produced> {
  // Pieces of an earlier, interrupted run of this job.
  await snapshotTables(store.db).deleteFrom('snapshot_chunks').where('snapshot_id', '=', job.id).execute();
  const listPlan = plan(def, { filters: job.filters }, hashKey);
  const conn = await openExportConnection(store, `store-api snapshot ${job.id}`);
  const out = new PassThrough({ highWaterMark: OUT_BUFFER });
  const sink = new ChunkSink(store.db, job.id);
  const written = job.format === 'xlsx' ? pipeline(out, sink, { signal }) : pipeline(out, createGzip({ level: GZIP_LEVEL }), sink, { signal });
  // The rejection is taken below; until then it must not count as unhandled.
  written.catch(() => undefined);
  const writer = writerFor(job, def, out, signal);
  let rows = 0;
  try {
    // The first read of the transaction: on SQLite it is what fixes the view the rows are read from.
    const [[head]] = await conn.arrays(conn.db.selectFrom('events').select((eb) => eb.fn.max('seq').as('seq')).compile());
    const seq = Number(head ?? 0);
    const source = new BatchSource(conn, exportLayout(def), listPlan);
    let batch = await source.next(FIRST_BATCH_ROWS);
    while (batch) {
      signal.throwIfAborted();
      const records = batch.length;
      const chars = await writer.write(batch);
      rows += records;
      await progress(rows);
      batch = await source.next((BATCH_CHARS * records) / Math.max(chars, 1));
    }
    // Every row is read: the view is let go before the last bytes are compressed and stored.
    await conn.close();
    await writer.finish();
    await written;
    return { rows, size: sink.size, sha256: sink.sha256, seq };
  } catch (err) {
    writer.abort();
    out.destroy();
    await written.catch(() => undefined);
    throw err;
  } finally {
    await conn.close();
  }
}
