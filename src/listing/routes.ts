import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.ts';
import { notFound } from '../errors/app-error.ts';
import { getOne, listPage, type ListRequest } from './engine.ts';
import { parseBoolean } from './parse.ts';
import type { ResourceDef } from './resource.ts';
import { itemSchemaId, listQuerySchema } from './schemas.ts';
import '../http/types.ts';

const CONTROL = new Set(['limit', 'cursor', 'sort', 'includeTotal', 'format', 'delimiter', 'bom']);

export const errorResponses = (...statuses: number[]) => Object.fromEntries(statuses.map((s) => [s, { $ref: 'Problem#' }]));

export function toListRequest(query: Record<string, unknown>): ListRequest {
  const filters: Record<string, string> = {};
  for (const [k, v] of Object.entries(query)) if (!CONTROL.has(k) && v !== undefined) filters[k] = String(v);
  return {
    limit: query.limit as number | undefined,
    cursor: query.cursor as string | undefined,
    sort: query.sort as string | undefined,
    includeTotal: query.includeTotal !== undefined && parseBoolean('includeTotal', String(query.includeTotal)),
    filters,
  };
}

/** The URL of the next page: the same request with the new cursor (RFC 8288 Link). */
export function nextLink(ctx: AppContext, request: FastifyRequest, cursor: string): string {
  const url = new URL(request.url, ctx.config.publicUrl);
  url.searchParams.set('cursor', cursor);
  return `<${ctx.config.publicUrl}${url.pathname}${url.search}>; rel="next"`;
}

/** GET /api/v2/{collection} and GET /api/v2/{collection}/{id} for one declared resource. */
export function registerResourceRoutes(app: FastifyInstance, ctx: AppContext, def: ResourceDef): void {
  const ref = { $ref: `${itemSchemaId(def)}#` };
  const tags = [def.title.replace(/ value$/, ' values')];

  app.get(`/${def.collection}`, {
    config: { scope: def.scope },
    schema: {
      tags,
      summary: `List ${def.collection}`,
      description: `${def.description} Needs scope \`${def.scope}\`. Keyset-paginated; see \`Link\` and \`pagination.nextCursor\`.`,
      security: [{ oauth2: [def.scope] }],
      querystring: listQuerySchema(def),
      response: {
        200: {
          type: 'object',
          required: ['data', 'pagination'],
          properties: { data: { type: 'array', items: ref }, pagination: { $ref: 'Pagination#' } },
        },
        ...errorResponses(400, 401, 403, 406, 429),
      },
    },
    handler: async (request, reply) => {
      const page = await listPage(ctx.store.db, def, toListRequest(request.query as Record<string, unknown>));
      if (page.pagination.nextCursor) reply.header('link', nextLink(ctx, request, page.pagination.nextCursor));
      return page;
    },
  });

  app.get(`/${def.collection}/:id`, {
    config: { scope: def.scope },
    schema: {
      tags,
      summary: `Get one ${def.title.toLowerCase()}`,
      description: `Needs scope \`${def.scope}\`.`,
      security: [{ oauth2: [def.scope] }],
      params: { type: 'object', required: ['id'], properties: { id: { type: 'integer', minimum: 1, description: 'Positive integer id.' } } },
      response: { 200: ref, ...errorResponses(400, 401, 403, 404, 429) },
    },
    handler: async (request) => {
      const { id } = request.params as { id: number };
      const item = await getOne(ctx.store.db, def, id);
      if (!item) throw notFound(`${def.title} ${id}`);
      return item;
    },
  });
}
