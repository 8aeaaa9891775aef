import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { sql } from 'kysely';
import { PassThrough } from 'node:stream';
import pg from 'pg';
import { plan, withShape, type ListPlan } from '../../../src/listing/engine.ts';
import { exportLayout } from '../../../src/listing/formats/columns.ts';
import { openExportConnection } from '../../../src/listing/formats/connection.ts';
import { BinaryCopyReader, copyPlan, CsvCopyReader, inlineParameters, LineCopyReader, PG_LINES_OPTIONS } from '../../../src/listing/formats/copy-source.ts';
import { CopyOut } from '../../../src/listing/formats/copy-out.ts';
import { CellKind, JsonCopyReader } from '../../../src/listing/formats/json-copy-reader.ts';
import { ByteWriter } from '../../../src/listing/formats/bytes.ts';
import { CSV_DEFAULTS, CsvEncoder, type CsvOptions } from '../../../src/listing/formats/csv.ts';
import type { ExportFormat } from '../../../src/listing/formats/negotiate.ts';
import { csvCell, jsonValue, numberInRange, pgCsvCell, pgCsvOptions, pgJsonCells } from '../../../src/listing/formats/pg-lines.ts';
import { pgNestedXlsxCells } from '../../../src/listing/formats/pg-nested-lines.ts';
import { streamExport } from '../../../src/listing/formats/stream.ts';
import type { Shape } from '../../../src/listing/shape.ts';
import { RESOURCES } from '../../../src/modules/registry.ts';
import type { Resource } from '../../../src/resources/types.ts';
import { createTestApp, type TestApp } from '../../helpers/app.ts';
import { dialects } from '../../helpers/databases.ts';
import { readXlsx } from './readers.ts';

/** Every CSV variant PostgreSQL writes: each delimiter, with and without the formula guard, with a byte order mark. */
const CSV_VARIANTS: CsvOptions[] = [
  CSV_DEFAULTS,
  { ...CSV_DEFAULTS, escapeFormulas: false },
  { ...CSV_DEFAULTS, delimiter: ';', bom: true },
  { ...CSV_DEFAULTS, delimiter: '\t' },
  { ...CSV_DEFAULTS, delimiter: '|', escapeFormulas: false },
];

/** The parts of a workbook that its rows make (the sheet) or could change (styles, the sheets' names). */
const XLSX_PARTS = ['xl/worksheets/sheet1.xml', 'xl/styles.xml', 'xl/workbook.xml', '[Content_Types].xml'];

/** One CSV cell as the JavaScript encoder writes it. */
function jsCell(type: 'string' | 'number', value: unknown, options: CsvOptions): string {
  const text = Buffer.concat(new CsvEncoder([{ name: 'x', type, slot: 0 }], options).rows([[value]])).toString('utf8');
  return text.slice(0, -2);
}

/** Characters the encoders treat apart, and some they must not. */
const TRICKY = ['=', '+', '-', '@', '\t', '\r', '\n', ',', ';', '|', '"', "'", '\\', '/', '0', '7', '.', ' ', 'a', 'é', 'Ž', '\u2028', '\u2029', '\x01', '\x08', '\x0b', '\x0c', '\x1f', '\x7f', '😀', '$1', '%', '_'];
const text = fc.oneof(
  fc.array(fc.constantFrom(...TRICKY), { maxLength: 12 }).map((parts) => parts.join('')),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.stringMatching(/^[+-]?[0-9][0-9.,]{0,6}$/),
);
/** PostgreSQL text holds no NUL; the API's inputs reach it as text. */
const storable = (s: string) => !s.includes('\0');

/** The bytes of a stream. */
async function bytesOf(stream: AsyncIterable<unknown>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks);
}

/** Where a stream may be cut into chunks: any set of positions inside it. */
const cutsOf = (stream: Buffer) => fc.uniqueArray(fc.integer({ min: 1, max: stream.length - 1 }), { maxLength: 40 });

/** The pieces of `stream` between `cuts`. */
function piecesOf(stream: Buffer, cuts: number[]): Buffer[] {
  const pieces: Buffer[] = [];
  let at = 0;
  for (const cut of [...cuts.sort((a, b) => a - b), stream.length]) {
    pieces.push(stream.subarray(at, cut));
    at = cut;
  }
  return pieces;
}

/** What the binary COPY reader writes of `stream` pushed in the pieces between `cuts`. */
function readInPieces(reader: BinaryCopyReader, stream: Buffer, cuts: number[]): Buffer {
  const out = new ByteWriter();
  for (const piece of piecesOf(stream, cuts)) reader.push(piece, out);
  return Buffer.concat(out.take());
}

/** A backend message of the protocol: its type, its length and its content. */
function message(type: string, content: Buffer | string = Buffer.alloc(0)): Buffer {
  const body = Buffer.from(content);
  const head = Buffer.alloc(5);
  head.write(type, 0, 'latin1');
  head.writeUInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
}

/**
 * A COPY read from a socket that delivers `stream` in the pieces between `cuts`, as node-pg runs it: what the
 * reader wrote, the rows counted in the batches, what went back to node-pg's own reader of the socket, and the
 * statements sent.
 */
async function copyInPieces(reader: CsvCopyReader | LineCopyReader | JsonCopyReader, stream: Buffer, cuts: number[]): Promise<{ text: string; rows: number; back: Buffer; sent: string[] }> {
  const socket = new PassThrough();
  const back: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => back.push(chunk));
  const sent: string[] = [];
  const copy = new CopyOut('copy (select 1) to stdout', reader);
  copy.submit({ stream: socket, query: (text: string) => sent.push(text) } as never);
  const written: Buffer[] = [];
  let rows = 0;
  for (const piece of piecesOf(stream, cuts)) {
    socket.write(piece);
    // Each piece read on its own, as one chunk of a socket (read() joins whatever is buffered).
    if (!copy.running) continue;
    const batch = await copy.next(1);
    // The end (undefined) only once CopyDone is read.
    if (batch === undefined) assert.equal(copy.running, false);
    written.push(...(batch?.pieces ?? []));
    rows += batch?.rows ?? 0;
  }
  assert.equal(copy.running, false, 'ended at CopyDone');
  assert.equal(await copy.next(1), undefined);
  await new Promise((resolve) => setImmediate(resolve));
  return { text: Buffer.concat(written).toString('utf8'), rows, back: Buffer.concat(back), sent };
}

describe('COPY reading', () => {
  it('gives the lines whole, whichever bytes the chunks are cut at', () => {
    const lines = ['a,b\r\n', '', 'žluťoučký "kůň"\r\n', 'x'.repeat(70_000)];
    const row = (line: string) => {
      const body = Buffer.from(line, 'utf8');
      const head = Buffer.alloc(6);
      head.writeInt16BE(1, 0);
      head.writeInt32BE(body.length, 2);
      return Buffer.concat([head, body]);
    };
    const stream = Buffer.concat([
      Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1'),
      Buffer.from([0, 0, 0, 0, 0, 0, 0, 2, 9, 9]),
      ...lines.map(row),
      Buffer.from([0xff, 0xff]),
    ]);
    fc.assert(
      fc.property(cutsOf(stream), (cuts) => {
        const reader = new BinaryCopyReader();
        const out = readInPieces(reader, stream, cuts);
        assert.equal(out.toString('utf8'), lines.join(''));
        assert.equal(reader.rows, lines.length);
        assert.equal(reader.done, true);
      }),
      { numRuns: 2000 },
    );
  });

  it('reads each CopyData message as a row and gives node-pg the rest, whichever bytes the socket\'s chunks are cut at', async () => {
    // As PostgreSQL writes CSV: LF after each record; a value with a delimiter, quote, CR or LF quoted, quotes doubled.
    const records = ['1,plain,', '2,"a,b","say ""hi"""', '3,"two\nlines","cr\r\nlf\n"', '4,"""",""""""', '5,žluťoučký,"😀\n"', '6,x'.repeat(9000)];
    // After CopyDone, what node-pg reads itself.
    const after = Buffer.concat([message('C', 'COPY 6\0'), message('Z', 'T')]);
    const stream = Buffer.concat([
      message('H', Buffer.from([0, 0, 0])),
      // Messages the backend may send in between: a notice, a parameter's new value.
      ...records.map((r, i) => Buffer.concat([i === 2 ? message('N', 'Snotice\0\0') : Buffer.alloc(0), i === 4 ? message('S', 'TimeZone\0UTC\0') : Buffer.alloc(0), message('d', `${r}\n`)])),
      message('c'),
      after,
    ]);
    await fc.assert(
      fc.asyncProperty(cutsOf(stream), async (cuts) => {
        const reader = new CsvCopyReader();
        const read = await copyInPieces(reader, stream, cuts);
        assert.equal(read.text, records.map((r) => `${r}\r\n`).join(''));
        assert.equal(read.rows, records.length);
        assert.equal(reader.done, true);
        assert.ok(read.back.equals(after), 'what follows CopyDone goes back to node-pg, whole');
        assert.deepEqual(read.sent, ['copy (select 1) to stdout']);
      }),
      { numRuns: 300 },
    );
    // NDJSON lines as they come (PG_LINES_OPTIONS): the LF is the row's own.
    const lines = ['{"a":1}', '{"b":"x\\ny"}', '{"c":"😀"}'];
    const ndjson = Buffer.concat([message('H', Buffer.from([0, 0, 0])), ...lines.map((l) => message('d', `${l}\n`)), message('c'), after]);
    await fc.assert(
      fc.asyncProperty(cutsOf(ndjson), async (cuts) => {
        const read = await copyInPieces(new LineCopyReader(), ndjson, cuts);
        assert.equal(read.text, lines.map((l) => `${l}\n`).join(''));
        assert.equal(read.rows, lines.length);
        assert.ok(read.back.equals(after));
      }),
      { numRuns: 100 },
    );
  });

  it('makes NDJSON lines of a binary COPY of cells as JSON.stringify writes the items, whichever bytes the chunks are cut at', async () => {
    const names = ['id', 'name', 'weight', 'price', 'note'];
    const kinds = [CellKind.Int8, CellKind.Text, CellKind.Float8Text, CellKind.Text, CellKind.Text];
    /** A binary COPY cell as PostgreSQL sends it: an int8 as 8 bytes big-endian, text as UTF-8, null as length -1. */
    const cell = (value: bigint | string | null) => {
      const bytes = value === null ? Buffer.alloc(0) : typeof value === 'string' ? Buffer.from(value, 'utf8') : Buffer.alloc(8);
      if (typeof value === 'bigint') bytes.writeBigInt64BE(value);
      const length = Buffer.alloc(4);
      length.writeInt32BE(value === null ? -1 : bytes.length);
      return Buffer.concat([length, bytes]);
    };
    /** A binary COPY row, as PostgreSQL sends it in one CopyData message. */
    const row = (cells: (bigint | string | null)[]) => Buffer.concat([Buffer.from([0, cells.length]), ...cells.map(cell)]);
    /**
     * A double's text as PostgreSQL writes it: JavaScript's digits from 1e-4 up to 1e15 (pg-lines' own test holds
     * PostgreSQL to that), an exponent beyond (`1e-05`, `1.5e+16`: here any form that reads back as the double),
     * `-0`, `NaN`, `Infinity`.
     */
    const pgDouble = (x: number) => (Object.is(x, -0) ? '-0' : Number.isNaN(x) || !Number.isFinite(x) || x === 0 || (Math.abs(x) >= 1e-4 && Math.abs(x) < 1e15) ? String(x) : x.toExponential().replace(/e([+-])(\d)$/, 'e$10$2'));
    const header = Buffer.concat([Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1'), Buffer.from([0, 0, 0, 0, 0, 0, 0, 2, 9, 9])]);
    // Text as PostgreSQL holds it: no NUL, and valid UTF-8, so no lone surrogate (the API stores U+FFFD for one).
    const stored = text.filter(storable).map((s) => Buffer.from(s, 'utf8').toString('utf8'));
    // Integers of every size an int8 holds (past 2^53 the item holds the nearest double, as node-pg's `Number` makes
    // it), mostly small ones; doubles of every kind, NaN and the infinities included (JSON.stringify writes null).
    const int8 = fc.oneof(fc.integer({ min: 0, max: 2 ** 31 }).map(BigInt), fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), fc.constantFrom(0n, -1n, 2n ** 31n - 1n, 2n ** 31n, -(2n ** 31n), 2n ** 53n - 1n, 2n ** 53n + 1n, -(2n ** 63n), 2n ** 63n - 1n));
    const double = fc.oneof(fc.double(), fc.integer().map((n) => n / 1000), fc.constantFrom(-0, 1e-4, 1e15, 1e16, 1e21, 1.5e-7, 54935381158050940, 5e-324, -Number.MAX_VALUE));
    const item = fc.tuple(int8, fc.option(stored), fc.option(double), fc.option(fc.stringMatching(/^-?[0-9]{1,6}\.[0-9]{2}$/)), fc.option(stored));
    const after = Buffer.concat([message('C', 'COPY 1\0'), message('Z', 'T')]);
    await fc.assert(
      fc.asyncProperty(fc.array(item, { maxLength: 8 }), fc.integer({ min: 0, max: 40 }), async (items, cutCount) => {
        const rows = items.map(([id, name, weight, price, note]) => row([id, name, weight === null ? null : pgDouble(weight), price, note]));
        // PostgreSQL sends the file header in the first row's message, or with the trailer when there is no row.
        const messages = [...rows, Buffer.from([0xff, 0xff])];
        messages[0] = Buffer.concat([header, messages[0]]);
        const stream = Buffer.concat([message('H', Buffer.from([1, 0, 5])), ...messages.map((m) => message('d', m)), message('c'), after]);
        const cuts = [...new Set(Array.from({ length: cutCount }, (_v, i) => 1 + ((i * 7919) % (stream.length - 1))))];
        const reader = new JsonCopyReader(names, kinds);
        const read = await copyInPieces(reader, stream, cuts);
        const expected = items.map(([id, name, weight, price, note]) => `${JSON.stringify({ id: Number(String(id)), name, weight, price, note })}\n`).join('');
        assert.equal(read.text, expected);
        assert.equal(read.rows, items.length);
        assert.equal(reader.done, true);
        assert.ok(read.back.equals(after));
      }),
      { numRuns: 500 },
    );
    // Every byte a text can hold on its own, and a row far longer than a piece with escapes throughout (counted first).
    const every = Array.from({ length: 0x7f }, (_v, c) => String.fromCharCode(c + 1)).join('') + 'Žluťoučký 中文 😀';
    const long = `${'"\\\n\u0001žluť😀'.repeat(20_000)}end`;
    for (const value of [every, long]) {
      const stream = Buffer.concat([message('d', Buffer.concat([header, row([7n, value, '-1.5e-300', null, ''])])), message('d', Buffer.from([0xff, 0xff])), message('c'), after]);
      const read = await copyInPieces(new JsonCopyReader(names, kinds), stream, [3, 100, 70_000]);
      assert.equal(read.text, `${JSON.stringify({ id: 7, name: value, weight: -1.5e-300, price: null, note: '' })}\n`);
    }
  });

  it('refuses a binary COPY of cells that is not the layout\'s: another field count, a row cut short or too long, an integer not of 8 bytes, bytes after the trailer', () => {
    const reader = () => new JsonCopyReader(['a', 'b'], [CellKind.Text, CellKind.Text]);
    const header = Buffer.concat([Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1'), Buffer.alloc(8)]);
    const feed = (r: JsonCopyReader, ...messages: Buffer[]) => {
      for (const m of messages) r.data(m, 0, m.length, true, new ByteWriter());
    };
    assert.throws(() => feed(reader(), Buffer.from('1\tx\n')), /not a binary COPY stream/);
    assert.throws(() => feed(reader(), Buffer.concat([header, Buffer.from([0, 1, 0, 0, 0, 1, 65])])), /1 fields, expected 2/);
    assert.throws(() => feed(reader(), Buffer.concat([header, Buffer.from([0, 2, 0, 0, 0, 1, 49, 0, 0, 0, 9, 65])])), /cut short/);
    assert.throws(() => feed(reader(), Buffer.concat([header, Buffer.from([0, 2, 0, 0, 0, 1, 49, 0, 0, 0, 1, 65, 66])])), /longer than its fields/);
    const ok = reader();
    feed(ok, Buffer.concat([header, Buffer.from([0, 2, 0, 0, 0, 1, 49, 0xff, 0xff, 0xff, 0xff])]), Buffer.from([0xff, 0xff]));
    assert.equal(ok.done, true);
    assert.throws(() => feed(ok, Buffer.from([0, 2])), /after its trailer/);
    // An integer of another size than int8's 8 bytes (an int4, say) is not read as one.
    assert.throws(() => feed(new JsonCopyReader(['n'], [CellKind.Int8]), Buffer.concat([header, Buffer.from([0, 1, 0, 0, 0, 4, 0, 0, 0, 7])])), /integer of 4 bytes, expected 8/);
  });

  it('does not start on a connection whose socket it cannot take over from node-pg alone', () => {
    const socket = new PassThrough();
    socket.on('data', () => {});
    socket.on('data', () => {});
    const sent: string[] = [];
    const refused = new CopyOut('copy (select 1) to stdout', new LineCopyReader()).submit({ stream: socket, query: (text: string) => sent.push(text) } as never);
    assert.match(String(refused), /one reader of the socket, found 2/);
    assert.deepEqual(sent, [], 'nothing sent');
    assert.equal(socket.listenerCount('data'), 2, 'the listeners left as they were');
  });

  it('refuses a CSV row that does not end in LF', () => {
    assert.throws(() => new CsvCopyReader().data(Buffer.from('1,x'), 0, 3, true, new ByteWriter()), /does not end in LF/);
  });

  it('reads the records of items with nested elements without their markers, counting items, whichever bytes the chunks are cut at', async () => {
    // As pgNestedCsvCells has PostgreSQL write them: `t` and the delimiter before an item's first record, `f` before the others.
    for (const delimiter of [',', ';', '\t', '|']) {
      const records: Array<[boolean, string]> = [
        [true, `1${delimiter}"a""b"${delimiter}x`],
        [false, `1${delimiter}"a""b"${delimiter}"two\nlines"`],
        [false, `1${delimiter}"a""b"${delimiter}`],
        [true, `2${delimiter}${delimiter}`],
        [true, `3${delimiter}žluťoučký${delimiter}😀`],
        [false, `3${delimiter}žluťoučký${delimiter}${'y'.repeat(9000)}`],
      ];
      const after = Buffer.concat([message('C', 'COPY 6\0'), message('Z', 'T')]);
      const stream = Buffer.concat([message('H', Buffer.from([0, 0, 0])), ...records.map(([first, r]) => message('d', `${first ? 't' : 'f'}${delimiter}${r}\n`)), message('c'), after]);
      await fc.assert(
        fc.asyncProperty(cutsOf(stream), async (cuts) => {
          const reader = new CsvCopyReader(delimiter.charCodeAt(0));
          const read = await copyInPieces(reader, stream, cuts);
          assert.equal(read.text, records.map(([, r]) => `${r}\r\n`).join(''));
          assert.equal(read.rows, 3, 'items, not records');
          assert.equal(reader.done, true);
          assert.ok(read.back.equals(after));
        }),
        { numRuns: 100 },
      );
    }
  });

  it('refuses a record without its item marker', () => {
    const read = (record: string, delimiter = ',') => new CsvCopyReader(delimiter.charCodeAt(0)).data(Buffer.from(record), 0, Buffer.byteLength(record), true, new ByteWriter());
    assert.throws(() => read('1,x\n'), /without its item marker/);
    assert.throws(() => read('t;x\n'), /without its item marker/);
    assert.throws(() => read('t'), /without its item marker/);
    assert.doesNotThrow(() => read('t,x\n'));
    assert.doesNotThrow(() => read('f;x\n', ';'));
  });

  it('refuses a stream that is not one text column', () => {
    assert.throws(() => new BinaryCopyReader().push(Buffer.from('id,name\r\n1,x\r\n'.repeat(3)), new ByteWriter()), /not a binary COPY stream/);
    const twoFields = Buffer.concat([Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1'), Buffer.alloc(8), Buffer.from([0, 2, 0, 0, 0, 1, 65])]);
    assert.throws(() => new BinaryCopyReader().push(twoFields, new ByteWriter()), /2 fields/);
  });

  it('inlines parameters as literals that read back as the same values', () => {
    const inlined = inlineParameters({ sql: 'select $1, $2, $10, $3 - $4', parameters: ["it's \\ $2 %", 7, -5, true, null, null, null, null, null, 'ten'], query: undefined as never, queryId: undefined as never });
    // node-pg's escapeLiteral: an E'' literal with the backslash doubled; the `$2` inside it stays text.
    assert.equal(inlined, "select  E'it''s \\\\ $2 %', (7), 'ten', (-5) - true");
    assert.equal(inlineParameters({ sql: 'select $1', parameters: [new Date(0)], query: undefined as never, queryId: undefined as never }), undefined, 'a value it does not know is not guessed at');
    assert.equal(inlineParameters({ sql: 'select $1', parameters: [Number.NaN], query: undefined as never, queryId: undefined as never }), undefined);
  });

  it('gives XLSX cells of orders with their items and addresses, and leaves to JavaScript an item property that no column of the items\' table holds', () => {
    const orders = RESOURCES.find((r) => r.collection === 'orders')!;
    const cells = pgNestedXlsxCells(exportLayout(orders))!;
    // The order's own columns (addresses spread), then one cell of the items; each address parsed once, and checked.
    assert.equal(cells.kinds.length, exportLayout(orders).columns.filter((c) => !c.fromItem).length);
    assert.equal(cells.cells.length, cells.kinds.length + 1);
    assert.equal(cells.itemKinds?.length, 7);
    assert.ok(cells.lateral && cells.inRange);
    const table = orders.nestedTables!.items;
    const { total: _total, ...columns } = table.columns;
    const partial = { ...orders, nestedTables: { items: { ...table, columns } } };
    assert.equal(pgNestedXlsxCells(exportLayout(partial)), undefined);
  });
});

for (const dialect of (await dialects()).filter((d) => d === 'postgres')) {
  describe(`lines PostgreSQL writes (${dialect})`, { timeout: 300_000 }, () => {
    let t: TestApp;

    before(async () => {
      t = await createTestApp(dialect, { seed: { products: 30, orders: 5 } });
    });
    after(() => t.close());

    const column = async <T,>(values: unknown[], type: string, expr: (x: ReturnType<typeof sql.ref>) => unknown): Promise<T[]> => {
      const { rows } = await sql<{ v: T }>`select ${expr(sql.ref('u.x'))} as v from unnest(${values}::${sql.raw(type)}[]) with ordinality as u(x, i) order by u.i`.execute(t.database.store.db);
      return rows.map((r) => r.v);
    };

    it('writes every double of its range as String(number) in CSV and as JSON.stringify in NDJSON, and says which are outside', async () => {
      const edges = [0, 1, -1, 21, 0.1, 0.30000000000000004, 1e-4, -1e-4, 1.2345e-4, 99.99999, 123456789012345.6, 999999999999999.9, 1e15 - 1, Number.NaN, Infinity, -Infinity];
      const outside = [1e-7, 1.5e-7, 9.99e-5, 5e-324, 1e15, 1e16, 1234567890123456.8, 54935381158050940, 2 ** 53, 1e21, 1.7976931348623157e308];
      const check = async (xs: number[]) => {
        const csv = await column<string>(xs, 'float8', (x) => csvCell('number', x as never, CSV_DEFAULTS)!);
        const json = await column<string>(xs, 'float8', (x) => jsonValue('number', x as never)!);
        const inRange = await column<boolean>(xs, 'float8', (x) => numberInRange(x as never));
        xs.forEach((x, i) => {
          const within = x === 0 || !Number.isFinite(x) || (Math.abs(x) >= 1e-4 && Math.abs(x) < 1e15);
          assert.equal(inRange[i], within, `${x} in range`);
          if (!within) return;
          assert.equal(csv[i], jsCell('number', x, CSV_DEFAULTS), `CSV of ${x}`);
          assert.equal(json[i], JSON.stringify(x), `JSON of ${x}`);
        });
      };
      await check([...edges, ...outside]);
      const inRange = fc.oneof(fc.double({ min: 1e-4, max: 1e15, noNaN: true }), fc.double({ min: -1e15, max: -1e-4, noNaN: true }), fc.double({ min: 1e-4, max: 1e3, noNaN: true }));
      await fc.assert(fc.asyncProperty(fc.array(fc.oneof(inRange, fc.double()), { minLength: 1, maxLength: 500 }), check), { numRuns: 80 });
      // -0 as a parameter reads back as 0 (node-pg writes String(-0)): PostgreSQL's own -0, which it writes as `-0`.
      const { rows } = await sql<{ c: string; j: string }>`select ${csvCell('number', sql`'-0'::float8` as never, CSV_DEFAULTS)!} as c, ${jsonValue('number', sql`'-0'::float8` as never)!} as j`.execute(t.database.store.db);
      assert.deepEqual(rows[0], { c: '0', j: '0' });
    });

    it('writes every text as CsvEncoder (each delimiter, with and without the formula guard) and as JSON.stringify', async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(text.filter(storable), { minLength: 1, maxLength: 300 }), async (values) => {
          for (const options of CSV_VARIANTS) {
            const cells = await column<string>(values, 'text', (x) => csvCell('string', x as never, options)!);
            values.forEach((v, i) => assert.equal(cells[i], jsCell('string', v, options), `${JSON.stringify(options)}: ${JSON.stringify(v)}`));
          }
          const json = await column<string>(values, 'text', (x) => jsonValue('string', x as never)!);
          values.forEach((v, i) => assert.equal(json[i], JSON.stringify(v), JSON.stringify(v)));
        }),
        { numRuns: 40 },
      );
    });

    it('writes every text, with a number beside it, through its own CSV writer as CsvEncoder does (each delimiter, with and without the guard)', async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(fc.oneof(text, fc.constantFrom('', '\\.', '""', '\r\n')).filter(storable), { minLength: 1, maxLength: 300 }), async (values) => {
          for (const options of CSV_VARIANTS) {
            // COPY takes no parameters: the values as literals (node-pg's escapeLiteral, which inlineParameters uses too).
            const rows = sql.raw(values.map((v, i) => `(${pg.escapeLiteral(v)}, ${i + 1})`).join(', '));
            const query = sql<string>`select ${pgCsvCell('string', sql.ref('u.x') as never, options)!} as a, ${pgCsvCell('integer', sql.ref('u.i') as never, options)!} as b
              from (values ${rows}) as u(x, i) order by u.i`.compile(t.database.store.db);
            const conn = await openExportConnection(t.database.store, 'pg-lines test');
            try {
              assert.deepEqual(query.parameters, []);
              const source = conn.copyOut!(`copy (${query.sql}) to stdout (${pgCsvOptions(options)})`, new CsvCopyReader());
              const pieces: Buffer[] = [];
              let rows = 0;
              for (let batch = await source.next(1 << 16); batch; batch = await source.next(1 << 16)) {
                pieces.push(...batch.pieces);
                rows += batch.rows;
              }
              const expected = new CsvEncoder([{ name: 'a', type: 'string', slot: 0 }, { name: 'b', type: 'integer', slot: 1 }], options).rows(values.map((v, i) => [v, i + 1]));
              assert.equal(Buffer.concat(pieces).toString('utf8'), Buffer.concat(expected).toString('utf8'), JSON.stringify(options));
              assert.equal(rows, values.length);
            } finally {
              await conn.close();
            }
          }
        }),
        { numRuns: 30 },
      );
    });

    it('fails a COPY that PostgreSQL ends with an error, with its error, after the rows before it', async () => {
      const conn = await openExportConnection(t.database.store, 'pg-lines test');
      let rows = 0;
      try {
        const copy = conn.copyOut!(`copy (select '{"x":' || (1 / (5000 - i))::text || '}' from generate_series(1, 10000) as g(i)) to stdout (${PG_LINES_OPTIONS})`, new LineCopyReader());
        await assert.rejects(async () => {
          for (let batch = await copy.next(1 << 12); batch; batch = await copy.next(1 << 12)) rows += batch.rows;
        }, /division by zero/);
        assert.ok(rows > 0 && rows < 5000, `${rows} rows before the error`);
        assert.equal(copy.running, false);
      } finally {
        await conn.close();
      }
      // The connection it gave back was dropped, and the pool still serves exports.
      const again = await openExportConnection(t.database.store, 'pg-lines test');
      try {
        const copy = again.copyOut!(`copy (select '{}' from generate_series(1, 3)) to stdout (${PG_LINES_OPTIONS})`, new LineCopyReader());
        const batch = await copy.next(1 << 16);
        assert.equal(Buffer.concat(batch!.pieces).toString(), '{}\n{}\n{}\n');
        assert.equal(await copy.next(1 << 16), undefined);
      } finally {
        await again.close();
      }
    });

    /** Every whole export of `def` in these plans, written by PostgreSQL and by the JavaScript encoders: the same bytes. */
    async function sameBoth(def: Resource, p: ListPlan, shape: Shape | undefined, format: ExportFormat, csv: CsvOptions, byDatabase = true): Promise<void> {
      const conn = await openExportConnection(t.database.store, 'pg-lines test');
      try {
        const layout = exportLayout(def, (shape === undefined ? p : withShape(p, shape)).shape);
        const copy = await copyPlan(conn, layout, p, format, csv);
        assert.equal(copy !== undefined, byDatabase, `${def.collection} ${format}: PostgreSQL writes it: ${byDatabase}`);
        // CSV through PostgreSQL's CSV writer, but for a plain layout's one column (whole lines); an item with nested
        // values as a record per exploded element, ordered by their number (`n.k`) within the item.
        if (copy && format === 'csv') {
          assert.equal(!copy.statement.endsWith('(format binary)'), !layout.identity || layout.columns.length > 1, `${def.collection}: CSV of ${layout.columns.length} columns through PostgreSQL's CSV writer`);
          assert.equal(copy.statement.includes('"n"."k")'), layout.explodeSlot !== undefined, `${def.collection}: a record per element`);
        }
        // Plain NDJSON as cells that JsonCopyReader makes lines of; an item's lines with nested values as texts.
        if (copy && format === 'ndjson') {
          const cells = pgJsonCells(layout) !== undefined;
          assert.ok(copy.statement.endsWith(cells ? '(format binary)' : `(${PG_LINES_OPTIONS})`), `${def.collection}: NDJSON ${cells ? 'cells' : 'lines as text'}`);
        }
        // XLSX of orders as an order's cells with its items in one, which XlsxCopyReader makes a sheet row each of.
        if (copy && format === 'xlsx') assert.equal(copy.statement.includes('string_agg'), layout.explodeSlot !== undefined, `${def.collection}: XLSX items in one cell`);
        let counted = 0;
        let countedByJavascript = 0;
        const database = await bytesOf(await streamExport(conn, def, p, shape, { format, csv, onBatch: (n) => (counted += n) }));
        const javascript = await bytesOf(await streamExport(conn, def, p, shape, { format, csv, encodeInDatabase: false, onBatch: (n) => (countedByJavascript += n) }));
        // Items are counted (a snapshot reports them), not the lines or sheet rows an order's items make.
        assert.equal(counted, countedByJavascript, `${def.collection} ${format}: items counted alike`);
        if (format === 'xlsx') {
          // The zip's entries carry the time they were written: the parts are compared, each byte of them.
          const [a, b] = [readXlsx(database), readXlsx(javascript)];
          for (const part of XLSX_PARTS) assert.equal(a.part(part), b.part(part), `${def.collection} ${part} ${JSON.stringify(shape)}`);
          if (layout.explodeSlot === undefined) assert.equal(counted, a.rows.length - 1, 'rows counted as written');
          return;
        }
        assert.equal(database.toString('utf8'), javascript.toString('utf8'), `${def.collection} ${format} ${JSON.stringify(csv)} ${JSON.stringify(shape)}`);
        assert.ok(database.equals(javascript));
        const lines = javascript.toString('utf8').split(format === 'csv' ? '\r\n' : '\n').length - (format === 'csv' ? 2 : 1);
        if (format === 'ndjson') assert.equal(counted, lines, 'rows counted as written');
      } finally {
        await conn.close();
      }
    }

    it('every export of a plain collection is the same bytes whichever writes it: formats, delimiters, fields, sorts, filters, cursors', async () => {
      // Values each encoder treats apart, through the admin API as a client would store them.
      const names = ['=SUM(A1:A2)', '-123', '+4.5', '-1,234.50', '@cmd', '\tlead', 'a,b;c|d', 'quote "x"', 'line\nbreak', 'cr\rx', 'back\\slash', "it's", 'žluťoučký kůň 😀', 'sep\u2028x', 'ctl\x01\x1f\x7f', '$1 %_'];
      for (const [i, name] of names.entries()) {
        const res = await t.admin('POST', '/admin/api/products', {
          articleNumber: `PGL-${i}${name.slice(0, 8)}`.replace(/\s/g, '_'),
          name,
          description: i % 3 === 0 ? null : `${name} ${name}`,
          price: `${i}.5`,
          currency: 'CZK',
          vatRate: [0, 21, 0.000123, 0.1, 99.99999, 12.5][i % 6],
          weight: [null, 0, 1e-4, 1.5e-3, 999999999999999.9, 123456.789, 0.30000000000000004][i % 7],
          url: i % 2 ? `http://shop.test/?q="${i}",x` : null,
        });
        assert.equal(res.statusCode, 201, res.body);
      }
      const plans = (def: Resource): Array<[string, Record<string, unknown>]> => [
        ['default', { filters: {} }],
        ['newest first', { filters: {}, sort: '-updatedAt' }],
        ['filtered by text', { filters: def.collection === 'products' ? { q: "it's" } : { updatedSince: '2000-01-01T00:00:00Z' } }],
        ['ids', { filters: { ids: '1,3,5,7,40,41,42' }, sort: '-id' }],
        // No row: the header alone (a workbook of one row, a CSV of its header line, an empty NDJSON).
        ['none', { filters: { ids: '999999' } }],
      ];
      for (const def of RESOURCES.filter((r) => exportLayout(r).identity)) {
        for (const [, request] of plans(def)) {
          const p = plan(def, request as never, t.ctx.hashKey);
          await sameBoth(def, p, undefined, 'ndjson', CSV_DEFAULTS);
          await sameBoth(def, p, undefined, 'xlsx', CSV_DEFAULTS);
          for (const csv of CSV_VARIANTS) await sameBoth(def, p, undefined, 'csv', csv);
        }
        // A shape of some fields, and a keyset position carried by a cursor.
        const some = def.fields.filter((f) => f.name !== 'id').slice(0, 3).map((f) => f.name);
        await sameBoth(def, plan(def, { filters: {} }, t.ctx.hashKey), { fields: some }, 'ndjson', CSV_DEFAULTS);
        await sameBoth(def, plan(def, { filters: {} }, t.ctx.hashKey), { fields: some }, 'csv', CSV_DEFAULTS);
        await sameBoth(def, plan(def, { filters: {} }, t.ctx.hashKey), { fields: some }, 'xlsx', CSV_DEFAULTS);
        // One column goes as whole lines (PostgreSQL's CSV writer would quote a lone `\.`), two or more as cells.
        await sameBoth(def, plan(def, { filters: {} }, t.ctx.hashKey), { fields: some.slice(0, 1) }, 'csv', CSV_DEFAULTS);
        const page = await t.get(`/api/v2/${def.collection}?limit=3&sort=-updatedAt`, (await t.credential([def.scope])).token);
        const cursor = page.json().pagination.nextCursor as string | null;
        if (cursor) await sameBoth(def, plan(def, { filters: {}, cursor }, t.ctx.hashKey), undefined, 'csv', CSV_DEFAULTS);
      }
      // A number PostgreSQL writes otherwise than JavaScript: that CSV export is JavaScript's, the bytes the same.
      const products = RESOURCES.find((r) => r.collection === 'products')!;
      for (const weight of [1e21, 1.5e-7, 54935381158050940]) {
        const res = await t.admin('POST', '/admin/api/products', { articleNumber: `PGL-W-${weight}`, name: 'Heavy', price: '1.00', currency: 'CZK', vatRate: 21, weight });
        assert.equal(res.statusCode, 201, res.body);
        const all = plan(products, { filters: {} }, t.ctx.hashKey);
        await sameBoth(products, all, undefined, 'csv', CSV_DEFAULTS, false);
        // NDJSON's reader writes a number of any range as JavaScript does: PostgreSQL's still.
        await sameBoth(products, all, undefined, 'ndjson', CSV_DEFAULTS);
        await sameBoth(products, all, undefined, 'xlsx', CSV_DEFAULTS);
        // Other rows of the collection still are PostgreSQL's to write.
        await sameBoth(products, plan(products, { filters: { ids: '1,2,3' } }, t.ctx.hashKey), undefined, 'csv', CSV_DEFAULTS);
        await t.admin('DELETE', `/admin/api/products/${(res.json() as { id: number }).id}`);
      }
      // Date-times in other forms than the API's own (a store's data written by other means): PostgreSQL computes the
      // serial date of the API's form only, the others are Date.parse's, or a text where it reads no date. The last
      // of January and a moment after 1899-12-30 (a serial with an exponent) are PostgreSQL's to compute.
      const stamps = ['2024-02-29T10:00:00.000Z', '2026-04-31T00:00:00.000Z', '2026-01-31T23:59:59.999Z', '2026-01-02T03:04:05Z', 'not a date', '1899-12-30T00:00:00.001Z', '0999-01-01T00:00:00.000Z', '2026-06-15T12:00:00.000+02:00', '2026-12-31T24:00:00.000Z', ''];
      for (const [i, stamp] of stamps.entries()) await sql`update products set created_at = ${stamp} where id = ${i + 1}`.execute(t.database.store.db);
      await sameBoth(products, plan(products, { filters: {} }, t.ctx.hashKey), undefined, 'xlsx', CSV_DEFAULTS);
      const sheet = readXlsx((await t.get('/api/v2/products?format=xlsx&ids=1,2,5,6', (await t.credential(['products:read'])).token)).rawPayload);
      const serial = (stamp: string) => 25569 + Date.parse(stamp) / 86_400_000;
      assert.deepEqual(sheet.rows.slice(1).map((r) => r[14]), [serial(stamps[0]), serial(stamps[1]), 'not a date', serial(stamps[5])]);
    });

    it('writes a double by its shortest digits whatever extra_float_digits the session was given', async () => {
      const products = RESOURCES.find((r) => r.collection === 'products')!;
      const res = await t.admin('POST', '/admin/api/products', { articleNumber: 'PGL-EFD', name: 'Digits', price: '1.00', currency: 'CZK', vatRate: 0.1, weight: 0.1 + 0.2 });
      assert.equal(res.statusCode, 201, res.body);
      const id = (res.json() as { id: number }).id;
      const conn = await openExportConnection(t.database.store, 'pg-lines test');
      try {
        // As a server or role configured with fewer digits would start the session: 0.30000000000000004 written `0.3`.
        await conn.arrays(sql`set extra_float_digits = 0`.compile(conn.db));
        assert.deepEqual(await conn.arrays(sql`select (0.1::float8 + 0.2::float8)::text`.compile(conn.db)), [['0.3']]);
        const one = plan(products, { filters: { ids: String(id) } }, t.ctx.hashKey);
        for (const format of ['ndjson', 'csv'] as const) {
          const database = (await bytesOf(await streamExport(conn, products, one, undefined, { format, csv: CSV_DEFAULTS }))).toString('utf8');
          const javascript = (await bytesOf(await streamExport(conn, products, one, undefined, { format, csv: CSV_DEFAULTS, encodeInDatabase: false }))).toString('utf8');
          assert.match(javascript, /0\.30000000000000004/);
          assert.equal(database, javascript, format);
        }
      } finally {
        await conn.close();
      }
      await t.admin('DELETE', `/admin/api/products/${id}`);
    });

    it('every export of orders, items and addresses in them, is the same bytes whichever writes it: formats, delimiters, fields, sorts, filters, cursors', async () => {
      const orders = RESOURCES.find((r) => r.collection === 'orders')!;
      const tricky = ['=HYPERLINK("x")', '-12', '+1', '@a', '\tx', 'a,b;c|d', 'say "hi"', 'two\nlines', 'cr\rx', 'back\\slash', "it's", 'Příliš žluťoučký 😀', 'u\u2028v', 'ctl\x01\x1f\x7f'];
      const ids: number[] = [];
      for (const [i, name] of tricky.entries()) {
        // Keys in another order than the schema's: the answer keeps the order they were given in.
        const billingAddress = i % 2 ? { city: name, name, street: `${name} 1`, postalCode: '110 00', country: 'CZ', phone: i % 3 ? null : '+420 1', company: name } : { name, street: 'Main 1', city: 'Praha', postalCode: '110 00', country: 'CZ' };
        const res = await t.admin('POST', '/admin/api/orders', {
          email: `pgl${i}@shop.test`,
          customerName: name,
          billingAddress,
          shippingAddress: i % 3 === 0 ? null : { ...billingAddress, name: `${name}!` },
          currency: 'CZK',
          items: Array.from({ length: (i % 4) + 1 }, (_x, k) => ({ productId: k === 0 ? 1 : null, articleNumber: k === 1 ? null : `${name}-${k}`, name: `${name} #${k}`, quantity: k + 1, unitPrice: `${i}.${k}5`, vatRate: [21, 0, 12.5, 0.000123, 99.99999][(i + k) % 5] })),
        });
        assert.equal(res.statusCode, 201, res.body);
        ids.push((res.json() as { id: number }).id);
      }
      // An order whose items are gone (written so by hand: the API keeps at least one) keeps its one CSV row.
      await sql`delete from order_items where order_id = ${ids[2]}`.execute(t.database.store.db);
      const plans: Array<Record<string, unknown>> = [{ filters: {} }, { filters: {}, sort: 'id' }, { filters: { email: 'PGL3@shop.test' } }, { filters: { id: ids.slice(0, 6).join(',') }, sort: '-id' }];
      for (const request of plans) {
        const p = plan(orders, request as never, t.ctx.hashKey);
        await sameBoth(orders, p, undefined, 'ndjson', CSV_DEFAULTS);
        await sameBoth(orders, p, undefined, 'xlsx', CSV_DEFAULTS);
        for (const csv of CSV_VARIANTS) await sameBoth(orders, p, undefined, 'csv', csv);
      }
      const all = plan(orders, { filters: {} }, t.ctx.hashKey);
      for (const fields of [['number', 'items'], ['billingAddress', 'total'], ['items'], ['number'], ['shippingAddress', 'items', 'status']]) {
        await sameBoth(orders, all, { fields }, 'ndjson', CSV_DEFAULTS);
        await sameBoth(orders, all, { fields }, 'csv', CSV_DEFAULTS);
        await sameBoth(orders, all, { fields }, 'xlsx', CSV_DEFAULTS);
      }
      const page = await t.get('/api/v2/orders?limit=4&sort=id', (await t.credential(['orders:read'])).token);
      const cursor = plan(orders, { filters: {}, sort: 'id', cursor: page.json().pagination.nextCursor as string }, t.ctx.hashKey);
      await sameBoth(orders, cursor, undefined, 'csv', CSV_DEFAULTS);
      await sameBoth(orders, cursor, undefined, 'xlsx', CSV_DEFAULTS);
      // An item's VAT rate PostgreSQL writes otherwise than JavaScript (1e-5 against 0.00001): JavaScript's export.
      // XLSX's reader writes any number as JavaScript does: PostgreSQL's still.
      await sql`update order_items set vat_rate = 0.00001 where order_id = ${ids[5]}`.execute(t.database.store.db);
      await sameBoth(orders, all, undefined, 'csv', CSV_DEFAULTS, false);
      await sameBoth(orders, all, undefined, 'ndjson', CSV_DEFAULTS, false);
      await sameBoth(orders, all, undefined, 'xlsx', CSV_DEFAULTS);
      // The other orders still are PostgreSQL's to write.
      await sameBoth(orders, plan(orders, { filters: { id: ids.slice(0, 5).join(',') } }, t.ctx.hashKey), undefined, 'ndjson', CSV_DEFAULTS);
      await sql`update order_items set vat_rate = 21 where order_id = ${ids[5]}`.execute(t.database.store.db);
      // An address holding what JSON.stringify escapes as \u and PostgreSQL cannot read into a text (a lone
      // surrogate; NUL, which the API refuses, stored by hand): CSV, which reads the address's values, is
      // JavaScript's; NDJSON writes the text as stored.
      const odd = await t.admin('POST', '/admin/api/orders', { email: 'odd@shop.test', customerName: 'Odd', billingAddress: { name: 'a \ud800 lone', street: 'S', city: 'C', postalCode: '1', country: 'CZ' }, currency: 'CZK', items: [{ name: 'x', quantity: 1, unitPrice: '1.00', vatRate: 21 }] });
      assert.equal(odd.statusCode, 201, odd.body);
      const oddId = (odd.json() as { id: number }).id;
      for (const stored of [null, '{"name":"nul \\u0000","street":"S","city":"C","postalCode":"1","country":"CZ"}', '{"name":"upper \\uD800","street":"S","city":"C","postalCode":"1","country":"CZ"}']) {
        if (stored) await sql`update orders set billing_address = ${stored.replace(/ \\u[0-9a-fA-F]{4}/, '')}, shipping_address = ${stored} where id = ${oddId}`.execute(t.database.store.db);
        await sameBoth(orders, all, undefined, 'csv', CSV_DEFAULTS, false);
        await sameBoth(orders, all, undefined, 'xlsx', CSV_DEFAULTS, false);
        // Upper-case hex is no text JSON.stringify writes: NDJSON keeps it as stored (a hand-stored text, below).
        if (!stored?.includes('uD800')) await sameBoth(orders, all, undefined, 'ndjson', CSV_DEFAULTS);
      }
      await t.admin('DELETE', `/admin/api/orders/${oddId}`);
      await sameBoth(orders, all, undefined, 'csv', CSV_DEFAULTS);
      await sameBoth(orders, all, undefined, 'xlsx', CSV_DEFAULTS);
      // An address stored by hand, not as JSON.stringify wrote it: the same JSON value, on one line.
      await sql`update orders set billing_address = ${'{\n  "name": "Hand",\r\n  "street": "S 1", "city": "C", "postalCode": "1", "country": "CZ"\n}'} where id = ${ids[0]}`.execute(t.database.store.db);
      const conn = await openExportConnection(t.database.store, 'pg-lines test');
      try {
        const one = plan(orders, { filters: { id: String(ids[0]) } }, t.ctx.hashKey);
        const database = (await bytesOf(await streamExport(conn, orders, one, undefined, { format: 'ndjson', csv: CSV_DEFAULTS }))).toString('utf8');
        const javascript = (await bytesOf(await streamExport(conn, orders, one, undefined, { format: 'ndjson', csv: CSV_DEFAULTS, encodeInDatabase: false }))).toString('utf8');
        assert.equal(database.split('\n').length, 2, 'one line');
        assert.deepEqual(JSON.parse(database), JSON.parse(javascript));
      } finally {
        await conn.close();
      }
    });

    it('leaves to JavaScript what it does not write: includes, a locale', async () => {
      const conn = await openExportConnection(t.database.store, 'pg-lines test');
      try {
        const orders = RESOURCES.find((r) => r.collection === 'orders')!;
        const products = RESOURCES.find((r) => r.collection === 'products')!;
        const p = plan(products, { filters: {} }, t.ctx.hashKey);
        const withProducts = plan(orders, { filters: {}, shape: { include: ['products'] } }, t.ctx.hashKey);
        assert.equal(await copyPlan(conn, exportLayout(orders, withProducts.shape), withProducts, 'ndjson', CSV_DEFAULTS), undefined);
        assert.equal(await copyPlan(conn, exportLayout(orders), plan(orders, { filters: {} }, t.ctx.hashKey), 'csv', { ...CSV_DEFAULTS, decimal: ',' }), undefined);
        assert.equal(await copyPlan(conn, exportLayout(products, plan(products, { filters: {}, shape: { include: ['brand'] } }, t.ctx.hashKey).shape), p, 'ndjson', CSV_DEFAULTS), undefined);
        assert.equal(await copyPlan(conn, exportLayout(products), p, 'csv', { ...CSV_DEFAULTS, decimal: ',', spreadsheet: true }), undefined);
        assert.equal(await copyPlan(conn, exportLayout(products, plan(products, { filters: {}, shape: { include: ['brand'] } }, t.ctx.hashKey).shape), p, 'xlsx', CSV_DEFAULTS), undefined);
        assert.equal(await copyPlan(conn, exportLayout(orders, withProducts.shape), withProducts, 'xlsx', CSV_DEFAULTS), undefined);
      } finally {
        await conn.close();
      }
    });
  });
}
