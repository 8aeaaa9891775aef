import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { Scope } from '../../../src/auth/scopes.ts';
import { exportStats } from '../../../src/listing/formats/export.ts';
import { RESOURCES } from '../../../src/modules/registry.ts';
import { createTestApp, type TestApp } from '../../helpers/app.ts';
import { dialects } from '../../helpers/databases.ts';
import { csvText, DATE_COLUMNS, EXPECTED_COLUMNS, expectedRows, MONEY_COLUMNS, readCsv, readXlsx, serialToMs, type Item } from './readers.ts';

const XLSX_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
const TODAY = new Date().toISOString().slice(0, 10);

describe('export columns', () => {
  it('docs/listing-and-formats.md lists the columns of every collection as the API writes them', () => {
    const doc = readFileSync(new URL('../../../docs/listing-and-formats.md', import.meta.url), 'utf8');
    const start = doc.indexOf('\n## Export columns\n');
    assert.ok(start >= 0, 'docs/listing-and-formats.md has a section "Export columns"');
    const section = doc.slice(start);
    for (const def of RESOURCES) {
      const line = section.split('\n').find((l) => l.startsWith(`| ${def.collection} |`));
      assert.ok(line, `docs/listing-and-formats.md has a line for ${def.collection}`);
      assert.deepEqual([...line.matchAll(/`([^`]+)`/g)].map((m) => m[1]), EXPECTED_COLUMNS[def.collection], def.collection);
    }
  });
});

for (const dialect of await dialects()) {
  describe(`CSV and XLSX exports (${dialect})`, () => {
    let t: TestApp;
    let token: string;
    /** Every item of each collection as the JSON listing gives it, and its includeTotal. */
    const json = new Map<string, { items: Item[]; total: number }>();

    const get = (url: string, headers: Record<string, string> = {}) => t.get(url, token, headers);

    before(async () => {
      t = await createTestApp(dialect, { seed: { products: 60, orders: 25 } });
      ({ token } = await t.credential(RESOURCES.map((r) => r.scope)));
      for (const def of RESOURCES) {
        const res = await get(`/api/v2/${def.collection}?limit=1000&includeTotal=true`);
        assert.equal(res.statusCode, 200);
        const body = res.json();
        assert.equal(body.pagination.hasMore, false);
        json.set(def.collection, { items: body.data, total: body.pagination.total });
      }
    });
    after(() => t.close());

    it('every collection has a documented column set, and its rows hold the JSON values', async () => {
      assert.deepEqual(Object.keys(EXPECTED_COLUMNS).sort(), RESOURCES.map((r) => r.collection).sort(), 'a collection without documented columns');
      for (const def of RESOURCES) {
        // Exactly the JSON values (escapeFormulas=false); the default's neutralised cells: test/formats/injection.test.ts.
        const res = await get(`/api/v2/${def.collection}?format=csv&escapeFormulas=false`);
        assert.equal(res.statusCode, 200, res.body);
        assert.equal(res.headers['content-type'], 'text/csv; charset=utf-8; header=present');
        assert.equal(res.headers['content-disposition'], `attachment; filename="${def.collection}-${TODAY}.csv"`);
        // Accept among others (compression adds Accept-Encoding).
        assert.ok(String(res.headers.vary).split(/\s*,\s*/).includes('Accept'), String(res.headers.vary));
        assert.ok(res.headers.ratelimit, 'rate-limit headers of the guard are kept');
        const [header, ...rows] = readCsv(res.rawPayload);
        assert.deepEqual(header, EXPECTED_COLUMNS[def.collection], def.collection);
        const { items, total } = json.get(def.collection)!;
        assert.ok(total > 0);
        const expected = expectedRows(def.collection, items);
        assert.equal(rows.length, expected.length, `${def.collection}: row count`);
        if (def.collection === 'orders') {
          assert.equal(new Set(rows.map((r) => r[0])).size, total, 'every order appears');
          assert.equal(rows.length, items.reduce((n, o) => n + (o.items as Item[]).length, 0), 'one row per order item');
        } else {
          assert.equal(rows.length, total, `${def.collection}: rows equal includeTotal`);
        }
        rows.forEach((row, i) => assert.deepEqual(row, header.map((c) => csvText(expected[i][c])), `${def.collection} row ${i + 1}`));
      }
    });

    it('XLSX workbooks hold the same values: numbers and money as numbers, dates as dates, text as text', async () => {
      for (const def of RESOURCES) {
        const res = await get(`/api/v2/${def.collection}`, { accept: XLSX_TYPE });
        assert.equal(res.statusCode, 200, res.body);
        assert.equal(res.headers['content-type'], XLSX_TYPE);
        assert.equal(res.headers['content-disposition'], `attachment; filename="${def.collection}-${TODAY}.xlsx"`);
        const sheet = readXlsx(res.rawPayload);
        assert.deepEqual(sheet.names, [def.collection]);
        const [header, ...rows] = sheet.rows;
        assert.deepEqual(header, EXPECTED_COLUMNS[def.collection]);
        const expected = expectedRows(def.collection, json.get(def.collection)!.items);
        assert.equal(rows.length, expected.length, `${def.collection}: row count`);
        rows.forEach((row, i) => {
          header.forEach((column, j) => {
            const want = expected[i][column as string];
            const got = row[j];
            const where = `${def.collection} row ${i + 1} ${String(column)}`;
            if (want === null || want === undefined) assert.equal(got, null, where);
            else if (DATE_COLUMNS.has(column as string)) {
              assert.equal(typeof got, 'number', where);
              assert.equal(serialToMs(got as number), Date.parse(want as string), where);
            } else if (MONEY_COLUMNS.has(column as string)) assert.equal(got, Number(want), where);
            else assert.equal(got, want, where);
          });
        });
        // Formats: dates and money carry number formats on every data cell.
        const dateCol = String.fromCharCode(65 + (header as string[]).indexOf('createdAt'));
        assert.equal(sheet.cells[`${dateCol}2`].z, 'yyyy-mm-dd hh:mm:ss');
        if (def.collection === 'products') assert.equal(sheet.cells.I2.z, '#,##0.00');
      }
    });

    it('an XLSX header row is bold and frozen, and columns have widths', async () => {
      const sheet = readXlsx((await get('/api/v2/orders?format=xlsx')).rawPayload);
      const xml = sheet.part('xl/worksheets/sheet1.xml');
      assert.match(xml, /<pane [^>]*ySplit="1"[^>]*state="frozen"/);
      const headerStyle = Number(/<c r="A1" s="(\d+)"/.exec(xml)?.[1]);
      const styles = sheet.part('xl/styles.xml');
      const xfs = /<cellXfs[^>]*>(.*?)<\/cellXfs>/s.exec(styles)![1].match(/<xf [^>]*>/g)!;
      const fontId = Number(/fontId="(\d+)"/.exec(xfs[headerStyle])![1]);
      const fonts = /<fonts[^>]*>(.*?)<\/fonts>/s.exec(styles)![1].match(/<font>.*?<\/font>/gs)!;
      assert.match(fonts[fontId], /<b\/>/, 'the header font is bold');
      const cols = sheet.cells['!cols']!;
      assert.equal(cols.length, EXPECTED_COLUMNS.orders.length);
      assert.ok(cols.every((c) => (c.width ?? 0) >= 10), 'every column has a width');
    });

    it('quotes a text cell that holds the delimiter, a quote, CR or LF; a null and an empty text are empty cells', async () => {
      const made: number[] = [];
      for (const [description, url] of [['', null], [null, 'say "hi", then\r\nleave'], ['=1+1', '-12']] as const) {
        const res = await t.admin('POST', '/admin/api/products', { articleNumber: `Q-${made.length}`, name: 'Quoting', brandId: 1, description, price: '1299.50', currency: 'CZK', vatRate: 21, weight: made.length ? 0.25 : null, url });
        assert.equal(res.statusCode, 201, res.body);
        made.push((res.json() as { id: number }).id);
      }
      // In the order of the declaration (Export columns), whatever the order of `fields`.
      const fields = 'id,articleNumber,description,price,vatRate,stock,weight,url';
      const rows = [
        `${made[0]},Q-0,,1299.50,21,0,,`,
        `${made[1]},Q-1,,1299.50,21,0,0.25,"say ""hi"", then\r\nleave"`,
        `${made[2]},Q-2,'=1+1,1299.50,21,0,0.25,-12`,
      ];
      const csv = (header: string, lines: string[]) => [header, ...lines].map((l) => `${l}\r\n`).join('');
      // A whole export (PostgreSQL's COPY; on SQLite the API's encoder), a page, and with an include (the API's encoder on both).
      const whole = await get(`/api/v2/products/export?format=csv&ids=${made.join(',')}&fields=${fields}`);
      assert.equal(whole.statusCode, 200, whole.body);
      assert.equal(whole.body, csv(fields, rows));
      const page = await get(`/api/v2/products?format=csv&limit=10&ids=${made.join(',')}&fields=${fields}`);
      assert.equal(page.body, csv(fields, rows));
      const included = await get(`/api/v2/products/export?format=csv&ids=${made.join(',')}&fields=${fields},brand.name&include=brand`);
      assert.equal(included.statusCode, 200, included.body);
      const brand = (await get('/api/v2/brands/1')).json() as { name: string };
      assert.doesNotMatch(brand.name, /[",\r\n]/);
      assert.equal(included.body, csv(`${fields},brand.id,brand.name`, rows.map((r) => `${r},1,${brand.name}`)));
      for (const id of made) await t.admin('DELETE', `/admin/api/products/${id}`);
    });

    it('delimiter=; and bom=true for spreadsheet users', async () => {
      const res = await get('/api/v2/brands?format=csv&delimiter=;&bom=true');
      assert.equal(res.statusCode, 200);
      assert.deepEqual([...res.rawPayload.subarray(0, 3)], [0xef, 0xbb, 0xbf]);
      const [header, ...rows] = readCsv(res.rawPayload, { delimiter: ';', bom: true });
      assert.deepEqual(header, EXPECTED_COLUMNS.brands);
      assert.equal(rows.length, json.get('brands')!.total);
      assert.ok(res.rawPayload.includes(Buffer.from('\r\n')), 'RFC 4180 line ends');
      const plain = await get('/api/v2/brands?format=csv');
      assert.notEqual(plain.rawPayload[0], 0xef, 'no BOM unless asked');
      assert.equal((await get('/api/v2/brands?format=csv&delimiter=x')).statusCode, 400);
    });

    it('pages with limit and cursor like JSON, with Link and X-Total-Count', async () => {
      const full = readCsv((await get('/api/v2/products?format=csv&sort=-updatedAt')).rawPayload);
      const paged: string[][] = [];
      let url: string | undefined = '/api/v2/products?format=csv&sort=-updatedAt&limit=25&includeTotal=true';
      let pages = 0;
      while (url) {
        const res = await get(url);
        assert.equal(res.statusCode, 200, res.body);
        if (pages === 0) assert.equal(res.headers['x-total-count'], String(json.get('products')!.total));
        const [header, ...rows] = readCsv(res.rawPayload);
        assert.deepEqual(header, EXPECTED_COLUMNS.products);
        assert.ok(rows.length <= 25);
        paged.push(...rows);
        pages += 1;
        const link = res.headers.link as string | undefined;
        url = link ? new URL(/^<([^>]+)>; rel="next"$/.exec(link)![1]).pathname + new URL(/^<([^>]+)>/.exec(link)![1]).search : undefined;
      }
      assert.equal(pages, 3);
      assert.deepEqual(paged, full.slice(1));
      const xlsxPage = readXlsx((await get('/api/v2/orders?format=xlsx&limit=5')).rawPayload);
      const firstFive = json.get('orders')!.items.slice(0, 5);
      assert.equal(xlsxPage.rows.length - 1, firstFive.reduce((n, o) => n + (o.items as Item[]).length, 0));
    });

    it('applies filters, sort and includeTotal exactly as JSON does', async () => {
      const queries = [
        'products?status=active,draft&sort=-updatedAt&q=a',
        'products?categoryId=1&includeSubcategories=true',
        'orders?status=paid,shipped,new,processing&sort=createdAt',
        'orders?createdFrom=2026-01-01&createdTo=2026-12-31&sort=-updatedAt',
        'categories?parentId=null',
        'product-parameters?productId=1,2,3&sort=-id',
        'product-filters?filterId=1',
        'brands?search=a&ids=1,2,3,4,5,6,7,8,9,10',
      ];
      for (const q of queries) {
        const jsonRes = await get(`/api/v2/${q}&limit=1000&includeTotal=true`);
        assert.equal(jsonRes.statusCode, 200, `${q}: ${jsonRes.body}`);
        const items = jsonRes.json().data as Item[];
        const csvRes = await get(`/api/v2/${q}&format=csv&includeTotal=true`);
        assert.equal(csvRes.statusCode, 200, `${q}: ${csvRes.body}`);
        assert.equal(csvRes.headers['x-total-count'], String(jsonRes.json().pagination.total), q);
        const [, ...rows] = readCsv(csvRes.rawPayload);
        const collection = q.split('?')[0];
        assert.deepEqual(rows.map((r) => r[0]), expectedRows(collection, items).map((r) => String(r.id)), q);
      }
      const bad = await get('/api/v2/products?format=csv&brandId=abc');
      assert.equal(bad.statusCode, 400);
      assert.equal(bad.headers['content-type'], 'application/problem+json; charset=utf-8');
      assert.equal(bad.json().errors[0].name, 'brandId');
      assert.equal((await get('/api/v2/orders?format=xlsx&sort=name')).statusCode, 400);
    });

    it('chooses the format by format= or Accept (q-values honoured), answers 406 with Vary when none fits', async () => {
      const cases: Array<[string, Record<string, string>, number, string | undefined]> = [
        ['/api/v2/brands', {}, 200, 'application/json; charset=utf-8'],
        ['/api/v2/brands', { accept: '*/*' }, 200, 'application/json; charset=utf-8'],
        ['/api/v2/brands', { accept: 'text/csv' }, 200, 'text/csv; charset=utf-8; header=present'],
        ['/api/v2/brands', { accept: 'text/*' }, 200, 'text/csv; charset=utf-8; header=present'],
        ['/api/v2/brands', { accept: 'application/json;q=0.5, text/csv' }, 200, 'text/csv; charset=utf-8; header=present'],
        ['/api/v2/brands', { accept: 'text/csv;q=0, */*' }, 200, 'application/json; charset=utf-8'],
        ['/api/v2/brands', { accept: `text/html, ${XLSX_TYPE};q=0.9` }, 200, XLSX_TYPE],
        ['/api/v2/brands', { accept: 'text/html' }, 406, 'application/problem+json; charset=utf-8'],
        ['/api/v2/brands', { accept: 'image/png, application/json;q=0' }, 406, 'application/problem+json; charset=utf-8'],
        ['/api/v2/brands?format=json', { accept: 'text/csv' }, 200, 'application/json; charset=utf-8'],
        ['/api/v2/brands?format=csv', { accept: 'text/html' }, 200, 'text/csv; charset=utf-8; header=present'],
        ['/api/v2/brands?format=xml', {}, 400, 'application/problem+json; charset=utf-8'],
        ['/api/v2/brands/1', { accept: 'text/csv' }, 406, 'application/problem+json; charset=utf-8'],
        ['/api/v2/brands/1', { accept: 'text/csv, */*;q=0.1' }, 200, 'application/json; charset=utf-8'],
      ];
      for (const [url, headers, status, type] of cases) {
        const res = await get(url, headers);
        const what = `${url} ${JSON.stringify(headers)}`;
        assert.equal(res.statusCode, status, `${what}: ${res.body.slice(0, 200)}`);
        assert.equal(res.headers['content-type'], type, what);
        assert.ok(String(res.headers.vary).split(/\s*,\s*/).includes('Accept'), what);
        if (status === 406) assert.equal(res.json().code, 'not_acceptable');
        if (status === 400) assert.equal(res.json().errors[0].name, 'format');
      }
    });

    it('answers HEAD with the headers of the export, checking its parameters, without running it', async () => {
      const before = { ...exportStats };
      const head = await t.app.inject({ method: 'HEAD', url: '/api/v2/orders?format=xlsx&status=paid', headers: { authorization: `Bearer ${token}` } });
      assert.equal(head.statusCode, 200);
      assert.equal(head.headers['content-type'], XLSX_TYPE);
      assert.equal(head.headers['content-disposition'], `attachment; filename="orders-${TODAY}.xlsx"`);
      assert.equal(head.rawPayload.length, 0);
      assert.deepEqual(exportStats, before, 'no export ran');
      const bad = await t.app.inject({ method: 'HEAD', url: '/api/v2/orders?format=csv&status=lost', headers: { authorization: `Bearer ${token}` } });
      assert.equal(bad.statusCode, 400);
    });

    it('needs the scope of the collection in every format', async () => {
      const { token: ordersOnly } = await t.credential(['orders:read' as Scope]);
      for (const format of ['csv', 'xlsx']) {
        const res = await t.get(`/api/v2/products?format=${format}`, ordersOnly);
        assert.equal(res.statusCode, 403);
        assert.match(String(res.headers['www-authenticate']), /insufficient_scope/);
      }
      assert.equal((await t.get('/api/v2/orders?format=csv', 'not-a-token')).statusCode, 401);
    });

    it('documents the files on the export operation and JSON alone on the listing', async () => {
      const doc = (await t.app.inject({ method: 'GET', url: '/api/v2/openapi.json' })).json();
      const list = doc.paths['/api/v2/orders'].get;
      assert.deepEqual(Object.keys(list.responses['200'].content), ['application/json'], 'typed clients get one answer type');
      const listNames = list.parameters.map((p: { name: string }) => p.name);
      for (const p of ['format', 'delimiter', 'bom', 'locale', 'decimal', 'fields', 'include']) assert.ok(listNames.includes(p), p);
      const op = doc.paths['/api/v2/orders/export'].get;
      assert.deepEqual(Object.keys(op.responses['200'].content).sort(), ['application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', 'application/x-ndjson', 'text/csv']);
      assert.equal(op.responses['200'].content[XLSX_TYPE].schema.format, 'binary');
      assert.equal(op.responses['200'].content['text/csv'].schema.type, 'string');
      for (const column of EXPECTED_COLUMNS.orders) assert.ok(op.description.includes(`\`${column}\``), column);
      const format = op.parameters.find((p: { name: string }) => p.name === 'format');
      assert.equal(format.required, true);
      assert.deepEqual(format.schema.enum, ['ndjson', 'csv', 'xlsx']);
    });

    it('GET /{collection}/export serves the same rows as ?format=, needs format, and does not clash with /{id}', async () => {
      for (const format of ['csv', 'ndjson', 'xlsx']) {
        const a = await get(`/api/v2/products/export?format=${format}&status=active&fields=name,price`);
        const b = await get(`/api/v2/products?format=${format}&status=active&fields=name,price`);
        assert.equal(a.statusCode, 200, a.body);
        assert.equal(a.headers['content-type'], b.headers['content-type']);
        assert.equal(a.headers['content-disposition'], b.headers['content-disposition']);
        if (format !== 'xlsx') assert.equal(a.body, b.body);
        else assert.deepEqual(readXlsx(a.rawPayload).rows, readXlsx(b.rawPayload).rows);
      }
      const paged = await get('/api/v2/products/export?format=csv&limit=5');
      assert.match(String(paged.headers.link), /\/api\/v2\/products\/export\?format=csv&limit=5&cursor=/);
      const head = await t.app.inject({ method: 'HEAD', url: '/api/v2/products/export?format=ndjson', headers: { authorization: `Bearer ${token}` } });
      assert.equal(head.statusCode, 200);
      assert.equal(head.headers['content-type'], 'application/x-ndjson; charset=utf-8');
      const missing = await get('/api/v2/products/export');
      assert.equal(missing.statusCode, 400);
      assert.equal(missing.json().errors[0].name, 'format');
      assert.equal((await get('/api/v2/products/export?format=json')).statusCode, 400);
      assert.equal((await get('/api/v2/products/1')).json().id, 1, 'the item route still answers ids');
    });
  });
}
