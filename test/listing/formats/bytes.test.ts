import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { BufferRecycler } from '../../../src/buffer-recycler.ts';
import { ByteWriter, PIECE_BYTES } from '../../../src/listing/formats/bytes.ts';
import { createTestApp, type TestApp } from '../../helpers/app.ts';
import { dialects } from '../../helpers/databases.ts';

// Exports write their text into byte pieces (ByteWriter) and read the next batch while writing one; before,
// a batch's text was one string turned into bytes with Buffer.from. These tests hold the bytes to that.

/** Lines of every kind of UTF-16: ASCII, Latin-1, Czech, CJK, astral (surrogate pairs), a lone surrogate, and lines longer than a piece. */
function lines(pieceBytes: number): string[] {
  const kinds = ['plain,ascii', 'café;naïve', 'Žluťoučký kůň úpěl', '中文字符', 'emoji 😀🚀', 'lone \uD800 surrogate', ''];
  const out: string[] = [];
  for (let i = 0; i < 3000; i++) out.push(`${i},${kinds[i % kinds.length].repeat(1 + (i % 23))}\r\n`);
  out.splice(1000, 0, `${'ř😀'.repeat(pieceBytes)}\r\n`, `${'a'.repeat(pieceBytes - 2)}\r\n`, `${'a'.repeat(pieceBytes)}\r\n`);
  return out;
}

describe('ByteWriter', () => {
  // The default size (response pieces), the XLSX sheet's (pieces for the zip's deflate), and a compressed export's (pieces cut from larger buffers).
  for (const [pieceBytes, bufferBytes] of [[PIECE_BYTES, PIECE_BYTES], [1 << 20, 1 << 20], [1 << 18, 1 << 20]]) {
    it(`gives exactly the bytes of Buffer.from of the joined text, in pieces of at most ${pieceBytes} bytes (buffers of ${bufferBytes}) that end at a line`, () => {
      const text = lines(pieceBytes);
      const writer = new ByteWriter(pieceBytes, bufferBytes);
      const pieces: Buffer[] = [];
      text.forEach((line, i) => {
        writer.write(line);
        if (i % 700 === 0) pieces.push(...writer.take());
      });
      pieces.push(...writer.take());
      assert.ok(Buffer.concat(pieces).equals(Buffer.from(text.join(''), 'utf8')));
      for (const piece of pieces) {
        assert.ok(piece.length > 0);
        assert.ok(piece.length <= pieceBytes || piece.indexOf(10) === piece.length - 1, 'only a single long line exceeds a piece');
        assert.equal(piece[piece.length - 1], 10, 'a piece ends with a whole line');
      }
      // Pieces are filled: apart from the long lines and where `take` cut, the text goes in few pieces.
      assert.ok(pieces.length <= Math.ceil(Buffer.byteLength(text.join('')) / pieceBytes) + 3 + 5 + 3, `${pieces.length} pieces`);
      assert.deepEqual(writer.take(), []);
      // Pieces after a take go on in the same buffer: pieces of a buffer follow each other (Coalescer joins them as a view).
      const adjacent = pieces.filter((p, i) => i > 0 && p.buffer === pieces[i - 1].buffer && p.byteOffset === pieces[i - 1].byteOffset + pieces[i - 1].length).length;
      assert.ok(adjacent >= 4, `${adjacent} pieces follow the one before in its buffer`);
    });
  }

  it('takes bytes written in place (room, advance) among texts: pieces of at most a piece, a longer row a piece of its own', () => {
    const writer = new ByteWriter(64);
    const expected: Buffer[] = [];
    for (const size of [10, 30, 30, 200, 5, 64, 1, 63]) {
      writer.write('ab');
      expected.push(Buffer.from('ab'));
      // Room for twice what is written, as a reader asks for its worst case.
      const room = writer.room(size * 2);
      const bytes = Buffer.alloc(size, 97 + (size % 26));
      bytes.copy(room, writer.position);
      writer.advance(writer.position + size);
      expected.push(bytes);
    }
    const pieces = writer.take();
    assert.ok(Buffer.concat(pieces).equals(Buffer.concat(expected)));
    for (const piece of pieces) assert.ok(piece.length <= 64 || piece.length === 200, `a piece of ${piece.length} bytes`);
    assert.ok(pieces.some((p) => p.length === 200), 'the row longer than a piece is one piece');
  });

  it('writes into recycled buffers only once their reader is done with every piece cut from them (a reader lagging behind, in order)', () => {
    // Small sizes, so that a run goes through many buffers: pieces of 64 bytes from buffers of 256.
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.string({ maxLength: 10, unit: fc.constantFrom('a', 'ž', '中', '😀', '\n') }), fc.boolean(), fc.nat(30)), { minLength: 1, maxLength: 400, size: 'max' }), (steps) => {
        const recycler = new BufferRecycler(2);
        const writer = new ByteWriter(64, 256, recycler);
        /** Pieces taken and not yet read, with the bytes they held when taken. */
        const unread: Array<{ piece: Buffer; bytes: Buffer }> = [];
        let written = '';
        let read = Buffer.alloc(0);
        const readOne = () => {
          const { piece, bytes } = unread.shift()!;
          assert.ok(piece.equals(bytes), 'a piece is unchanged until it is read');
          read = Buffer.concat([read, piece]);
          recycler.read(piece);
        };
        // After each step the reader leaves at most `lag` pieces unread behind the writer: it falls behind and catches up.
        for (const [text, take, lag] of steps) {
          writer.write(text);
          written += text;
          if (take) for (const piece of writer.take()) unread.push({ piece, bytes: Buffer.from(piece) });
          while (unread.length > lag) readOne();
        }
        for (const piece of writer.take()) unread.push({ piece, bytes: Buffer.from(piece) });
        while (unread.length > 0) readOne();
        assert.ok(read.equals(Buffer.from(written, 'utf8')));
      }),
      { numRuns: 300 },
    );
  });

  it('lends the same few buffers again to a writer whose reader keeps up, keeps at most `keep` free and tracks at most `track` lent', () => {
    // Buffers of 32 kB, each its own memory (Node's pool holds only those under 4 kB), written texts of 2 000
    // characters (at most 6 000 bytes: none needs a piece of its own).
    const recycler = new BufferRecycler(2, 3);
    const writer = new ByteWriter(8192, 32768, recycler);
    const seen = new Set<ArrayBufferLike>();
    for (let i = 0; i < 300; i++) {
      writer.write(`${'x'.repeat(1999)}\n`);
      for (const piece of writer.take()) {
        seen.add(piece.buffer);
        recycler.read(piece);
      }
    }
    // 600 kB through buffers of 32 kB: the one being written, the one before it, and those given back.
    assert.ok(seen.size <= 4, `${seen.size} buffers`);
    // A piece the recycler did not lend, and the first lent buffer's own piece, give nothing back.
    const other = new BufferRecycler();
    const first = other.take(16);
    other.read(Buffer.alloc(16));
    other.read(first.subarray(0, 4));
    assert.notEqual(other.take(16), first, 'still lent');
    // Buffers lent beyond `track` are left to the garbage collector; at most `keep` come back.
    const few = new BufferRecycler(1, 3);
    const lent = Array.from({ length: 5 }, () => few.take(8));
    few.read(lent[4]);
    const again = [few.take(8), few.take(8)];
    assert.ok(lent.slice(2, 4).includes(again[0]), 'a tracked buffer comes back');
    assert.ok(!lent.includes(again[1]), 'one kept, then a new one');
    // A reader that never tells (a compressor not wrapped by givingBack): the recycler keeps no more than `track`
    // buffers alive, whatever the export writes.
    const untold = new BufferRecycler();
    for (let i = 0; i < 100; i++) untold.take(1 << 16);
    assert.equal((untold as unknown as { lent: Buffer[]; free: Buffer[] }).lent.length, 4);
    assert.equal((untold as unknown as { lent: Buffer[]; free: Buffer[] }).free.length, 0);
  });

  it('writes a text with its separators replaced (writeReplacing): into the piece, a new piece, or a piece of its own', () => {
    // Small pieces, so that texts land in each of the three places; texts with multi-byte characters either side of the separators.
    const writer = new ByteWriter(64);
    let expected = '';
    const cells = ['', 'a', 'Žluť', '😀x', 'lone \uD800', 'é'.repeat(30), 'plain text of forty characters, or so!!'];
    for (let i = 0; i < 400; i++) {
      const n = 1 + (i % 9);
      const row = Array.from({ length: n }, (_, k) => cells[(i * 7 + k) % cells.length]);
      if (i % 5 === 0) {
        writer.write(`w${i}|`);
        expected += `w${i}|`;
      }
      writer.writeReplacing(`${row.join('\x1f')}\r\n`, 0x1f, 0x2c, n - 1);
      expected += `${row.join(',')}\r\n`;
    }
    const pieces = writer.take();
    assert.ok(Buffer.concat(pieces).equals(Buffer.from(expected, 'utf8')));
    assert.ok(pieces.some((p) => p.length > 64), 'some text had a piece of its own');
    // Told more separators than the text holds, it fails rather than replace a byte of something else.
    writer.write('x\x1fy\x1f');
    assert.throws(() => writer.writeReplacing('a\x1fb', 0x1f, 0x2c, 2), /fewer than 2/);
    // Nor a byte of the buffer past the text, which allocUnsafe leaves as it found it: here all separators.
    const dirty = () => new ByteWriter(64, 1024, { take: (size: number) => Buffer.alloc(size, 0x1f) } as unknown as BufferRecycler);
    const one = dirty();
    one.write('x');
    assert.throws(() => one.writeReplacing('a\x1fb', 0x1f, 0x2c, 2), /fewer than 2/);
    assert.throws(() => dirty().writeReplacing('ab', 0x1f, 0x2c, 1), /fewer than 1/);
    const two = dirty();
    two.writeReplacing('c\x1fd', 0x1f, 0x2c, 1);
    assert.equal(Buffer.concat(two.take()).toString('latin1'), 'c,d');
  });
});

for (const dialect of await dialects()) {
  describe(`whole exports equal their pages, byte for byte (${dialect})`, { timeout: 300_000 }, () => {
    let t: TestApp;
    let token: string;

    before(async () => {
      t = await createTestApp(dialect, { seed: { products: 700, orders: 300 } });
      ({ token } = await t.credential(['products:read', 'orders:read', 'brands:read', 'categories:read']));
      // Text beyond Latin-1 and astral characters, and rows longer than a piece (64 kB), among the seeded ones.
      for (const [i, id] of [3, 250, 511].entries()) {
        const res = await t.admin('PATCH', `/admin/api/products/${id}`, { name: `Žluťoučký kůň 😀 ${i}`, description: `${'Příliš žluťoučký 中文 😀, "quoted"\n'.repeat(1900 + 300 * i)}` });
        assert.equal(res.statusCode, 200, res.body);
      }
    });
    after(() => t.close());

    /**
     * The export without `limit` (batches of a growing size, each read while the one before is written) and
     * the same listing paged (`limit`, `cursor`: one page per answer, no read ahead), pages joined without
     * their repeated CSV header.
     */
    async function wholeAndPaged(collection: string, query: string): Promise<[Buffer, Buffer]> {
      const whole = await t.get(`/api/v2/${collection}?${query}`, token);
      assert.equal(whole.statusCode, 200, whole.body);
      const pages: Buffer[] = [];
      let cursor: string | undefined;
      for (let n = 0; ; n++) {
        const page = await t.get(`/api/v2/${collection}?${query}&limit=97${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, token);
        assert.equal(page.statusCode, 200, page.body);
        let body = page.rawPayload;
        if (query.includes('format=csv') && n > 0) body = body.subarray(body.indexOf('\r\n') + 2);
        pages.push(body);
        cursor = nextCursor(page.headers.link);
        if (!cursor) break;
      }
      return [whole.rawPayload, Buffer.concat(pages)];
    }

    const cases: Array<[string, string]> = [
      ['products', 'format=csv'],
      ['products', 'format=ndjson'],
      ['products', 'format=csv&locale=cs-CZ'],
      ['products', 'format=csv&fields=id,name,description,price&include=brand&sort=-updatedAt'],
      ['products', 'format=ndjson&include=brand,category'],
      ['orders', 'format=csv'],
      ['orders', 'format=ndjson'],
      ['orders', 'format=csv&locale=de-DE&include=products'],
    ];
    for (const [collection, query] of cases) {
      it(`${collection}?${query}`, async () => {
        const [whole, paged] = await wholeAndPaged(collection, query);
        assert.ok(whole.length > 300_000 || collection === 'orders', `${collection} holds the long rows (${whole.length} bytes)`);
        assert.ok(whole.equals(paged), `${collection}?${query}: ${whole.length} bytes whole, ${paged.length} paged`);
      });
    }
  });
}

/** The cursor of rel="next" in a Link header. */
function nextCursor(link: string | string[] | undefined): string | undefined {
  const next = String(link ?? '').split(',').find((l) => /rel="?next"?/.test(l));
  const url = next && /<([^>]+)>/.exec(next)?.[1];
  return url ? (new URL(url, 'http://x').searchParams.get('cursor') ?? undefined) : undefined;
}
