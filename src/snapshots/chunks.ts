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
 * Takes a file's bytes and stores them as pieces of CHUNK_BYTES in `snapshot_chunks`, one insert per piece
 * (the writer waits for it: backpressure reaches the export). Counts the size and the sha256 on the way.
 * The pieces of a failed or cancelled run are deleted by the caller.
 */
export class ChunkSink extends Writable {
  size = 0;
  private readonly hash = createHash('sha256');
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private n = 0;

  constructor(private readonly db: Executor, private readonly snapshotId: number) {
    super({ highWaterMark: CHUNK_BYTES });
  }

  /** The sha256 of everything written, in hex (once finished). */
  get sha256(): string {
    return this.hash.copy().digest('hex');
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.size += chunk.length;
    this.hash.update(chunk);
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    if (this.pendingBytes < CHUNK_BYTES) return callback();
    this.flush(false).then(() => callback(), callback);
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.flush(true).then(() => callback(), callback);
  }

  /** Stores every whole piece buffered, and with `all` the rest too (the last, shorter piece). */
  private async flush(all: boolean): Promise<void> {
    let buffered = Buffer.concat(this.pending, this.pendingBytes);
    while (buffered.length >= CHUNK_BYTES || (all && buffered.length > 0)) {
      const piece = buffered.subarray(0, Math.min(CHUNK_BYTES, buffered.length));
      await snapshotTables(this.db).insertInto('snapshot_chunks').values({ snapshot_id: this.snapshotId, n: this.n, bytes: Buffer.from(piece) }).execute();
      this.n += 1;
      buffered = buffered.subarray(piece.length);
    }
    this.pending = buffered.length ? [buffered] : [];
    this.pendingBytes = buffered.length;
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
