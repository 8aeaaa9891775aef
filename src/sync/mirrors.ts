import type { ResourceDef, Row } from '../listing/resource.ts';
import { brands } from '../modules/brands/resource.ts';
import { categories } from '../modules/categories/resource.ts';
import { brandWriter } from '../modules/brands/writer.ts';
import { productFilters } from '../modules/product-filters/resource.ts';
import { productParameters } from '../modules/product-parameters/resource.ts';
import { products } from '../modules/products/resource.ts';
import { productRow } from '../modules/products/writer.ts';

export type MirrorTable = 'brands' | 'categories' | 'products' | 'product_parameters' | 'product_filters';
export type RefTable = MirrorTable | 'parameters' | 'filters' | 'filter_values';

/**
 * How one followed collection is copied: item → row with the main store's id, and what the follower must
 * look after so that a row can always be written, whatever order the main store's states arrive in.
 */
export interface Mirror {
  def: ResourceDef;
  table: MirrorTable;
  /** Every column of the row, from the item as the main store's API shows it. */
  toRow(item: Row): Record<string, unknown>;
  /** Unique text columns: another row holding the value is moved aside until its own later change arrives. */
  uniqueText: string[];
  /** Column pairs unique together: a leaf row holding the pair is removed; its own later change brings it back. */
  uniquePairs: Array<[string, string]>;
  /** References that must exist: an item whose reference is missing is a state from before a change still to come, and waits for it. */
  requires: Array<{ column: string; table: RefTable }>;
  /** Rows of other collections that point here: removed with the row (values of a product) or cleared (a brand of products). */
  referencedBy: Array<{ collection: string; column: string; action: 'delete' | 'clear' }>;
}

const str = (v: unknown): string => String(v);
const nullable = (v: unknown): unknown => (v === undefined ? null : v);
const stamps = (item: Row) => ({ created_at: str(item.createdAt), updated_at: str(item.updatedAt) });

export const brandMirror: Mirror = {
  def: brands,
  table: 'brands',
  // The writers derive the stored search columns (name_lc, …); a mirrored row must get exactly the same ones.
  toRow: (i) => ({ ...brandWriter.toRow(i, undefined), ...stamps(i) }),
  uniqueText: ['slug'],
  uniquePairs: [],
  requires: [],
  referencedBy: [{ collection: 'products', column: 'brand_id', action: 'clear' }],
};

export const categoryMirror: Mirror = {
  def: categories,
  table: 'categories',
  toRow: (i) => ({ parent_id: nullable(i.parentId), name: str(i.name), slug: str(i.slug), position: Number(i.position ?? 0), ...stamps(i) }),
  uniqueText: ['slug'],
  uniquePairs: [],
  requires: [{ column: 'parent_id', table: 'categories' }],
  referencedBy: [
    { collection: 'categories', column: 'parent_id', action: 'clear' },
    { collection: 'products', column: 'category_id', action: 'clear' },
  ],
};

export const productMirror: Mirror = {
  def: products,
  table: 'products',
  toRow: (i) => ({ ...productRow(i, undefined), ...stamps(i) }),
  uniqueText: ['article_number'],
  uniquePairs: [],
  requires: [
    { column: 'brand_id', table: 'brands' },
    { column: 'category_id', table: 'categories' },
  ],
  referencedBy: [
    { collection: 'product-parameters', column: 'product_id', action: 'delete' },
    { collection: 'product-filters', column: 'product_id', action: 'delete' },
  ],
};

export const productParameterMirror: Mirror = {
  def: productParameters,
  table: 'product_parameters',
  toRow: (i) => ({ product_id: Number(i.productId), parameter_id: Number(i.parameterId), value: str(i.value), ...stamps(i) }),
  uniqueText: [],
  uniquePairs: [['product_id', 'parameter_id']],
  requires: [{ column: 'product_id', table: 'products' }],
  referencedBy: [],
};

export const productFilterMirror: Mirror = {
  def: productFilters,
  table: 'product_filters',
  toRow: (i) => ({ product_id: Number(i.productId), filter_id: Number(i.filterId), value_id: Number(i.valueId), ...stamps(i) }),
  uniqueText: [],
  uniquePairs: [['product_id', 'value_id']],
  requires: [{ column: 'product_id', table: 'products' }],
  referencedBy: [],
};

/** Followed collections in the order their rows can be written (referenced before referencing). Orders are never followed. */
export const MIRRORS: Mirror[] = [brandMirror, categoryMirror, productMirror, productParameterMirror, productFilterMirror];
export const FOLLOWED_COLLECTIONS = MIRRORS.map((m) => m.def.collection);
export const mirrorByCollection = new Map(MIRRORS.map((m) => [m.def.collection, m]));
export const mirrorByEvent = new Map(MIRRORS.map((m) => [m.def.event, m]));

/** The read scopes a follower's credential needs on the main store. */
export const REQUIRED_SCOPES = ['changes:read', ...MIRRORS.map((m) => m.def.scope)];
