import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import { PassThrough, type Readable } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import { flatten, type ExportLayout, type ExportRecord } from './columns.ts';
import { BufferRecycler } from '../../buffer-recycler.ts';
import { ByteWriter, Coalescer, PIECE_BYTES, type EncodedBatch } from './bytes.ts';
import { CsvEncoder, type CsvOptions } from './csv.ts';
import type { ExportFormat } from './negotiate.ts';
import { lineEncoder } from './ndjson.ts';
import { SHEET_PIECE_BYTES, sheetRecycler } from './xlsx-xml.ts';

/** Where records go: NDJSON or CSV text or an XLSX workbook, all written into the output stream with backpressure. */
interface Sink {
  /** Writes records; resolves with the characters they made once the output can take more. */
  write(records: ExportRecord[], signal: AbortSignal): Promise<number>;
  /**
   * Writes bytes the database encoded (copy-source.ts, line-source.ts) once the output can take them: text, or
   * (XLSX) a sheet's rows, with `breaks` where a new sheet begins (EncodedBatch).
   */
  writeEncoded?(pieces: Buffer[], signal: AbortSignal, breaks?: number[]): Promise<void>;
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
 * What a compressor is given at a time, when the export's bytes go to one (a compressed response, a
 * snapshot's gzip). zlib and brotli compress on a thread of libuv's pool, but each chunk they are given (and
 * each output buffer they fill) needs a callback on the main thread before they go on, and the main thread is
 * busy reading and encoding the next rows: given the 64 kB pieces of an uncompressed response with zlib's
 * 16 kB output buffers, they mostly waited for it, and compressing added its whole time to the export's. With
 * 256 kB pieces and 64 kB buffers (COMPRESSOR_OUTPUT_BYTES in http/compression.ts) they compress while the next
 * rows are encoded. Measured on SQLite (docs/benchmarks.md, "Exports"): the CSV of 224 821 products over HTTP
 * in br 3.7-4.3 s before, 2.5-3.0 s after, in gzip 4.0-4.5 s before, 3.0-3.2 s after (gzip 6 alone takes 2.2 s
 * of those bytes); a 1.17 M-row CSV.gz snapshot 6.1-6.9 s before, 4.7-5.3 s after. Pieces of 1 MiB were no
 * faster, and a paused gzip export held 2.6 MB more with them (6.2 MB against 3.6 MB).
 */
export const COMPRESSED_PIECE_BYTES = 1 << 18;

/**
 * How long bytes gathered for a compressor may wait for more: an export whose rows come slowly (a rare
 * filter over a large table) still sends what it has, and its client, and the idle cut-off, see it moving.
 */
const HELD_MS = 1000;

/**
 * A sink of text (CSV, NDJSON): each batch's bytes written piece by piece, waiting whenever the output is
 * full; when `compressed`, gathered into pieces of COMPRESSED_PIECE_BYTES first.
 */
function textSink(out: PassThrough, head: string, encode: (records: ExportRecord[]) => Buffer[], compressed: boolean): Sink {
  if (head) out.write(head);
  const held = compressed ? new Coalescer(COMPRESSED_PIECE_BYTES) : undefined;
  let timer: NodeJS.Timeout | undefined;
  // Written without waiting: at most COMPRESSED_PIECE_BYTES beyond the output's buffer, and later pieces wait.
  const writeHeld = () => {
    clearTimeout(timer);
    timer = undefined;
    const rest = held?.take();
    if (rest && !out.destroyed) out.write(rest);
  };
  const writePieces = async (pieces: Buffer[], signal: AbortSignal): Promise<number> => {
    let bytes = 0;
    for (const piece of pieces) {
      bytes += piece.length;
      if (held) {
        const whole = held.add(piece);
        if (whole) {
          clearTimeout(timer);
          timer = undefined;
          if (!out.write(whole)) await once(out, 'drain', { signal });
        } else timer ??= setTimeout(writeHeld, HELD_MS);
        continue;
      }
      // A piece longer than PIECE_BYTES (one long row) goes in cuts, so that a stalled client's socket holds little.
      for (let at = 0; at < piece.length; at += PIECE_BYTES) {
        if (!out.write(at === 0 && piece.length <= PIECE_BYTES ? piece : piece.subarray(at, at + PIECE_BYTES))) await once(out, 'drain', { signal });
      }
    }
    return bytes;
  };
  return {
    write: (records, signal) => writePieces(encode(records), signal),
    writeEncoded: async (pieces, signal) => {
      await writePieces(pieces, signal);
    },
    finish: async () => {
      writeHeld();
      out.end();
    },
    abort: () => {
      clearTimeout(timer);
      held?.take();
    },
    batchChars: 1 << 18,
  };
}

/**
 * What the bytes an export encodes (or the database encodes for it) are written into:
 * - for a response, pieces of PIECE_BYTES from buffers its socket gives back once it has written them
 *   (`givingBack` around the response in listing/serve.ts). The export writes at most 256 kB (four buffers) ahead
 *   into its stream and the socket holds a few more, so sixteen are tracked. Each 64 kB was a new buffer before,
 *   and V8 ran a full garbage collection for every few tens of MB of them: PostgreSQL's NDJSON of 100 000
 *   products took 0.45 s (0.48 s of CPU) before and 0.34 s (0.27 s) after, over HTTP, alternating, medians of seven;
 * - for a compressor, pieces of COMPRESSED_PIECE_BYTES cut from buffers of four, which Coalescer joins without a
 *   copy (bytes.ts), and which the compressor gives back once it has read them (buffer-recycler.ts: `givingBack`
 *   around a snapshot's gzip and a response's compressor);
 * - for a sheet's rows (XLSX), pieces of SHEET_PIECE_BYTES for the zip's deflate, from buffers it gives back, as
 *   XlsxExportWriter's own (`sheetRecycler`).
 */
export function exportBytes(format: ExportFormat, compressed: boolean | undefined): ByteWriter {
  if (format === 'xlsx') return new ByteWriter(SHEET_PIECE_BYTES, SHEET_PIECE_BYTES, sheetRecycler());
  return compressed ? new ByteWriter(COMPRESSED_PIECE_BYTES, 4 * COMPRESSED_PIECE_BYTES, new BufferRecycler()) : new ByteWriter(PIECE_BYTES, PIECE_BYTES, new BufferRecycler(2, 16));
}

function csvSink(out: PassThrough, layout: ExportLayout, options: CsvOptions, compressed: boolean): Sink {
  const encoder = new CsvEncoder(layout.columns, options);
  const bytes = exportBytes('csv', compressed);
  return textSink(out, encoder.head(), (records) => encoder.rows(flatten(layout, records), bytes), compressed);
}

/** One JSON object per line, exactly the item of the JSON answer (nested values as objects, not flattened; see lineEncoder). */
function ndjsonSink(out: PassThrough, layout: ExportLayout, compressed: boolean): Sink {
  const bytes = exportBytes('ndjson', compressed);
  const line = lineEncoder(layout);
  return textSink(
    out,
    '',
    (records) => {
      for (const record of records) bytes.write(line(record) + '\n');
      return bytes.take();
    },
    compressed,
  );
}

function xlsxSink(out: PassThrough, layout: ExportLayout): Sink {
  // ExcelJS (and what it loads) holds about 27 MB of a server's memory once imported: it is imported when a
  // workbook is first written, not with the server.
  const writer = import('./xlsx.ts').then(({ XlsxExportWriter }) => new XlsxExportWriter(out, layout.def.collection, layout.columns));
  writer.catch(() => undefined);
  return {
    write: async (records, signal) => (await writer).write(flatten(layout, records), signal),
    writeEncoded: async (pieces, signal, breaks) => (await writer).writeRows(pieces, breaks, signal),
    finish: async () => (await writer).finish(),
    abort: () => void writer.then((w) => w.abort(), () => undefined),
    // Sheet XML is about four times the CSV of the same rows.
    batchChars: 1 << 20,
  };
}

function sinkOf(job: ExportJob, out: PassThrough): Sink {
  switch (job.format) {
    case 'ndjson':
      return ndjsonSink(out, job.layout, job.compressed === true);
    case 'csv':
      return csvSink(out, job.layout, job.csv, job.compressed === true);
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

/**
 * An export's rows, each source with its first batch read before the response started (so that its errors are
 * still a proper problem answer), and the batches after it: `next` is asked for a number of rows (records, see
 * source.ts) or of bytes (encoded, see copy-source.ts).
 */
export type ExportRows =
  | { kind: 'records'; first: ExportRecord[] | undefined; next(rows: number): Promise<ExportRecord[] | undefined> }
  | { kind: 'encoded'; first: EncodedBatch | undefined; next(bytes: number): Promise<EncodedBatch | undefined> };

/** The bytes an encoded export asks for at a time: a few pieces, so that little waits in memory for the client. */
const ENCODED_BATCH_BYTES = 1 << 18;

export interface ExportJob {
  format: ExportFormat;
  layout: ExportLayout;
  csv: CsvOptions;
  /** What is written: records, or (CSV and NDJSON on PostgreSQL) the bytes the database wrote. */
  rows: ExportRows;
  /** Releases what the export holds (its database connection and its place); runs once, however it ended. */
  release(): Promise<void>;
  log: ExportLog;
  /** The response the export is sent on, watched for its client stalling or going away. */
  response?: ServerResponse;
  /** How long the client may take no bytes before the export is cut off (EXPORT_IDLE_TIMEOUT_MS). */
  idleTimeoutMs?: number;
  /** Told the number of items of each batch once it is written (a snapshot counts its rows). */
  onBatch?(items: number): void;
  /** The bytes go to a compressor (a compressed response, a snapshot's gzip): CSV and NDJSON are written in larger pieces. */
  compressed?: boolean;
}

/**
 * Resolves like `work`, or rejects as soon as `signal` aborts (a workbook's last bytes wait for a client that may
 * never read them). The work goes on after an abort and ends as it may (a workbook aborted while it was being
 * closed rejects): held here whatever comes first, so that its failure is never an unhandled rejection, which
 * ends the process.
 */
export function unlessAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  work.catch(() => undefined);
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
 * Writes records batch by batch. The next batch is read while this one is written (read ahead, kept in
 * `reading`), so that the database produces rows while the export encodes and sends (on PostgreSQL it is
 * another process: without this, each spends most of an export waiting for the other). An export so holds
 * two batches at most.
 */
async function writeRecords(source: Extract<ExportRows, { kind: 'records' }>, sink: Sink, signal: AbortSignal, counted: (rows: number) => void, reading: { ahead?: Promise<unknown> }): Promise<void> {
  let batch = source.first;
  source.first = undefined;
  let rowsPerChar: number | undefined;
  let ahead: Promise<ExportRecord[] | undefined> | undefined;
  while (batch && !signal.aborted) {
    const records = batch.length;
    // The size of the first batch is not known yet: its next is asked for once it is written.
    if (rowsPerChar !== undefined) reading.ahead = ahead = source.next(sink.batchChars * rowsPerChar);
    ahead?.catch(() => undefined);
    const chars = await sink.write(batch, signal);
    batch = undefined;
    counted(records);
    if (signal.aborted) return;
    rowsPerChar = records / Math.max(chars, 1);
    const next = ahead ?? source.next(sink.batchChars * rowsPerChar);
    reading.ahead = next;
    ahead = undefined;
    batch = await next;
  }
}

/**
 * Writes the bytes the database encoded, as they come: the COPY stream reads ahead by itself (its buffer),
 * and stops reading while the export waits for its client.
 */
async function writeEncoded(source: Extract<ExportRows, { kind: 'encoded' }>, sink: Sink, signal: AbortSignal, counted: (rows: number) => void): Promise<void> {
  let batch = source.first;
  source.first = undefined;
  while (batch && !signal.aborted) {
    await sink.writeEncoded!(batch.pieces, signal, batch.breaks);
    counted(batch.rows);
    if (signal.aborted) return;
    batch = await source.next(ENCODED_BATCH_BYTES);
  }
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
    // A batch read ahead (records) ends before its connection is given back.
    const reading: { ahead?: Promise<unknown> } = {};
    const counted = (n: number) => {
      rows += n;
      job.onBatch?.(n);
    };
    try {
      if (job.rows.kind === 'encoded') await writeEncoded(job.rows, sink, abort.signal, counted);
      else await writeRecords(job.rows, sink, abort.signal, counted, reading);
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
      await reading.ahead?.catch(() => undefined);
      await release();
      exportStats.open -= 1;
      exportStats[outcome] += 1;
      if (outcome === 'aborted') job.log.info({ rows }, 'export stopped: the client went away');
    }
  })();
  return out;
}
