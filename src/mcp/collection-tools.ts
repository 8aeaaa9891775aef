import { notFound } from '../errors/app-error.ts';
import { getOne, listPage, sortsOf, type ListRequest, type Shape } from '../listing/engine.ts';
import { commonListParameters, itemSchema } from '../listing/schemas.ts';
import { requireIncludeScopes } from '../listing/shape.ts';
import { ID_BOUNDS } from '../resources/bounds.ts';
import type { JsonSchema, Resource } from '../resources/types.ts';
import { snake, type McpTool, type ToolArgs } from './tool.ts';

/** A model reads every row it is given: pages are smaller than the REST API's (1000), and say how to go on. */
export const TOOL_MAX_LIMIT = 100;
export const TOOL_DEFAULT_LIMIT = 20;

const PAGING_HELP =
  'The answer is one page: `data` (the items) and `pagination`. When `pagination.hasMore` is true there are more: call this tool again ' +
  'with `cursor` set to `pagination.nextCursor` (and the same `limit`; the filters and sort travel in the cursor, so leave them out or repeat them ' +
  'unchanged) for the next page, until `hasMore` is false. ' +
  'A cursor is an opaque, signed position that remembers the filters and sort; do not edit or invent one. Nothing is ever cut off silently.';

/** An item as the API answers it: only `id` is sure to be there, since `fields` may leave out the rest. */
function itemOutputSchema(def: Resource): JsonSchema {
  const { $id: _id, ...schema } = itemSchema(def);
  return { ...schema, required: ['id'] };
}

/** `fields` and `include`, the listing's shaping (API.md §3), as arrays whose values are listed for a model. */
function shapeParameters(def: Resource): Record<string, JsonSchema> {
  const includes = Object.entries(def.includes);
  const names = [
    ...def.fields.map((f) => f.name),
    ...Object.keys(def.nested ?? {}),
    ...includes.flatMap(([name, inc]) => inc.target.fields.map((f) => `${name}.${f.name}`)),
  ];
  const parameters: Record<string, JsonSchema> = {
    fields: {
      type: 'array', minItems: 1, maxItems: 200, items: { type: 'string', enum: names },
      description: 'Only these fields of each item (`id` always comes); fewer fields, shorter answers. `<include>.<field>` keeps only that field of an included object.',
    },
  };
  if (includes.length) {
    parameters.include = {
      type: 'array', minItems: 1, items: { type: 'string', enum: includes.map(([name]) => name) },
      description: `Related data embedded in each item: ${includes.map(([name, inc]) => `\`${name}\` (${inc.description.replace(/\.$/, '')}; needs scope \`${inc.target.scope}\`)`).join(', ')}.`,
    };
  }
  return parameters;
}

/** The shape of tool arguments, if they ask for one. */
function shapeOf(args: ToolArgs): Shape | undefined {
  if (args.fields === undefined && args.include === undefined) return undefined;
  return { fields: args.fields as string[] | undefined, include: args.include as string[] | undefined };
}

function pageOutputSchema(def: Resource): JsonSchema & { type: 'object' } {
  return {
    type: 'object',
    required: ['data', 'pagination'],
    properties: {
      data: { type: 'array', items: itemOutputSchema(def) },
      pagination: {
        type: 'object',
        required: ['limit', 'nextCursor', 'hasMore'],
        properties: {
          limit: { type: 'integer' },
          nextCursor: { type: ['string', 'null'], description: 'Pass as `cursor` to get the next page; null on the last page.' },
          hasMore: { type: 'boolean' },
        },
      },
    },
  };
}

/** The arguments of a listing tool: the declaration's filters (with their descriptions), the common ones, and paging. */
function listInputSchema(def: Resource, required: string[] = []): JsonSchema & { type: 'object' } {
  const common = commonListParameters(def);
  const properties: Record<string, JsonSchema> = {};
  for (const f of def.filters) properties[f.name] = { ...f.schema, description: f.description };
  properties.updatedSince = common.updatedSince;
  properties.ids = common.ids;
  properties.sort = { type: 'string', enum: sortsOf(def), description: `Sort order (default ${def.defaultSort}; a leading - is descending); ties are broken by id.` };
  properties.limit = { type: 'integer', minimum: 1, maximum: TOOL_MAX_LIMIT, default: TOOL_DEFAULT_LIMIT, description: `Items per page, 1 to ${TOOL_MAX_LIMIT} (default ${TOOL_DEFAULT_LIMIT}).` };
  properties.cursor = { type: 'string', minLength: 1, description: 'The `pagination.nextCursor` of the previous page, to continue the same listing.' };
  Object.assign(properties, shapeParameters(def));
  return { type: 'object', additionalProperties: false, properties, ...(required.length ? { required } : {}) };
}

const CONTROL = new Set(['limit', 'cursor', 'sort', 'fields', 'include']);

/** Tool arguments as the listing engine's request: everything but paging, sort and shape is a filter, as text (the query string's form). */
export function toListRequest(args: ToolArgs, scopes: ReadonlySet<string>): ListRequest {
  const filters: Record<string, string> = {};
  for (const [name, value] of Object.entries(args)) if (!CONTROL.has(name) && value !== undefined) filters[name] = String(value);
  return { limit: (args.limit as number | undefined) ?? TOOL_DEFAULT_LIMIT, cursor: args.cursor as string | undefined, sort: args.sort as string | undefined, filters, shape: shapeOf(args), scopes };
}

function filterList(def: Resource): string {
  return def.filters.map((f) => `\`${f.name}\` (${f.description.replace(/\.$/, '')})`).join('; ');
}

function listTool(def: Resource): McpTool {
  return {
    name: `list_${snake(def.collection)}`,
    title: `List ${def.collection}`,
    description:
      `${def.description} Lists them a page at a time, in the same shape as GET /api/v2/${def.collection}. ` +
      `Optional filters, combined with AND (a comma list means any of its values): ${filterList(def) || 'none of its own'}; ` +
      '`updatedSince` (changed at or after an instant) and `ids` (a comma list). ' +
      `\`fields\` keeps only some fields of each item${Object.keys(def.includes).length ? '; `include` embeds related data (each needs its own read scope)' : ''}. ` +
      `${PAGING_HELP} Needs scope \`${def.scope}\`.`,
    scope: def.scope,
    inputSchema: listInputSchema(def),
    outputSchema: pageOutputSchema(def),
    readOnly: true,
    call: async (args, env) => listPage(env.store.db, def, toListRequest(args, env.grant.scopes), env.hashKey) as unknown as Promise<Record<string, unknown>>,
  };
}

/** `search_<collection>` for a collection whose declaration has the free-text filter `q`: the listing with `q` required. */
function searchTool(def: Resource): McpTool | undefined {
  const q = def.filters.find((f) => f.name === 'q');
  if (!q) return undefined;
  const list = listTool(def);
  return {
    ...list,
    name: `search_${snake(def.collection)}`,
    title: `Search ${def.collection}`,
    description:
      `Finds ${def.collection} by text: \`q\` is a ${q.description.replace(/\.$/, '').replace(/^./, (c) => c.toLowerCase())}. ` +
      `The other filters of list_${snake(def.collection)} may narrow it further. ${PAGING_HELP} Needs scope \`${def.scope}\`.`,
    inputSchema: listInputSchema(def, ['q']),
  };
}

function getTool(def: Resource): McpTool {
  const what = def.title.toLowerCase();
  return {
    name: `get_${snake(def.event)}`,
    title: `Get one ${what}`,
    description: `One ${what} by its id, as GET /api/v2/${def.collection}/{id} answers it: every field, or only \`fields\`${Object.keys(def.includes).length ? ', with related data by `include`' : ''}. An unknown id is a tool error (not_found). Needs scope \`${def.scope}\`.`,
    scope: def.scope,
    inputSchema: { type: 'object', additionalProperties: false, required: ['id'], properties: { id: { type: 'integer', ...ID_BOUNDS, description: `The ${what}'s id.` }, ...shapeParameters(def) } },
    outputSchema: itemOutputSchema(def) as JsonSchema & { type: 'object' },
    readOnly: true,
    call: async (args, env) => {
      const shape = shapeOf(args);
      requireIncludeScopes(def, shape, env.grant.scopes);
      const item = await getOne(env.store.db, def, args.id as number, shape);
      if (!item) throw notFound(`${def.title} ${String(args.id)}`);
      return item;
    },
  };
}

/** The tools every declared collection gets for free: list_, get_ and (with a `q` filter) search_. */
export function collectionTools(resources: readonly Resource[]): McpTool[] {
  return resources.flatMap((def) => [searchTool(def), listTool(def), getTool(def)].filter((t): t is McpTool => t !== undefined));
}
