import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import type { AppContext } from '../context.ts';
import { notFound } from '../errors/app-error.ts';
import { nextLink } from '../http/links.ts';
import { errorResponses } from '../http/responses.ts';
import { ID_BOUNDS } from '../modules/common-fields.ts';
import { filteredQuery, getItem, pageOf, plan, type ListRequest } from './engine.ts';
import { listResponseContent, exportColumnsTable } from './formats/docs.ts';
import { chooseFormat, FORMATS } from './formats/negotiate.ts';
import { csvOptionsOf } from './formats/locale.ts';
import { contentDisposition, exportAll, exportPage, type ExportOptions } from './formats/send.ts';
import { parseBoolean } from './parse.ts';
import { parseShape, requireIncludeScopes } from './shape.ts';
import type { ResourceDef } from './resource.ts';
import { itemQuerySchema, itemSchemaId, listQuerySchema } from './schemas.ts';
import '../http/types.ts';

const CONTROL = new Set(['limit', 'cursor', 'sort', 'includeTotal', 'format', 'delimiter', 'bom', 'escapeFormulas', 'decimal', 'locale', 'fields', 'include']);

function toListRequest(query: Record<string, unknown>): ListRequest {
  const filters: Record<string, string> = {};
  for (const [k, v] of Object.entries(query)) if (!CONTROL.has(k) && v !== undefined) filters[k] = String(v);
  return {
    limit: query.limit as number | undefined,
    cursor: query.cursor as string | undefined,
    sort: query.sort as string | undefined,
    includeTotal: query.includeTotal !== undefined && parseBoolean('includeTotal', String(query.includeTotal)),
    filters,
    shape: parseShape(query.fields as string | undefined, query.include as string | undefined),
  };
}

/** GET /api/v2/{collection} and GET /api/v2/{collection}/{id} for one declared resource. */
function collectionRoutes(app: FastifyInstance, ctx: AppContext, def: ResourceDef): void {
  const ref = { $ref: `${itemSchemaId(def)}#` };
  const tags = [def.title.replace(/ value$/, ' values')];

  app.get<{ Querystring: Record<string, unknown> }>(`/${def.collection}`, {
    config: { scope: def.scope },
    // Every answer of a negotiated resource says that it depends on Accept, errors included (caches must not mix them).
    onSend: async (_request, reply) => {
      reply.header('vary', 'Accept');
    },
    schema: {
      tags,
      summary: `List ${def.collection}`,
      description:
        `${def.description} Needs scope \`${def.scope}\`. Keyset-paginated; see \`Link\` and \`pagination.nextCursor\`.\n\n` +
        'Answers in JSON, NDJSON, CSV or XLSX (`format=` or `Accept`). Without `limit` or `cursor`, NDJSON, CSV and XLSX stream every matching ' +
        'row; with them they page like JSON and carry `Link`. `includeTotal=true` adds `X-Total-Count`. Whole exports run a few at a ' +
        'time per credential (`429`) and per node (`503`), both with `Retry-After`; one whose client takes no bytes for a minute (by default) is cut off.\n\n' +
        exportColumnsTable(def),
      security: [{ oauth2: [def.scope] }],
      querystring: listQuerySchema(def),
      response: {
        200: {
          description: 'The page (JSON), or the rows as a CSV or XLSX attachment.',
          content: listResponseContent(def, {
            type: 'object',
            required: ['data', 'pagination'],
            properties: { data: { type: 'array', items: ref }, pagination: { $ref: 'Pagination#' } },
          }),
        },
        ...errorResponses(400, 401, 403, 406, 429, 503),
      },
    },
    handler: async (request, reply) => {
      const query = request.query;
      const format = chooseFormat(query.format as string | undefined, request.headers.accept);
      const listRequest: ListRequest = { ...toListRequest(query), scopes: request.grant?.scopes };
      const listPlan = plan(def, listRequest, ctx.hashKey);
      // Every include (asked, or carried by the cursor) needs its own read scope, before any work.
      requireIncludeScopes(def, listPlan.shape.asked, request.grant?.scopes ?? new Set());
      if (format === 'json') {
        const page = await pageOf(ctx.store.db, listPlan, listRequest, ctx.hashKey);
        if (page.pagination.nextCursor) reply.header('link', nextLink(ctx.config.publicUrl, request.url, { cursor: page.pagination.nextCursor }));
        // A shaped page lacks properties the item schema requires: it is written as it is (it holds only what was selected).
        if (listPlan.shape.asked) reply.serializer(JSON.stringify);
        return reply.type(FORMATS.json.contentType).send(page);
      }
      const options: ExportOptions = {
        format,
        csv: csvOptionsOf(query),
        log: request.log,
        limits: ctx.config.exports,
        owner: String(request.grant?.credentialId ?? request.ip),
        response: reply.raw,
      };
      reply.type(FORMATS[format].contentType).header('content-disposition', contentDisposition(def, format));
      if (request.method === 'HEAD') {
        // The headers of the export, its parameters checked, without reading (and throwing away) every row.
        await filteredQuery(ctx.store.db, listPlan);
        return reply.send('');
      }
      if (listRequest.limit !== undefined || listRequest.cursor !== undefined) {
        const page = await pageOf(ctx.store.db, listPlan, listRequest, ctx.hashKey);
        if (page.pagination.nextCursor) reply.header('link', nextLink(ctx.config.publicUrl, request.url, { cursor: page.pagination.nextCursor }));
        if (page.pagination.total !== undefined) reply.header('x-total-count', String(page.pagination.total));
        return reply.send(exportPage(listPlan, page, options));
      }
      const { stream, total } = await exportAll(ctx.store, def, listPlan, Boolean(listRequest.includeTotal), `store-api export ${request.id}`, options);
      if (total !== undefined) reply.header('x-total-count', String(total));
      return reply.send(stream);
    },
  });

  app.get<{ Params: { id: number }; Querystring: { fields?: string; include?: string } }>(`/${def.collection}/:id`, {
    config: { scope: def.scope },
    schema: {
      tags,
      summary: `Get one ${def.title.toLowerCase()}`,
      description: `Needs scope \`${def.scope}\`. JSON only (CSV and XLSX are for listings): an \`Accept\` that excludes \`application/json\` gets \`406\`.`,
      security: [{ oauth2: [def.scope] }],
      params: { type: 'object', required: ['id'], properties: { id: { type: 'integer', ...ID_BOUNDS, description: 'Positive integer id.' } } },
      querystring: itemQuerySchema(def),
      response: { 200: ref, ...errorResponses(400, 401, 403, 404, 406, 429) },
    },
    onSend: async (_request, reply) => {
      reply.header('vary', 'Accept');
    },
    handler: async (request, reply) => {
      chooseFormat(undefined, request.headers.accept, ['json']);
      const { id } = request.params;
      const shape = parseShape(request.query.fields, request.query.include);
      requireIncludeScopes(def, shape, request.grant?.scopes ?? new Set());
      const found = await getItem(ctx.store.db, def, id, shape);
      if (!found) throw notFound(`${def.title} ${id}`);
      // For conditional requests (If-Modified-Since), even when `fields` leaves updatedAt out.
      if (found.updatedAt) reply.header('last-modified', new Date(found.updatedAt).toUTCString());
      if (shape) reply.type(FORMATS.json.contentType).serializer(JSON.stringify);
      return found.item;
    },
  });
}

/** The listing and single-item routes of every resource of the registry (under /api/v2, behind the bearer guard). */
export const resourceRoutes: FastifyPluginAsync<{ ctx: AppContext }> = async (app, { ctx }) => {
  for (const def of ctx.resources.list) collectionRoutes(app, ctx, def);
};
