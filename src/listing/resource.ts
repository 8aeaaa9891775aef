import type { SelectQueryBuilder } from 'kysely';
import type { Executor } from '../db/database.ts';
import type { Scope } from '../auth/scopes.ts';

// The listing engine builds SQL from declarations, so its query type cannot know table shapes statically.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type LooseQuery = SelectQueryBuilder<any, any, any>;
export type Row = Record<string, unknown>;
export type JsonSchema = Record<string, unknown>;

export type FieldType = 'id' | 'integer' | 'number' | 'string' | 'money' | 'datetime' | 'enum' | 'object' | 'array';

export interface Field {
  /** The API name (camelCase). */
  name: string;
  /** The SQL column it is selected from, qualified by the alias of `from`. */
  column: string;
  type: FieldType;
  nullable?: boolean;
  values?: readonly string[];
  description?: string;
  /** Schema of an `object` or `array` field. */
  schema?: JsonSchema;
  /** Turns the stored value into the API value (e.g. JSON text into an object). */
  decode?: (value: unknown) => unknown;
}

export interface FilterContext {
  db: Executor;
  /** Every filter of the request, raw, for filters whose meaning depends on another. */
  filters: Record<string, string>;
}

export interface Filter {
  /** The query parameter. */
  name: string;
  description: string;
  /** Schema of the raw query value (always a string on the wire). */
  schema: JsonSchema;
  /** Narrows the query; throws an invalid_parameter AppError for a malformed value. May need the database (category subtrees). */
  apply(query: LooseQuery, raw: string, context: FilterContext): LooseQuery | Promise<LooseQuery>;
}

export type SortKey = 'id' | 'updatedAt' | 'createdAt';

/** One readable collection, declared once: the listing engine serves it in every format. */
export interface ResourceDef {
  /** The URL segment under /api/v2 and /admin/api. */
  collection: string;
  /** The resource name of events (`product` in `product.updated`). */
  event: string;
  title: string;
  description: string;
  scope: Scope;
  /** The base query with its joins; the main table is aliased `t`. */
  from(db: Executor): LooseQuery;
  fields: Field[];
  filters: Filter[];
  sorts: SortKey[];
  defaultSort: string;
  /** Attaches nested values (order items) to a page of rows, in place. */
  attach?(db: Executor, rows: Row[]): Promise<void>;
  /** Schemas of the properties `attach` adds. */
  nested?: Record<string, JsonSchema>;
  /**
   * A `nested` array whose elements each become one row of a CSV/XLSX export, with the item's own columns
   * repeated on each (orders: one row per order item).
   */
  exportRowPer?: string;
}

export const SORT_COLUMNS: Record<SortKey, string> = { id: 't.id', updatedAt: 't.updated_at', createdAt: 't.created_at' };
