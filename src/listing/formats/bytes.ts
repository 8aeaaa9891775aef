/**
 * The size of the pieces text is written in: each becomes one chunk of the response, which takes whole chunks,
 * so a batch written as one chunk would sit whole in the socket buffer of a client that stopped reading.
 */
export const PIECE_BYTES = 1 << 16;

/** Bytes of an export's text, finished by the database (copy-out.ts, line-source.ts), and the rows they hold. */
export interface EncodedBatch {
  pieces: Buffer[];
  rows: number;
}

/**
 * Collects text as UTF-8 bytes, in pieces of at most `pieceBytes` (a longer text gets a piece of its own).
 * Each line goes into the current piece with `Buffer.write`, rather than a batch's text being built as one
 * string and converted with `Buffer.from`: that string is a rope of thousands of concatenations and V8 flattens
 * it first, and for text with any character beyond Latin-1 (Czech names) it then encodes the two-byte string
 * slowly. Measured for 250 000 rows of 33 cells: 3.0 s through `Buffer.from` of 64 kB strings, 0.35 s this way
 * (0.9 s against 0.35 s for Latin-1 text). The bytes are exactly `Buffer.from` of the joined text (a test checks).
 */
export class ByteWriter {
  private pieces: Buffer[] = [];
  /** The piece being filled; allocated by the first write after a `take`, so that an idle writer holds none. */
  private buffer: Buffer | undefined;
  private at = 0;

  /** `pieceBytes`: the size of a piece (PIECE_BYTES, unless the bytes go somewhere else than a response first). */
  constructor(private readonly pieceBytes = PIECE_BYTES) {}

  /** Appends `text` (any length). */
  write(text: string): void {
    // A UTF-16 unit is at most three bytes of UTF-8 (a surrogate pair is two units and four bytes).
    if (this.at + text.length * 3 > this.pieceBytes) {
      if (text.length * 3 > this.pieceBytes) {
        this.flush();
        this.pieces.push(Buffer.from(text, 'utf8'));
        return;
      }
      if (this.at + Buffer.byteLength(text, 'utf8') > this.pieceBytes) this.flush();
    }
    this.buffer ??= Buffer.allocUnsafe(this.pieceBytes);
    this.at += this.buffer.write(text, this.at, 'utf8');
  }

  /**
   * Appends `text`, which holds `count` characters `from`, with each made `to`; both ASCII (UTF-8 holds an ASCII
   * byte only as that character, so the bytes are found as they are): a CSV record whose cells came joined by a
   * separator (csv.ts). Found with `indexOf` in the bytes just written, where `String.replaceAll` took about
   * 0.5 s of a 1.17 M-row export; `count` bounds the search, which would otherwise run on past the text.
   */
  writeReplacing(text: string, from: number, to: number, count: number): void {
    const { buffer, at } = this;
    this.write(text);
    // The text went into the current piece after `at`, or (when that was full) from the start of a new one, or
    // (a long text) into a piece of its own, now the last taken.
    const into = this.buffer ?? this.pieces[this.pieces.length - 1];
    let i = this.buffer === buffer && buffer !== undefined ? at : 0;
    for (let k = 0; k < count; k++) {
      i = into.indexOf(from, i);
      if (i === -1) throw new Error(`writeReplacing: the text holds fewer than ${count} of the byte`);
      into[i++] = to;
    }
  }

  /** Appends `bytes[start, end)` (any length), copied: the source may be reused. */
  writeBytes(bytes: Buffer, start = 0, end = bytes.length): void {
    while (start < end) {
      if (this.at === this.pieceBytes) this.flush();
      this.buffer ??= Buffer.allocUnsafe(this.pieceBytes);
      const n = Math.min(end - start, this.pieceBytes - this.at);
      bytes.copy(this.buffer, this.at, start, start + n);
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
    if (this.buffer && this.at + n <= this.pieceBytes) return this.buffer;
    this.flush();
    this.buffer = Buffer.allocUnsafe(Math.max(n, this.pieceBytes));
    return this.buffer;
  }

  /** Where `room`'s bytes go. */
  get position(): number {
    return this.at;
  }

  /** Takes the bytes written into `room` up to `end`. */
  advance(end: number): void {
    this.at = end;
    if (end > this.pieceBytes) this.flush();
  }

  /** The bytes written since the last `take`, in pieces. */
  take(): Buffer[] {
    this.flush();
    const pieces = this.pieces;
    this.pieces = [];
    return pieces;
  }

  private flush(): void {
    if (this.at === 0 || !this.buffer) return;
    this.pieces.push(this.buffer.subarray(0, this.at));
    this.buffer = undefined;
    this.at = 0;
  }
}

/**
 * Gathers small buffers into one of at least `bytes`: what a compressor is given at a time (a compressed
 * export's response or a snapshot's gzip: COMPRESSED_PIECE_BYTES in export.ts).
 */
export class Coalescer {
  private held: Buffer[] = [];
  private heldBytes = 0;

  constructor(private readonly bytes: number) {}

  /** Holds `piece`; once `bytes` are held, gives them back as one buffer. */
  add(piece: Buffer): Buffer | undefined {
    this.held.push(piece);
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
