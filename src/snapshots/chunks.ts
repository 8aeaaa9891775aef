import { createHash } from 'node:crypto';
import { Readable, Writable } from 'node:stream';
import type { Executor } from '../db/database.ts';
import { snapshotTables } from './tables.ts';

/**
 * The size of a stored piece of a file. Every piece but the last is exactly this long, so the piece that
 * holds byte b is b / CHUNK_BYTES and a range is served without reading the pieces before it. About 1 MiB:
 * large enough that a 100 MB file is 100 rows, small enough that a writer or a reader holds little.
 */
export const CHUNK_BYTES = 1 << 20;

/**
 * Takes a file's bytes and stores them as pieces of CHUNK_BYTES in `snapshot_chunks`, one insert per piece.
 * One piece is stored while the next one fills: a write waits for the insert of the piece before, not for
 * its own (backpressure still reaches the export, one piece later). On PostgreSQL an insert of 1 MiB takes
 * 50-100 ms of the server's (WAL, TOAST), during which the export used to stand still: 14 of them are most of
 * a second of a 1.17 M-row CSV snapshot (bench/results/snapshots-2026-11-23-helperA.md). Counts the size and
 * the sha256 on the way. The pieces of a failed or cancelled run are deleted by the caller, after `settled`.
 */
export class ChunkSink extends Writable {
  size = 0;
  private readonly hash = createHash('sha256');
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private n = 0;
  /** The inserts started so far, in order; rejects with the first that failed. */
  private storing: Promise<void> = Promise.resolve();

  constructor(private readonly db: Executor, private readonly snapshotId: number) {
    super({ highWaterMark: CHUNK_BYTES });
  }

  /** The sha256 of everything written, in hex (once finished). */
  get sha256(): string {
    return this.hash.copy().digest('hex');
  }

  /** Resolves once no insert is running (whether they succeeded or not): then the caller may delete the pieces. */
  settled(): Promise<void> {
    return this.storing.then(() => undefined, () => undefined);
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.size += chunk.length;
    this.hash.update(chunk);
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    if (this.pendingBytes < CHUNK_BYTES) return callback();
    const pieces = this.cut(false);
    this.storing.then(() => {
      this.storing = this.store(pieces);
      // Reported by the next write, or by _final.
      this.storing.catch(() => undefined);
      callback();
    }, callback);
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.storing.then(() => this.store(this.cut(true))).then(() => callback(), callback);
  }

  /** Takes every whole piece buffered, and with `all` the rest too (the last, shorter piece), numbered. */
  private cut(all: boolean): Array<{ n: number; bytes: Buffer }> {
    let buffered = Buffer.concat(this.pending, this.pendingBytes);
    const pieces: Array<{ n: number; bytes: Buffer }> = [];
    while (buffered.length >= CHUNK_BYTES || (all && buffered.length > 0)) {
      const length = Math.min(CHUNK_BYTES, buffered.length);
      // A copy: `buffered` may be a view of a larger buffer that the rest still uses.
      pieces.push({ n: this.n++, bytes: Buffer.from(buffered.subarray(0, length)) });
      buffered = buffered.subarray(length);
    }
    this.pending = buffered.length ? [buffered] : [];
    this.pendingBytes = buffered.length;
    return pieces;
  }

  private async store(pieces: Array<{ n: number; bytes: Buffer }>): Promise<void> {
    for (const { n, bytes } of pieces) {
      await snapshotTables(this.db).insertInto('snapshot_chunks').values({ snapshot_id: this.snapshotId, n, bytes }).execute();
    }
  }
}

/**
 * Bytes `start` to `end` (inclusive) of a stored file, read one piece at a time as the client takes them:
 * a slow download holds one piece, whatever the file's size.
 */
export function readRange(db: Executor, snapshotId: number, start: number, end: number): Readable {
  let n = Math.floor(start / CHUNK_BYTES);
  const last = Math.floor(end / CHUNK_BYTES);
  return new Readable({
    highWaterMark: CHUNK_BYTES,
    read() {
      if (n > last) {
        this.push(null);
        return;
      }
      const at = n;
      n += 1;
      snapshotTables(db).selectFrom('snapshot_chunks').select('bytes').where('snapshot_id', '=', snapshotId).where('n', '=', at).executeTakeFirst().then(
        (row) => {
          if (!row) return this.destroy(new Error(`piece ${at} of snapshot ${snapshotId} is missing (the file was removed)`));
          const bytes = Buffer.from(row.bytes);
          const from = at === Math.floor(start / CHUNK_BYTES) ? start - at * CHUNK_BYTES : 0;
          const to = at === last ? end - at * CHUNK_BYTES + 1 : bytes.length;
          this.push(bytes.subarray(from, to));
        },
        (err: unknown) => this.destroy(err as Error),
      );
    },
  });
}
