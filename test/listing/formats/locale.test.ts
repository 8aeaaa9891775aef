import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import XLSX from 'xlsx';
import { createTestApp, type TestApp } from '../../helpers/app.ts';
import { dialects } from '../../helpers/databases.ts';
import { readCsv, type Item } from './readers.ts';

/** LibreOffice (`apt-get install libreoffice-calc-nogui`; .ci/run installs it): the check of what Calc makes of the CSV skips without it, except under CI=true. */
const soffice = spawnSync('soffice', ['--version'], { encoding: 'utf8' }).status === 0;

const ARTICLE = '00123';
const EAN = '0012345678905';

for (const dialect of await dialects()) {
  describe(`CSV for the spreadsheets of a locale (${dialect})`, { timeout: 120_000 }, () => {
    let t: TestApp;
    let token: string;
    let product: Item;
    const get = (url: string) => t.get(url, token);

    before(async () => {
      t = await createTestApp(dialect, { seed: { products: 5 } });
      ({ token } = await t.credential(['products:read']));
      const created = await t.admin('POST', '/admin/api/products', { articleNumber: ARTICLE, name: '=1+2 evil', price: '1299.50', currency: 'CZK', vatRate: 21, weight: 1.25, ean: EAN, stock: 7 });
      assert.equal(created.statusCode, 201, created.body);
      product = created.json();
    });
    after(() => t.close());

    const rowOf = (rows: string[][]) => rows.find((r) => r[0] === String(product.id))!;

    it('locale=cs-CZ: `;`, BOM, decimal comma in numbers and money, integers unchanged, dates a spreadsheet reads, article numbers text', async () => {
      const res = await get('/api/v2/products?format=csv&locale=cs-CZ');
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual([...res.rawPayload.subarray(0, 3)], [0xef, 0xbb, 0xbf]);
      const [header, ...rows] = readCsv(res.rawPayload, { delimiter: ';', bom: true });
      const cell = (name: string) => rowOf(rows)[header.indexOf(name)];
      assert.equal(cell('price'), '1299,50');
      assert.equal(cell('weight'), '1,25');
      assert.equal(cell('vatRate'), '21');
      assert.equal(cell('stock'), '7');
      assert.equal(cell('id'), String(product.id));
      assert.equal(cell('articleNumber'), `="${ARTICLE}"`, 'number-like text is marked as text');
      assert.equal(cell('ean'), `="${EAN}"`);
      assert.equal(cell('name'), "'=1+2 evil", 'formula-like text is still neutralised');
      const iso = String(product.createdAt);
      assert.equal(cell('createdAt'), `${iso.slice(0, 10)} ${iso.slice(11, 19)},${iso.slice(20, 23)}`);
      // German: the same choices.
      const de = await get('/api/v2/products?format=csv&locale=de-DE');
      assert.equal(rowOf(readCsv(de.rawPayload, { delimiter: ';', bom: true }))[header.indexOf('price')], '1299,50');
    });

    it('explicit delimiter, bom and decimal win over the locale; decimal=, alone changes only numbers; a comma for both is a 400', async () => {
      const tab = await get('/api/v2/products?format=csv&locale=cs-CZ&delimiter=%09&bom=false');
      assert.notEqual(tab.rawPayload[0], 0xef);
      const [header, ...rows] = readCsv(tab.rawPayload, { delimiter: '\t' });
      assert.equal(rowOf(rows)[header.indexOf('price')], '1299,50');
      const dot = await get('/api/v2/products?format=csv&locale=cs-CZ&decimal=.');
      assert.equal(rowOf(readCsv(dot.rawPayload, { delimiter: ';', bom: true }))[header.indexOf('price')], '1299.50');

      const plain = await get('/api/v2/products?format=csv&decimal=,&delimiter=;');
      const [h2, ...r2] = readCsv(plain.rawPayload, { delimiter: ';' });
      assert.equal(rowOf(r2)[h2.indexOf('price')], '1299,50');
      assert.equal(rowOf(r2)[h2.indexOf('articleNumber')], ARTICLE, 'text as it is without a locale');
      assert.equal(rowOf(r2)[h2.indexOf('createdAt')], product.createdAt, 'ISO dates without a locale');

      for (const [url, name] of [['decimal=,', 'decimal'], ['locale=cs-CZ&delimiter=,', 'delimiter'], ['locale=xx-XX', 'locale'], ['decimal=;', 'decimal']]) {
        const res = await get(`/api/v2/products?format=csv&${url}`);
        assert.equal(res.statusCode, 400, url);
        assert.equal(res.json().errors[0].name, name, url);
      }
      // The default CSV is unchanged.
      const [h3, ...r3] = readCsv((await get('/api/v2/products?format=csv')).rawPayload);
      assert.equal(rowOf(r3)[h3.indexOf('price')], '1299.50');
    });

    it('LibreOffice Calc in cs-CZ reads prices, weights and dates as numbers and article numbers as text', { skip: !soffice && process.env.CI !== 'true' && 'soffice is not installed (CI installs it: .ci/run)' }, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'locale-csv-'));
      try {
        writeFileSync(join(dir, 'p.csv'), (await get('/api/v2/products?format=csv&locale=cs-CZ')).rawPayload);
        // Separator 59 (;), text delimiter 34 ("), UTF-8 (76), from line 1, language 1029 (cs-CZ): what Calc's import dialog offers a Czech user.
        // A profile of its own: the suite runs the SQLite and PostgreSQL cases at once, and two instances on one profile clash.
        const run = spawnSync('soffice', [`-env:UserInstallation=file://${join(dir, 'profile')}`, '--headless', '--infilter=CSV:59,34,76,1,,1029', '--convert-to', 'xlsx', '--outdir', dir, join(dir, 'p.csv')], { encoding: 'utf8', timeout: 90_000 });
        assert.equal(run.status, 0, run.stderr);
        const workbook = XLSX.read(readFileSync(join(dir, 'p.xlsx')), { type: 'buffer' });
        const sheet = workbook.Sheets[workbook.SheetNames[0]];
        const rows = XLSX.utils.sheet_to_json<unknown[]>(sheet, { header: 1, raw: true });
        const header = rows[0] as string[];
        const r = rows.findIndex((row) => row[0] === product.id);
        const at = (name: string) => sheet[XLSX.utils.encode_cell({ r, c: header.indexOf(name) })] as XLSX.CellObject;
        assert.deepEqual([at('price').t, at('price').v], ['n', 1299.5]);
        assert.deepEqual([at('weight').t, at('weight').v], ['n', 1.25]);
        assert.equal(at('stock').t, 'n');
        assert.equal(at('createdAt').t, 'n', 'a date-time is a date (a number) in Calc');
        assert.deepEqual([at('articleNumber').t, at('articleNumber').v], ['s', ARTICLE], 'the leading zeros stay');
        assert.deepEqual([at('ean').t, at('ean').v], ['s', EAN]);
        assert.deepEqual([at('name').t, at('name').v], ['s', "'=1+2 evil"]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}
