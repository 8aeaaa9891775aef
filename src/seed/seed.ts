import type { Store } from '../db/database.ts';
import { nowIso } from '../db/database.ts';
import { analyzeTables } from '../db/statistics.ts';
import { recordEvents, type NewEvent, type WriteContext } from '../events/log.ts';
import { decodeRows, selectFields } from '../listing/engine.ts';
import { fromCents, includedVat, toCents } from '../money.ts';
import { eventFor } from '../resources/events.ts';
import type { Resource as ResourceDef, Row } from '../resources/types.ts';
import { brands as brandDef } from '../modules/brands/resource.ts';
import { categories as categoryDef } from '../modules/categories/resource.ts';
import { orders as orderDef } from '../modules/orders/resource.ts';
import { productFilters as productFilterDef } from '../modules/product-filters/resource.ts';
import { productParameters as productParameterDef } from '../modules/product-parameters/resource.ts';
import { products as productDef } from '../modules/products/resource.ts';
import { slugify } from '../resources/slug.ts';
import { BRANDS, CATEGORY_TREE, FILTERS, PARAMETERS, type CategorySeed, type Department, type FilterKey, type ParameterKey, type ProductKind } from './catalog.ts';
import { customer } from './customers.ts';
import { makeProduct, type Leaf } from './products.ts';
import { Random } from './random.ts';

export interface SeedOptions {
  products: number;
  orders?: number;
  seed?: number;
  /** Called after each chunk with the rows written so far. */
  onProgress?: (done: number, total: number) => void;
}

export interface SeedResult {
  brands: number;
  categories: number;
  products: number;
  productParameters: number;
  productFilters: number;
  orders: number;
}

const CHUNK = 500;

/** Input the seeder cannot honour; the CLI shows its message as the one-line reason. */
export class SeedError extends Error {}
const DAY = 86_400_000;
/** Shipping in cents: free at home above 2 000 CZK, dearer the farther the parcel goes. */
const SHIPPING: Record<string, bigint> = { CZ: 9_900n, SK: 14_900n };

/** Items as the API shows them, read back through the resource's own query, for the events of a bulk write. */
async function itemsByIds(w: WriteContext, def: ResourceDef, ids: number[]): Promise<Row[]> {
  if (ids.length === 0) return [];
  const rows = (await selectFields(def.from(w.trx), def).where('t.id', 'in', ids).orderBy('t.id').execute()) as Row[];
  decodeRows(def, rows);
  if (def.attach) await def.attach(w.trx, rows);
  return rows;
}

const created = (def: ResourceDef, items: Row[]): NewEvent[] =>
  items.map((data) => eventFor(def, 'created', Number(data.id), data));

async function insertReturningIds(w: WriteContext, table: 'brands' | 'categories' | 'products' | 'product_parameters' | 'product_filters' | 'orders', rows: Record<string, unknown>[]): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < rows.length; i += CHUNK) {
    const out = await w.trx.insertInto(table).values(rows.slice(i, i + CHUNK) as never).returning('id').execute();
    ids.push(...out.map((r) => Number(r.id)));
  }
  return ids;
}

function ean13(rng: Random): string {
  const digits = Array.from({ length: 12 }, (_, i) => (i === 0 ? rng.int(1, 9) : rng.int(0, 9)));
  const sum = digits.reduce((s, d, i) => s + d * (i % 2 ? 3 : 1), 0);
  return digits.join('') + ((10 - (sum % 10)) % 10);
}

const MAKES: Record<Department, string> = { tools: 'tools', garden: 'garden equipment', home: 'household goods', outdoor: 'outdoor gear' };
const departmentsOf = new Map(BRANDS.map((b) => [b.name, b.departments]));

/** The catalogue's leaf categories by name, for a store whose categories exist already. */
function catalogueLeaves(nodes: CategorySeed[], department?: Department, out = new Map<string, { department?: Department; kinds: ProductKind[] }>()) {
  for (const node of nodes) {
    const d = node.department ?? department;
    if (node.kinds) out.set(node.name, { department: d, kinds: node.kinds });
    if (node.children) catalogueLeaves(node.children, d, out);
  }
  return out;
}

/** A category the catalogue does not know gets things of its name, at ordinary prices. */
const genericKind = (name: string): ProductKind => ({ noun: name, price: [99, 4990], weight: [0.2, 5], materials: ['steel', 'plastic'] });

interface Brand {
  id: number;
  name: string;
}

async function ensureBrandsAndCategories(store: Store): Promise<{ brands: Brand[]; leaves: Leaf[]; newBrands: number; newCategories: number }> {
  return store.db.transaction().execute(async (trx) => {
    const w: WriteContext = { trx, dialect: store.dialect, now: nowIso() };
    let brandRows = await trx.selectFrom('brands').select(['id', 'name']).execute();
    let newBrands = 0;
    if (brandRows.length === 0) {
      const ids = await insertReturningIds(w, 'brands', BRANDS.map(({ name, departments }) => ({
        name, name_lc: name.toLowerCase(), slug: slugify(name), description: `${name} makes ${departments.map((d) => MAKES[d]).join(' and ')}.`,
        website: `https://www.${slugify(name).replace(/-/g, '')}.example`, created_at: w.now, updated_at: w.now,
      })));
      await recordEvents(w, created(brandDef, await itemsByIds(w, brandDef, ids)));
      brandRows = await trx.selectFrom('brands').select(['id', 'name']).execute();
      newBrands = ids.length;
    }
    const leaves: Leaf[] = [];
    let newCategories = 0;
    if (!(await trx.selectFrom('categories').select('id').limit(1).executeTakeFirst())) {
      const ids: number[] = [];
      const walk = async (nodes: CategorySeed[], parentId: number | null, prefix: string, department?: Department): Promise<void> => {
        for (const [position, node] of nodes.entries()) {
          const slug = slugify(`${prefix}${node.name}`);
          const [id] = await insertReturningIds(w, 'categories', [{ parent_id: parentId, name: node.name, slug, position, created_at: w.now, updated_at: w.now }]);
          ids.push(id);
          if (node.kinds) leaves.push({ id, department: node.department ?? department, kinds: node.kinds });
          if (node.children) await walk(node.children, id, `${slug}-`, node.department ?? department);
        }
      };
      await walk(CATEGORY_TREE, null, '');
      await recordEvents(w, created(categoryDef, await itemsByIds(w, categoryDef, ids)));
      newCategories = ids.length;
    } else {
      const all = await trx.selectFrom('categories').select(['id', 'name', 'parent_id']).execute();
      const parents = new Set(all.map((c) => Number(c.parent_id)));
      const known = catalogueLeaves(CATEGORY_TREE);
      for (const c of all) {
        if (parents.has(Number(c.id))) continue;
        const leaf = known.get(c.name);
        leaves.push({ id: Number(c.id), department: leaf?.department, kinds: leaf?.kinds ?? [genericKind(c.name)] });
      }
    }
    return { brands: brandRows.map((b) => ({ id: Number(b.id), name: b.name })), leaves, newBrands, newCategories };
  });
}

interface Definitions {
  parameters: Record<ParameterKey, number>;
  filters: Record<FilterKey, { id: number; valueIds: Map<string, number> }>;
}

async function ensureDefinitions(store: Store): Promise<Definitions> {
  return store.db.transaction().execute(async (trx) => {
    const now = nowIso();
    const parameters = {} as Definitions['parameters'];
    for (const [key, p] of Object.entries(PARAMETERS) as Array<[ParameterKey, (typeof PARAMETERS)[ParameterKey]]>) {
      let row = await trx.selectFrom('parameters').select('id').where('name', '=', p.name).executeTakeFirst();
      row ??= await trx.insertInto('parameters').values({ name: p.name, unit: p.unit, created_at: now }).returning('id').executeTakeFirstOrThrow();
      parameters[key] = Number(row.id);
    }
    const filters = {} as Definitions['filters'];
    for (const [key, f] of Object.entries(FILTERS) as Array<[FilterKey, (typeof FILTERS)[FilterKey]]>) {
      let row = await trx.selectFrom('filters').select('id').where('name', '=', f.name).executeTakeFirst();
      row ??= await trx.insertInto('filters').values({ name: f.name, created_at: now }).returning('id').executeTakeFirstOrThrow();
      const valueIds = new Map<string, number>();
      for (const value of f.values) {
        let v = await trx.selectFrom('filter_values').select('id').where('filter_id', '=', Number(row.id)).where('value', '=', value).executeTakeFirst();
        v ??= await trx.insertInto('filter_values').values({ filter_id: Number(row.id), value, created_at: now }).returning('id').executeTakeFirstOrThrow();
        valueIds.set(value, Number(v.id));
      }
      filters[key] = { id: Number(row.id), valueIds };
    }
    return { parameters, filters };
  });
}

/** The brands that make things for a department (any brand when the store's brands are not the catalogue's). */
function brandsFor(brands: Brand[], department: Department | undefined): Brand[] {
  const fitting = brands.filter((b) => department !== undefined && departmentsOf.get(b.name)?.includes(department));
  return fitting.length ? fitting : brands;
}

/** The tables seeding writes. */
const SEEDED_TABLES = ['brands', 'categories', 'parameters', 'filters', 'filter_values', 'products', 'product_parameters', 'product_filters', 'orders', 'order_items', 'events'];

/**
 * Writes a realistic demo store: brands and a category tree (when absent), products with parameter and
 * filter values, and orders. The same seed gives the same data. Every row's creation is recorded in the
 * event log like any other write, so followers and webhooks see seeded data too.
 */
export async function seedStore(store: Store, options: SeedOptions): Promise<SeedResult> {
  const rng = new Random(options.seed ?? 1);
  const orderCount = options.orders ?? 0;
  const total = options.products + orderCount;
  const base = await ensureBrandsAndCategories(store);
  const defs = await ensureDefinitions(store);
  const result: SeedResult = { brands: base.newBrands, categories: base.newCategories, products: 0, productParameters: 0, productFilters: 0, orders: 0 };
  const start = Number((await store.db.selectFrom('products').select((eb) => eb.fn.max('id').as('max')).executeTakeFirst())?.max ?? 0);
  const now = Date.now();
  const productIds: number[] = [];

  for (let offset = 0; offset < options.products; offset += CHUNK) {
    const count = Math.min(CHUNK, options.products - offset);
    await store.db.transaction().execute(async (trx) => {
      const w: WriteContext = { trx, dialect: store.dialect, now: nowIso() };
      const rows = [];
      const made = [];
      for (let i = 0; i < count; i++) {
        const n = start + offset + i + 1;
        const leaf = rng.pick(base.leaves);
        // A few products have no brand (and then no brand in their name).
        const brand = base.brands.length && rng.chance(0.95) ? rng.pick(brandsFor(base.brands, leaf.department)) : undefined;
        const product = makeProduct(rng, leaf, brand?.name);
        made.push(product);
        const articleNumber = `SKU-${String(n).padStart(7, '0')}`;
        const at = new Date(now - rng.int(0, 365) * DAY - rng.int(0, DAY)).toISOString();
        rows.push({
          article_number: articleNumber, article_number_lc: articleNumber.toLowerCase(), name: product.name, name_lc: product.name.toLowerCase(),
          description: product.description,
          status: rng.chance(0.85) ? 'active' : rng.chance(0.5) ? 'draft' : 'archived',
          brand_id: brand?.id ?? null, category_id: leaf.id, ean: rng.chance(0.9) ? ean13(rng) : null,
          // Hardware, garden and household goods all carry the standard Czech VAT rate.
          price: product.price, currency: 'CZK', vat_rate: 21, stock: rng.int(0, 500), weight: product.weight,
          url: `https://shop.example/p/${slugify(product.name)}-${n}`, created_at: at, updated_at: at,
        });
      }
      const ids = await insertReturningIds(w, 'products', rows);
      productIds.push(...ids);
      const params = [];
      const filters = [];
      for (const [k, id] of ids.entries()) {
        const at = rows[k].created_at;
        for (const p of made[k].parameters) params.push({ product_id: id, parameter_id: defs.parameters[p.key], value: p.value, created_at: at, updated_at: at });
        for (const f of made[k].filters) {
          const filter = defs.filters[f.key];
          filters.push({ product_id: id, filter_id: filter.id, value_id: filter.valueIds.get(f.value)!, created_at: at, updated_at: at });
        }
      }
      const paramIds = await insertReturningIds(w, 'product_parameters', params);
      const filterIds = await insertReturningIds(w, 'product_filters', filters);
      await recordEvents(w, [
        ...created(productDef, await itemsByIds(w, productDef, ids)),
        ...created(productParameterDef, await itemsByIds(w, productParameterDef, paramIds)),
        ...created(productFilterDef, await itemsByIds(w, productFilterDef, filterIds)),
      ]);
      result.products += ids.length;
      result.productParameters += paramIds.length;
      result.productFilters += filterIds.length;
    });
    options.onProgress?.(result.products, total);
  }

  if (orderCount > 0 && productIds.length === 0) {
    productIds.push(...(await store.db.selectFrom('products').select('id').orderBy('id').limit(10_000).execute()).map((r) => Number(r.id)));
    if (productIds.length === 0) throw new SeedError('Orders need products to order: seed some with --products, or import them first.');
  }
  const startOrder = Number((await store.db.selectFrom('orders').select((eb) => eb.fn.max('id').as('max')).executeTakeFirst())?.max ?? 0);
  for (let offset = 0; offset < orderCount && productIds.length > 0; offset += CHUNK) {
    const count = Math.min(CHUNK, orderCount - offset);
    await store.db.transaction().execute(async (trx) => {
      const w: WriteContext = { trx, dialect: store.dialect, now: nowIso() };
      const productRows = await trx.selectFrom('products').select(['id', 'article_number', 'name', 'price', 'vat_rate'])
        .where('id', 'in', rng.sample(productIds, Math.min(productIds.length, 200))).execute();
      const orderRows = [];
      const itemSets: Array<Array<{ product_id: number; article_number: string; name: string; quantity: number; unit_price: string; vat_rate: number; total: string }>> = [];
      for (let i = 0; i < count; i++) {
        const { first, last, address } = customer(rng);
        const items = rng.sample(productRows, rng.int(1, 4)).map((p) => {
          const quantity = rng.int(1, 3);
          return { product_id: Number(p.id), article_number: p.article_number, name: p.name, quantity, unit_price: String(p.price), vat_rate: Number(p.vat_rate), total: fromCents(toCents(String(p.price)) * BigInt(quantity)) };
        });
        const subtotal = items.reduce((s, it) => s + toCents(it.total), 0n);
        const tax = items.reduce((s, it) => s + includedVat(toCents(it.total), it.vat_rate), 0n);
        const shipping = address.country === 'CZ' && subtotal > 200_000n ? 0n : (SHIPPING[address.country] ?? 24_900n);
        const at = new Date(now - rng.int(0, 365) * DAY - rng.int(0, DAY)).toISOString();
        const email = `${slugify(first)}.${slugify(last)}${rng.int(1, 999)}@example.com`;
        orderRows.push({
          number: String(2_026_000_000 + startOrder + offset + i + 1), status: rng.pick(['new', 'paid', 'processing', 'shipped', 'delivered', 'delivered', 'delivered', 'cancelled', 'returned']),
          email, email_lc: email.toLowerCase(), customer_name: address.name, billing_address: JSON.stringify(address), shipping_address: rng.chance(0.3) ? null : JSON.stringify(address),
          currency: 'CZK', subtotal: fromCents(subtotal), shipping_total: fromCents(shipping), tax_total: fromCents(tax), total: fromCents(subtotal + shipping), created_at: at, updated_at: at,
        });
        itemSets.push(items);
      }
      const ids = await insertReturningIds(w, 'orders', orderRows);
      const items = ids.flatMap((orderId, k) => itemSets[k].map((it, position) => ({ ...it, order_id: orderId, position })));
      for (let i = 0; i < items.length; i += CHUNK) await trx.insertInto('order_items').values(items.slice(i, i + CHUNK)).execute();
      await recordEvents(w, created(orderDef, await itemsByIds(w, orderDef, ids)));
      result.orders += ids.length;
    });
    options.onProgress?.(result.products + result.orders, total);
  }
  // A seeded store is read at once (the demo, the benchmarks): planned from statistics of what is there.
  await analyzeTables(store.db, store.dialect, SEEDED_TABLES);
  return result;
}
