import { sql } from 'kysely';
import type { Executor } from '../db/database.ts';
import { firstRows, getOne } from '../listing/engine.ts';
import type { ResourceDef, Row } from '../listing/resource.ts';
import { brands } from '../modules/brands/resource.ts';
import { productFilters } from '../modules/product-filters/resource.ts';
import { productParameters } from '../modules/product-parameters/resource.ts';
import { products } from '../modules/products/resource.ts';

/** Everything the engines may say about a product: the product, its brand, category path, parameters and filter values. */
export interface ProductFacts {
  id: number;
  name: string;
  articleNumber: string;
  description: string | null;
  status: string;
  price: string;
  currency: string;
  vatRate: number;
  stock: number;
  /** Kilograms. */
  weight: number | null;
  ean: string | null;
  url: string | null;
  brand: { name: string; description: string | null } | null;
  /** From the root to the product's own category; empty when it has none. */
  categoryPath: string[];
  parameters: Array<{ name: string; value: string; unit: string | null }>;
  filters: Array<{ name: string; value: string }>;
}

// A product has a handful of parameters; this bounds a pathological one without paging.
const MAX_VALUES = 200;
const MAX_DEPTH = 32;

const str = (v: unknown): string => String(v ?? '');
const optional = (v: unknown): string | null => (v === null || v === undefined || v === '' ? null : String(v));

async function valuesOf(db: Executor, def: ResourceDef, productId: number): Promise<Row[]> {
  return firstRows(db, def, { productId: String(productId) }, MAX_VALUES);
}

/** The names from the root down to the category, in one query (the depth bound also stops a cycle). */
async function categoryPath(db: Executor, id: number | null): Promise<string[]> {
  if (id === null) return [];
  const { rows } = await sql<{ name: string }>`with recursive up(id, parent_id, name, depth) as (
    select id, parent_id, name, 0 from categories where id = ${id}
    union all select c.id, c.parent_id, c.name, up.depth + 1 from categories c join up on c.id = up.parent_id where up.depth < ${MAX_DEPTH}
  ) select name from up order by depth desc`.execute(db);
  return rows.map((r) => r.name);
}

/** Loads a product with what belongs to it, through the same resource definitions the API serves; undefined when there is none. */
export async function loadProductFacts(db: Executor, id: number): Promise<ProductFacts | undefined> {
  const p = await getOne(db, products, id);
  if (!p) return undefined;
  const brandId = p.brandId === null ? null : Number(p.brandId);
  const [brand, path, parameters, filters] = await Promise.all([
    brandId === null ? undefined : getOne(db, brands, brandId),
    categoryPath(db, p.categoryId === null ? null : Number(p.categoryId)),
    valuesOf(db, productParameters, id),
    valuesOf(db, productFilters, id),
  ]);
  return {
    id,
    name: str(p.name),
    articleNumber: str(p.articleNumber),
    description: optional(p.description),
    status: str(p.status),
    price: str(p.price),
    currency: str(p.currency),
    vatRate: Number(p.vatRate),
    stock: Number(p.stock),
    weight: p.weight === null ? null : Number(p.weight),
    ean: optional(p.ean),
    url: optional(p.url),
    brand: brand ? { name: str(brand.name), description: optional(brand.description) } : null,
    categoryPath: path,
    parameters: parameters.map((r) => ({ name: str(r.parameterName), value: str(r.value), unit: optional(r.unit) })),
    filters: filters.map((r) => ({ name: str(r.filterName), value: str(r.value) })),
  };
}
