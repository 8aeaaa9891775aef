import { notFound } from '../errors/app-error.ts';
import { getOne, listPage } from '../listing/engine.ts';
import { itemSchema } from '../listing/schemas.ts';
import { ID_BOUNDS } from '../resources/bounds.ts';
import type { Registry } from '../resources/registry.ts';
import type { JsonSchema, Resource } from '../resources/types.ts';
import { TOOL_MAX_LIMIT } from './collection-tools.ts';
import { snake, type McpTool } from './tool.ts';

/**
 * `get_<collection>` for each collection whose rows belong to one item of another (a `cascade` relation with a
 * filter of the same name): a product's parameter values, a product's filter values. The owner is checked, so an
 * unknown product is a not_found error rather than an empty list; its values come a page at a time (most fit in one).
 */
function ownedValuesTool(def: Resource, owner: Resource, field: string): McpTool {
  const { $id: _id, ...item } = itemSchema(def);
  const ownerName = owner.title.toLowerCase();
  return {
    name: `get_${snake(def.collection)}`,
    title: `${def.title}s of one ${ownerName}`,
    description:
      `Every ${def.title.toLowerCase()} of one ${ownerName} (${def.description.replace(/\.$/, '')}), by the ${ownerName}'s id; ` +
      `the same items as list_${snake(def.collection)} with \`${field}\`. An unknown ${ownerName} is a tool error (not_found). ` +
      `Up to ${TOOL_MAX_LIMIT} a page: when \`pagination.hasMore\` is true, call again with the same \`${field}\` and \`cursor\` = \`pagination.nextCursor\`. ` +
      `Needs scope \`${def.scope}\`.`,
    scope: def.scope,
    inputSchema: {
      type: 'object',
      additionalProperties: false,
      required: [field],
      properties: {
        [field]: { type: 'integer', ...ID_BOUNDS, description: `The ${ownerName}'s id.` },
        limit: { type: 'integer', minimum: 1, maximum: TOOL_MAX_LIMIT, default: TOOL_MAX_LIMIT, description: `Items per page, 1 to ${TOOL_MAX_LIMIT} (default ${TOOL_MAX_LIMIT}).` },
        cursor: { type: 'string', minLength: 1, description: 'The `pagination.nextCursor` of the previous page.' },
      },
    },
    outputSchema: {
      type: 'object',
      required: ['data', 'pagination'],
      properties: {
        data: { type: 'array', items: item as JsonSchema },
        pagination: {
          type: 'object',
          required: ['limit', 'nextCursor', 'hasMore'],
          properties: { limit: { type: 'integer' }, nextCursor: { type: ['string', 'null'] }, hasMore: { type: 'boolean' } },
        },
      },
    },
    readOnly: true,
    call: async (args, env) => {
      const ownerId = args[field] as number;
      if (!(await getOne(env.store.db, owner, ownerId))) throw notFound(`${owner.title} ${ownerId}`);
      const page = await listPage(env.store.db, def, { limit: args.limit as number, cursor: args.cursor as string | undefined, filters: { [field]: String(ownerId) } }, env.hashKey);
      return page as unknown as Record<string, unknown>;
    },
  };
}

export function ownedValuesTools(resources: Registry): McpTool[] {
  return resources.list.flatMap((def) => {
    const owned = resources.owner(def);
    if (!owned?.resource || !def.filters.some((f) => f.name === owned.relation.field)) return [];
    return [ownedValuesTool(def, owned.resource, owned.relation.field)];
  });
}
