import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { ByteWriter } from '../../../src/listing/formats/bytes.ts';
import type { CellType } from '../../../src/listing/formats/columns.ts';
import { CELL_SEPARATOR, CSV_DEFAULTS, CSV_DELIMITERS, CsvEncoder, joinedCellsWriter, type CsvOptions } from '../../../src/listing/formats/csv.ts';

// SQLite joins a CSV row's cells into one text (sqlite-lines.ts) and joinedCellsWriter makes the record from it;
// these hold its bytes to CsvEncoder's for the same values, whatever the texts hold.

/** What CSV treats apart (every delimiter, quotes, line ends, formula starts), the separator itself, and others. */
const TRICKY = [',', ';', '\t', '|', '"', '\r', '\n', '\r\n', '=', '+', '-', '@', ' ', "'", CELL_SEPARATOR, '\x01', 'é', 'Ž', '😀', '\ud800', '1', '0', '.', 'a', 'Z'];
const text = fc.oneof(
  fc.array(fc.constantFrom(...TRICKY), { maxLength: 10 }).map((parts) => parts.join('')),
  fc.string({ unit: 'binary', maxLength: 30 }),
  fc.constantFrom('-123', '+4.5', '=SUM(A1)', '@cmd', 'plain', ''),
);

/** A value of each type as SQLite holds it, and its cell as SQLite writes it into the joined text (a null as empty). */
const valueOf: Record<CellType, fc.Arbitrary<string | number | null>> = {
  integer: fc.oneof(fc.integer({ min: -2_000_000_000, max: 2_000_000_000 }), fc.constant(null)),
  // Only numbers printf writes as JavaScript does reach this path (the rows bring a range check).
  number: fc.oneof(fc.constantFrom(0, 21, 12.5, -0.5, 1e-4, 99.99999), fc.constant(null)),
  money: fc.oneof(fc.constantFrom('0.00', '12.50', '-3.10', '1234567.89'), fc.constant(null)),
  datetime: fc.oneof(fc.constantFrom('2026-11-27T19:00:00.000Z', '2000-01-01T00:00:00.123Z'), fc.constant(null)),
  string: fc.oneof(text, fc.constant(null)),
  json: fc.constant(null),
};

const cases = fc
  .array(fc.constantFrom<CellType>('integer', 'number', 'money', 'datetime', 'string', 'string'), { minLength: 1, maxLength: 8 })
  .chain((types) => fc.tuple(fc.constant(types), fc.array(fc.tuple(...types.map((t) => valueOf[t])), { minLength: 1, maxLength: 20 })));
const options = fc.record({ delimiter: fc.constantFrom(...CSV_DELIMITERS), escapeFormulas: fc.boolean() }).map((o): CsvOptions => ({ ...CSV_DEFAULTS, ...o }));

describe('CSV records from joined cells (joinedCellsWriter)', () => {
  it('writes the bytes CsvEncoder writes for the same values, or nothing when a text holds the separator', () => {
    fc.assert(
      fc.property(cases, options, ([types, rows], csv) => {
        const write = joinedCellsWriter(types, csv);
        const encoder = new CsvEncoder(types.map((type, i) => ({ name: `c${i}`, type })) as never, csv);
        for (const row of rows) {
          const bytes = new ByteWriter();
          const joined = row.map((v) => (v === null ? '' : String(v))).join(CELL_SEPARATOR);
          const ambiguous = row.some((v, i) => types[i] === 'string' && typeof v === 'string' && v.includes(CELL_SEPARATOR));
          const written = write(joined, bytes);
          const got = Buffer.concat(bytes.take());
          if (ambiguous) {
            assert.equal(written, false, JSON.stringify(row));
            assert.equal(got.length, 0, 'nothing written');
            continue;
          }
          assert.equal(written, true, JSON.stringify(row));
          assert.equal(got.toString('utf8'), Buffer.concat(encoder.rows([row])).toString('utf8'), JSON.stringify({ row, csv }));
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('quotes and guards only text: a negative number or a date is written as it is', () => {
    const csv = CSV_DEFAULTS;
    const write = joinedCellsWriter(['integer', 'number', 'string', 'string', 'string'], csv);
    const bytes = new ByteWriter();
    assert.ok(write(['-5', '-0.5', '=1+2', 'a,b', '-123'].join(CELL_SEPARATOR), bytes));
    assert.ok(write(['7', '', '', 'x', 'say "hi"'].join(CELL_SEPARATOR), bytes));
    assert.equal(Buffer.concat(bytes.take()).toString('utf8'), `-5,-0.5,'=1+2,"a,b",-123\r\n7,,,x,"say ""hi"""\r\n`);
    assert.equal(write(['1', '2', 'a\x1fb', 'c', 'd'].join(CELL_SEPARATOR), bytes), false);
  });
});
