import { sql } from 'kysely';
import { enumListFilter, equalsIgnoreCaseFilter, exactListFilter, idListFilter, instantFilter } from '../../listing/filters.ts';
import type { JsonSchema, ResourceDef, Row } from '../../listing/resource.ts';
import { createdAtField, idField, ORDER_STATUSES, updatedAtField } from '../common-fields.ts';

const nullableString = { type: ['string', 'null'] };
export const ADDRESS_FIELDS = ['name', 'company', 'street', 'city', 'postalCode', 'country', 'phone'] as const;
export const addressSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'street', 'city', 'postalCode', 'country'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 200 },
    company: nullableString,
    street: { type: 'string', minLength: 1, maxLength: 200 },
    city: { type: 'string', minLength: 1, maxLength: 100 },
    postalCode: { type: 'string', minLength: 1, maxLength: 20 },
    country: { type: 'string', pattern: '^[A-Z]{2}$', description: 'ISO 3166-1 alpha-2.' },
    phone: nullableString,
  },
};

const money = { type: 'string', pattern: '^-?\\d+\\.\\d{2}$', examples: ['1299.00'] };
export const ITEM_FIELDS = ['productId', 'articleNumber', 'name', 'quantity', 'unitPrice', 'vatRate', 'total'] as const;
export const orderItemSchema: JsonSchema = {
  type: 'object',
  required: [...ITEM_FIELDS],
  properties: {
    productId: { type: ['integer', 'null'] },
    articleNumber: nullableString,
    name: { type: 'string' },
    quantity: { type: 'integer' },
    unitPrice: money,
    vatRate: { type: 'number' },
    total: money,
  },
};

const parseJson = (value: unknown): unknown => (typeof value === 'string' ? JSON.parse(value) : value);

/** Loads the items of a page of orders in one query and attaches them in position order. */
async function attachItems(db: Parameters<ResourceDef['attach'] & object>[0], rows: Row[]): Promise<void> {
  const items = await db
    .selectFrom('order_items')
    .select([
      'order_id',
      sql.ref<number | null>('product_id').as('productId'),
      sql.ref<string | null>('article_number').as('articleNumber'),
      'name',
      'quantity',
      sql.ref<string>('unit_price').as('unitPrice'),
      sql.ref<number>('vat_rate').as('vatRate'),
      'total',
    ])
    .where('order_id', 'in', rows.map((r) => r.id as number))
    .orderBy('order_id')
    .orderBy('position')
    .execute();
  const byOrder = new Map<number, Row[]>();
  for (const { order_id, ...item } of items) {
    let list = byOrder.get(order_id);
    if (!list) byOrder.set(order_id, (list = []));
    list.push(item);
  }
  for (const row of rows) row.items = byOrder.get(row.id as number) ?? [];
}

export const orders: ResourceDef = {
  collection: 'orders',
  event: 'order',
  title: 'Order',
  description: 'Orders with their items, addresses and totals.',
  scope: 'orders:read',
  from: (db) => db.selectFrom('orders as t'),
  fields: [
    idField,
    { name: 'number', column: 't.number', type: 'string', description: 'The order number customers see.' },
    { name: 'status', column: 't.status', type: 'enum', values: ORDER_STATUSES },
    { name: 'email', column: 't.email', type: 'string' },
    { name: 'customerName', column: 't.customer_name', type: 'string' },
    { name: 'billingAddress', column: 't.billing_address', type: 'object', schema: addressSchema, decode: parseJson },
    { name: 'shippingAddress', column: 't.shipping_address', type: 'object', schema: addressSchema, nullable: true, decode: parseJson },
    { name: 'currency', column: 't.currency', type: 'string' },
    { name: 'subtotal', column: 't.subtotal', type: 'money' },
    { name: 'shippingTotal', column: 't.shipping_total', type: 'money' },
    { name: 'taxTotal', column: 't.tax_total', type: 'money' },
    { name: 'total', column: 't.total', type: 'money' },
    createdAtField,
    updatedAtField,
  ],
  filters: [
    idListFilter('id', 't.id', 'Order ids.'),
    exactListFilter('number', 't.number', 'Order numbers.'),
    enumListFilter('status', 't.status', ORDER_STATUSES, 'Statuses.'),
    equalsIgnoreCaseFilter('email', 't.email_lc', 'Customer e-mail, exact and case-insensitive.'),
    instantFilter('createdFrom', 't.created_at', 'from', 'Created at or after.'),
    instantFilter('createdTo', 't.created_at', 'to', 'Created at or before.'),
  ],
  sorts: ['id', 'updatedAt', 'createdAt'],
  defaultSort: '-createdAt',
  attach: attachItems,
  nested: { items: { type: 'array', items: orderItemSchema, description: 'The ordered items, in order.' } },
  exportRowPer: 'items',
};
