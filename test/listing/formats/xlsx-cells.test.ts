import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import type { ExportColumn } from '../../../src/listing/formats/columns.ts';
import { XlsxExportWriter } from '../../../src/listing/formats/xlsx.ts';
import { readXlsx } from './readers.ts';

/** The workbook the writer makes of these rows. */
async function workbookOf(columns: ExportColumn[], rows: unknown[][]): Promise<Buffer> {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (c: Buffer) => chunks.push(c));
  const writer = new XlsxExportWriter(out, 'cells', columns);
  // Two writes: what a column rendered last carries over from one batch to the next.
  await writer.write(rows.slice(0, 3), new AbortController().signal);
  await writer.write(rows.slice(3), new AbortController().signal);
  await writer.finish();
  return Buffer.concat(chunks);
}

describe('XLSX cells', () => {
  it('renders each cell from its own value, whatever the rows before it held in that column', async () => {
    const columns: ExportColumn[] = [
      { name: 'text', type: 'string', slot: 0 },
      { name: 'number', type: 'number', slot: 1 },
      { name: 'money', type: 'money', slot: 2 },
      { name: 'at', type: 'datetime', slot: 3 },
      { name: 'json', type: 'json', slot: 4 },
    ];
    const shared = { a: 1 };
    const rows: unknown[][] = [
      ['a & b', 0, '1.50', '2026-01-02T03:04:05.000Z', shared],
      ['a & b', -0, '1.50', '2026-01-02T03:04:05.000Z', shared],
      [null, Number.NaN, null, 'not a date', null],
      ['a & b', Number.NaN, '1.50', 'not a date', { a: 2 }],
      [' lead', Infinity, '2.00', '2026-01-02T03:04:05.000Z', shared],
      ['a & b', 5, 'NaN', '2026-01-02T03:04:05.000Z', shared],
      ['a & b', '5', '2.00', null, shared],
    ];
    const sheet = readXlsx(await workbookOf(columns, rows));
    const day = 25569 + Date.parse('2026-01-02T03:04:05.000Z') / 86_400_000;
    assert.deepEqual(sheet.rows.slice(1), [
      ['a & b', 0, 1.5, day, '{"a":1}'],
      ['a & b', 0, 1.5, day, '{"a":1}'],
      [null, 'NaN', null, 'not a date', null],
      ['a & b', 'NaN', 1.5, 'not a date', '{"a":2}'],
      [' lead', 'Infinity', 2, day, '{"a":1}'],
      ['a & b', 5, 'NaN', day, '{"a":1}'],
      ['a & b', 5, 2, null, '{"a":1}'],
    ]);
    // Types as written: numbers as numbers (also from a string), text as inline strings, each cell referenced in its own row.
    assert.equal(sheet.cells.B7.t, 'n');
    assert.equal(sheet.cells.B8.t, 'n');
    assert.equal(sheet.cells.B4.t, 's');
    assert.equal(sheet.cells.C3.z, '#,##0.00');
    assert.match(sheet.part('xl/worksheets/sheet1.xml'), /<row r="6"><c r="A6" t="inlineStr"><is><t xml:space="preserve"> lead<\/t><\/is><\/c>/);
  });
});
