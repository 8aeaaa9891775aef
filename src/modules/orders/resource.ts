import { AppError } from '../../errors/app-error.ts';
import type { WriteContext } from '../../events/log.ts';
import { enumListFilter, equalsIgnoreCaseFilter, exactListFilter, idListFilter, instantFilter } from '../../listing/filters.ts';
import { fromCents, moneyInputSchema, moneySchema, normalizeMoney } from '../../money.ts';
import { defineResource } from '../../resources/define.ts';
import { eventFor } from '../../resources/events.ts';
import type { JsonSchema, NestedTable } from '../../resources/types.ts';
import { createdAtField, ID_BOUNDS, idField, INT32_BOUNDS, ORDER_STATUSES, updatedAtField } from '../common-fields.ts';
import { products } from '../products/resource.ts';
import { amounts, checkAmounts, lineCents, type ItemInput } from './amounts.ts';

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

export const ITEM_FIELDS = ['productId', 'articleNumber', 'name', 'quantity', 'unitPrice', 'vatRate', 'total'] as const;
const orderItemSchema: JsonSchema = {
  type: 'object',
  required: [...ITEM_FIELDS],
  properties: {
    productId: { type: ['integer', 'null'] },
    articleNumber: nullableString,
    name: { type: 'string' },
    quantity: { type: 'integer' },
    unitPrice: moneySchema(),
    vatRate: { type: 'number' },
    total: moneySchema(),
  },
};

const itemInput: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'quantity', 'unitPrice', 'vatRate'],
  properties: {
    productId: { type: ['integer', 'null'], ...ID_BOUNDS },
    articleNumber: { type: ['string', 'null'], maxLength: 64 },
    name: { type: 'string', minLength: 1, maxLength: 500 },
    quantity: { type: 'integer', ...INT32_BOUNDS, minimum: 1 },
    unitPrice: moneyInputSchema(),
    vatRate: { type: 'number', minimum: 0, maximum: 100 },
    total: moneyInputSchema({ description: 'Defaults to quantity × unitPrice.' }),
  },
};

/** Where the items are stored; `attach` is derived from it, and PostgreSQL's export lines read it. */
const itemsTable: NestedTable = {
  table: 'order_items',
  parent: 'order_id',
  order: 'position',
  // In orderItemSchema's order (the JSON answer's).
  columns: { productId: 'product_id', articleNumber: 'article_number', name: 'name', quantity: 'quantity', unitPrice: 'unit_price', vatRate: 'vat_rate', total: 'total' },
};

/** The items of an order, replaced as a whole (in the given order) whenever items are given. */
async function replaceItems(w: WriteContext, orderId: number, items: ItemInput[]): Promise<void> {
  await w.trx.deleteFrom('order_items').where('order_id', '=', orderId).execute();
  await w.trx.insertInto('order_items').values(items.map((i, position) => ({
    order_id: orderId,
    position,
    product_id: i.productId ?? null,
    article_number: i.articleNumber ?? null,
    name: i.name,
    quantity: i.quantity,
    unit_price: normalizeMoney(i.unitPrice),
    vat_rate: i.vatRate,
    total: fromCents(lineCents(i)),
  }))).execute();
}

export const orders = defineResource({
  collection: 'orders',
  event: 'order',
  title: 'Order',
  description: 'Orders with their items, addresses and totals.',
  table: 'orders',
  fields: [
    idField,
    { name: 'number', column: 'number', type: 'string', description: 'The order number customers see.', write: { schema: { type: 'string', minLength: 1, maxLength: 64, description: 'Generated when absent.' } } },
    { name: 'status', column: 'status', type: 'enum', values: ORDER_STATUSES, write: { schema: { type: 'string', enum: [...ORDER_STATUSES] }, default: 'new' } },
    { name: 'email', column: 'email', type: 'string', write: { schema: { type: 'string', format: 'email', maxLength: 320 }, required: true } },
    { name: 'customerName', column: 'customer_name', type: 'string', write: { schema: { type: 'string', minLength: 1, maxLength: 200 }, required: true } },
    { name: 'billingAddress', column: 'billing_address', type: 'object', schema: addressSchema, write: { schema: addressSchema, required: true } },
    { name: 'shippingAddress', column: 'shipping_address', type: 'object', schema: addressSchema, nullable: true, write: { schema: { ...addressSchema, type: ['object', 'null'] }, default: null } },
    { name: 'currency', column: 'currency', type: 'string', write: { schema: { type: 'string', pattern: '^[A-Z]{3}$' }, required: true } },
    { name: 'subtotal', column: 'subtotal', type: 'money', write: { schema: moneyInputSchema({ description: 'Defaults to the sum of item totals.' }) } },
    { name: 'shippingTotal', column: 'shipping_total', type: 'money', write: { schema: moneyInputSchema({ description: 'Defaults to 0.00.' }) } },
    { name: 'taxTotal', column: 'tax_total', type: 'money', write: { schema: moneyInputSchema({ description: 'Defaults to the VAT contained in the (VAT-inclusive) item totals.' }) } },
    { name: 'total', column: 'total', type: 'money', write: { schema: moneyInputSchema({ description: 'Defaults to subtotal + shippingTotal.' }) } },
    createdAtField,
    updatedAtField,
  ],
  input: { extra: { items: { schema: { type: 'array', minItems: 1, maxItems: 1000, items: itemInput, description: 'Replaces all items when given on PATCH.' }, required: true } } },
  derive: (input, existing) => ({
    ...(typeof input.email === 'string' ? { email_lc: input.email.toLowerCase() } : {}),
    // A unique placeholder until the id is known; afterWrite replaces it with the real number.
    ...(!existing && input.number === undefined ? { number: `pending-${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2)}` } : {}),
    ...amounts(input, input.items as ItemInput[] | undefined, existing),
  }),
  includes: {
    // The products its items name (a line whose product was deleted names none), each once.
    products: { target: products, kind: 'through', table: 'order_items', from: 'order_id', to: 'product_id', description: 'The products of its items, each once, in id order' },
  },
  uniques: [{ fields: ['number'] }],
  naturalKey: ['number'],
  prepare: async (w, input, existing) => {
    checkAmounts(input, existing);
    const items = input.items as ItemInput[] | undefined;
    const ids = [...new Set((items ?? []).map((i) => i.productId).filter((id): id is number => typeof id === 'number'))];
    if (ids.length) {
      const found = new Set((await w.trx.selectFrom('products').select('id').where('id', 'in', ids).execute()).map((r) => Number(r.id)));
      const missing = ids.find((id) => !found.has(id));
      if (missing !== undefined) {
        const index = items!.findIndex((i) => i.productId === missing);
        throw new AppError('conflict', `items[${index}].productId: product ${missing} does not exist.`, { errors: [{ name: `items.${index}.productId`, reason: `product ${missing} does not exist` }] });
      }
    }
    return input;
  },
  afterWrite: async (w, id, input, existing) => {
    if (!existing && input.number === undefined) {
      await w.trx.updateTable('orders').set({ number: String(100000 + id) }).where('id', '=', id).execute();
    }
    if (input.items) await replaceItems(w, id, input.items as ItemInput[]);
  },
  extraEventTypes: { status_changed: 'an order with `previousStatus`' },
  extraEvents: async (_w, item, existing, deleted) =>
    !deleted && existing && existing.status !== item.status ? [eventFor(orders, 'status_changed', Number(item.id), { ...item, previousStatus: existing.status })] : [],
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
  nested: { items: { type: 'array', items: orderItemSchema, description: 'The ordered items, in order.' } },
  nestedTables: { items: itemsTable },
  exportRowPer: 'items',
});
