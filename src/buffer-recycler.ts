import type { Writable } from 'node:stream';

/**
 * An export's buffers (listing/formats/bytes.ts, ByteWriter), taken back once the bytes written into them have
 * been read by the compressor they go to (a snapshot's gzip, a compressed response's gzip or brotli), so that a
 * long export writes into the same few buffers instead of a new one per MiB. V8 runs a full garbage collection
 * for about every ten MB allocated outside its heap: a PostgreSQL NDJSON snapshot of the 1.17 M
 * product-parameter values ran about 28 of them, each some 4 ms of the main thread and more on V8's own threads,
 * for its 212 MB of text and the 140 MB read off the socket. With its text in recycled buffers, 17, and the
 * snapshot took 1.50-1.55 s against 1.69-1.71 s (medians of five, alternating; SQLite's, whose main thread waits
 * on SQLite, the same).
 *
 * The bytes are read in the order they were written, so when the reader is done with a piece, it is done with
 * every buffer lent before that piece's. A piece of a buffer not lent here (a text longer than a buffer, a copy
 * joining two) tells nothing; a reader that never tells leaves the buffers to the garbage collector, as without
 * this. Held: at most `keep` free buffers (the writer takes one again for each it fills, so one or two are free
 * at a time), and references to the last `track` lent ones: the export's backpressure keeps its reader within a
 * buffer or two of its writer, and a reader further behind, or one that never tells (a compressor not wrapped by
 * `givingBack`), only leaves the older buffers to the garbage collector instead of keeping dozens of MiB alive.
 */
export class BufferRecycler {
  private readonly free: Buffer[] = [];
  /** Buffers lent and not known to be read, oldest first. */
  private readonly lent: Buffer[] = [];

  constructor(
    private readonly keep = 2,
    private readonly track = 4,
  ) {}

  /** A buffer of `size` bytes: one given back, or a new one. */
  take(size: number): Buffer {
    let buffer = this.free.pop();
    if (buffer?.length !== size) {
      // Memory of its own, never a slice of Node's shared pool, so that `readBack` knows whose it is.
      buffer = Buffer.allocUnsafeSlow(size);
      lenders.set(buffer.buffer, this);
    }
    this.lent.push(buffer);
    if (this.lent.length > this.track) this.lent.shift();
    return buffer;
  }

  /** The reader is done with `piece` and every byte written before it: the buffers lent before its buffer come back. */
  read(piece: Uint8Array): void {
    const at = this.lent.findIndex((b) => b.buffer === piece.buffer);
    if (at <= 0) return;
    for (const buffer of this.lent.splice(0, at)) if (this.free.length < this.keep) this.free.push(buffer);
  }
}

/** Which recycler lent the memory of a buffer. */
const lenders = new WeakMap<ArrayBufferLike, BufferRecycler>();

/** A compressor (or any reader of an export's bytes) is done with `piece`: its recycler, if any, is told. */
export function readBack(piece: Uint8Array): void {
  lenders.get(piece.buffer)?.read(piece);
}

/**
 * `stream`, telling the recycler of each piece written into it once the stream has read it: a zlib stream calls
 * a write back once its engine has taken the whole piece in (its window holds a copy of what it still needs).
 */
export function givingBack<T extends Writable>(stream: T): T {
  const write = stream.write.bind(stream) as (chunk: unknown, encoding?: unknown, cb?: unknown) => boolean;
  stream.write = ((chunk: unknown, encoding?: unknown, cb?: unknown) => {
    if (!(chunk instanceof Uint8Array)) return write(chunk, encoding, cb);
    const done = typeof encoding === 'function' ? encoding : cb;
    const told = (error?: Error | null) => {
      readBack(chunk);
      if (typeof done === 'function') (done as (error?: Error | null) => void)(error);
    };
    return typeof encoding === 'function' ? write(chunk, told) : write(chunk, encoding, told);
  }) as T['write'];
  return stream;
}
