import type { BufferRecycler } from '../../buffer-recycler.ts';

/**
 * The size of the pieces text is written in: each becomes one chunk of the response, which takes whole chunks,
 * so a batch written as one chunk would sit whole in the socket buffer of a client that stopped reading.
 */
export const PIECE_BYTES = 1 << 16;

/** Bytes of an export's text, finished by the database (copy-out.ts, line-source.ts), and the rows they hold. */
export interface EncodedBatch {
  pieces: Buffer[];
  rows: number;
  /** XLSX: the indices of the pieces that begin a new sheet (xlsx-copy-reader.ts), in order. */
  breaks?: number[];
}

/**
 * Collects text as UTF-8 bytes, in pieces of at most `pieceBytes` (a longer text gets a piece of its own).
 * Each line goes into the current piece with `Buffer.write`, rather than a batch's text being built as one
 * string and converted with `Buffer.from`: that string is a rope of thousands of concatenations and V8 flattens
 * it first, and for text with any character beyond Latin-1 (Czech names) it then encodes the two-byte string
 * slowly. Measured for 250 000 rows of 33 cells: 3.0 s through `Buffer.from` of 64 kB strings, 0.35 s this way
 * (0.9 s against 0.35 s for Latin-1 text). The bytes are exactly `Buffer.from` of the joined text (a test checks).
 *
 * A piece is a view of a buffer of `bufferBytes`; `take` hands out what was written since the last one, and later
 * text goes on after it in the same buffer, so that the bytes allocated are about the bytes written (an idle
 * writer keeps its buffer, at most `bufferBytes`). A new buffer after each `take` allocated 2.5 times the bytes of
 * a PostgreSQL NDJSON snapshot (507 MB for its 202 MB, taken a batch at a time), and V8 runs a full garbage
 * collection for every few tens of MB allocated outside its heap (41-46 per snapshot of the 1.17 M
 * product-parameter values before, 29-32 with this and Coalescer's views).
 */
export class ByteWriter {
  private pieces: Buffer[] = [];
  /** The buffer being filled (allocated by the first write after one was full); `start` is where its next piece begins, `at` where the next byte goes. */
  private buffer: Buffer | undefined;
  private start = 0;
  private at = 0;
  /** Where `place` put the last text in the current buffer. */
  private lastAt = 0;

  /**
   * `pieceBytes`: the size of a piece (PIECE_BYTES, unless the bytes go somewhere else than a response first);
   * `bufferBytes`: the size of the buffers the pieces are cut from (the pieces of a compressed export are joined
   * again, and those of one buffer are joined without a copy: see Coalescer).
   */
  constructor(
    private readonly pieceBytes = PIECE_BYTES,
    private readonly bufferBytes = pieceBytes,
    /** Where buffers of `bufferBytes` come from and go back to once their reader is done with them, if anywhere. */
    private readonly recycler?: BufferRecycler,
  ) {}

  /** Appends `text` (any length). */
  write(text: string): void {
    this.place(text);
  }

  /**
   * Appends `text`, which holds `count` characters `from`, with each made `to`; both ASCII (UTF-8 holds an ASCII
   * byte only as that character, so the bytes are found as they are): a CSV record whose cells came joined by a
   * separator (csv.ts). Found with `indexOf` in the bytes just written, where `String.replaceAll` took about
   * 0.5 s of a 1.17 M-row export; `count` bounds the search, and so does the text's end: past it lie the
   * buffer's unwritten bytes (allocUnsafe), which may hold the byte too.
   */
  writeReplacing(text: string, from: number, to: number, count: number): void {
    const into = this.place(text);
    const current = this.buffer === into;
    let i = current ? this.lastAt : 0;
    const end = current ? this.at : into.length;
    for (let k = 0; k < count; k++) {
      i = into.indexOf(from, i);
      if (i === -1 || i >= end) throw new Error(`writeReplacing: the text holds fewer than ${count} of the byte`);
      into[i++] = to;
    }
  }

  /** Writes `text`; returns the buffer it went into (the current one, from `lastAt`, or a piece of its own, whole). */
  private place(text: string): Buffer {
    // A UTF-16 unit is at most three bytes of UTF-8 (a surrogate pair is two units and four bytes).
    const need = text.length * 3;
    if (need > this.pieceBytes) {
      this.flush();
      const own = Buffer.from(text, 'utf8');
      this.pieces.push(own);
      return own;
    }
    // Most texts fit at their worst case; the others are measured, and may start a piece or a buffer.
    const buffer = this.fits(need) ? this.buffer! : this.ensure(Buffer.byteLength(text, 'utf8'));
    this.lastAt = this.at;
    this.at += buffer.write(text, this.at, 'utf8');
    return buffer;
  }

  /** Whether `need` bytes go into the current piece: its buffer has them, and the piece stays within `pieceBytes`. */
  private fits(need: number): boolean {
    return this.buffer !== undefined && this.at + need <= this.buffer.length && this.at - this.start + need <= this.pieceBytes;
  }

  /** The buffer to write `need` bytes into at `at`: the current piece's, a new piece in it, or a new buffer. */
  private ensure(need: number): Buffer {
    const buffer = this.buffer;
    if (buffer && this.at + need <= buffer.length) {
      if (this.at - this.start + need > this.pieceBytes) this.flush();
      return buffer;
    }
    // At least a byte: an empty text as the first write still needs a buffer to be written into.
    this.renew(Math.max(need, 1));
    return this.buffer!;
  }

  /** Appends `bytes[start, end)` (any length), copied: the source may be reused. */
  writeBytes(bytes: Buffer, start = 0, end = bytes.length): void {
    while (start < end) {
      const buffer = this.ensure(1);
      const n = Math.min(end - start, buffer.length - this.at, this.pieceBytes - (this.at - this.start));
      bytes.copy(buffer, this.at, start, start + n);
      this.at += n;
      start += n;
    }
  }

  /**
   * Room for at most `n` bytes written in place (by a reader that encodes bytes into bytes, such as
   * json-copy-reader.ts): the buffer to write into from `position`, then `advance` to the end of what was
   * written. More than a piece holds gets a buffer of its own, which `advance` hands on as one piece.
   */
  room(n: number): Buffer {
    return this.ensure(n);
  }

  /** Where `room`'s bytes go. */
  get position(): number {
    return this.at;
  }

  /** Takes the bytes written into `room` up to `end`. */
  advance(end: number): void {
    this.at = end;
    // A row longer than a piece, in a buffer of its own: handed on as one piece, and the buffer with it.
    if (end - this.start > this.pieceBytes) this.renew(0);
  }

  /** Ends the piece being written here: returns the index the next piece will have among those `take` gives. */
  cut(): number {
    this.flush();
    return this.pieces.length;
  }

  /** The bytes written since the last `take`, in pieces. */
  take(): Buffer[] {
    this.flush();
    const pieces = this.pieces;
    this.pieces = [];
    return pieces;
  }

  /** Ends the piece being written (what was written since the piece before it); later bytes go on after it. */
  private flush(): void {
    if (!this.buffer || this.at === this.start) return;
    this.pieces.push(this.buffer.subarray(this.start, this.at));
    this.start = this.at;
  }

  /** Ends the piece and the buffer: the next bytes go into a new one of at least `n` bytes (none until needed when n is 0). */
  private renew(n: number): void {
    this.flush();
    this.buffer = n <= 0 ? undefined : this.recycler && n <= this.bufferBytes ? this.recycler.take(this.bufferBytes) : Buffer.allocUnsafe(Math.max(n, this.bufferBytes));
    this.start = 0;
    this.at = 0;
  }
}

/**
 * Gathers small buffers into one of at least `bytes`: what a compressor is given at a time (a compressed
 * export's response or a snapshot's gzip: COMPRESSED_PIECE_BYTES in export.ts). Pieces that follow each other in
 * one buffer (a ByteWriter's) become one view of it rather than a copy: the pieces of a compressed export are
 * written into buffers of several pieces (export.ts), and joining them would copy every byte once more (about
 * 200 MB for the NDJSON of the 1.17 M product-parameter values, each a cost to the garbage collector, which runs
 * a full collection for about every few tens of MB allocated outside the heap).
 */
export class Coalescer {
  private held: Buffer[] = [];
  private heldBytes = 0;

  constructor(private readonly bytes: number) {}

  /**
   * Holds `piece`; once `bytes` are held, gives them back as one buffer. A piece of `bytes` with nothing held comes
   * back as it is, and so does what is held when it is at least half of `bytes` and the piece lies in another buffer.
   */
  add(piece: Buffer): Buffer | undefined {
    if (this.heldBytes === 0 && piece.length >= this.bytes) return piece;
    const last = this.held.length > 0 ? this.held[this.held.length - 1] : undefined;
    // The next piece of the same buffer (ByteWriter's pieces follow each other in it): one view of both, not a copy.
    if (last && last.buffer === piece.buffer && last.byteOffset + last.length === piece.byteOffset) {
      this.held[this.held.length - 1] = Buffer.from(last.buffer, last.byteOffset, last.length + piece.length);
    } else if (this.heldBytes * 2 >= this.bytes) {
      // A piece of another buffer after at least half of what is wanted (where a buffer ends): that half goes on as
      // it is rather than copied, and this is held.
      const whole = this.take();
      this.held.push(piece);
      this.heldBytes = piece.length;
      return whole;
    } else {
      this.held.push(piece);
    }
    this.heldBytes += piece.length;
    return this.heldBytes >= this.bytes ? this.take() : undefined;
  }

  /** Whatever is held, as one buffer (undefined when nothing is). */
  take(): Buffer | undefined {
    if (this.heldBytes === 0) return undefined;
    const whole = this.held.length === 1 ? this.held[0] : Buffer.concat(this.held, this.heldBytes);
    this.held = [];
    this.heldBytes = 0;
    return whole;
  }
}
