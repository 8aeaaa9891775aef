import { appRegistry } from '../modules/registry.ts';
import type { Registry } from '../resources/registry.ts';
import type { Resource, Row } from '../resources/types.ts';

/**
 * How one followed collection is copied: item → row with the main store's id, and what the follower must
 * look after so that a row can always be written, whatever order the main store's states arrive in. All of
 * it derived from the resource's declaration (fields, derived columns, relations, uniques) and the registry.
 */
export interface Mirror {
  def: Resource;
  table: string;
  /** Every column of the row, from the item as the main store's API shows it (derived columns included). */
  toRow(item: Row): Row;
  /** Unique text columns: another row holding the value is moved aside until its own later change arrives. */
  uniqueText: string[];
  /** Column pairs unique together: a leaf row holding the pair is removed; its own later change brings it back. */
  uniquePairs: Array<[string, string]>;
  /** References that must exist: an item whose reference is missing is a state from before a change still to come, and waits for it. */
  requires: Array<{ column: string; table: string }>;
  /** Rows of other collections that point here: removed with the row (values of a product) or cleared (a brand of products). */
  referencedBy: Array<{ collection: string; column: string; action: 'delete' | 'clear' }>;
}

/** The followed collections of a registry: what a follower copies, in the order rows can be written (referenced before referencing). */
export interface Mirrors {
  list: Mirror[];
  byCollection: ReadonlyMap<string, Mirror>;
  byEvent: ReadonlyMap<string, Mirror>;
  /** The read scopes a follower's credential needs on the main store. */
  requiredScopes: string[];
  collections: string[];
}

function mirrorOf(registry: Registry, r: Resource): Mirror {
  const mirrored = new Set(registry.syncOrder.map((m) => m.table));
  return {
    def: r,
    table: r.table,
    toRow: (item) => r.mirrorRow(item),
    uniqueText: r.uniques.filter((u) => u.columns.length === 1).map((u) => u.columns[0]),
    uniquePairs: r.uniques.filter((u) => u.columns.length === 2).map((u) => [u.columns[0], u.columns[1]]),
    requires: r.relations.filter((rel) => mirrored.has(rel.table)).map((rel) => ({ column: r.fields.find((f) => f.name === rel.field)!.stored!, table: rel.table })),
    referencedBy: registry.incoming(r).filter((link) => link.resource.mirror).map((link) => ({
      collection: link.resource.collection,
      column: link.column,
      // Rows that belong to this one go with it; a state in between may still point at a row the main store refuses to delete: cleared.
      action: link.relation.onDelete === 'cascade' ? 'delete' : 'clear',
    })),
  };
}

const cache = new WeakMap<Registry, Mirrors>();

export function mirrorsOf(registry: Registry): Mirrors {
  let mirrors = cache.get(registry);
  if (!mirrors) {
    const list = registry.syncOrder.map((r) => mirrorOf(registry, r));
    mirrors = {
      list,
      byCollection: new Map(list.map((m) => [m.def.collection, m])),
      byEvent: new Map(list.map((m) => [m.def.event, m])),
      requiredScopes: ['changes:read', ...list.map((m) => m.def.scope)],
      collections: list.map((m) => m.def.collection),
    };
    cache.set(registry, mirrors);
  }
  return mirrors;
}

/** The store's own followed collections (the CLI's help, the status). */
export const FOLLOWED_COLLECTIONS = mirrorsOf(appRegistry()).collections;
/** The read scopes a follower of this store's own resources needs on the main store. */
export const REQUIRED_SCOPES = mirrorsOf(appRegistry()).requiredScopes;
