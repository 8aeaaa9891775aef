import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import { PassThrough, type Readable } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import { flatten, itemOf, type ExportLayout, type ExportRecord } from './columns.ts';
import { CsvEncoder, type CsvOptions } from './csv.ts';
import type { ExportFormat } from './negotiate.ts';
import { XlsxExportWriter } from './xlsx.ts';

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
/**
 * The largest piece written at once. The response takes whole chunks: a batch written as one chunk would
 * sit whole in the socket's buffer of a client that stopped reading (10 MB for 100 rows of 100 kB).
 */
const PIECE_BYTES = 1 << 16;

/** A sink of text (CSV, NDJSON): each batch's text written as bytes in pieces, waiting whenever the output is full. */
function textSink(out: PassThrough, head: string, encode: (records: ExportRecord[]) => string): Sink {
  if (head) out.write(head);
  return {
    write: async (records, signal) => {
      const text = encode(records);
      // Bytes, cut anywhere (a piece of a string could split a surrogate pair); pieces share the one buffer.
      const chars = text.length;
      const bytes = Buffer.from(text, 'utf8');
      for (let at = 0; at < bytes.length; at += PIECE_BYTES) {
        if (!out.write(bytes.subarray(at, at + PIECE_BYTES))) await once(out, 'drain', { signal });
      }
      return chars;
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
  return textSink(out, encoder.head(), (records) => encoder.rows(flatten(layout, records)));
}

/** One JSON object per line, exactly the item of the JSON answer (nested values as objects, not flattened). */
function ndjsonSink(out: PassThrough, layout: ExportLayout): Sink {
  return textSink(out, '', (records) => {
    let text = '';
    for (const record of records) text += JSON.stringify(itemOf(layout, record)) + '\n';
    return text;
  });
}

function xlsxSink(out: PassThrough, layout: ExportLayout): Sink {
  const writer = new XlsxExportWriter(out, layout.def.collection, layout.columns);
  // Sheet XML is about four times the CSV of the same rows.
  return { write: (records, signal) => writer.write(flatten(layout, records), signal), finish: () => writer.finish(), abort: () => writer.abort(), batchChars: 1 << 20 };
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
    try {
      let batch = job.first;
      // Held only as long as it is being written: a slow client's export keeps one batch, not two.
      job.first = undefined;
      while (batch && !abort.signal.aborted) {
        const records = batch.length;
        const chars = await sink.write(batch, abort.signal);
        batch = undefined;
        rows += records;
        job.onBatch?.(records);
        if (abort.signal.aborted) break;
        batch = await job.next((sink.batchChars * records) / Math.max(chars, 1));
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
      await release();
      exportStats.open -= 1;
      exportStats[outcome] += 1;
      if (outcome === 'aborted') job.log.info({ rows }, 'export stopped: the client went away');
    }
  })();
  return out;
}
