import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { RESOURCES } from '../../src/modules/registry.ts';
import { ADMIN_TOKEN, createTestApp, type TestApp } from '../helpers/app.ts';
import { dialects } from '../helpers/databases.ts';
import { problemOf } from '../helpers/problems.ts';

const address = { name: 'Eva', street: 'Nádražní 5', city: 'Ostrava', postalCode: '702 00', country: 'CZ' };

/** A valid body for each collection, and fields with a value of the wrong JSON type (which must not be coerced). */
const VALID: Record<string, Record<string, unknown>> = {
  products: { articleNumber: 'V-1', name: 'Valid', price: '10.00', currency: 'CZK', vatRate: 21 },
  categories: { name: 'Valid category' },
  brands: { name: 'Valid brand' },
  'product-parameters': { productId: 1, parameterName: 'Valid parameter', value: 'x' },
  'product-filters': { productId: 1, filterName: 'Valid filter', value: 'x' },
  orders: { email: 'eva@example.com', customerName: 'Eva', currency: 'CZK', billingAddress: address, items: [{ name: 'Thing', quantity: 1, unitPrice: '5.00', vatRate: 21 }] },
};
const WRONG_TYPES: Record<string, Record<string, unknown>> = {
  products: { name: 123, price: 12.5, vatRate: '21', stock: '5', brandId: true, categoryId: '', weight: 'heavy', status: 'sold' },
  categories: { name: ['a'], parentId: '1', position: 1.5 },
  brands: { name: false, description: 5 },
  'product-parameters': { productId: '1', value: 7 },
  'product-filters': { productId: 1.5, value: null },
  orders: { email: 'not-an-e-mail', customerName: 5, items: 'none', billingAddress: 'here', currency: 'czk' },
};

for (const dialect of await dialects()) {
  describe(`admin API validation and conflicts (${dialect})`, () => {
    let t: TestApp;

    before(async () => {
      t = await createTestApp(dialect, { seed: { products: 10, orders: 3, seed: 1 } });
    });
    after(() => t.close());

    for (const w of RESOURCES) {
      const collection = w.collection;
      it(`${collection}: missing, unknown and mistyped fields are 400 problems naming each field`, async () => {
        const required = (w.createSchema.required as string[] | undefined) ?? [];
        const empty = problemOf(await t.admin('POST', `/admin/api/${collection}`, {}), 400, 'invalid_body');
        for (const name of required) assert.ok(empty.errors!.some((e) => e.name === name && /required/.test(e.reason)), `${name}: ${JSON.stringify(empty.errors)}`);

        problemOf(await t.admin('POST', `/admin/api/${collection}`, { ...VALID[collection], bogus: 1 }), 400, 'invalid_body', 'bogus');
        const wrong = problemOf(await t.admin('POST', `/admin/api/${collection}`, { ...VALID[collection], ...WRONG_TYPES[collection] }), 400, 'invalid_body');
        for (const name of Object.keys(WRONG_TYPES[collection])) assert.ok(wrong.errors!.some((e) => e.name === name), `${name} is not named: ${JSON.stringify(wrong.errors)}`);
        for (const [name, value] of Object.entries(WRONG_TYPES[collection])) {
          problemOf(await t.admin('POST', `/admin/api/${collection}`, { ...VALID[collection], [name]: value }), 400, 'invalid_body', name);
        }

        problemOf(await t.admin('PATCH', `/admin/api/${collection}/1`, {}), 400, 'invalid_body');
        problemOf(await t.admin('PATCH', `/admin/api/${collection}/1`, { bogus: 1 }), 400, 'invalid_body', 'bogus');
        for (const bad of ['abc', '0', '-1', '1.5', '99999999999999999999']) {
          problemOf(await t.admin('PATCH', `/admin/api/${collection}/${bad}`, { bogus: 1 }), 400, 'invalid_parameter', 'id');
          problemOf(await t.admin('DELETE', `/admin/api/${collection}/${bad}`), 400, 'invalid_parameter', 'id');
        }
        problemOf(await t.admin('DELETE', `/admin/api/${collection}/999999`), 404, 'not_found');
      });
    }

    it('the value of a field that may be null is not read from "" or false', async () => {
      problemOf(await t.admin('PATCH', '/admin/api/products/1', { categoryId: '' }), 400, 'invalid_body', 'categoryId');
      problemOf(await t.admin('PATCH', '/admin/api/products/1', { brandId: false }), 400, 'invalid_body', 'brandId');
      const cleared = await t.admin('PATCH', '/admin/api/products/1', { brandId: null });
      assert.equal(cleared.statusCode, 200, cleared.body);
      assert.equal(cleared.json().brandId, null);
    });

    it('broken references are 409 problems naming the field', async () => {
      const p = VALID.products;
      problemOf(await t.admin('POST', '/admin/api/products', { ...p, brandId: 999_999 }), 409, 'conflict', 'brandId');
      problemOf(await t.admin('POST', '/admin/api/products', { ...p, categoryId: 999_999 }), 409, 'conflict', 'categoryId');
      problemOf(await t.admin('PATCH', '/admin/api/products/1', { brandId: 999_999 }), 409, 'conflict', 'brandId');
      problemOf(await t.admin('POST', '/admin/api/categories', { name: 'Orphan', parentId: 999_999 }), 409, 'conflict', 'parentId');
      problemOf(await t.admin('POST', '/admin/api/product-parameters', { productId: 999_999, parameterId: 1, value: 'x' }), 409, 'conflict', 'productId');
      problemOf(await t.admin('POST', '/admin/api/product-parameters', { productId: 1, parameterId: 999_999, value: 'x' }), 409, 'conflict', 'parameterId');
      problemOf(await t.admin('POST', '/admin/api/product-filters', { productId: 999_999, filterName: 'Colour', value: 'red' }), 409, 'conflict', 'productId');
      problemOf(await t.admin('POST', '/admin/api/product-filters', { productId: 1, filterId: 999_999, value: 'red' }), 409, 'conflict', 'filterId');
      problemOf(await t.admin('POST', '/admin/api/product-filters', { productId: 1, valueId: 999_999 }), 409, 'conflict', 'valueId');
      // A value of another filter than the one named.
      const [colour, use] = await Promise.all(['Colour', 'Use'].map((name) => t.database.store.db.selectFrom('filters').select('id').where('name', '=', name).executeTakeFirstOrThrow()));
      const useValue = await t.database.store.db.selectFrom('filter_values').select('id').where('filter_id', '=', use.id).executeTakeFirstOrThrow();
      problemOf(await t.admin('POST', '/admin/api/product-filters', { productId: 1, filterId: Number(colour.id), valueId: Number(useValue.id) }), 409, 'conflict', 'valueId');
      problemOf(await t.admin('POST', '/admin/api/orders', { ...VALID.orders, items: [{ productId: 999_999, name: 'x', quantity: 1, unitPrice: '1.00', vatRate: 21 }] }), 409, 'conflict', 'items.0.productId');
    });

    it('duplicates are 409 problems naming the field', async () => {
      const existing = await t.database.store.db.selectFrom('products').select(['id', 'article_number']).orderBy('id').limit(2).execute();
      problemOf(await t.admin('POST', '/admin/api/products', { ...VALID.products, articleNumber: existing[0].article_number }), 409, 'conflict', 'articleNumber');
      problemOf(await t.admin('PATCH', `/admin/api/products/${existing[1].id}`, { articleNumber: existing[0].article_number }), 409, 'conflict', 'articleNumber');
      const same = await t.admin('PATCH', `/admin/api/products/${existing[0].id}`, { articleNumber: existing[0].article_number });
      assert.equal(same.statusCode, 200, 'keeping its own article number is no clash');
      const brand = await t.database.store.db.selectFrom('brands').select(['slug', 'name']).executeTakeFirstOrThrow();
      problemOf(await t.admin('POST', '/admin/api/brands', { name: brand.name }), 409, 'conflict', 'slug');
      const order = await t.database.store.db.selectFrom('orders').select('number').executeTakeFirstOrThrow();
      problemOf(await t.admin('POST', '/admin/api/orders', { ...VALID.orders, number: order.number }), 409, 'conflict', 'number');
      const param = await t.database.store.db.selectFrom('product_parameters').select(['product_id', 'parameter_id']).executeTakeFirstOrThrow();
      problemOf(await t.admin('POST', '/admin/api/product-parameters', { productId: Number(param.product_id), parameterId: Number(param.parameter_id), value: 'again' }), 409, 'conflict', 'parameterId');
    });

    it('generates category slugs under the parent\'s, so equal names may live under different parents', async () => {
      const [a, b] = await t.database.store.db.selectFrom('categories').select(['id', 'slug']).where('parent_id', 'is', null).orderBy('id').limit(2).execute();
      const first = await t.admin('POST', '/admin/api/categories', { name: 'Accessories', parentId: Number(a.id) });
      const second = await t.admin('POST', '/admin/api/categories', { name: 'Accessories', parentId: Number(b.id) });
      assert.equal(first.statusCode, 201, first.body);
      assert.equal(second.statusCode, 201, second.body);
      assert.equal(first.json().slug, `${a.slug}-accessories`);
      assert.equal(second.json().slug, `${b.slug}-accessories`);
      problemOf(await t.admin('POST', '/admin/api/categories', { name: 'Accessories', parentId: Number(a.id) }), 409, 'conflict', 'slug');
    });

    it('refuses deleting a brand or category still in use, and category cycles', async () => {
      const used = await t.database.store.db.selectFrom('products').select('brand_id').where('brand_id', 'is not', null).executeTakeFirstOrThrow();
      problemOf(await t.admin('DELETE', `/admin/api/brands/${used.brand_id}`), 409, 'conflict');
      const leaf = await t.database.store.db.selectFrom('products').select('category_id').where('category_id', 'is not', null).executeTakeFirstOrThrow();
      problemOf(await t.admin('DELETE', `/admin/api/categories/${leaf.category_id}`), 409, 'conflict');
      const root = (await t.admin('POST', '/admin/api/categories', { name: 'Cycle root' })).json();
      const child = (await t.admin('POST', '/admin/api/categories', { name: 'Cycle child', parentId: root.id })).json();
      const grandchild = (await t.admin('POST', '/admin/api/categories', { name: 'Cycle grandchild', parentId: child.id })).json();
      problemOf(await t.admin('DELETE', `/admin/api/categories/${root.id}`), 409, 'conflict');
      for (const target of [root.id, child.id, grandchild.id]) {
        problemOf(await t.admin('PATCH', `/admin/api/categories/${root.id}`, { parentId: target }), 409, 'conflict', 'parentId');
      }
      problemOf(await t.admin('PATCH', `/admin/api/categories/${child.id}`, { parentId: grandchild.id }), 409, 'conflict', 'parentId');
      // Moving a subtree elsewhere, and back to the root, is fine.
      const other = (await t.admin('POST', '/admin/api/categories', { name: 'Cycle other' })).json();
      assert.equal((await t.admin('PATCH', `/admin/api/categories/${child.id}`, { parentId: other.id })).statusCode, 200);
      assert.equal((await t.admin('PATCH', `/admin/api/categories/${child.id}`, { parentId: null })).json().parentId, null);
      assert.equal((await t.admin('DELETE', `/admin/api/categories/${root.id}`)).statusCode, 204);
    });

    it('refuses numbers and amounts past what the columns hold, naming the field', async () => {
      for (const [collection, body, name] of [
        ['products', { ...VALID.products, stock: 2 ** 31 }, 'stock'],
        ['products', { ...VALID.products, brandId: 2 ** 53 }, 'brandId'],
        ['products', { ...VALID.products, categoryId: 1e20 }, 'categoryId'],
        ['categories', { name: 'Deep', position: -(2 ** 31) - 1 }, 'position'],
        ['product-parameters', { productId: 2 ** 63, parameterId: 1, value: 'x' }, 'productId'],
        ['product-filters', { productId: 1, valueId: 1e300 }, 'valueId'],
        ['orders', { ...VALID.orders, items: [{ name: 'x', quantity: 2 ** 31, unitPrice: '1.00', vatRate: 21 }] }, 'items.0.quantity'],
        ['orders', { ...VALID.orders, items: [{ name: 'x', quantity: 1000, unitPrice: '999999999999.99', vatRate: 21 }] }, 'items.0.total'],
        ['orders', { ...VALID.orders, shippingTotal: '999999999999.99' }, 'total'],
      ] as const) {
        problemOf(await t.admin('POST', `/admin/api/${collection}`, body), 400, 'invalid_body', name);
      }
      problemOf(await t.admin('PATCH', '/admin/api/orders/1', { shippingTotal: '-999999999999.99', subtotal: '-999999999999.99' }), 400, 'invalid_body', 'total');
      const largest = await t.admin('POST', '/admin/api/orders', { ...VALID.orders, items: [{ name: 'x', quantity: 1, unitPrice: '999999999999.99', vatRate: 0 }] });
      assert.equal(largest.statusCode, 201, largest.body);
      assert.equal(largest.json().total, '999999999999.99');
    });

    it('refuses NUL characters in body strings (PostgreSQL cannot store them) naming the field', async () => {
      problemOf(await t.admin('POST', '/admin/api/brands', { name: 'Nul\u0000brand' }), 400, 'invalid_body', 'name');
      problemOf(await t.admin('POST', '/admin/api/orders', { ...VALID.orders, billingAddress: { ...address, city: 'Ostr\u0000ava' } }), 400, 'invalid_body', 'billingAddress.city');
      problemOf(await t.admin('PATCH', '/admin/api/products/1', { name: '\u0000' }), 400, 'invalid_body', 'name');
    });

    it('takes a DELETE or rotate that says application/json but sends no body', async () => {
      const brand = (await t.admin('POST', '/admin/api/brands', { name: 'Short-lived' })).json();
      const headers = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };
      assert.equal((await t.app.inject({ method: 'DELETE', url: `/admin/api/brands/${brand.id}`, headers })).statusCode, 204);
      const credential = (await t.admin('POST', '/admin/api/credentials', { name: 'c', scopes: ['brands:read'] })).json();
      assert.equal((await t.app.inject({ method: 'POST', url: `/admin/api/credentials/${credential.id}/rotate`, headers })).statusCode, 200);
    });

    it('refuses bodies that are not JSON objects, or too large', async () => {
      const send = (payload: string, type: string) =>
        t.app.inject({ method: 'POST', url: '/admin/api/brands', payload, headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': type } });
      problemOf(await send('{"name":', 'application/json'), 400, 'invalid_body');
      problemOf(await send('', 'application/json'), 400, 'invalid_body');
      problemOf(await send('{"name":"x","__proto__":{"admin":true}}', 'application/json'), 400, 'invalid_body');
      problemOf(await send('[1,2]', 'application/json'), 400, 'invalid_body');
      problemOf(await send('"name"', 'application/json'), 400, 'invalid_body');
      problemOf(await send('name=x', 'text/plain'), 415, 'unsupported_media_type');
      problemOf(await send('<brand/>', 'application/xml'), 415, 'unsupported_media_type');
      problemOf(await send(JSON.stringify({ name: 'x'.repeat(t.config.bodyLimit) }), 'application/json'), 413, 'payload_too_large');
    });
  });
}
