import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import { PassThrough, type Readable } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import { flatten, type ExportLayout, type ExportRecord } from './columns.ts';
import { ByteWriter, PIECE_BYTES } from './bytes.ts';
import { CsvEncoder, type CsvOptions } from './csv.ts';
import type { ExportFormat } from './negotiate.ts';
import { lineEncoder } from './ndjson.ts';

/** Where records go: NDJSON or CSV text or an XLSX workbook, all written into the output stream with backpressure. */
interface Sink {
  /** Writes records; resolves with the characters they made once the output can take more. */
  write(records: ExportRecord[], signal: AbortSignal): Promise<number>;
  finish(): Promise<void>;
  abort(): void;
  /** What one batch should come to; the next batch's row count follows from the last one's size. */
  batchChars: number;
}

/**
 * Bytes the response stream holds before the export waits for the client (per side of the PassThrough).
 * Everything an export holds while its client is slow is this, one batch, and the socket's own buffer:
 * a paused client must cost the server little, since many may be paused at once.
 */
const OUT_BUFFER = 1 << 18;

/** A sink of text (CSV, NDJSON): each batch's bytes written piece by piece, waiting whenever the output is full. */
function textSink(out: PassThrough, head: string, encode: (records: ExportRecord[]) => Buffer[]): Sink {
  if (head) out.write(head);
  return {
    write: async (records, signal) => {
      let bytes = 0;
      for (const piece of encode(records)) {
        bytes += piece.length;
        // A piece longer than PIECE_BYTES (one long row) goes in cuts, so that a stalled client's socket holds little.
        for (let at = 0; at < piece.length; at += PIECE_BYTES) {
          if (!out.write(at === 0 && piece.length <= PIECE_BYTES ? piece : piece.subarray(at, at + PIECE_BYTES))) await once(out, 'drain', { signal });
        }
      }
      return bytes;
    },
    finish: async () => {
      out.end();
    },
    abort: () => {},
    batchChars: 1 << 18,
  };
}

function csvSink(out: PassThrough, layout: ExportLayout, options: CsvOptions): Sink {
  const encoder = new CsvEncoder(layout.columns, options);
  const bytes = new ByteWriter();
  return textSink(out, encoder.head(), (records) => encoder.rows(flatten(layout, records), bytes));
}

/** One JSON object per line, exactly the item of the JSON answer (nested values as objects, not flattened; see lineEncoder). */
function ndjsonSink(out: PassThrough, layout: ExportLayout): Sink {
  const bytes = new ByteWriter();
  const line = lineEncoder(layout);
  return textSink(out, '', (records) => {
    for (const record of records) bytes.write(line(record) + '\n');
    return bytes.take();
  });
}

function xlsxSink(out: PassThrough, layout: ExportLayout): Sink {
  // ExcelJS (and what it loads) holds about 27 MB of a server's memory once imported: it is imported when a
  // workbook is first written, not with the server.
  const writer = import('./xlsx.ts').then(({ XlsxExportWriter }) => new XlsxExportWriter(out, layout.def.collection, layout.columns));
  writer.catch(() => undefined);
  return {
    write: async (records, signal) => (await writer).write(flatten(layout, records), signal),
    finish: async () => (await writer).finish(),
    abort: () => void writer.then((w) => w.abort(), () => undefined),
    // Sheet XML is about four times the CSV of the same rows.
    batchChars: 1 << 20,
  };
}

function sinkOf(job: ExportJob, out: PassThrough): Sink {
  switch (job.format) {
    case 'ndjson':
      return ndjsonSink(out, job.layout);
    case 'csv':
      return csvSink(out, job.layout, job.csv);
    default:
      return xlsxSink(out, job.layout);
  }
}

/**
 * Export streams now open, and how earlier ones ended: for logs, operators, and the tests of abort handling.
 * `stalled` counts those cut off because their client took nothing for the idle timeout (they also count as aborted).
 */
export const exportStats = { open: 0, completed: 0, aborted: 0, failed: 0, stalled: 0 };

/** What an export logs through (a request's logger, or a job's). */
export type ExportLog = Pick<FastifyBaseLogger, 'info' | 'error'>;

export interface ExportJob {
  format: ExportFormat;
  layout: ExportLayout;
  csv: CsvOptions;
  /** The first batch, read before the response started (so its errors are still a proper problem answer). */
  first: ExportRecord[] | undefined;
  /** The batches after the first; `rows` is the size the writer asks for. */
  next(rows: number): Promise<ExportRecord[] | undefined>;
  /** Releases what the export holds (its database connection and its place); runs once, however it ended. */
  release(): Promise<void>;
  log: ExportLog;
  /** The response the export is sent on, watched for its client stalling or going away. */
  response?: ServerResponse;
  /** How long the client may take no bytes before the export is cut off (EXPORT_IDLE_TIMEOUT_MS). */
  idleTimeoutMs?: number;
  /** Told the number of items of each batch once it is written (a snapshot counts its rows). */
  onBatch?(items: number): void;
}

/** Resolves like `work`, or rejects as soon as `signal` aborts (a workbook's last bytes wait for a client that may never read them). */
function unlessAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/**
 * Cuts the export off when its client takes no bytes for `ms`: Node's socket timeout, which every write the
 * socket completes (the client took bytes) or starts puts off, so a slow reader keeps its export and a
 * stalled one loses it. The response is destroyed: the client sees a cut-off transfer (chunked encoding
 * unterminated), never a complete-looking one, and the export ends as if the client had gone away.
 * Node restores the server's own timeouts when the connection is used again (keep-alive).
 */
function cutOffWhenStalled(response: ServerResponse, ms: number, log: ExportLog): void {
  response.setTimeout(ms, () => {
    if (response.destroyed) return;
    exportStats.stalled += 1;
    log.info({ idleTimeoutMs: ms }, 'export cut off: its client took no bytes for the idle timeout');
    response.destroy();
  });
}

/**
 * Starts writing an export and returns the stream to send. Rows are written while later ones are still
 * being read; the writer waits whenever the client is slower (so memory stays flat), and stops at once,
 * releasing its connection, when the client goes away or stops reading for the idle timeout.
 */
export function runExport(job: ExportJob): Readable {
  const out = new PassThrough({ highWaterMark: OUT_BUFFER });
  const abort = new AbortController();
  // Fastify destroys the payload stream when the response closes early; that is the client going away.
  out.once('close', () => abort.abort());
  const { response } = job;
  if (response) {
    // Also watched here: a client that left before Fastify took the stream would otherwise not be noticed.
    if (response.destroyed) abort.abort();
    else response.once('close', () => abort.abort());
    if (job.idleTimeoutMs) cutOffWhenStalled(response, job.idleTimeoutMs, job.log);
  }
  exportStats.open += 1;
  const sink = sinkOf(job, out);
  let rows = 0;
  let released = false;
  const release = async () => {
    if (released) return;
    released = true;
    await job.release().catch((err: unknown) => job.log.error({ err }, 'export connection was not released cleanly'));
  };
  void (async () => {
    let outcome: 'completed' | 'aborted' | 'failed' = 'completed';
    let ahead: Promise<ExportRecord[] | undefined> | undefined;
    try {
      let batch = job.first;
      job.first = undefined;
      // The next batch is read while this one is written (read ahead), so that the database produces rows
      // while the export encodes and sends (on PostgreSQL it is another process: without this, each spends
      // most of an export waiting for the other). An export so holds two batches at most.
      let rowsPerChar: number | undefined;
      while (batch && !abort.signal.aborted) {
        const records = batch.length;
        // The size of the first batch is not known yet: its next is asked for once it is written.
        if (rowsPerChar !== undefined) ahead = job.next(sink.batchChars * rowsPerChar);
        ahead?.catch(() => undefined);
        const chars = await sink.write(batch, abort.signal);
        batch = undefined;
        rows += records;
        job.onBatch?.(records);
        if (abort.signal.aborted) break;
        rowsPerChar = records / Math.max(chars, 1);
        const next = ahead ?? job.next(sink.batchChars * rowsPerChar);
        ahead = undefined;
        batch = await next;
      }
      if (abort.signal.aborted) outcome = 'aborted';
      else {
        // Every row is read: the connection goes back before the last bytes wait for the client.
        await release();
        await unlessAborted(sink.finish(), abort.signal);
      }
    } catch (err) {
      if (abort.signal.aborted) outcome = 'aborted';
      else {
        outcome = 'failed';
        job.log.error({ err, rows }, 'export failed');
        // Fastify logs it and closes the socket: the client sees a truncated answer, never a complete-looking one.
        out.destroy(err as Error);
      }
    } finally {
      if (outcome !== 'completed') sink.abort();
      // Nothing more will be written: what the stream still buffers goes too (a response closed before
      // Fastify took the stream would not destroy it).
      if (outcome === 'aborted') out.destroy();
      // A batch read ahead ends before its connection is given back.
      await ahead?.catch(() => undefined);
      await release();
      exportStats.open -= 1;
      exportStats[outcome] += 1;
      if (outcome === 'aborted') job.log.info({ rows }, 'export stopped: the client went away');
    }
  })();
  return out;
}
