import { once } from 'node:events';
import { Writable } from 'node:stream';
import { finished, pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { givingBack } from '../buffer-recycler.ts';
import type { Store } from '../db/database.ts';
import { PRUNED_THROUGH } from '../events/feed.ts';
import { COMPRESSOR_OUTPUT_BYTES } from '../http/compression.ts';
import { plan } from '../listing/engine.ts';
import { openExportConnection } from '../listing/formats/connection.ts';
import { streamExport } from '../listing/formats/stream.ts';
import type { ResourceDef } from '../listing/resource.ts';
import { ChunkSink } from './chunks.ts';
import type { SnapshotJob } from './jobs.repository.ts';
import { snapshotTables } from './tables.ts';

/**
 * gzip level 3: on this machine's NDJSON of products it is about twice as fast as the default 6 for a file a
 * few per cent larger; the job is CPU-bound, and download bandwidth is rarely what an integrator lacks.
 */
export const GZIP_LEVEL = 3;
export interface Produced {
  rows: number;
  size: number;
  sha256: string;
  seq: number;
}

/**
 * Writes the file of `job` into the database. One read-only transaction of the export's own (REPEATABLE READ
 * on PostgreSQL; on SQLite a read transaction of a connection of its own, whose first read fixes the view)
 * gives the feed's head `seq` first and then every row, so the file is exactly the data at `seq`. The
 * listing's own export (streamExport: the same items, columns and shapes as the listing) goes through gzip
 * (not XLSX: it is a zip already) into pieces of the file; each stage waits for the next, so memory stays flat
 * whatever the row count. `progress` is told the rows written so far; while a promise it returns is pending,
 * no more bytes are taken from the export (which then stops reading once its small buffer is full).
 */
export async function produceSnapshot(store: Store, def: ResourceDef, job: SnapshotJob, hashKey: string, signal: AbortSignal, progress: (rows: number) => void | Promise<void>): Promise<Produced> {
  // Pieces of an earlier, interrupted run of this job.
  await snapshotTables(store.db).deleteFrom('snapshot_chunks').where('snapshot_id', '=', job.id).execute();
  const listPlan = plan(def, { filters: job.filters, shape: job.fields ? { fields: job.fields } : undefined }, hashKey);
  const conn = await openExportConnection(store, `store-api snapshot ${job.id}`);
  try {
    // The first read of the transaction: on SQLite it is what fixes the view the rows are then read from.
    const [[head]] = await conn.arrays(conn.db.selectFrom('events').select((eb) => eb.fn.max('seq').as('seq')).compile());
    // As GET /api/v2/changes/head: the log may have been pruned down to nothing, and a position below what
    // was pruned would be answered 410 at once.
    const pruned = await conn.arrays(conn.db.selectFrom('settings').select('value').where('key', '=', PRUNED_THROUGH).compile());
    const seq = Math.max(Number(head ?? 0), Number(pruned[0]?.[0] ?? 0));
    let rows = 0;
    let waiting: Promise<void> | undefined;
    const gzipped = job.format !== 'xlsx';
    const stream = await streamExport(conn, def, listPlan, undefined, {
      format: job.format,
      compressed: gzipped,
      onBatch: (items) => {
        rows += items;
        waiting = Promise.resolve(progress(rows));
        // Awaited below, after the batch's bytes are written; until then a rejection (an abort) is not unhandled.
        waiting.catch(() => undefined);
      },
    });
    const sink = new ChunkSink(store.db, job.id);
    // Given back: the export's buffers are written again once gzip has read them (buffer-recycler.ts).
    const gzip = gzipped ? givingBack(createGzip({ level: GZIP_LEVEL, chunkSize: COMPRESSOR_OUTPUT_BYTES })) : undefined;
    const target = gzip ?? sink;
    const stored = finished(sink);
    stored.catch(() => undefined);
    gzip?.pipe(sink);
    // Each piece as the export wrote it, through a Writable rather than `for await`: the async iterator reads
    // whatever the stream holds at once, and joins it into one new buffer when that is several pieces (about the
    // whole 202 MB once more for the NDJSON of 1.17 M product-parameter values, since ByteWriter's pieces became views).
    const forward = new Writable({
      write: (piece: Buffer, _encoding, done) => {
        void (async () => {
          signal.throwIfAborted();
          if (!target.write(piece)) await Promise.race([once(target, 'drain', { signal }), stored]);
          if (waiting) {
            await waiting;
            waiting = undefined;
          }
        })().then(() => done(), done);
      },
      final: (done) => {
        // The last batch's progress too (a rate limit holds the job until its rows are due).
        void (async () => {
          await waiting;
          target.end();
          await stored;
        })().then(() => done(), done);
      },
    });
    try {
      // With the signal, a cancelled job (or a stopping node) ends the export at once, even while it waits on the database.
      await pipeline(stream, forward, { signal });
    } catch (err) {
      stream.destroy();
      gzip?.destroy();
      sink.destroy();
      // A piece still being stored would land after the caller deleted the run's pieces.
      await sink.settled();
      throw err;
    }
    return { rows, size: sink.size, sha256: sink.sha256, seq };
  } finally {
    await conn.close();
  }
}
