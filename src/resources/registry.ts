import type { ReadScope, Relation, Resource } from './types.ts';

/** Rows of `resource` that point at another resource's row through `relation`. */
export interface Incoming {
  resource: Resource;
  relation: Relation;
  /** The main table's column of `relation.field`. */
  column: string;
}

/**
 * The resources of one store, and what follows from their relations taken together. The running app reads
 * it from its context (`ctx.resources`), so a test can add a resource of its own without touching the app's.
 */
export interface Registry {
  readonly list: readonly Resource[];
  readonly byCollection: ReadonlyMap<string, Resource>;
  readonly byEvent: ReadonlyMap<string, Resource>;
  readonly byTable: ReadonlyMap<string, Resource>;
  /** The read scope of each collection, with what it grants, in registry order. */
  readonly scopes: ReadonlyArray<{ scope: ReadScope; description: string }>;
  /** Every event type a write records (`<event>.created|updated|deleted`, and the declared extra ones). */
  readonly eventTypes: readonly string[];
  /** The declared extra event types, each with the `.updated` type it comes beside and what its data is. */
  readonly extraEventTypes: ReadonlyArray<{ type: string; beside: string; data: string }>;
  /** Mirrored resources, referenced before referencing: the order a follower writes rows in (deletes in reverse). */
  readonly syncOrder: readonly Resource[];
  /** Rows of other resources (and of this one) that point at a row of `r`, its own first, then in registry order. */
  incoming(r: Resource): Incoming[];
  /** The resource a row of `r` belongs to (its `cascade` relation), if any. */
  owner(r: Resource): { relation: Relation; column: string; resource: Resource | undefined } | undefined;
}

const columnOf = (r: Resource, field: string): string => r.fields.find((f) => f.name === field)!.stored!;

function unique<T>(list: readonly Resource[], key: (r: Resource) => T, what: string): Map<T, Resource> {
  const map = new Map<T, Resource>();
  for (const r of list) {
    if (map.has(key(r))) throw new Error(`two resources have the ${what} ${String(key(r))}`);
    map.set(key(r), r);
  }
  return map;
}

/** Mirrored resources in dependency order (depth first, in declaration order), refusing cycles other than a resource's own. */
function syncOrderOf(list: readonly Resource[], byTable: ReadonlyMap<string, Resource>): Resource[] {
  const order: Resource[] = [];
  const visiting = new Set<Resource>();
  const visit = (r: Resource, path: string[]) => {
    if (order.includes(r)) return;
    if (visiting.has(r)) throw new Error(`the relations of ${[...path, r.collection].join(' → ')} form a cycle; a follower could not order their rows`);
    visiting.add(r);
    for (const rel of r.relations) {
      const target = byTable.get(rel.table);
      if (!target || target === r) continue;
      if (!target.mirror) throw new Error(`${r.collection} is mirrored but refers to ${target.collection}, which is not`);
      visit(target, [...path, r.collection]);
    }
    visiting.delete(r);
    order.push(r);
  };
  for (const r of list) if (r.mirror) visit(r, []);
  return order;
}

/** The registry of the given resources; refuses two resources with the same collection, event, table or scope. */
export function createRegistry(list: readonly Resource[]): Registry {
  const byCollection = unique(list, (r) => r.collection, 'collection');
  const byEvent = unique(list, (r) => r.event, 'event name');
  const byTable = unique(list, (r) => r.table, 'table');
  unique(list, (r) => r.scope, 'scope');
  const incoming = new Map<Resource, Incoming[]>(list.map((r) => [r, []]));
  for (const from of list) {
    for (const relation of from.relations) {
      const target = byTable.get(relation.table);
      if (target) incoming.get(target)!.push({ resource: from, relation, column: columnOf(from, relation.field) });
    }
  }
  // A resource's own rows first (subcategories before the products of a category), as a person would check.
  for (const [r, links] of incoming) links.sort((a, b) => Number(b.resource === r) - Number(a.resource === r));
  return {
    list,
    byCollection,
    byEvent,
    byTable,
    scopes: list.map((r) => ({ scope: r.scope, description: r.scopeDescription })),
    eventTypes: list.flatMap((r) => r.eventTypes),
    extraEventTypes: list.flatMap((r) => Object.entries(r.extraEventTypes ?? {}).map(([action, data]) => ({ type: `${r.event}.${action}`, beside: `${r.event}.updated`, data }))),
    syncOrder: syncOrderOf(list, byTable),
    incoming: (r) => incoming.get(r) ?? [],
    owner: (r) => {
      const relation = r.relations.find((rel) => rel.onDelete === 'cascade');
      return relation && { relation, column: columnOf(r, relation.field), resource: byTable.get(relation.table) };
    },
  };
}
