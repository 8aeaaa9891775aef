import { AppError } from '../../errors/app-error.ts';
import type { WriteContext } from '../../events/log.ts';
import type { JsonSchema, Row } from '../../listing/resource.ts';
import { ID_BOUNDS, INT32_BOUNDS, ORDER_STATUSES } from '../common-fields.ts';
import { fitsMoneyColumn, fromCents, includedVat, MONEY_INPUT, normalizeMoney, toCents } from '../money.ts';
import { pick, type Input, type WritableResource } from '../writer.ts';
import { addressSchema, orders } from './resource.ts';

interface ItemInput {
  productId?: number | null;
  articleNumber?: string | null;
  name: string;
  quantity: number;
  unitPrice: string;
  vatRate: number;
  total?: string;
}

const itemInput: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'quantity', 'unitPrice', 'vatRate'],
  properties: {
    productId: { type: ['integer', 'null'], ...ID_BOUNDS },
    articleNumber: { type: ['string', 'null'], maxLength: 64 },
    name: { type: 'string', minLength: 1, maxLength: 500 },
    quantity: { type: 'integer', ...INT32_BOUNDS, minimum: 1 },
    unitPrice: MONEY_INPUT,
    vatRate: { type: 'number', minimum: 0, maximum: 100 },
    total: { ...MONEY_INPUT, description: 'Defaults to quantity × unitPrice.' },
  },
};

const properties: Record<string, JsonSchema> = {
  number: { type: 'string', minLength: 1, maxLength: 64, description: 'Generated when absent.' },
  status: { type: 'string', enum: [...ORDER_STATUSES] },
  email: { type: 'string', format: 'email', maxLength: 320 },
  customerName: { type: 'string', minLength: 1, maxLength: 200 },
  billingAddress: addressSchema,
  shippingAddress: { ...addressSchema, type: ['object', 'null'] },
  currency: { type: 'string', pattern: '^[A-Z]{3}$' },
  subtotal: { ...MONEY_INPUT, description: 'Defaults to the sum of item totals.' },
  shippingTotal: { ...MONEY_INPUT, description: 'Defaults to 0.00.' },
  taxTotal: { ...MONEY_INPUT, description: 'Defaults to the VAT contained in the (VAT-inclusive) item totals.' },
  total: { ...MONEY_INPUT, description: 'Defaults to subtotal + shippingTotal.' },
  items: { type: 'array', minItems: 1, maxItems: 1000, items: itemInput, description: 'Replaces all items when given on PATCH.' },
};

const lineTotal = (i: ItemInput): bigint => (i.total !== undefined ? toCents(i.total) : toCents(i.unitPrice) * BigInt(i.quantity));

/** Fills the amounts the caller left out: prices are VAT-inclusive, as in European retail. */
function totals(input: Input, items: ItemInput[] | undefined, existing: Row | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (items) {
    const lines = items.map(lineTotal);
    out.subtotal = fromCents(lines.reduce((a, b) => a + b, 0n));
    out.tax_total = fromCents(lines.reduce((sum, cents, k) => sum + includedVat(cents, items[k].vatRate), 0n));
  }
  if (input.subtotal !== undefined) out.subtotal = normalizeMoney(String(input.subtotal));
  if (input.taxTotal !== undefined) out.tax_total = normalizeMoney(String(input.taxTotal));
  if (input.shippingTotal !== undefined) out.shipping_total = normalizeMoney(String(input.shippingTotal));
  else if (!existing) out.shipping_total = '0.00';
  if (input.total !== undefined) out.total = normalizeMoney(String(input.total));
  else if (out.subtotal !== undefined || out.shipping_total !== undefined) {
    const subtotal = out.subtotal ?? String(existing?.subtotal);
    const shipping = out.shipping_total ?? String(existing?.shippingTotal);
    out.total = fromCents(toCents(subtotal) + toCents(shipping));
  }
  return out;
}

const AMOUNT_FIELDS: Record<string, string> = { subtotal: 'subtotal', tax_total: 'taxTotal', shipping_total: 'shippingTotal', total: 'total' };

/** Every amount the order will store, given or computed, must fit its column; a sum that does not is bad input. */
function checkAmounts(input: Input, existing: Row | undefined): void {
  const items = input.items as ItemInput[] | undefined;
  const tooLarge = (name: string) => new AppError('invalid_body', `${name} is too large to store (at most 999999999999.99).`, { errors: [{ name, reason: 'is too large (at most 999999999999.99)' }] });
  for (const [k, item] of (items ?? []).entries()) if (!fitsMoneyColumn(lineTotal(item))) throw tooLarge(`items.${k}.total`);
  for (const [column, value] of Object.entries(totals(input, items, existing))) if (!fitsMoneyColumn(toCents(value))) throw tooLarge(AMOUNT_FIELDS[column]);
}

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
    total: fromCents(lineTotal(i)),
  }))).execute();
}

export const orderWriter: WritableResource = {
  def: orders,
  table: 'orders',
  createSchema: { type: 'object', additionalProperties: false, required: ['email', 'customerName', 'billingAddress', 'currency', 'items'], properties },
  patchSchema: { type: 'object', additionalProperties: false, minProperties: 1, properties },
  references: [],
  uniques: [{ field: 'number', column: 'number' }],
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
  toRow: (input, existing) => {
    const row = pick(input, { number: 'number', status: 'status', email: 'email', customerName: 'customer_name', currency: 'currency', billingAddress: 'billing_address', shippingAddress: 'shipping_address' }, {
      billingAddress: (v) => JSON.stringify(v),
      shippingAddress: (v) => JSON.stringify(v),
    });
    if (typeof input.email === 'string') row.email_lc = input.email.toLowerCase();
    if (!existing) {
      row.status ??= 'new';
      // A unique placeholder until the id is known; afterWrite replaces it with the real number.
      row.number ??= `pending-${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2)}`;
      row.shipping_address ??= null;
    }
    return { ...row, ...totals(input, input.items as ItemInput[] | undefined, existing) };
  },
  afterWrite: async (w, id, input, existing) => {
    if (!existing && input.number === undefined) {
      await w.trx.updateTable('orders').set({ number: String(100000 + id) }).where('id', '=', id).execute();
    }
    if (input.items) await replaceItems(w, id, input.items as ItemInput[]);
  },
  sideEvents: async (_w, item, existing, deleted) =>
    !deleted && existing && existing.status !== item.status
      ? [{ type: 'order.status_changed', resource: 'order', resourceId: Number(item.id), data: { ...item, previousStatus: existing.status } }]
      : [],
};
