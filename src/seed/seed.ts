import type { Store } from '../db/database.ts';
import { nowIso } from '../db/database.ts';
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
import { ADJECTIVES, BRANDS, CATEGORY_TREE, CITIES, FILTERS, FIRST_NAMES, LAST_NAMES, PARAMETERS, SENTENCES, type CategorySeed } from './catalog.ts';
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

interface Leaf {
  id: number;
  nouns: string[];
}

async function ensureBrandsAndCategories(store: Store): Promise<{ brandIds: number[]; brandNames: Map<number, string>; leaves: Leaf[]; brands: number; categories: number }> {
  return store.db.transaction().execute(async (trx) => {
    const w: WriteContext = { trx, dialect: store.dialect, now: nowIso() };
    let brandRows = await trx.selectFrom('brands').select(['id', 'name']).execute();
    let newBrands = 0;
    if (brandRows.length === 0) {
      const ids = await insertReturningIds(w, 'brands', BRANDS.map((name) => ({
        name, name_lc: name.toLowerCase(), slug: slugify(name), description: `${name} makes tools and equipment for home and trade.`,
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
      const walk = async (nodes: CategorySeed[], parentId: number | null, prefix: string): Promise<void> => {
        for (const [position, node] of nodes.entries()) {
          const slug = slugify(`${prefix}${node.name}`);
          const [id] = await insertReturningIds(w, 'categories', [{ parent_id: parentId, name: node.name, slug, position, created_at: w.now, updated_at: w.now }]);
          ids.push(id);
          if (node.nouns) leaves.push({ id, nouns: node.nouns });
          if (node.children) await walk(node.children, id, `${slug}-`);
        }
      };
      await walk(CATEGORY_TREE, null, '');
      await recordEvents(w, created(categoryDef, await itemsByIds(w, categoryDef, ids)));
      newCategories = ids.length;
    } else {
      const all = await trx.selectFrom('categories').select(['id', 'name', 'parent_id']).execute();
      const parents = new Set(all.map((c) => Number(c.parent_id)));
      for (const c of all) if (!parents.has(Number(c.id))) leaves.push({ id: Number(c.id), nouns: [c.name] });
    }
    return {
      brandIds: brandRows.map((b) => Number(b.id)), brandNames: new Map(brandRows.map((b) => [Number(b.id), b.name])), leaves,
      brands: newBrands, categories: newCategories,
    };
  });
}

async function ensureDefinitions(store: Store): Promise<{ parameters: Array<{ id: number; values: string[] }>; filters: Array<{ id: number; valueIds: number[] }> }> {
  return store.db.transaction().execute(async (trx) => {
    const now = nowIso();
    const parameters = [];
    for (const p of PARAMETERS) {
      let row = await trx.selectFrom('parameters').select('id').where('name', '=', p.name).executeTakeFirst();
      row ??= await trx.insertInto('parameters').values({ name: p.name, unit: p.unit, created_at: now }).returning('id').executeTakeFirstOrThrow();
      parameters.push({ id: Number(row.id), values: p.values() });
    }
    const filters = [];
    for (const f of FILTERS) {
      let row = await trx.selectFrom('filters').select('id').where('name', '=', f.name).executeTakeFirst();
      row ??= await trx.insertInto('filters').values({ name: f.name, created_at: now }).returning('id').executeTakeFirstOrThrow();
      const valueIds = [];
      for (const value of f.values) {
        let v = await trx.selectFrom('filter_values').select('id').where('filter_id', '=', Number(row.id)).where('value', '=', value).executeTakeFirst();
        v ??= await trx.insertInto('filter_values').values({ filter_id: Number(row.id), value, created_at: now }).returning('id').executeTakeFirstOrThrow();
        valueIds.push(Number(v.id));
      }
      filters.push({ id: Number(row.id), valueIds });
    }
    return { parameters, filters };
  });
}

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
  const result: SeedResult = { brands: base.brands, categories: base.categories, products: 0, productParameters: 0, productFilters: 0, orders: 0 };
  const start = Number((await store.db.selectFrom('products').select((eb) => eb.fn.max('id').as('max')).executeTakeFirst())?.max ?? 0);
  const now = Date.now();
  const productIds: number[] = [];

  for (let offset = 0; offset < options.products; offset += CHUNK) {
    const count = Math.min(CHUNK, options.products - offset);
    await store.db.transaction().execute(async (trx) => {
      const w: WriteContext = { trx, dialect: store.dialect, now: nowIso() };
      const rows = [];
      for (let i = 0; i < count; i++) {
        const n = start + offset + i + 1;
        const leaf = rng.pick(base.leaves);
        const brandId = rng.pick(base.brandIds);
        const noun = rng.pick(leaf.nouns);
        const name = `${base.brandNames.get(brandId)} ${rng.pick(ADJECTIVES)} ${noun} ${String.fromCharCode(65 + rng.int(0, 25))}${rng.int(10, 990)}`;
        const articleNumber = `SKU-${String(n).padStart(7, '0')}`;
        const at = new Date(now - rng.int(0, 365) * DAY - rng.int(0, DAY)).toISOString();
        rows.push({
          article_number: articleNumber, article_number_lc: articleNumber.toLowerCase(), name, name_lc: name.toLowerCase(),
          description: `${name}. ${rng.sample(SENTENCES, rng.int(2, 4)).join(' ')}`,
          status: rng.chance(0.85) ? 'active' : rng.chance(0.5) ? 'draft' : 'archived',
          brand_id: rng.chance(0.95) ? brandId : null, category_id: leaf.id, ean: rng.chance(0.9) ? ean13(rng) : null,
          price: fromCents(BigInt(rng.int(99, 49_999) * 100 + (rng.chance(0.5) ? 0 : 90))), currency: 'CZK',
          vat_rate: rng.chance(0.9) ? 21 : 12, stock: rng.int(0, 500), weight: Math.round(rng.next() * 2000) / 100,
          url: `https://shop.example/p/${slugify(name)}-${n}`, created_at: at, updated_at: at,
        });
      }
      const ids = await insertReturningIds(w, 'products', rows);
      productIds.push(...ids);
      const params = [];
      const filters = [];
      for (const [k, id] of ids.entries()) {
        const at = rows[k].created_at;
        for (const p of rng.sample(defs.parameters, rng.int(3, 6))) params.push({ product_id: id, parameter_id: p.id, value: rng.pick(p.values), created_at: at, updated_at: at });
        for (const f of rng.sample(defs.filters, rng.int(2, 3))) filters.push({ product_id: id, filter_id: f.id, value_id: rng.pick(f.valueIds), created_at: at, updated_at: at });
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
        const first = rng.pick(FIRST_NAMES);
        const last = rng.pick(LAST_NAMES);
        const place = rng.pick(CITIES);
        const address = { name: `${first} ${last}`, company: rng.chance(0.2) ? `${last} s.r.o.` : null, street: `${place.street} ${rng.int(1, 180)}`, city: place.city, postalCode: place.postalCode, country: place.country, phone: rng.chance(0.7) ? `+420 ${rng.int(600, 799)} ${rng.int(100, 999)} ${rng.int(100, 999)}` : null };
        const items = rng.sample(productRows, rng.int(1, 4)).map((p) => {
          const quantity = rng.int(1, 3);
          return { product_id: Number(p.id), article_number: p.article_number, name: p.name, quantity, unit_price: String(p.price), vat_rate: Number(p.vat_rate), total: fromCents(toCents(String(p.price)) * BigInt(quantity)) };
        });
        const subtotal = items.reduce((s, it) => s + toCents(it.total), 0n);
        const tax = items.reduce((s, it) => s + includedVat(toCents(it.total), it.vat_rate), 0n);
        const shipping = subtotal > 200_000n ? 0n : 9_900n;
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
  return result;
}
