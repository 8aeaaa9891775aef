import type { Readable } from 'node:stream';
import { sql, type CompiledQuery } from 'kysely';
import pg from 'pg';
import { filteredQuery, orderedQuery, type ListPlan } from '../engine.ts';
import { ByteWriter } from './bytes.ts';
import type { ExportLayout } from './columns.ts';
import type { ExportConnection } from './connection.ts';
import type { CsvOptions } from './csv.ts';
import type { ExportFormat } from './negotiate.ts';
import { numbersInRange, pgCsvCells, pgCsvOptions, pgLine } from './pg-lines.ts';

/** Bytes of an export's text, finished by the database, and the rows they hold. */
export interface EncodedBatch {
  pieces: Buffer[];
  rows: number;
}

/**
 * A compiled query with its parameters written into it as literals: `COPY (query)` takes no parameters. Values
 * are what the listing's filters and keyset put there (numbers, text, booleans, null); anything else, or a
 * number that is not finite, gives undefined (the export then reads rows instead). Text goes through node-pg's
 * escapeLiteral, the quoting libpq's PQescapeLiteral does (an `E''` literal when there is a backslash).
 */
export function inlineParameters(query: CompiledQuery): string | undefined {
  const literals: string[] = [];
  for (const value of query.parameters) {
    if (value === null) literals.push('null');
    else if (typeof value === 'boolean') literals.push(String(value));
    // Parenthesised: `a - $1` with -5 must not become the comment `a --5`.
    else if (typeof value === 'number' && Number.isFinite(value)) literals.push(`(${value})`);
    else if (typeof value === 'bigint') literals.push(`(${value})`);
    else if (typeof value === 'string') literals.push(pg.escapeLiteral(value));
    else return undefined;
  }
  // One pass over Kysely's text, whose only `$n` are its placeholders: an inlined literal is never read again.
  return query.sql.replace(/\$(\d+)/g, (_m, n: string) => literals[Number(n) - 1]);
}

/** What an export's `COPY` sends, read into the export's bytes: rows counted, and whether it may end where it is. */
export interface CopyReader {
  rows: number;
  /** True when what was read ends with a whole row (and, for the binary format, its trailer). */
  readonly done: boolean;
  push(chunk: Buffer, out: ByteWriter): void;
}

/** The `COPY` of an export whose text PostgreSQL writes, and a reader of its output for each run. */
export interface CopyPlan {
  statement: string;
  reader(): CopyReader;
}

/**
 * The `COPY` of an export whose text PostgreSQL writes, or undefined when it is JavaScript's to write: CSV
 * through PostgreSQL's own CSV writer where it writes the export's bytes (pgCsvCells), otherwise each row's
 * whole line (pgLine) in the binary format.
 */
export async function copyPlan(conn: ExportConnection, layout: ExportLayout, plan: ListPlan, format: ExportFormat, csv: CsvOptions): Promise<CopyPlan | undefined> {
  if (!conn.copyOut || format === 'xlsx') return undefined;
  const cells = format === 'csv' ? pgCsvCells(layout, csv) : undefined;
  const line = cells ? undefined : pgLine(layout, format, csv);
  if (!cells && !line) return undefined;
  const shaped = { ...plan, shape: layout.shape };
  // A number PostgreSQL would write otherwise than JavaScript (a weight of 1e21): the rows are JavaScript's to
  // write. Checked over the export's own rows, on its snapshot; one pass over an index or the table.
  const inRange = numbersInRange(layout);
  if (inRange) {
    const outside = (await filteredQuery(conn.db, shaped)).select(sql<number>`1`.as('one')).where(sql<boolean>`not ${inRange}`).limit(1);
    if ((await conn.arrays(outside.compile())).length > 0) return undefined;
  }
  // Every sort of a listing has its index (the keyset pages read it). Without a LIMIT the planner would rather
  // scan the table and sort it, lines and all: for 100 000 products 40 MB through a disk sort before the first
  // byte (0.8 s). In the index's order the first line comes at once. The setting ends with the transaction.
  await conn.arrays(sql`set local enable_sort = off`.compile(conn.db));
  const query = await orderedQuery(conn.db, shaped, (q) => (cells ? q.select(cells.map((cell, i) => cell.as(`c${i}`))) : q.select(line!.as('line'))));
  const text = inlineParameters(query.compile());
  if (text === undefined) return undefined;
  if (cells) return { statement: `copy (${text}) to stdout (${pgCsvOptions(csv)})`, reader: () => new CsvCopyReader() };
  // Binary: each row comes as its length and its bytes, exactly the line; the text format would escape them.
  return { statement: `copy (${text}) to stdout (format binary)`, reader: () => new BinaryCopyReader() };
}

const CRLF = Buffer.from('\r\n');

/**
 * Reads PostgreSQL's CSV (`COPY … (format csv)`), whose records end in LF, and writes it with the CRLF record
 * ends of CsvEncoder. A LF ends a record outside quotes; inside a quoted value it is the value's own and stays.
 * PostgreSQL quotes every value that holds a quote, so outside quotes a `"` opens a quoted value, and inside one
 * a `"` closes it (a doubled quote closes and opens again). A record may be cut between any two chunks.
 */
export class CsvCopyReader implements CopyReader {
  rows = 0;
  private quoted = false;
  /** A record has begun and not ended. */
  private open = false;

  get done(): boolean {
    return !this.open;
  }

  push(chunk: Buffer, out: ByteWriter): void {
    const end = chunk.length;
    /** Bytes from here up to `at` are written with the next record end, or at the end of the chunk. */
    let from = 0;
    let at = 0;
    /** The next quote at or after `at` (-1: none in the chunk), found once and kept while it lies ahead. */
    let quote = chunk.indexOf(0x22);
    while (at < end) {
      if (this.quoted) {
        const close = chunk.indexOf(0x22, at);
        if (close === -1) break;
        this.quoted = false;
        at = close + 1;
        quote = chunk.indexOf(0x22, at);
        continue;
      }
      const lf = chunk.indexOf(0x0a, at);
      if (quote !== -1 && (lf === -1 || quote < lf)) {
        this.quoted = true;
        at = quote + 1;
        continue;
      }
      if (lf === -1) break;
      out.writeBytes(chunk, from, lf);
      out.writeBytes(CRLF);
      this.rows += 1;
      this.open = false;
      from = at = lf + 1;
    }
    if (from < end) {
      out.writeBytes(chunk, from, end);
      this.open = true;
    }
  }
}

/** `PGCOPY\n\377\r\n\0`, then 32-bit flags and the length of a header extension. */
const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');
const FILE_HEADER = SIGNATURE.length + 8;

/**
 * Reads PostgreSQL's binary COPY format of one text column (the file header, then per row a 16-bit field count,
 * a 32-bit length and the bytes, then a -1 trailer), writing each row's bytes out as they come: a row may be
 * cut between any two chunks of the stream.
 */
export class BinaryCopyReader implements CopyReader {
  rows = 0;
  done = false;
  private state: 'file' | 'extension' | 'row' | 'data' = 'file';
  /** Header bytes kept from the end of a chunk until the rest arrives (always fewer than the header needs). */
  private held = Buffer.alloc(0);
  private remaining = 0;

  push(chunk: Buffer, out: ByteWriter): void {
    let at = 0;
    const available = () => this.held.length + chunk.length - at;
    /** `n` header bytes, from what is held first; the caller has checked that there are that many. */
    const take = (n: number): Buffer => {
      if (this.held.length === 0) return chunk.subarray(at, (at += n));
      const bytes = Buffer.concat([this.held, chunk.subarray(at, at + n - this.held.length)]);
      at += n - this.held.length;
      this.held = Buffer.alloc(0);
      return bytes;
    };
    const hold = () => {
      this.held = Buffer.concat([this.held, chunk.subarray(at)]);
      at = chunk.length;
    };
    while (at < chunk.length) {
      if (this.done) throw new Error('COPY sent bytes after its trailer');
      if (this.state === 'data') {
        const n = Math.min(this.remaining, chunk.length - at);
        out.writeBytes(chunk, at, at + n);
        at += n;
        this.remaining -= n;
        if (this.remaining === 0) this.endRow();
      } else if (this.state === 'row') {
        if (available() < 2) return hold();
        // The trailer is a field count of -1 alone; a row's count (1) comes with its 32-bit length.
        const first = this.held.length > 0 ? this.held[0] : chunk[at];
        const second = this.held.length > 1 ? this.held[1] : chunk[at + 1 - this.held.length];
        if (first === 0xff && second === 0xff) {
          take(2);
          this.done = true;
          continue;
        }
        if (available() < 6) return hold();
        // Nearly every header lies whole in the chunk, and is read where it is: taking each through `take`, a
        // buffer per row, was most of this reader's time (1.17 M rows: 186 ms against 130-140 ms read in place).
        const inPlace = this.held.length === 0;
        const head = inPlace ? chunk : take(6);
        const offset = inPlace ? at : 0;
        if (inPlace) at += 6;
        const fields = head.readInt16BE(offset);
        if (fields !== 1) throw new Error(`COPY row of ${fields} fields, expected 1`);
        const length = head.readInt32BE(offset + 2);
        // pgLine's expressions are never null; a null would be a row the export cannot write.
        if (length < 0) throw new Error('COPY row without a line');
        this.remaining = length;
        if (length === 0) this.endRow();
        else this.state = 'data';
      } else if (this.state === 'file') {
        if (available() < FILE_HEADER) return hold();
        const head = take(FILE_HEADER);
        if (!head.subarray(0, SIGNATURE.length).equals(SIGNATURE)) throw new Error('not a binary COPY stream');
        this.remaining = head.readUInt32BE(SIGNATURE.length + 4);
        this.state = this.remaining > 0 ? 'extension' : 'row';
      } else {
        // A header extension (none so far): skipped.
        const n = Math.min(this.remaining, chunk.length - at);
        at += n;
        this.remaining -= n;
        if (this.remaining === 0) this.state = 'row';
      }
    }
  }

  private endRow(): void {
    this.rows += 1;
    this.state = 'row';
  }
}

/**
 * The bytes of an export that PostgreSQL writes (`copy … to stdout`), batch by batch: what has arrived, up to
 * the size asked, without waiting for more once there is some. The stream's own buffer is what the export holds
 * beyond the batch; while the export waits for its client, the stream stops reading the socket and PostgreSQL
 * waits too.
 */
export class CopySource {
  private readonly out = new ByteWriter();
  private ended = false;
  private failure: Error | undefined;
  private wake: (() => void) | undefined;

  constructor(
    private readonly stream: Readable,
    private readonly reader: CopyReader,
  ) {
    const wake = () => this.wake?.();
    stream.on('readable', wake);
    stream.once('end', () => {
      this.ended = true;
      wake();
    });
    stream.once('error', (err: Error) => {
      this.failure = err;
      wake();
    });
  }

  async next(bytes: number): Promise<EncodedBatch | undefined> {
    const rows = this.reader.rows;
    let size = 0;
    while (size < bytes) {
      if (this.failure) throw this.failure;
      const chunk = this.stream.read() as Buffer | null;
      if (chunk) {
        this.reader.push(chunk, this.out);
        size += chunk.length;
        continue;
      }
      if (this.ended || size > 0) break;
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = undefined;
    }
    if (this.failure) throw this.failure;
    if (this.ended && !this.reader.done) throw new Error('COPY ended inside a row, or before its trailer');
    const pieces = this.out.take();
    if (pieces.length === 0 && this.ended) return undefined;
    return { pieces, rows: this.reader.rows - rows };
  }
}
