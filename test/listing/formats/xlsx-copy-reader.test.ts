import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import XLSX from 'xlsx';
import { ByteWriter, type EncodedBatch } from '../../../src/listing/formats/bytes.ts';
import type { ExportColumn } from '../../../src/listing/formats/columns.ts';
import { XlsxExportWriter } from '../../../src/listing/formats/xlsx.ts';
import { XlsxCopyReader, XlsxKind } from '../../../src/listing/formats/xlsx-copy-reader.ts';
import { readXlsx } from './readers.ts';

const COLUMNS: ExportColumn[] = [
  { name: 'id', type: 'integer', slot: 0 },
  { name: 'name', type: 'string', slot: 1 },
  { name: 'weight', type: 'number', slot: 2 },
  { name: 'price', type: 'money', slot: 3 },
  { name: 'at', type: 'datetime', slot: 4 },
  { name: 'note', type: 'string', slot: 5 },
];
const KINDS = [XlsxKind.Int8, XlsxKind.Text, XlsxKind.Number, XlsxKind.Money, XlsxKind.Date, XlsxKind.Text];
type Row = [bigint, string | null, number | null, string | null, string | null, string | null];

const HEADER = Buffer.concat([Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1'), Buffer.from([0, 0, 0, 0, 0, 0, 0, 2, 9, 9])]);
const TRAILER = Buffer.from([0xff, 0xff]);

/** A binary COPY cell as PostgreSQL sends it: an int8 as 8 bytes big-endian, text as UTF-8, null as length -1. */
function cell(value: bigint | string | null): Buffer {
  const bytes = value === null ? Buffer.alloc(0) : typeof value === 'string' ? Buffer.from(value, 'utf8') : Buffer.alloc(8);
  if (typeof value === 'bigint') bytes.writeBigInt64BE(value);
  const length = Buffer.alloc(4);
  length.writeInt32BE(value === null ? -1 : bytes.length);
  return Buffer.concat([length, bytes]);
}

/** A double's text as PostgreSQL writes it (pg-lines.test.ts holds PostgreSQL to JavaScript's digits in 1e-4..1e15). */
const pgDouble = (x: number) => (Object.is(x, -0) ? '-0' : Number.isNaN(x) || !Number.isFinite(x) || x === 0 || (Math.abs(x) >= 1e-4 && Math.abs(x) < 1e15) ? String(x) : x.toExponential().replace(/e([+-])(\d)$/, 'e$10$2'));

/** A row's message as PostgreSQL sends it for pgXlsxCells: numbers as float8's text, the rest as text. */
function message([id, name, weight, price, at, note]: Row): Buffer {
  const cells = [id, name, weight === null ? null : pgDouble(weight), price === null ? null : pgDouble(Number(price)), at, note];
  return Buffer.concat([Buffer.from([0, cells.length]), ...cells.map(cell)]);
}

/** What the reader writes of these messages, each given in two parts at `split` (where it is inside the message). */
function read(reader: XlsxCopyReader, messages: Buffer[], split = 0): EncodedBatch {
  const out = new ByteWriter(1 << 12);
  for (const m of messages) {
    if (split > 0 && split < m.length) {
      reader.data(m, 0, split, false, out);
      reader.data(m, split, m.length, true, out);
    } else reader.data(m, 0, m.length, true, out);
  }
  return { pieces: out.take(), rows: reader.rows, breaks: reader.takeBreaks() };
}

/** The workbook a writer makes: of JavaScript rows (`write`), or of a reader's sheet rows (`writeRows`). */
async function workbook(fill: (writer: XlsxExportWriter) => Promise<void>, columns = COLUMNS): Promise<Buffer> {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (c: Buffer) => chunks.push(c));
  const writer = new XlsxExportWriter(out, 'cells', columns);
  await fill(writer);
  await writer.finish();
  return Buffer.concat(chunks);
}

const signal = new AbortController().signal;
/** The values node-pg hands XlsxExportWriter: int8 as a number, numeric as its text. */
const jsRow = ([id, ...rest]: Row): unknown[] => [Number(String(id)), ...rest];

describe('XlsxCopyReader', () => {
  it('writes the sheet rows XlsxExportWriter renders of the same values, whichever byte a message is cut at', async () => {
    const TRICKY = ['&', '<', '>', '\r', '\n', '\t', ' ', '"', "'", 'a', 'é', 'Ž', '中', '😀', '\x01', '\x08', '\x0b', '\x1f', '\x7f', '\uFFFE', '\uFFFF', '\uFF01', '\uF000', ']]>'];
    const text = fc.oneof(fc.array(fc.constantFrom(...TRICKY), { maxLength: 10 }).map((p) => p.join('')), fc.string({ unit: 'binary', maxLength: 30 }));
    // Text as PostgreSQL holds it: no NUL, valid UTF-8 (a lone surrogate is stored as U+FFFD).
    const stored = text.filter((s) => !s.includes('\0')).map((s) => Buffer.from(s, 'utf8').toString('utf8'));
    const int8 = fc.oneof(fc.integer({ min: 0, max: 2 ** 31 }).map(BigInt), fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }));
    const double = fc.oneof(fc.double(), fc.integer().map((n) => n / 1000), fc.constantFrom(-0, 1e-4, 1e-5, 1e15, 1e16, 1e21, 1.5e-7, Number.NaN, Infinity, -Infinity));
    const money = fc.stringMatching(/^-?[0-9]{1,10}\.[0-9]{2}$/);
    const instant = fc.date({ min: new Date('1000-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true }).map((d) => d.toISOString());
    // The API's own form (often the same as the row before: the reader keeps the last one's cell), other forms
    // Date.parse reads, fields out of their ranges, and texts that are no date.
    const odd = ['2024-02-29T10:00:00.000Z', '2026-02-30T00:00:00.000Z', '2026-04-31T00:00:00.000Z', '2026-01-32T00:00:00.000Z', '2026-13-01T00:00:00.000Z', '2026-00-10T00:00:00.000Z', '2026-01-01T24:00:00.000Z', '2026-01-01T23:60:00.000Z', '2026-01-01T23:59:60.000Z', '1899-12-30T00:00:00.001Z', '0999-01-01T00:00:00.000Z', '0050-06-01T00:00:00.000Z', '+002026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000z', '2026-01-01 00:00:00.000Z', '２０２６-01-01T00:00:00.000Z', 'not a date', '', ' 2026-01-01'];
    const stamp = fc.oneof(instant, fc.constantFrom('2026-01-02T03:04:05.678Z', '2026-01-02T03:04:05.679Z'), instant.map((s) => s.replace('.000Z', 'Z').replace(/\.\d{3}Z$/, '+01:00')), fc.constantFrom(...odd), stored);
    const row = fc.tuple(int8, fc.option(stored), fc.option(double), fc.option(money), fc.option(stamp), fc.option(stored));
    await fc.assert(
      fc.asyncProperty(fc.array(row, { minLength: 1, maxLength: 8 }), fc.nat({ max: 60 }), async (rows, split) => {
        const messages = rows.map((r) => message(r as Row));
        messages[0] = Buffer.concat([HEADER, messages[0]]);
        messages.push(TRAILER);
        const reader = new XlsxCopyReader(KINDS);
        const batch = read(reader, messages, split);
        assert.equal(batch.rows, rows.length);
        assert.equal(batch.breaks, undefined);
        assert.equal(reader.done, true);
        const fromBytes = readXlsx(await workbook((w) => w.writeRows(batch.pieces, batch.breaks, signal)));
        const fromValues = readXlsx(await workbook(async (w) => void (await w.write(rows.map((r) => jsRow(r as Row)), signal))));
        assert.equal(fromBytes.part('xl/worksheets/sheet1.xml'), fromValues.part('xl/worksheets/sheet1.xml'));
      }),
      { numRuns: 300 },
    );
  });

  it('writes a text longer than a cell holds, and a row longer than a piece, as XlsxExportWriter does', async () => {
    const long = `${'&<ž😀 x'.repeat(7_000)}end`;
    const rows: Row[] = [
      [1n, long, 1.5, '2.00', '2026-01-02T03:04:05.000Z', long.slice(0, 32_760)],
      [2n, `${'a'.repeat(40_000)}&`, null, null, null, 'b'.repeat(32_768)],
    ];
    const messages = [Buffer.concat([HEADER, message(rows[0])]), message(rows[1]), TRAILER];
    const batch = read(new XlsxCopyReader(KINDS), messages);
    const fromBytes = readXlsx(await workbook((w) => w.writeRows(batch.pieces, batch.breaks, signal)));
    const fromValues = readXlsx(await workbook(async (w) => void (await w.write(rows.map(jsRow), signal))));
    assert.equal(fromBytes.part('xl/worksheets/sheet1.xml'), fromValues.part('xl/worksheets/sheet1.xml'));
    assert.equal((fromBytes.rows[1][1] as string).length, 32_767, 'cut where Excel cuts a cell');
  });

  it('begins a new sheet once one holds its rows, numbering the rows from 2 again', async () => {
    const rows: Row[] = Array.from({ length: 8 }, (_v, i) => [BigInt(i + 1), `n${i + 1}`, null, null, null, null]);
    const messages = rows.map(message);
    messages[0] = Buffer.concat([HEADER, messages[0]]);
    messages.push(TRAILER);
    // Three rows a sheet, the header included: two data rows each. Read in batches, as CopyOut takes them, so that a
    // break falls inside a batch, and at a batch's start.
    const reader = new XlsxCopyReader(KINDS, 3);
    const out = new ByteWriter(1 << 12);
    const batches: EncodedBatch[] = [];
    for (const group of [messages.slice(0, 2), messages.slice(2, 4), messages.slice(4)]) {
      for (const m of group) reader.data(m, 0, m.length, true, out);
      batches.push({ pieces: out.take(), rows: 0, breaks: reader.takeBreaks() });
    }
    assert.deepEqual(
      batches.map((b) => b.breaks),
      [undefined, [0], [0, 1]],
    );
    const book = XLSX.read(await workbook(async (w) => {
      for (const b of batches) await w.writeRows(b.pieces, b.breaks, signal);
    }), { type: 'buffer' });
    assert.deepEqual(book.SheetNames, ['cells', 'cells (2)', 'cells (3)', 'cells (4)']);
    const names = book.SheetNames.map((n) => XLSX.utils.sheet_to_json<unknown[]>(book.Sheets[n], { header: 1, raw: true }).map((r) => r[1]));
    assert.deepEqual(names, [
      ['name', 'n1', 'n2'],
      ['name', 'n3', 'n4'],
      ['name', 'n5', 'n6'],
      ['name', 'n7', 'n8'],
    ]);
  });

  it('refuses cells that are not the layout\'s: an integer not of 8 bytes, a row longer than its fields', () => {
    const feed = (m: Buffer) => new XlsxCopyReader([XlsxKind.Int8]).data(m, 0, m.length, true, new ByteWriter());
    assert.throws(() => feed(Buffer.concat([HEADER, Buffer.from([0, 1]), Buffer.from([0, 0, 0, 4, 0, 0, 0, 7])])), /integer of 4 bytes, expected 8/);
    assert.throws(() => feed(Buffer.concat([HEADER, Buffer.from([0, 1]), cell(7n), Buffer.from([1])])), /longer than its fields/);
    assert.throws(() => feed(Buffer.concat([HEADER, Buffer.from([0, 1]), Buffer.from([0, 0, 0, 8, 0])])), /cut short/);
  });

  describe('with the elements of a nested array (orders\' items)', () => {
    // An order's own cells (id, a text, an amount), then its items' (product id, name, total), as columns.ts lays them out.
    const ORDER_COLUMNS: ExportColumn[] = [
      { name: 'id', type: 'integer', slot: 0 },
      { name: 'billingAddress.city', type: 'string', slot: 1, key: 'city' },
      { name: 'total', type: 'money', slot: 2 },
      { name: 'items.productId', type: 'integer', slot: 3, key: 'productId', fromItem: true },
      { name: 'items.name', type: 'string', slot: 3, key: 'name', fromItem: true },
      { name: 'items.total', type: 'money', slot: 3, key: 'total', fromItem: true },
    ];
    const OWN = [XlsxKind.Int8, XlsxKind.Text, XlsxKind.Money];
    const ITEM = [XlsxKind.Int8, XlsxKind.Text, XlsxKind.Money];
    type Item = [bigint | null, string, string];
    type Order = [bigint, string | null, string, Item[] | null];

    /** An order's message as pgNestedXlsxCells has PostgreSQL send it: its items' fields framed in one last cell (null for none). */
    function orderMessage([id, city, total, items]: Order): Buffer {
      const elements = items === null ? null : Buffer.concat(items.map(([product, name, itemTotal]) => Buffer.concat([cell(product), cell(name), cell(pgDouble(Number(itemTotal)))])));
      const last = Buffer.alloc(4);
      last.writeInt32BE(elements === null ? -1 : elements.length);
      return Buffer.concat([Buffer.from([0, 4]), cell(id), cell(city), cell(pgDouble(Number(total))), last, ...(elements ? [elements] : [])]);
    }

    /** The rows XlsxExportWriter is given for these orders (columns.ts's `flatten`): a row per item, one for an order without. */
    const flattened = (orders: Order[]): unknown[][] =>
      orders.flatMap(([id, city, total, items]) =>
        items === null || items.length === 0 ? [[Number(id), city, total, null, null, null]] : items.map(([product, name, itemTotal]) => [Number(id), city, total, product === null ? null : Number(product), name, itemTotal]));

    const order = fc.tuple(
      fc.bigInt({ min: 1n, max: 2n ** 40n }),
      fc.option(fc.constantFrom('Praha', 'Brno & <Ostrava>', ' Plzeň', 'žluťoučký 😀', '')),
      fc.stringMatching(/^[0-9]{1,6}\.[0-9]{2}$/),
      fc.option(fc.array(fc.tuple(fc.option(fc.bigInt({ min: 1n, max: 99999n })), fc.constantFrom('Drill', 'a & b', 'x\ty', '“quoted”', ''), fc.stringMatching(/^-?[0-9]{1,5}\.[0-9]{2}$/)), { maxLength: 5 })),
    );

    it('writes a row for each item, the order\'s own cells on each, and one for an order without items: the rows XlsxExportWriter renders', async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(order, { minLength: 1, maxLength: 6 }), fc.nat({ max: 80 }), async (orders, split) => {
          const messages = orders.map((o) => orderMessage(o as Order));
          messages[0] = Buffer.concat([HEADER, messages[0]]);
          messages.push(TRAILER);
          const reader = new XlsxCopyReader(OWN, undefined, ITEM);
          const batch = read(reader, messages, split);
          // Rows counted are the orders read; the sheet holds a row per item.
          assert.equal(batch.rows, orders.length);
          const fromBytes = readXlsx(await workbook((w) => w.writeRows(batch.pieces, batch.breaks, signal), ORDER_COLUMNS));
          const fromValues = readXlsx(await workbook(async (w) => void (await w.write(flattened(orders as Order[]), signal)), ORDER_COLUMNS));
          assert.equal(fromBytes.part('xl/worksheets/sheet1.xml'), fromValues.part('xl/worksheets/sheet1.xml'));
          assert.equal(fromBytes.rows.length, 1 + flattened(orders as Order[]).length);
        }),
        { numRuns: 200 },
      );
    });

    it('begins a new sheet between two items of one order', async () => {
      const orders: Order[] = [
        [1n, 'A', '1.00', [[7n, 'i1', '0.50'], [8n, 'i2', '0.50'], [null, 'i3', '0.00']]],
        [2n, 'B', '2.00', null],
        [3n, null, '3.00', [[9n, 'i4', '3.00']]],
      ];
      const messages = orders.map(orderMessage);
      messages[0] = Buffer.concat([HEADER, messages[0]]);
      messages.push(TRAILER);
      const batch = read(new XlsxCopyReader(OWN, 3, ITEM), messages);
      assert.equal(batch.breaks?.length, 2);
      const book = XLSX.read(await workbook((w) => w.writeRows(batch.pieces, batch.breaks, signal), ORDER_COLUMNS), { type: 'buffer' });
      const sheets = book.SheetNames.map((n) => XLSX.utils.sheet_to_json<unknown[]>(book.Sheets[n], { header: 1, raw: true }).slice(1).map((r) => [r[0], r[4]]));
      assert.deepEqual(sheets, [[[1, 'i1'], [1, 'i2']], [[1, 'i3'], [2, undefined]], [[3, 'i4']]]);
    });

    it('refuses items that are not the layout\'s: a field past the items\' cell, a row longer than its fields', () => {
      const feed = (m: Buffer) => new XlsxCopyReader([XlsxKind.Int8], undefined, [XlsxKind.Int8, XlsxKind.Text]).data(m, 0, m.length, true, new ByteWriter());
      // An element of one field where two are declared: its second runs past the cell.
      const short = cell(5n);
      const length = Buffer.alloc(4);
      length.writeInt32BE(short.length);
      assert.throws(() => feed(Buffer.concat([HEADER, Buffer.from([0, 2]), cell(1n), length, short])), /cut short/);
      assert.throws(() => feed(Buffer.concat([HEADER, Buffer.from([0, 2]), cell(1n), cell(null), Buffer.from([1])])), /longer than its fields/);
      assert.throws(() => feed(Buffer.concat([HEADER, Buffer.from([0, 1]), cell(1n)])), /1 fields, expected 2/);
    });
  });
});
