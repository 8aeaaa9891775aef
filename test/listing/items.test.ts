import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Scope } from '../../src/auth/scopes.ts';
import { RESOURCES } from '../../src/modules/registry.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { dialects } from '../helpers/databases.ts';
import { problemOf } from '../helpers/problems.ts';

const MONEY = /^-?\d+\.\d{2}$/;
const RFC3339_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

for (const dialect of await dialects()) {
  describe(`single items (${dialect})`, () => {
    let t: TestApp;
    let token: string;

    before(async () => {
      t = await createTestApp(dialect, { seed: { products: 40, orders: 25, seed: 1 } });
      token = (await t.credential(RESOURCES.map((r) => r.scope) as Scope[])).token;
    });
    after(() => t.close());

    for (const def of RESOURCES) {
      const url = `/api/v2/${def.collection}`;

      it(`${def.collection}: GET /{id} answers the item itself, as the listing shows it`, async () => {
        const list = (await t.get(`${url}?limit=5&sort=id`, token)).json();
        assert.equal(list.data.length, 5);
        for (const listed of list.data) {
          const res = await t.get(`${url}/${listed.id}`, token);
          assert.equal(res.statusCode, 200, res.body);
          assert.match(String(res.headers['content-type']), /^application\/json/);
          const item = res.json();
          assert.deepEqual(item, listed);
          const expectedKeys = [...def.fields.map((f) => f.name), ...Object.keys(def.nested ?? {})].sort();
          assert.deepEqual(Object.keys(item).sort(), expectedKeys);
          assert.ok(Number.isSafeInteger(item.id) && item.id > 0);
          assert.match(item.createdAt, RFC3339_UTC);
          assert.match(item.updatedAt, RFC3339_UTC);
          for (const f of def.fields.filter((x) => x.type === 'money')) assert.match(item[f.name], MONEY, `${f.name} = ${item[f.name]}`);
        }
      });

      it(`${def.collection}: unknown id is a 404 problem, a malformed id a 400 naming id`, async () => {
        problemOf(await t.get(`${url}/999999`, token), 404, 'not_found');
        for (const bad of ['abc', '0', '-1', '1.5', '1e2', '0x10', '99999999999999999999']) {
          problemOf(await t.get(`${url}/${bad}`, token), 400, 'invalid_parameter', 'id');
        }
      });
    }

    it('products carry money as a two-decimal string beside its currency, and numbers as numbers', async () => {
      const rows = await t.database.store.db.selectFrom('products').selectAll().orderBy('id').limit(10).execute();
      for (const row of rows) {
        const p = (await t.get(`/api/v2/products/${row.id}`, token)).json();
        assert.equal(p.price, Number(row.price).toFixed(2));
        assert.equal(p.currency, 'CZK');
        assert.equal(typeof p.vatRate, 'number');
        assert.equal(typeof p.stock, 'number');
        assert.equal(p.articleNumber, row.article_number);
      }
      const created = await t.admin('POST', '/admin/api/products', { articleNumber: 'M-1', name: 'Money', price: '1299.5', currency: 'EUR', vatRate: 21 });
      assert.equal(created.statusCode, 201, created.body);
      const again = (await t.get(`/api/v2/products/${created.json().id}`, token)).json();
      assert.equal(again.price, '1299.50');
      assert.equal(again.currency, 'EUR');
    });

    it('orders carry their items, in position order, with money as strings', async () => {
      const orders = await t.database.store.db.selectFrom('orders').selectAll().orderBy('id').limit(8).execute();
      for (const row of orders) {
        const order = (await t.get(`/api/v2/orders/${row.id}`, token)).json();
        const items = await t.database.store.db.selectFrom('order_items').selectAll().where('order_id', '=', row.id).orderBy('position').execute();
        assert.ok(items.length > 0);
        assert.equal(order.items.length, items.length);
        assert.deepEqual(order.items.map((i: { name: string }) => i.name), items.map((i) => i.name));
        order.items.forEach((item: Record<string, unknown>, i: number) => {
          // Every value from its own column, the keys in the schema's order.
          const stored = items[i];
          assert.deepEqual(item, {
            productId: stored.product_id === null ? null : Number(stored.product_id),
            articleNumber: stored.article_number,
            name: stored.name,
            quantity: stored.quantity,
            unitPrice: String(stored.unit_price),
            vatRate: stored.vat_rate,
            total: String(stored.total),
          });
          assert.deepEqual(Object.keys(item), ['productId', 'articleNumber', 'name', 'quantity', 'unitPrice', 'vatRate', 'total']);
        });
        for (const item of order.items) {
          assert.match(item.unitPrice, MONEY);
          assert.match(item.total, MONEY);
          assert.equal(typeof item.quantity, 'number');
        }
        for (const k of ['subtotal', 'shippingTotal', 'taxTotal', 'total']) assert.match(order[k], MONEY);
        const cents = (s: string) => Math.round(Number(s) * 100);
        assert.equal(cents(order.subtotal), order.items.reduce((s: number, i: { total: string }) => s + cents(i.total), 0));
        assert.equal(cents(order.total), cents(order.subtotal) + cents(order.shippingTotal));
        assert.equal(typeof order.billingAddress, 'object');
        assert.equal(order.billingAddress.name, order.customerName);
        assert.equal(order.email, row.email);
      }
    });
  });
}
