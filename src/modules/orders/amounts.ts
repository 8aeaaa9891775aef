import { AppError } from '../../errors/app-error.ts';
import { fitsMoneyColumn, fromCents, includedVat, normalizeMoney, toCents } from '../../money.ts';
import type { Input, Row } from '../../resources/types.ts';

export interface ItemInput {
  productId?: number | null;
  articleNumber?: string | null;
  name: string;
  quantity: number;
  unitPrice: string;
  vatRate: number;
  total?: string;
}

export const lineCents = (i: ItemInput): bigint => (i.total !== undefined ? toCents(i.total) : toCents(i.unitPrice) * BigInt(i.quantity));

/** Fills the amounts the caller left out: prices are VAT-inclusive, as in European retail. Stored columns. */
export function amounts(input: Input, items: ItemInput[] | undefined, existing: Row | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (items) {
    const lines = items.map(lineCents);
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
export function checkAmounts(input: Input, existing: Row | undefined): void {
  const items = input.items as ItemInput[] | undefined;
  const tooLarge = (name: string) => new AppError('invalid_body', `${name} is too large to store (at most 999999999999.99).`, { errors: [{ name, reason: 'is too large (at most 999999999999.99)' }] });
  for (const [k, item] of (items ?? []).entries()) if (!fitsMoneyColumn(lineCents(item))) throw tooLarge(`items.${k}.total`);
  for (const [column, value] of Object.entries(amounts(input, items, existing))) if (!fitsMoneyColumn(toCents(value))) throw tooLarge(AMOUNT_FIELDS[column]);
}
