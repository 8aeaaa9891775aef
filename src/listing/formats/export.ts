import { once } from 'node:events';
import { PassThrough, type Readable } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import { flatten, type ExportLayout, type ExportRecord } from './columns.ts';
import { CsvEncoder, type CsvOptions } from './csv.ts';
import { XlsxExportWriter } from './xlsx.ts';

/** Where rows go: CSV text or an XLSX workbook, both written into the response stream with backpressure. */
interface Sink {
  /** Writes rows; resolves with the characters they made once the output can take more. */
  write(rows: unknown[][], signal: AbortSignal): Promise<number>;
  finish(): Promise<void>;
  abort(): void;
  /** What one batch should come to; the next batch's row count follows from the last one's size. */
  batchChars: number;
}

/** Bytes the response stream holds before the export waits for the client. */
const OUT_BUFFER = 1 << 20;

function csvSink(out: PassThrough, layout: ExportLayout, options: CsvOptions): Sink {
  const encoder = new CsvEncoder(layout.columns, options);
  out.write(encoder.head());
  return {
    write: async (rows, signal) => {
      const text = encoder.rows(rows);
      if (!out.write(text)) await once(out, 'drain', { signal });
      return text.length;
    },
    finish: async () => {
      out.end();
    },
    abort: () => {},
    batchChars: 1 << 18,
  };
}

function xlsxSink(out: PassThrough, layout: ExportLayout): Sink {
  const writer = new XlsxExportWriter(out, layout.def.collection, layout.columns);
  // Sheet XML is about four times the CSV of the same rows.
  return { write: (rows, signal) => writer.write(rows, signal), finish: () => writer.finish(), abort: () => writer.abort(), batchChars: 1 << 20 };
}

/** Export streams now open, and how earlier ones ended: for logs, operators, and the tests of abort handling. */
export const exportStats = { open: 0, completed: 0, aborted: 0, failed: 0 };

export interface ExportJob {
  format: 'csv' | 'xlsx';
  layout: ExportLayout;
  csv: CsvOptions;
  /** The first batch, read before the response started (so its errors are still a proper problem answer). */
  first: ExportRecord[] | undefined;
  /** The batches after the first; `rows` is the size the writer asks for. */
  next(rows: number): Promise<ExportRecord[] | undefined>;
  /** Releases what the export holds (its database connection); runs once, however it ended. */
  release(): Promise<void>;
  log: FastifyBaseLogger;
}

/**
 * Starts writing an export and returns the stream to send. Rows are written while later ones are still
 * being read; the writer waits whenever the client is slower (so memory stays flat), and stops at once,
 * releasing its connection, when the client goes away.
 */
export function runExport(job: ExportJob): Readable {
  const out = new PassThrough({ highWaterMark: OUT_BUFFER });
  const abort = new AbortController();
  // Fastify destroys the payload stream when the response closes early; that is the client going away.
  out.once('close', () => abort.abort());
  exportStats.open += 1;
  const sink = job.format === 'csv' ? csvSink(out, job.layout, job.csv) : xlsxSink(out, job.layout);
  let rows = 0;
  void (async () => {
    let outcome: 'completed' | 'aborted' | 'failed' = 'completed';
    try {
      let batch = job.first;
      while (batch && !abort.signal.aborted) {
        const cells = flatten(job.layout, batch);
        rows += cells.length;
        const chars = await sink.write(cells, abort.signal);
        if (abort.signal.aborted) break;
        batch = await job.next((sink.batchChars * batch.length) / Math.max(chars, 1));
      }
      if (abort.signal.aborted) outcome = 'aborted';
      else await sink.finish();
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
      await job.release().catch((err: unknown) => job.log.error({ err }, 'export connection was not released cleanly'));
      exportStats.open -= 1;
      exportStats[outcome] += 1;
      if (outcome === 'aborted') job.log.info({ rows }, 'export stopped: the client went away');
    }
  })();
  return out;
}
