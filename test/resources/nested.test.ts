import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { idField } from '../../src/modules/common-fields.ts';
import { orders } from '../../src/modules/orders/resource.ts';
import { defineResource } from '../../src/resources/define.ts';
import type { ResourceDeclaration } from '../../src/resources/types.ts';
import { createTestApp } from '../helpers/app.ts';
import { dialects } from '../helpers/databases.ts';

const declaration = (extra: Partial<ResourceDeclaration>): ResourceDeclaration => ({
  collection: 'boxes',
  event: 'box',
  title: 'Box',
  description: 'Boxes.',
  table: 'boxes',
  fields: [idField],
  sorts: ['id'],
  defaultSort: 'id',
  nested: { parts: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' }, size: { type: 'integer' } } } } },
  ...extra,
});

const backends = await dialects();

describe('nested tables in a declaration', () => {
  it('derives attach from where the elements are stored, and refuses a table that does not match its schema', () => {
    const parts = { table: 'parts', parent: 'box_id', order: 'position', columns: { name: 'name', size: 'size' } };
    assert.equal(typeof defineResource(declaration({ nestedTables: { parts } })).attach, 'function');
    assert.throws(() => defineResource(declaration({ nestedTables: { parts: { ...parts, columns: { size: 'size', name: 'name' } } } })), /has the columns size,name, its schema the properties name,size/);
    assert.throws(() => defineResource(declaration({ nestedTables: { lids: parts } })), /nested table lids stores no nested array of objects/);
    assert.throws(() => defineResource(declaration({ nestedTables: { parts }, attach: async () => {} })), /attach is derived from nestedTables/);
  });

  it('reads an object stored as JSON text back from it, and marks it so, unless the field stores or reads it its own way', () => {
    const address = { name: 'address', column: 'address', type: 'object' as const, schema: { type: 'object' }, write: { schema: { type: 'object' } } };
    const byName = (extra: Partial<ResourceDeclaration['fields'][number]>) => defineResource(declaration({ fields: [idField, { ...address, ...extra }] })).fields.find((f) => f.name === 'address')!;
    const stored = byName({});
    assert.equal(stored.jsonText, true);
    assert.deepEqual(stored.decode!('{"a":[1,"x"]}'), { a: [1, 'x'] });
    assert.equal(byName({ write: { schema: { type: 'object' }, encode: (v) => String(v) } }).jsonText, undefined);
    const own = (v: unknown) => v;
    assert.equal(byName({ decode: own }).decode, own);
    assert.equal(byName({ decode: own }).jsonText, undefined);
    assert.equal(byName({ column: 'x.address' }).jsonText, undefined, 'a joined table\'s column is not stored here');
    const readOnly = byName({ write: undefined });
    assert.equal(readOnly.jsonText, undefined, 'a read-only field is not written as JSON text by the API');
    assert.equal(readOnly.decode, undefined);
    assert.equal(orders.fields.find((f) => f.name === 'billingAddress')!.jsonText, true);
  });

  for (const dialect of backends) {
    it(`attaches each order's items in position order, and an empty list to an order without any (${dialect})`, async () => {
      const t = await createTestApp(dialect, { seed: { products: 3, orders: 0 } });
      try {
        const body = (items: number) => ({ email: 'a@shop.test', customerName: 'A', billingAddress: { name: 'A', street: 'S', city: 'C', postalCode: '1', country: 'CZ' }, currency: 'CZK', items: Array.from({ length: items }, (_x, i) => ({ name: `item ${i}`, quantity: i + 1, unitPrice: '1.00', vatRate: 21 })) });
        const ids: number[] = [];
        for (const n of [3, 1, 2]) ids.push(((await t.admin('POST', '/admin/api/orders', body(n))).json() as { id: number }).id);
        // Positions written in reverse, so that the table's own order is not the answer's.
        await t.database.store.db.updateTable('order_items').set((eb) => ({ position: eb('position', '*', -1) })).where('order_id', '=', ids[0]).execute();
        await t.database.store.db.deleteFrom('order_items').where('order_id', '=', ids[1]).execute();
        const rows: Array<Record<string, unknown>> = ids.map((id) => ({ id }));
        await orders.attach!(t.database.store.db, rows);
        assert.deepEqual(rows.map((r) => (r.items as Array<{ name: string }>).map((i) => i.name)), [['item 2', 'item 1', 'item 0'], [], ['item 0', 'item 1']]);
        assert.deepEqual(Object.keys((rows[2].items as object[])[0]), ['productId', 'articleNumber', 'name', 'quantity', 'unitPrice', 'vatRate', 'total']);
      } finally {
        await t.close();
      }
    });
  }
});
