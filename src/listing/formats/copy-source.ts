import { sql, type CompiledQuery } from 'kysely';
import pg from 'pg';
import { filteredQuery, orderedQuery, type ListPlan } from '../engine.ts';
import type { ByteWriter } from './bytes.ts';
import type { ExportLayout } from './columns.ts';
import type { ExportConnection } from './connection.ts';
import { BINARY_HEADER, BINARY_SIGNATURE, type CopyReader } from './copy-out.ts';
import type { CsvOptions } from './csv.ts';
import type { ExportFormat } from './negotiate.ts';
import { JsonCopyReader } from './json-copy-reader.ts';
import { numbersInRange, pgCsvCells, pgCsvOptions, pgJsonCells, pgLine, pgXlsxCells } from './pg-lines.ts';
import { XlsxCopyReader } from './xlsx-copy-reader.ts';
import { pgNestedCsvCells, pgNestedLine, pgNestedXlsxCells } from './pg-nested-lines.ts';
import { MAX_SHEET_ROWS } from './xlsx-xml.ts';

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

/** The `COPY` of an export whose text PostgreSQL writes, and a reader of its output for each run. */
export interface CopyPlan {
  statement: string;
  reader(): CopyReader;
}

/**
 * PostgreSQL's CSV options under which an NDJSON line is written as it is, with the LF that ends each row: a
 * quote and a delimiter that no line holds. A line is JSON text (to_json escapes every control character in
 * values, JSON.stringify in names; JSON text stored in a column holds none but as whitespace, and its line
 * breaks are dropped: pg-nested-lines.ts), so it holds neither byte nor a CR or LF, is never empty (the null
 * string) and is never `\.`: nothing in it is quoted. Read as text rather than in the binary format, a row is its
 * line with nothing around it (copy-out.ts passes the lines on as they lie in the socket's chunks).
 */
export const PG_LINES_OPTIONS = `format csv, quote E'\\x01', delimiter E'\\x02'`;

/**
 * The `COPY` of an export whose text PostgreSQL writes, or undefined when it is JavaScript's to write: CSV
 * through PostgreSQL's own CSV writer where it writes the export's bytes (pgCsvCells, and pgNestedCsvCells for
 * orders, a record per item with a marker CsvCopyReader counts orders by); NDJSON of a plain layout as a cell per
 * field in the binary format, made lines of by JsonCopyReader (pgJsonCells), and XLSX the same way, made sheet rows
 * of by XlsxCopyReader (pgXlsxCells, and pgNestedXlsxCells for orders); otherwise each row's whole line: NDJSON
 * with nested arrays and JSON text as text (pgNestedLine, PG_LINES_OPTIONS), and the CSV line of a single column in
 * the binary format (pgLine).
 */
export async function copyPlan(conn: ExportConnection, layout: ExportLayout, plan: ListPlan, format: ExportFormat, csv: CsvOptions): Promise<CopyPlan | undefined> {
  if (!conn.copyOut) return undefined;
  const xlsx = format === 'xlsx' ? (pgXlsxCells(layout) ?? pgNestedXlsxCells(layout)) : undefined;
  if (format === 'xlsx' && !xlsx) return undefined;
  const cells = format === 'csv' ? pgCsvCells(layout, csv) : undefined;
  const json = format === 'ndjson' ? pgJsonCells(layout) : undefined;
  const line = format === 'csv' && !cells ? pgLine(layout, csv) : undefined;
  const nestedCsv = format === 'csv' && !cells && !line ? pgNestedCsvCells(layout, csv) : undefined;
  const nested = format === 'ndjson' && !json ? pgNestedLine(layout) : undefined;
  if (!cells && !json && !line && !nestedCsv && !nested && !xlsx) return undefined;
  const shaped = { ...plan, shape: layout.shape };
  // A number PostgreSQL would write otherwise than JavaScript (a weight of 1e21): the rows are JavaScript's to
  // write. Checked over the export's own rows (and their nested elements), on its snapshot; one pass over an
  // index or the table. Not for the cells of JsonCopyReader and XlsxCopyReader: they write a number of any range as
  // JavaScript does (an XLSX export's objects must still be JSON that PostgreSQL reads as JavaScript does).
  const inRange = nested ? nested.inRange : nestedCsv ? nestedCsv.inRange : xlsx ? xlsx.inRange : json ? undefined : numbersInRange(layout);
  if (inRange) {
    const outside = (await filteredQuery(conn.db, shaped)).select(sql<number>`1`.as('one')).where(sql<boolean>`not ${inRange}`).limit(1);
    if ((await conn.arrays(outside.compile())).length > 0) return undefined;
  }
  // Every sort of a listing has its index (the keyset pages read it). Without a LIMIT the planner would rather
  // scan the table and sort it, lines and all: for 100 000 products 40 MB through a disk sort before the first
  // byte (0.8 s). In the index's order the first line comes at once. The settings end with the transaction.
  // JIT: an item's lines with their nested elements (pgNestedLine) make an expression of some hundred functions and
  // a subquery per row, which PostgreSQL's cost estimate sends to JIT compilation with inlining and optimisation:
  // for 100 000 orders that took 1.2-2.6 s more than the 3.5 s of the whole COPY without it (psql, two runs
  // each). Plain lines measured the same either way.
  // extra_float_digits: 1 (the default since PostgreSQL 12) writes a double's shortest digits, as JavaScript does,
  // which every number written here relies on; a server configured with less would write rounded digits.
  await conn.arrays(sql`select set_config('enable_sort', 'off', true), set_config('jit', 'off', true), set_config('extra_float_digits', '1', true)`.compile(conn.db));
  const query = await orderedQuery(conn.db, shaped, (q) => {
    const each = cells ?? json?.cells ?? xlsx?.cells ?? nestedCsv?.cells;
    let selected = each ? q.select(each.map((cell, i) => cell.as(`c${i}`))) : q.select((line ?? nested!.line).as('line'));
    const laterals = nestedCsv?.laterals ?? (xlsx?.lateral ? [{ query: xlsx.lateral, alias: 'x' }] : []);
    for (const { query, alias } of laterals) selected = selected.leftJoinLateral(query.as(alias), (join) => join.onTrue());
    return selected;
  });
  // An item's records in its elements' order, after the listing's own (orderedQuery's last keys).
  const text = inlineParameters((nestedCsv?.order ? query.orderBy(nestedCsv.order) : query).compile());
  if (text === undefined) return undefined;
  if (cells) return { statement: `copy (${text}) to stdout (${pgCsvOptions(csv)})`, reader: () => new CsvCopyReader() };
  if (nestedCsv) return { statement: `copy (${text}) to stdout (${pgCsvOptions(csv)})`, reader: () => new CsvCopyReader(csv.delimiter.charCodeAt(0)) };
  if (json) return { statement: `copy (${text}) to stdout (format binary)`, reader: () => new JsonCopyReader(json.names, json.kinds) };
  if (xlsx) return { statement: `copy (${text}) to stdout (format binary)`, reader: () => new XlsxCopyReader(xlsx.kinds, MAX_SHEET_ROWS, xlsx.itemKinds) };
  if (format === 'ndjson') return { statement: `copy (${text}) to stdout (${PG_LINES_OPTIONS})`, reader: () => new LineCopyReader() };
  // Binary: each row comes as its length and its bytes, exactly the line; as text, its CR LF would be quoted.
  return { statement: `copy (${text}) to stdout (format binary)`, reader: () => new BinaryCopyReader() };
}

/** Reads rows that are the export's lines as they are (PG_LINES_OPTIONS), LF and all. */
export class LineCopyReader implements CopyReader {
  rows = 0;
  /** A row's message has begun and not ended. */
  protected open = false;

  get done(): boolean {
    return !this.open;
  }

  data(chunk: Buffer, start: number, end: number, last: boolean, out: ByteWriter): void {
    out.writeBytes(chunk, start, end);
    this.open = !last;
    if (last) this.rows += 1;
  }
}

const CRLF = Buffer.from('\r\n');

/**
 * Reads PostgreSQL's CSV (`COPY … (format csv)`) and writes it with the CRLF record ends of CsvEncoder. Each row
 * is one CopyData message ending in the LF PostgreSQL ends records with (a LF inside a quoted value is the
 * value's own, and is not at the message's end): that last byte becomes CR LF.
 *
 * `delimiter` given: each record begins with a marker and that delimiter (pgNestedCsvCells), which are not
 * written: `t` where the record is the first of an item of the listing (an order with its items comes as one
 * record per item, the order's cells repeated), `f` where it continues the item before; items are counted, not
 * records, as JavaScript's CSV counts them.
 */
export class CsvCopyReader extends LineCopyReader {
  /** Bytes of the current record's marker and its delimiter not yet read. */
  private lead = 0;

  constructor(private readonly delimiter?: number) {
    super();
  }

  override data(chunk: Buffer, start: number, end: number, last: boolean, out: ByteWriter): void {
    if (this.delimiter !== undefined) {
      if (!this.open && this.lead === 0) this.lead = 2;
      if (this.lead === 2 && start < end) {
        const marker = chunk[start++];
        if (marker === 0x74 /* t */) this.rows += 1;
        else if (marker !== 0x66 /* f */) throw new Error('a CSV row from COPY without its item marker');
        this.lead = 1;
      }
      if (this.lead === 1 && start < end) {
        if (chunk[start++] !== this.delimiter) throw new Error('a CSV row from COPY without its item marker');
        this.lead = 0;
      }
      if (this.lead > 0 && last) throw new Error('a CSV row from COPY without its item marker');
    }
    if (!last) {
      if (start < end) out.writeBytes(chunk, start, end);
      this.open = true;
      return;
    }
    // The message's last piece holds its LF (it may be all the piece holds: the rest came in earlier chunks).
    if (end === start || chunk[end - 1] !== 0x0a) throw new Error('a CSV row from COPY that does not end in LF');
    out.writeBytes(chunk, start, end - 1);
    out.writeBytes(CRLF);
    if (this.delimiter === undefined) this.rows += 1;
    this.open = false;
  }
}

/**
 * Reads PostgreSQL's binary COPY format of one text column (the file header, then per row a 16-bit field count,
 * a 32-bit length and the bytes, then a -1 trailer), writing each row's bytes out as they come: a row may be
 * cut between any two chunks of the stream (its messages are read as one stream: the file header comes in the
 * first row's message).
 */
export class BinaryCopyReader implements CopyReader {
  rows = 0;
  done = false;
  private state: 'file' | 'extension' | 'row' | 'data' = 'file';
  /** Header bytes kept from the end of a chunk until the rest arrives (always fewer than the header needs). */
  private held = Buffer.alloc(0);
  private remaining = 0;

  data(chunk: Buffer, start: number, end: number, _last: boolean, out: ByteWriter): void {
    this.push(start === 0 && end === chunk.length ? chunk : chunk.subarray(start, end), out);
  }

  /** The next bytes of the stream. */
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
        if (available() < BINARY_HEADER) return hold();
        const head = take(BINARY_HEADER);
        if (!head.subarray(0, BINARY_SIGNATURE.length).equals(BINARY_SIGNATURE)) throw new Error('not a binary COPY stream');
        this.remaining = head.readUInt32BE(BINARY_SIGNATURE.length + 4);
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
