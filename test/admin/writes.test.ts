import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Scope } from '../../src/auth/scopes.ts';
import { RESOURCES } from '../../src/modules/registry.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { dialects } from '../helpers/databases.ts';
import { problemOf } from '../helpers/problems.ts';

interface EventRow {
  seq: number;
  type: string;
  resource: string;
  resourceId: number;
  occurredAt: string;
  data: Record<string, unknown>;
}

type Item = Record<string, unknown> & { id: number; updatedAt: string };

for (const dialect of await dialects()) {
  describe(`admin API writes and their events (${dialect})`, () => {
    let t: TestApp;
    let token: string;
    let mark = 0;

    before(async () => {
      t = await createTestApp(dialect, { seed: { products: 12, orders: 4, seed: 1 } });
      token = (await t.credential(RESOURCES.map((r) => r.scope) as Scope[])).token;
    });
    after(() => t.close());

    /** Events recorded since the last call, oldest first. */
    const newEvents = async (): Promise<EventRow[]> => {
      const rows = await t.database.store.db.selectFrom('events').selectAll().where('seq', '>', mark).orderBy('seq').execute();
      if (rows.length) mark = Number(rows[rows.length - 1].seq);
      return rows.map((r) => ({ seq: Number(r.seq), type: r.type, resource: r.resource, resourceId: Number(r.resource_id), occurredAt: r.occurred_at, data: JSON.parse(r.data) }));
    };
    const skipEvents = async () => void (await newEvents());
    const read = async (collection: string, id: number) => t.get(`/api/v2/${collection}/${id}`, token);
    const count = async (table: 'products' | 'orders' | 'parameters' | 'events' | 'product_parameters') =>
      Number((await t.database.store.db.selectFrom(table).select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);

    /** Create, change and delete one item through HTTP; each step's answer, the public API and the event log agree. */
    async function lifecycle(collection: string, event: string, create: Record<string, unknown>, patch: Record<string, unknown>, extra: (phase: 'created' | 'updated' | 'deleted', events: EventRow[], item: Item) => Promise<void> = async () => {}) {
      await skipEvents();
      const created = await t.admin('POST', `/admin/api/${collection}`, create);
      assert.equal(created.statusCode, 201, created.body);
      const item = created.json() as Item;
      assert.deepEqual((await read(collection, item.id)).json(), item);
      let events = await newEvents();
      assert.equal(events[0].type, `${event}.created`);
      assert.equal(events[0].resource, event);
      assert.equal(events[0].resourceId, item.id);
      assert.deepEqual(events[0].data, item);
      assert.match(events[0].occurredAt, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      await extra('created', events, item);

      const changed = await t.admin('PATCH', `/admin/api/${collection}/${item.id}`, patch);
      assert.equal(changed.statusCode, 200, changed.body);
      const updated = changed.json() as Item;
      for (const [k, v] of Object.entries(patch)) assert.equal(updated[k], k === 'price' ? Number(v).toFixed(2) : v, k);
      assert.ok(updated.updatedAt >= item.updatedAt);
      assert.equal(updated.createdAt, item.createdAt);
      assert.deepEqual((await read(collection, item.id)).json(), updated);
      events = await newEvents();
      assert.equal(events[0].type, `${event}.updated`);
      assert.deepEqual(events[0].data, updated);
      await extra('updated', events, updated);

      const gone = await t.admin('DELETE', `/admin/api/${collection}/${item.id}`);
      assert.equal(gone.statusCode, 204, gone.body);
      assert.equal(gone.body, '');
      problemOf(await read(collection, item.id), 404, 'not_found');
      events = await newEvents();
      const deleted = events.find((e) => e.type === `${event}.deleted`);
      assert.ok(deleted, JSON.stringify(events.map((e) => e.type)));
      assert.deepEqual(deleted.data, { id: item.id });
      assert.equal(deleted.resourceId, item.id);
      await extra('deleted', events, updated);
      problemOf(await t.admin('DELETE', `/admin/api/${collection}/${item.id}`), 404, 'not_found');
      problemOf(await t.admin('PATCH', `/admin/api/${collection}/${item.id}`, patch), 404, 'not_found');
      return item;
    }

    it('brands', async () => {
      const brand = await lifecycle('brands', 'brand', { name: 'Acme Tools', website: 'https://acme.example' }, { description: 'Hammers since 1901' });
      assert.equal(brand.slug, 'acme-tools');
      assert.equal(brand.description, null);
    });

    it('categories', async () => {
      const root = await t.database.store.db.selectFrom('categories').select(['id', 'slug']).where('parent_id', 'is', null).orderBy('id').executeTakeFirstOrThrow();
      const category = await lifecycle('categories', 'category', { name: 'Test Shelf', parentId: Number(root.id), position: 3 }, { name: 'Renamed Shelf' });
      assert.equal(category.parentId, Number(root.id));
      assert.equal(category.slug, `${root.slug}-test-shelf`);
    });

    it('products (deleting one records the deletion of its parameter and filter values)', async () => {
      const [brand, category] = await Promise.all([
        t.database.store.db.selectFrom('brands').select('id').orderBy('id').executeTakeFirstOrThrow(),
        t.database.store.db.selectFrom('categories').select('id').orderBy('id', 'desc').executeTakeFirstOrThrow(),
      ]);
      let valueIds: number[] = [];
      await lifecycle('products', 'product',
        { articleNumber: 'T-100', name: 'Test Hammer', price: '199.9', currency: 'CZK', vatRate: 21, brandId: Number(brand.id), categoryId: Number(category.id), stock: 5, ean: '8594000000019' },
        { price: '249', status: 'archived' },
        async (phase, events, item) => {
          if (phase === 'created') {
            assert.equal(item.price, '199.90');
            assert.equal(item.status, 'active');
            const p = await t.admin('POST', '/admin/api/product-parameters', { productId: item.id, parameterName: 'Handle', value: 'ash' });
            const f = await t.admin('POST', '/admin/api/product-filters', { productId: item.id, filterName: 'Colour', value: 'red' });
            assert.equal(p.statusCode, 201, p.body);
            assert.equal(f.statusCode, 201, f.body);
            valueIds = [p.json().id, f.json().id];
            await skipEvents();
          }
          if (phase === 'deleted') {
            assert.deepEqual(events.map((e) => e.type).sort(), ['product-filter.deleted', 'product-parameter.deleted', 'product.deleted']);
            assert.deepEqual(events.filter((e) => e.type !== 'product.deleted').map((e) => e.resourceId).sort(), [...valueIds].sort());
            assert.equal((await t.database.store.db.selectFrom('product_parameters').select('id').where('id', '=', valueIds[0]).execute()).length, 0);
          }
        });
    });

    it('product parameter values (changing one records product.updated)', async () => {
      const product = (await read('products', 3)).json() as Item;
      await lifecycle('product-parameters', 'product-parameter', { productId: 3, parameterName: 'Blade length', unit: 'mm', value: '120' }, { value: '150' },
        async (phase, events, item) => {
          if (phase === 'created') {
            assert.equal(item.parameterName, 'Blade length');
            assert.equal(item.unit, 'mm');
          }
          const touched = events.find((e) => e.type === 'product.updated');
          assert.ok(touched, `${phase}: ${JSON.stringify(events.map((e) => e.type))}`);
          assert.equal(touched.resourceId, 3);
          const now = (await read('products', 3)).json() as Item;
          assert.deepEqual(touched.data, now);
          assert.ok(now.updatedAt >= product.updatedAt);
        });
      // By id, with an existing parameter the product does not have yet.
      const used = (await t.database.store.db.selectFrom('product_parameters').select('parameter_id').where('product_id', '=', 4).execute()).map((r) => Number(r.parameter_id));
      const free = await t.database.store.db.selectFrom('parameters').select('id').where('id', 'not in', used).executeTakeFirstOrThrow();
      const byId = await t.admin('POST', '/admin/api/product-parameters', { productId: 4, parameterId: Number(free.id), value: '7' });
      assert.equal(byId.statusCode, 201, byId.body);
      assert.equal(byId.json().parameterId, Number(free.id));
    });

    it('product filter values (changing one records product.updated)', async () => {
      await lifecycle('product-filters', 'product-filter', { productId: 5, filterName: 'Finish', value: 'matte' }, { value: 'glossy' },
        async (phase, events, item) => {
          if (phase !== 'deleted') assert.equal(item.filterName, 'Finish');
          if (phase === 'updated') assert.equal(item.value, 'glossy');
          const touched = events.find((e) => e.type === 'product.updated');
          assert.ok(touched, `${phase}: ${JSON.stringify(events.map((e) => e.type))}`);
          assert.equal(touched.resourceId, 5);
        });
    });

    it('orders (a status change records order.status_changed with the previous status)', async () => {
      const address = { name: 'Jan Novák', street: 'Dlouhá 1', city: 'Praha', postalCode: '110 00', country: 'CZ' };
      await lifecycle('orders', 'order',
        { email: 'Jan.Novak@Example.com', customerName: 'Jan Novák', currency: 'CZK', billingAddress: address, items: [{ productId: 1, name: 'Hammer', quantity: 2, unitPrice: '12.5', vatRate: 21 }, { name: 'Gift wrap', quantity: 1, unitPrice: '30', vatRate: 21 }] },
        { status: 'paid' },
        async (phase, events, item) => {
          if (phase === 'created') {
            assert.equal(item.status, 'new');
            assert.equal(item.subtotal, '55.00');
            assert.equal(item.shippingTotal, '0.00');
            assert.equal(item.total, '55.00');
            assert.equal(item.taxTotal, '9.55');
            assert.equal((item.items as unknown[]).length, 2);
            assert.equal(item.shippingAddress, null);
            assert.match(String(item.number), /^\d+$/);
            assert.equal(events.length, 1);
            // The e-mail filter finds it whatever the case.
            const found = (await t.get('/api/v2/orders?email=jan.novak@example.com', token)).json();
            assert.deepEqual(found.data.map((o: Item) => o.id), [item.id]);
          }
          if (phase === 'updated') {
            assert.deepEqual(events.map((e) => e.type), ['order.updated', 'order.status_changed']);
            assert.equal(events[1].data.previousStatus, 'new');
            assert.equal(events[1].data.status, 'paid');
            assert.equal(events[1].resourceId, item.id);
          }
        });
      // A change that leaves the status alone records no status_changed.
      await skipEvents();
      const order = (await t.get('/api/v2/orders?limit=1', token)).json().data[0] as Item;
      const res = await t.admin('PATCH', `/admin/api/orders/${order.id}`, { customerName: 'Someone Else' });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual((await newEvents()).map((e) => e.type), ['order.updated']);
    });

    it('a write that fails leaves no row and no event behind (one transaction)', async () => {
      await skipEvents();
      const before = { events: await count('events'), parameters: await count('parameters'), products: await count('products'), orders: await count('orders') };
      // The parameter is created by name before the product reference fails: the rollback must take it too.
      problemOf(await t.admin('POST', '/admin/api/product-parameters', { productId: 999_999, parameterName: 'Ghost parameter', value: '1' }), 409, 'conflict', 'productId');
      problemOf(await t.admin('POST', '/admin/api/products', { articleNumber: 'T-GHOST', name: 'Ghost', price: '1.00', currency: 'CZK', vatRate: 21, brandId: 999_999 }), 409, 'conflict', 'brandId');
      problemOf(await t.admin('POST', '/admin/api/orders', { email: 'a@b.cz', customerName: 'A', currency: 'CZK', billingAddress: { name: 'A', street: 'S', city: 'C', postalCode: '1', country: 'CZ' }, items: [{ productId: 999_999, name: 'x', quantity: 1, unitPrice: '1.00', vatRate: 21 }] }), 409, 'conflict', 'items.0.productId');
      assert.deepEqual({ events: await count('events'), parameters: await count('parameters'), products: await count('products'), orders: await count('orders') }, before);
      assert.equal((await newEvents()).length, 0);
    });
  });
}
