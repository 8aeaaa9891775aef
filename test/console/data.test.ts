// The console's Data pages over HTTP, on SQLite and PostgreSQL: the public listing's rows, filters, cursor pages,
// refusals and exports, seen through a session instead of a bearer token (the same engine, compared with the API).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import XLSX from 'xlsx';
import { escapeHtml } from '../../src/console/html.ts';
import { nodeCap, takeExportSlot } from '../../src/listing/formats/slots.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { dialects } from '../helpers/databases.ts';
import { signIn, type Browserish } from './console-client.ts';

type Item = Record<string, unknown> & { id: number };

/** The ids of the rows a data page lists, in order (each row's heading links to its item). */
const rowIds = (body: string, collection: string): number[] =>
  [...body.matchAll(new RegExp(`<th scope="row"><a href="/admin/data/${collection}/(\\d+)"`, 'g'))].map((m) => Number(m[1]));

/** The next-page link of a data page, as a browser would follow it. */
function nextHref(body: string): string | undefined {
  const m = /<a class="button" rel="next" href="([^"]+)">Next page<\/a>/.exec(body);
  return m ? m[1].replace(/&amp;/g, '&') : undefined;
}

const sheetRows = (bytes: Buffer) => {
  const book = XLSX.read(bytes, { type: 'buffer' });
  return XLSX.utils.sheet_to_json(book.Sheets[book.SheetNames[0]]);
};

for (const dialect of await dialects()) {
  describe(`console data (${dialect})`, () => {
    let t: TestApp;
    let admin: Browserish;
    let token: string;
    const api = async (url: string) => {
      const res = await t.get(url, token);
      assert.equal(res.statusCode, 200, res.body);
      return res.json() as { data: Item[]; pagination: { nextCursor: string | null } };
    };

    before(async () => {
      t = await createTestApp(dialect, { seed: { products: 30, orders: 12, seed: 3 } });
      admin = await signIn(t.app);
      ({ token } = await t.credential(['products:read', 'orders:read', 'categories:read']));
    });
    after(() => t.close());

    it('without a session, data pages and downloads redirect to the sign-in page', async () => {
      for (const url of ['/admin/data', '/admin/data/products', '/admin/data/orders/1', '/admin/data/products/download?format=csv']) {
        const res = await t.app.inject({ method: 'GET', url });
        assert.equal(res.statusCode, 303, url);
        assert.equal(res.headers.location, '/admin/sign-in', url);
      }
    });

    it('the picker lists every collection of the registry', async () => {
      const res = await admin.get('/admin/data');
      assert.equal(res.statusCode, 200);
      for (const def of t.ctx.resources.list) assert.ok(res.body.includes(`href="/admin/data/${def.collection}"`), def.collection);
    });

    it('lists the rows of the public first page, in its order; a filter narrows them, as the API does', async () => {
      for (const query of ['', '?sort=-updatedAt', '?limit=7']) {
        const page = await admin.get(`/admin/data/products${query}`);
        assert.equal(page.statusCode, 200, page.body);
        assert.deepEqual(rowIds(page.body, 'products'), (await api(`/api/v2/products${query}`)).data.map((p) => p.id), query);
      }
      const all = (await api('/api/v2/products?limit=1000')).data;
      const wanted = all[4].articleNumber as string;
      const narrowed = await admin.get(`/admin/data/products?articleNumber=${encodeURIComponent(wanted)}&name=&sort=&limit=`);
      assert.deepEqual(rowIds(narrowed.body, 'products'), [all[4].id], 'the form\'s empty fields are left out');
      assert.match(narrowed.body, new RegExp(`id="f-articleNumber" name="articleNumber" type="text" value="${escapeHtml(wanted)}"`), 'the form keeps the filter');
      // The form is the declaration's: every filter labelled, its description as the hint.
      for (const f of t.ctx.resources.byCollection.get('products')!.filters) {
        assert.ok(narrowed.body.includes(`<label for="f-${f.name}">${f.name}</label>`), f.name);
        assert.ok(narrowed.body.includes(escapeHtml(f.description)), f.name);
      }
      const paid = await admin.get('/admin/data/orders?status=paid,shipped');
      assert.deepEqual(rowIds(paid.body, 'orders'), (await api('/api/v2/orders?status=paid,shipped')).data.map((o) => o.id));
      assert.ok(rowIds(paid.body, 'orders').length < (await api('/api/v2/orders')).data.length);
    });

    it('the next-page link carries the engine\'s cursor and walks to the second page', async () => {
      const first = await admin.get('/admin/data/products?limit=10&sort=-updatedAt');
      const href = nextHref(first.body);
      assert.ok(href, 'a next-page link');
      const publicFirst = await api('/api/v2/products?limit=10&sort=-updatedAt');
      assert.equal(new URL(href, 'http://x').searchParams.get('cursor'), publicFirst.pagination.nextCursor);
      const second = await admin.get(href);
      assert.equal(second.statusCode, 200, second.body);
      const publicSecond = await api(`/api/v2/products?limit=10&cursor=${encodeURIComponent(publicFirst.pagination.nextCursor!)}`);
      assert.deepEqual(rowIds(second.body, 'products'), publicSecond.data.map((p) => p.id));
      assert.equal(rowIds(second.body, 'products').length, 10);
      assert.match(second.body, /<option value="-updatedAt" selected>/, 'a later page shows its cursor\'s sort');
    });

    it('an invalid filter, sort or cursor shows the engine\'s own message with status 400', async () => {
      for (const query of ['status=bogus', 'brandId=x', 'sort=price', 'cursor=forged.cursor', 'limit=0']) {
        const page = await admin.get(`/admin/data/products?${query}`);
        assert.equal(page.statusCode, 400, query);
        assert.match(String(page.headers['content-type']), /^text\/html/);
        assert.match(page.body, /<div class="alert" role="alert">/);
        if (query === 'limit=0') continue;
        const problem = (await t.get(`/api/v2/products?${query}`, token)).json() as { detail: string };
        assert.ok(page.body.includes(escapeHtml(problem.detail)), `${query}: ${problem.detail}`);
        assert.match(page.body, /<form method="get" action="\/admin\/data\/products"/, 'the form is still there to correct it');
      }
    });

    it('an item\'s page shows all its fields, and an order\'s items as a table', async () => {
      const [order] = (await api('/api/v2/orders?limit=1')).data;
      const page = await admin.get(`/admin/data/orders/${order.id}`);
      assert.equal(page.statusCode, 200, page.body);
      const items = order.items as Array<Record<string, unknown>>;
      assert.ok(items.length > 0);
      assert.match(page.body, /<h2 id="nested-items">items<\/h2><div class="table-wrap nested"><table>/);
      for (const item of items) assert.ok(page.body.includes(`<td>${escapeHtml(String(item.name))}</td>`), String(item.name));
      for (const name of ['number', 'email', 'customerName', 'total']) assert.ok(page.body.includes(escapeHtml(String(order[name]))), name);
      assert.ok(page.body.includes(escapeHtml((order.billingAddress as { city: string }).city)));
      assert.equal((await admin.get('/admin/data/orders/999999')).statusCode, 404);
      assert.equal((await admin.get('/admin/data/nothing')).statusCode, 404);
    });

    it('CSV and XLSX downloads are the public listing\'s export of the same filter', async () => {
      const listing = await admin.get('/admin/data/orders?status=new,paid,shipped');
      const csvLink = /href="(\/admin\/data\/orders\/download\?[^"]*format=csv)"/.exec(listing.body)?.[1].replace(/&amp;/g, '&');
      assert.ok(csvLink, 'a CSV download link of the current filter');
      const mine = await admin.get(csvLink);
      const theirs = await t.get('/api/v2/orders?status=new,paid,shipped&format=csv', token);
      assert.equal(mine.statusCode, 200, mine.body);
      assert.ok(mine.rawPayload.equals(theirs.rawPayload), 'the same bytes');
      assert.ok(mine.rawPayload.length > 200);
      assert.equal(mine.headers['content-disposition'], theirs.headers['content-disposition']);
      assert.equal(mine.headers['content-type'], theirs.headers['content-type']);

      const xlsx = await admin.get('/admin/data/products/download?format=xlsx&q=a&sort=-updatedAt');
      const publicXlsx = await t.get('/api/v2/products?format=xlsx&q=a&sort=-updatedAt', token);
      assert.equal(xlsx.statusCode, 200);
      assert.equal(xlsx.headers['content-disposition'], publicXlsx.headers['content-disposition']);
      const rows = sheetRows(xlsx.rawPayload);
      assert.equal(rows.length, (await api('/api/v2/products?q=a&limit=1000')).data.length);
      assert.deepEqual(rows, sheetRows(publicXlsx.rawPayload));

      const bad = await admin.get('/admin/data/products/download?format=csv&status=bogus');
      assert.equal(bad.statusCode, 400);
      assert.match(bad.body, /Parameter &quot;status&quot; has unknown value/);
    });

    it('console downloads count against the node\'s cap of whole exports', async () => {
      const cap = nodeCap(t.ctx.store, t.config.exports);
      const held = Array.from({ length: cap }, (_, i) => takeExportSlot(t.ctx.store, `other-${i}`, t.config.exports));
      try {
        const refused = await admin.get('/admin/data/products/download?format=csv');
        assert.equal(refused.statusCode, 503);
        assert.ok(Number(refused.headers['retry-after']) >= 1);
      } finally {
        for (const letGo of held) letGo();
      }
      assert.equal((await admin.get('/admin/data/products/download?format=csv')).statusCode, 200);
    });
  });
}
