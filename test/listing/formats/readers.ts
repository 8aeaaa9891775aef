// Independent readers for the export tests: csv-parse for CSV, SheetJS for XLSX (never the code under test).
import { parse } from 'csv-parse/sync';
import XLSX from 'xlsx';

export type Item = Record<string, unknown>;

export const MONEY_COLUMNS = new Set(['price', 'subtotal', 'shippingTotal', 'taxTotal', 'total', 'items.unitPrice', 'items.total']);
export const DATE_COLUMNS = new Set(['createdAt', 'updatedAt']);

const address = (prefix: string) => ['name', 'company', 'street', 'city', 'postalCode', 'country', 'phone'].map((k) => `${prefix}.${k}`);

/** The documented, stable export columns of every collection (docs/listing-and-formats.md, "Export columns"). */
export const EXPECTED_COLUMNS: Record<string, string[]> = {
  products: ['id', 'articleNumber', 'name', 'description', 'status', 'brandId', 'categoryId', 'ean', 'price', 'currency', 'vatRate', 'stock', 'weight', 'url', 'createdAt', 'updatedAt'],
  categories: ['id', 'parentId', 'name', 'slug', 'position', 'createdAt', 'updatedAt'],
  brands: ['id', 'name', 'slug', 'description', 'website', 'createdAt', 'updatedAt'],
  'product-parameters': ['id', 'productId', 'parameterId', 'parameterName', 'value', 'unit', 'createdAt', 'updatedAt'],
  'product-filters': ['id', 'productId', 'filterId', 'filterName', 'valueId', 'value', 'createdAt', 'updatedAt'],
  orders: [
    'id', 'number', 'status', 'email', 'customerName', ...address('billingAddress'), ...address('shippingAddress'),
    'currency', 'subtotal', 'shippingTotal', 'taxTotal', 'total', 'createdAt', 'updatedAt',
    'items.productId', 'items.articleNumber', 'items.name', 'items.quantity', 'items.unitPrice', 'items.vatRate', 'items.total',
  ],
};

/**
 * The rows an export of these JSON items must have: one per item, or for orders one per order item; a
 * column `a.b` is the property b of the object a (of the order item, for `items.b`).
 */
export function expectedRows(collection: string, items: Item[]): Array<Record<string, unknown>> {
  const columns = EXPECTED_COLUMNS[collection];
  const rowOf = (item: Item, element: Item | undefined) =>
    Object.fromEntries(
      columns.map((c) => {
        const [head, tail] = c.split('.');
        if (tail === undefined) return [c, item[c]];
        const holder = head === 'items' ? element : (item[head] as Item | null);
        return [c, holder ? holder[tail] : null];
      }),
    );
  return items.flatMap((item) => (collection === 'orders' ? (item.items as Item[]).map((el) => rowOf(item, el)) : [rowOf(item, undefined)]));
}

/** What CSV shows for a JSON value: the same text; nothing for null. */
export const csvText = (v: unknown): string => (v === null || v === undefined ? '' : String(v));

export function readCsv(body: Buffer | string, options: { delimiter?: string; bom?: boolean } = {}): string[][] {
  return parse(body, { delimiter: options.delimiter ?? ',', bom: options.bom ?? false, relax_column_count: false }) as string[][];
}

export interface Sheet {
  names: string[];
  rows: unknown[][];
  cells: XLSX.WorkSheet;
  /** Raw XML parts of the package, for what SheetJS does not report (frozen pane, bold font). */
  part(path: string): string;
}

export function readXlsx(body: Buffer): Sheet {
  // Raw serial numbers (not cellDates): the comparison must not depend on the reader's time zone.
  const workbook = XLSX.read(body, { type: 'buffer', cellNF: true, cellStyles: true });
  const cells = workbook.Sheets[workbook.SheetNames[0]];
  const rows = XLSX.utils.sheet_to_json<unknown[]>(cells, { header: 1, raw: true, defval: null });
  const zip = XLSX.CFB.read(body, { type: 'buffer' });
  const part = (path: string) => {
    const entry = XLSX.CFB.find(zip, `/${path}`);
    if (!entry) throw new Error(`no ${path} in the workbook`);
    return Buffer.from(entry.content as Uint8Array).toString('utf8');
  };
  return { names: workbook.SheetNames, rows, cells, part };
}

/** An Excel serial date (1900 system) as milliseconds since 1970. */
export const serialToMs = (serial: number): number => Math.round((serial - 25569) * 86_400_000);
