import type { EncodedBatch } from './bytes.ts';
import type { ExportConnection } from './connection.ts';
import type { CopyOut } from './copy-out.ts';
import type { CopyPlan, KeysetPosition } from './copy-source.ts';

/*
 * An export whose lines PostgreSQL writes, read as consecutive keyset ranges by two connections at once, each
 * range one COPY of its own, so that PostgreSQL builds one range while the other is read. Building the lines
 * is most of such an export's time (for 100 000 orders about 3.5 s of 4.5 s), on one backend, one core, while
 * the API's process mostly waits. The second connection reads the same snapshot as the first
 * (ExportConnection.sibling), so the ranges are one consistent view; without one (the pool cannot spare it)
 * the ranges run one after the other on the export's own.
 *
 * A range's end is found first, on the connection that then runs it: the keyset position `rows` rows on
 * (an index scan of the keys), where the next range starts; the range's COPY is the listing's query after its
 * start with `limit rows`. Ranges are sized by bytes (RANGE_BYTES, from the bytes per row so far). Each is read
 * ahead into memory up to RANGE_BYTES (rows of unforeseen size, 200 kB descriptions, may make a range far
 * longer); the rest of a longer one is read as its client takes it, its COPY waiting meanwhile. Two ranges are
 * in flight at most, the one being sent and the next, so an export holds about two ranges whatever its rows,
 * and a client that stops reading stops the next ranges from starting.
 */

/**
 * What a range should come to (the rows of the next one follow from the bytes per row so far), and what it is
 * read ahead to: beyond it, it is read as the client takes it. A paused export holds about this much per
 * connection: many may be paused at once. Ranges of 1 and 2 MB, read ahead to 1, 2 or 4 MB, measured alike
 * (orders CSV 3.0-4.2 s, products NDJSON 1.0-1.2 s, two runs each, noise larger than any difference).
 */
export const RANGE_BYTES = 1 << 20;
const READ_AHEAD_BYTES = RANGE_BYTES;
/** Rows of the first ranges, before any has been measured. */
const FIRST_ROWS = 1024;
const MIN_ROWS = 64;
const MAX_ROWS = 1 << 16;

interface ReadAhead {
  /** The bytes read ahead, undefined when the range holds no row. */
  batch: EncodedBatch | undefined;
  /** The COPY, when the range did not end within READ_AHEAD_BYTES: the rest is read from it. */
  rest: CopyOut | undefined;
}

interface Range {
  conn: ExportConnection;
  /** Where the range after this one starts, null when this one is the last. */
  next: Promise<KeysetPosition | null>;
  ahead: Promise<ReadAhead>;
}

/** A COPY's batches up to `cap` bytes (or its end), as one. */
async function readAhead(copy: CopyOut, cap: number): Promise<ReadAhead> {
  const pieces: Buffer[] = [];
  let rows = 0;
  let size = 0;
  while (size < cap) {
    const batch = await copy.next(cap - size);
    if (!batch) return { batch: pieces.length ? { pieces, rows } : undefined, rest: undefined };
    for (const piece of batch.pieces) size += piece.length;
    pieces.push(...batch.pieces);
    rows += batch.rows;
  }
  return { batch: { pieces, rows }, rest: copy };
}

export interface RangeOptions {
  /** Tests: rows per range, fixed. */
  rows?: number;
}

export class RangedCopySource {
  private head: Range | undefined;
  private second: Range | undefined;
  /** The COPY of the head range whose rest is read as the client takes it. */
  private rest: CopyOut | undefined;
  private sibling: Promise<ExportConnection | undefined> | undefined;
  private rowsRead = 0;
  private bytesRead = 0;

  constructor(
    private readonly conn: ExportConnection,
    private readonly plan: CopyPlan,
    private readonly options: RangeOptions = {},
  ) {
    this.head = this.run(conn, undefined);
  }

  /** The next bytes: a range read ahead, or about `bytes` of a range's rest; undefined at the end. */
  async next(bytes: number): Promise<EncodedBatch | undefined> {
    while (this.head) {
      const head = this.head;
      if (this.rest) {
        const batch = await this.rest.next(bytes);
        if (batch) return this.counted(batch);
        this.rest = undefined;
        await this.advance();
        continue;
      }
      // The range after it starts now, on the other connection, while this one is read (or sent).
      this.second ??= await this.after(head);
      const { batch, rest } = await head.ahead;
      this.rest = rest;
      if (!rest) await this.advance();
      if (batch) return this.counted(batch);
    }
    return undefined;
  }

  private counted(batch: EncodedBatch): EncodedBatch {
    this.rowsRead += batch.rows;
    for (const piece of batch.pieces) this.bytesRead += piece.length;
    return batch;
  }

  /** The head range is read: the next one becomes the head, and the one after it starts on the connection freed. */
  private async advance(): Promise<void> {
    const done = this.head!;
    this.head = this.second;
    this.second = undefined;
    if (this.head) this.second = await this.after(this.head, done.conn);
  }

  /** The range after `range`, on `conn` (by default the other connection), or undefined when `range` is the last. */
  private async after(range: Range, conn?: ExportConnection): Promise<Range | undefined> {
    const start = await range.next;
    if (start === null) return undefined;
    return this.run(conn ?? (await this.other(range.conn)), start);
  }

  /** The connection beside `conn`: the sibling, opened when a second range is first needed, or the export's own. */
  private async other(conn: ExportConnection): Promise<ExportConnection> {
    if (conn !== this.conn) return this.conn;
    this.sibling ??= this.openSibling();
    return (await this.sibling) ?? this.conn;
  }

  private rows(): number {
    if (this.options.rows) return this.options.rows;
    if (this.rowsRead === 0) return FIRST_ROWS;
    return Math.min(MAX_ROWS, Math.max(MIN_ROWS, Math.round((RANGE_BYTES * this.rowsRead) / Math.max(this.bytesRead, 1))));
  }

  /** Starts the range after `start` on `conn`: its end first, then its COPY, read ahead. */
  private run(conn: ExportConnection, start: KeysetPosition | undefined): Range {
    const rows = this.rows();
    const next = conn.arrays(this.plan.position(start, rows)).then((found) => (found.length ? this.plan.positionOf(found[0]) : null));
    // The position query goes first on the connection: the COPY, queued behind it, takes the socket after.
    const ahead = next.then((end) => {
      // A first range that does not end the export: the snapshot is exported (on this connection) for the
      // sibling before the COPY holds the connection.
      if (end !== null && conn === this.conn && start === undefined) this.sibling ??= this.openSibling();
      return readAhead(conn.copyOut!(this.plan.range(start, rows), this.plan.reader()), READ_AHEAD_BYTES);
    });
    // Awaited in order by `next`; one that fails after the export stopped must not be an unhandled rejection.
    next.catch(() => {});
    ahead.catch(() => {});
    return { conn, next, ahead };
  }

  /** The sibling connection with the COPY settings; undefined when none can be spared (the ranges then share one). */
  private async openSibling(): Promise<ExportConnection | undefined> {
    // Called synchronously up to its first await: the snapshot's export is queued on the export's connection now.
    const sibling = await this.conn.sibling?.().catch(() => undefined);
    if (sibling) for (const setting of this.plan.settings) await sibling.arrays(setting);
    return sibling;
  }
}
