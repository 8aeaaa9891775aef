import type { CompiledQuery, SelectQueryBuilder } from 'kysely';
import type { Executor } from '../db/database.ts';
import type { NewEvent, WriteContext } from '../events/log.ts';

// The kernel builds SQL from declarations, so its query type cannot know table shapes statically.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type LooseQuery = SelectQueryBuilder<any, any, any>;
export type Row = Record<string, unknown>;
export type JsonSchema = Record<string, unknown>;
/**
 * Runs a compiled query and gives its rows as arrays of values in select order. An export reads its nested
 * values this way (ExportConnection.arrays): for the 249 518 items of 100 000 orders, better-sqlite3 took
 * 0.61 s for arrays against 0.86-0.93 s for an object per row.
 */
export type ReadArrays = (query: CompiledQuery) => Promise<unknown[][]>;

/** A body or an imported record, by API field names. */
export type Input = Record<string, unknown>;

/** The read scope of a collection (`products:read`); the scope catalogue adds `ai:generate` and `changes:read` (auth/scopes.ts). */
export type ReadScope = `${string}:read`;

export type FieldType = 'id' | 'integer' | 'number' | 'string' | 'money' | 'datetime' | 'enum' | 'object' | 'array';

/** How a field is written through the admin API and import. A field without it is read-only. */
export interface FieldWrite {
  /** The input's JSON Schema; a `money` field gets the money input schema when none is given. */
  schema?: JsonSchema;
  /** Required on create. */
  required?: boolean;
  /** Stored on create when the input leaves the field out. Not a schema default: a PATCH must not fill it in. */
  default?: unknown;
  /** False: given on create only; a PATCH cannot carry it (and import refuses to change it). */
  patch?: boolean;
  /** The stored value of a (non-null) input; by default money is normalised and objects and arrays become JSON text. */
  encode?: (value: unknown) => unknown;
}

/** A field as a declaration states it. */
export interface FieldDeclaration {
  /** The API name (camelCase). */
  name: string;
  /** The column of the main table (`article_number`), or `alias.column` of a table the resource's `from` joins (`p.name`). */
  column: string;
  type: FieldType;
  nullable?: boolean;
  values?: readonly string[];
  description?: string;
  /** Schema of an `object` or `array` field. */
  schema?: JsonSchema;
  /**
   * Turns the stored value into the API value. A written `object` or `array` field of the main table that is
   * stored as JSON text (no `write.encode` of its own) is decoded from it without one.
   */
  decode?: (value: unknown) => unknown;
  write?: FieldWrite;
}

/** A field as the kernel serves it. */
export interface Field extends FieldDeclaration {
  /** The SQL column it is selected from, qualified by the alias of `from` (the main table is `t`). */
  column: string;
  /** The main table's column it is stored in; undefined for a column of a joined table (shown, never written here). */
  stored?: string;
  /**
   * Stored as JSON.stringify's text of its value (a written `object` or `array` field of the main table without
   * its own `write.encode` or `decode`), and decoded from it: PostgreSQL's export lines may write or parse the
   * text itself (listing/formats/pg-nested-lines.ts).
   */
  jsonText?: boolean;
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

export const SORT_COLUMNS: Record<SortKey, string> = { id: 't.id', updatedAt: 't.updated_at', createdAt: 't.created_at' };

/**
 * A reference from this resource to a row of another table: a resource's (`brands`) or a lookup table that is
 * no resource (`parameters`). Declared once; the writer's reference checks and delete rules, the cascades
 * and their events, the sync order and the follower's "referenced by" are all derived from it.
 */
export interface Relation {
  /** The API field holding the id (`brandId`). */
  field: string;
  /** The table it points to. */
  table: string;
  /** The referenced row in messages: "brand 7 does not exist". */
  label: string;
  /**
   * `restrict` (the default): the referenced row cannot be deleted while rows point to it (a follower, which
   * may see a state in between, clears the reference instead). `cascade`: this row belongs to the referenced
   * one: it is deleted with it (its deletion recorded), a change of it locks the owner first and is a change
   * of the owner too (`product.updated` for a parameter value).
   */
  onDelete?: 'restrict' | 'cascade';
  /** How the referenced side names these rows when they block its deletion (default: this collection). */
  referencedAs?: string;
}

/**
 * Related data a client may embed with `include=<name>` (products' `brand`, orders' `products`). Loaded for a
 * whole page (or export batch) in one query through the target resource's own declaration, so the embedded
 * objects are exactly what `GET /api/v2/<target>` answers (trimmed by `fields=<name>.<field>`); reading them
 * needs the target's read scope.
 */
export type IncludeDeclaration = {
  /** The resource embedded; its `scope` is what the include needs. */
  target: Resource;
  description: string;
} & (
  /** This item's `field` holds the target's id: an object, or null. */
  | { kind: 'one'; field: string }
  /** The target's field `by` holds this item's id: an array, in id order. */
  | { kind: 'many'; by: string }
  /** A link table (`order_items`) whose `from` column holds this item's id and `to` the target's: an array of distinct targets, in id order. */
  | { kind: 'through'; table: string; from: string; to: string }
);

/** What a unique clash is answered with (a 409 naming the field). */
export interface UniqueClash {
  message: string;
  name: string;
  reason: string;
}

/** Fields unique together (one field, or a pair). */
export interface UniqueDeclaration {
  fields: readonly string[];
  /** The answer to a clash; by default `<field> "<value>" is already used.` naming the first field. */
  clash?(values: Record<string, unknown>, clashingId: number): UniqueClash;
}

export interface Unique extends UniqueDeclaration {
  /** The main table's columns of `fields`, in order. */
  columns: string[];
}

/**
 * How import finds the item a record without `id` stands for: the fields that identify it (each a
 * non-empty text or a positive id in the record), or a function for keys that need a lookup.
 */
export type NaturalKey = readonly string[] | ((w: WriteContext, record: Input) => Promise<number | undefined>);

/**
 * A row of a lookup table that is no resource (a parameter, a filter and its values) named by a mirrored
 * item: a follower derives it, with the main store's id, from the items that name it, and writes it first.
 */
export interface MirrorLookup {
  table: string;
  /** The row the item names (an id below 1 when it names none). */
  of(item: Row, now: string): Row & { id: number };
  /** Columns that tell whether a stored row already matches. */
  compare: string[];
  /** The unique column, alone or together with a scope column: another row holding the value is moved aside. */
  unique: { column: string; scope?: string };
}

/** Resource-specific steps of a write; everything else (checks, row, events) the kernel derives. */
export interface WriteHooks {
  /** Resolves derived inputs (parameterName → parameterId) before references are checked; may refuse the input. */
  prepare?(w: WriteContext, input: Input, existing: Row | undefined): Promise<Input>;
  /** Writes that belong to the same change (order items), after the row itself. */
  afterWrite?(w: WriteContext, id: number, input: Input, existing: Row | undefined): Promise<void>;
  /** Events of a change beyond `<event>.created|updated|deleted` (order.status_changed); types listed in `extraEventTypes`. */
  extraEvents?(w: WriteContext, item: Row, existing: Row | undefined, deleted: boolean): Promise<NewEvent[]>;
}

/** Everything about one collection, declared once in `src/modules/<name>/resource.ts` through `defineResource`. */
export interface ResourceDeclaration extends WriteHooks {
  /** The URL segment under /api/v2 and /admin/api. */
  collection: string;
  /** The resource name of events (`product` in `product.updated`). */
  event: string;
  title: string;
  description: string;
  /** The main table. */
  table: string;
  /** Its read scope; by default `<collection>:read`. */
  scope?: ReadScope;
  /** What the scope grants, in the scope catalogue; by default "Read <collection>". */
  scopeDescription?: string;
  /** The base query with its joins, the main table aliased `t`; by default the main table alone. */
  from?(db: Executor): LooseQuery;
  fields: FieldDeclaration[];
  filters?: Filter[];
  sorts: SortKey[];
  defaultSort: string;
  /**
   * Attaches nested values (order items) to a page of rows, in place. `read` runs its queries when given (an
   * export's connection, whose rows come as arrays without an object per row: see ReadArrays).
   */
  attach?(db: Executor, rows: Row[], read?: ReadArrays): Promise<void>;
  /** Schemas of the properties `attach` adds. */
  nested?: Record<string, JsonSchema>;
  /**
   * Where a `nested` array's elements are stored, by its name: `attach` is derived from it (resources/nested.ts),
   * and PostgreSQL writes export lines holding the elements from it (listing/formats/pg-nested-lines.ts).
   */
  nestedTables?: Readonly<Record<string, NestedTable>>;
  /**
   * A `nested` array whose elements each become one row of a CSV/XLSX export (and of a CSV import), with the
   * item's own columns repeated on each (orders: one row per order item).
   */
  exportRowPer?: string;
  relations?: Relation[];
  /** Related data `include=` embeds, by name (a name that is no field and no `nested` value). */
  includes?: Record<string, IncludeDeclaration>;
  uniques?: UniqueDeclaration[];
  naturalKey?: NaturalKey;
  /** A follower store copies it from its main store (sync). */
  mirror?: boolean;
  /** Lookup rows a mirrored item names, which a follower writes before the item. */
  lookups?: MirrorLookup[];
  /** Inputs that are no field (order items, written by `afterWrite`), and create-time rules over several fields. */
  input?: { extra?: Record<string, { schema: JsonSchema; required?: boolean }>; createAnyOf?: JsonSchema[] };
  /**
   * Stored columns derived from the input (search columns such as `name_lc`, a slug from the name, order
   * totals): the writer stores them, and a follower derives them the same way from a mirrored item.
   */
  derive?(input: Input, existing: Row | undefined): Row;
  /** Event actions besides created/updated/deleted that `extraEvents` records, each with what its `data` is (for the changes feed's documentation). */
  extraEventTypes?: Readonly<Record<string, string>>;
}

/**
 * The rows of a table that hold a `nested` array's elements (order items): those whose `parent` column holds the
 * item's id, in the order of `order`. Each element is an object of `columns`' keys, in their order (which is the
 * order of the element schema's properties: the JSON answer's), each read from its column as it is stored.
 */
export interface NestedTable {
  table: string;
  parent: string;
  order: string;
  columns: Readonly<Record<string, string>>;
}

/** A declaration with everything derived that needs no other resource: what the engines serve. */
export interface Resource extends Omit<ResourceDeclaration, 'fields' | 'uniques' | 'scope' | 'from' | 'filters' | 'relations' | 'includes'> {
  scope: ReadScope;
  scopeDescription: string;
  from(db: Executor): LooseQuery;
  fields: Field[];
  filters: Filter[];
  relations: Relation[];
  includes: Record<string, IncludeDeclaration>;
  uniques: Unique[];
  /** The admin API's POST body and PATCH body; import validates records against the same. */
  createSchema: JsonSchema;
  patchSchema: JsonSchema;
  /** Every event type a write of it records. */
  eventTypes: string[];
  /** The columns to store for an input: all given (and defaults) on create, the given ones on update, derived ones too. */
  toRow(input: Input, existing: Row | undefined): Row;
  /** Every stored column of an item as an API answer shows it (a follower's copy of the main store's row). */
  mirrorRow(item: Row): Row;
}
