import { notFound } from '../errors/app-error.ts';
import { filteredQuery, getOne, listPage, MAX_LIMIT, plan } from '../listing/engine.ts';
import { ID_BOUNDS } from '../resources/bounds.ts';
import type { Resource, Row } from '../resources/types.ts';
import type { McpTool, ToolEnv } from './tool.ts';

export const TREE_MAX_DEPTH = 10;
export const TREE_MAX_NODES = 500;
const DEFAULT_DEPTH = 3;
const DEFAULT_NODES = 200;

interface TreeNode {
  id: number;
  name: unknown;
  slug: unknown;
  position: unknown;
  parentId: number | null;
  /** Direct children in the store; more than `children.length` means this node's list is cut (depth or size). */
  childCount: number;
  children: TreeNode[];
}

const nodeOf = (row: Row): TreeNode => ({
  id: Number(row.id),
  name: row.name,
  slug: row.slug,
  position: row.position,
  parentId: row.parentId === null ? null : Number(row.parentId),
  childCount: 0,
  children: [],
});

/** Direct children of each id, counted through the declaration's `parentId` filter (one grouped query per level). */
async function childCounts(env: ToolEnv, def: Resource, ids: number[]): Promise<Map<number, number>> {
  if (ids.length === 0) return new Map();
  const parent = def.fields.find((f) => f.name === 'parentId')!.column;
  const rows = await (await filteredQuery(env.store.db, plan(def, { filters: { parentId: ids.join(',') } }, env.hashKey)))
    .select((eb) => [eb.ref(parent).as('parentId'), eb.fn.countAll<number>().as('n')])
    .groupBy(parent)
    .execute();
  return new Map(rows.map((r) => [Number(r.parentId), Number(r.n)]));
}

/** The children of `ids` (or the roots), at most `limit` of them, in id order; `more`: some were left out. */
async function childrenOf(env: ToolEnv, def: Resource, ids: number[] | 'roots', limit: number): Promise<{ rows: Row[]; more: boolean }> {
  const page = await listPage(env.store.db, def, { limit: Math.min(limit, MAX_LIMIT), filters: { parentId: ids === 'roots' ? 'null' : ids.join(',') } }, env.hashKey);
  return { rows: page.data, more: page.pagination.hasMore };
}

const bySiblingOrder = (a: TreeNode, b: TreeNode) => Number(a.position) - Number(b.position) || a.id - b.id;

/**
 * Walks the category tree breadth first, a level per query, until `maxDepth` levels or `maxNodes` nodes. What
 * it leaves out is never silent: every node says how many children it has (`childCount`) beside those given.
 */
async function buildTree(env: ToolEnv, def: Resource, rootId: number | undefined, maxDepth: number, maxNodes: number) {
  let level: TreeNode[];
  let rootsMore = false;
  if (rootId !== undefined) {
    const root = await getOne(env.store.db, def, rootId);
    if (!root) throw notFound(`Category ${rootId}`);
    level = [nodeOf(root)];
  } else {
    const first = await childrenOf(env, def, 'roots', maxNodes);
    level = first.rows.map(nodeOf);
    rootsMore = first.more;
  }
  const roots = level;
  let count = level.length;
  for (let depth = 1; level.length > 0; depth++) {
    const counts = await childCounts(env, def, level.map((n) => n.id));
    for (const n of level) n.childCount = counts.get(n.id) ?? 0;
    const parents = level.filter((n) => n.childCount > 0);
    if (depth >= maxDepth || count >= maxNodes || parents.length === 0) break;
    const { rows } = await childrenOf(env, def, parents.map((n) => n.id), maxNodes - count);
    const byId = new Map(level.map((n) => [n.id, n]));
    level = rows.map(nodeOf);
    for (const n of level) byId.get(n.parentId!)!.children.push(n);
    count += level.length;
  }
  let truncated = rootsMore;
  const sort = (nodes: TreeNode[]) => {
    nodes.sort(bySiblingOrder);
    for (const n of nodes) {
      if (n.children.length < n.childCount) truncated = true;
      sort(n.children);
    }
  };
  sort(roots);
  return { roots, nodeCount: count, truncated, rootsTruncated: rootsMore };
}

const nodeSchema = {
  type: 'object',
  required: ['id', 'name', 'slug', 'position', 'parentId', 'childCount', 'children'],
  properties: {
    id: { type: 'integer' },
    name: { type: 'string' },
    slug: { type: 'string' },
    position: { type: 'integer', description: 'Order among siblings (children are given in this order).' },
    parentId: { type: ['integer', 'null'] },
    childCount: { type: 'integer', description: 'Direct subcategories in the store. When larger than `children.length`, the rest were left out: call again with `rootId` set to this id.' },
    children: { type: 'array', items: { $ref: '#/$defs/node' } },
  },
};

/** get_category_tree, for a collection declared with a `parentId` field and filter (categories). */
export function categoryTreeTool(def: Resource): McpTool | undefined {
  if (!def.fields.some((f) => f.name === 'parentId') || !def.filters.some((f) => f.name === 'parentId')) return undefined;
  return {
    name: 'get_category_tree',
    title: 'Category tree',
    description:
      'The category hierarchy as nested nodes (id, name, slug, position, parentId, childCount, children), siblings in shop order. ' +
      `Without \`rootId\` from the root categories, with it the subtree of that category. Bounded: at most \`maxDepth\` levels (default ${DEFAULT_DEPTH}, up to ${TREE_MAX_DEPTH}) ` +
      `and \`maxNodes\` nodes (default ${DEFAULT_NODES}, up to ${TREE_MAX_NODES}). Nothing is cut silently: \`truncated\` is true when anything was left out, ` +
      'and a node whose `children` has fewer entries than its `childCount` has more below it; call again with `rootId` set to that node\'s id ' +
      `(\`rootsTruncated\`: not every root category fit; list_categories with \`parentId=null\` pages through them). Needs scope \`${def.scope}\`.`,
    scope: def.scope,
    inputSchema: {
      type: 'object',
      additionalProperties: false,
      properties: {
        rootId: { type: 'integer', ...ID_BOUNDS, description: 'Start from this category (it is the one root of the answer).' },
        maxDepth: { type: 'integer', minimum: 1, maximum: TREE_MAX_DEPTH, default: DEFAULT_DEPTH, description: 'Levels to include; 1 is the roots alone.' },
        maxNodes: { type: 'integer', minimum: 1, maximum: TREE_MAX_NODES, default: DEFAULT_NODES, description: 'Most nodes in the answer.' },
      },
    },
    outputSchema: {
      type: 'object',
      required: ['roots', 'nodeCount', 'truncated', 'rootsTruncated'],
      properties: {
        roots: { type: 'array', items: { $ref: '#/$defs/node' } },
        nodeCount: { type: 'integer' },
        truncated: { type: 'boolean', description: 'Something was left out (a node with childCount above its children, or roots).' },
        rootsTruncated: { type: 'boolean' },
      },
      $defs: { node: nodeSchema },
    },
    readOnly: true,
    call: async (args, env) => buildTree(env, def, args.rootId as number | undefined, args.maxDepth as number, args.maxNodes as number),
  };
}
