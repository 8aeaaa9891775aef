import type { FastifyReply, FastifyRequest } from 'fastify';
import { givingBack } from '../buffer-recycler.ts';
import type { AppContext } from '../context.ts';
import { notFound } from '../errors/app-error.ts';
import { codingOf } from '../http/compression.ts';
import { nextLink } from '../http/links.ts';
import { filteredQuery, getItem, pageOf, plan, type ListRequest } from './engine.ts';
import { csvOptionsOf } from './formats/locale.ts';
import { chooseFormat, FORMATS, type Format } from './formats/negotiate.ts';
import { contentDisposition, exportAll, exportPage, type ExportOptions } from './formats/send.ts';
import { parseBoolean } from './parse.ts';
import type { ResourceDef } from './resource.ts';
import { parseShape, requireIncludeScopes } from './shape.ts';
import '../http/types.ts';

type ListingRequest = FastifyRequest<{ Querystring: Record<string, unknown> }>;
type ItemRequest = FastifyRequest<{ Params: { id: number }; Querystring: { fields?: string; include?: string } }>;

/** Query parameters that are no filter. */
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

/**
 * Serves a listing in the negotiated format among `offered`: `GET /api/v2/{collection}` (every format) and
 * `GET /api/v2/{collection}/export` (the streamed ones) run exactly this.
 */
export function listingHandler(ctx: AppContext, def: ResourceDef, offered?: readonly Format[]) {
  return async (request: ListingRequest, reply: FastifyReply) => {
    const query = request.query;
    const format = chooseFormat(query.format as string | undefined, request.headers.accept, offered);
    const scopes = request.grant?.scopes ?? new Set<string>();
    const listRequest: ListRequest = { ...toListRequest(query), scopes };
    const listPlan = plan(def, listRequest, ctx.hashKey);
    // Every include (asked, or carried by the cursor) needs its own read scope, before any work.
    requireIncludeScopes(def, listPlan.shape.asked, scopes);
    if (format === 'json') {
      const page = await pageOf(ctx.store.db, listPlan, listRequest, ctx.hashKey);
      if (page.pagination.nextCursor) reply.header('link', nextLink(ctx.config.publicUrl, request.url, { cursor: page.pagination.nextCursor }));
      // Written by JSON.stringify, not the route's schema serializer: the rows hold exactly the selected fields,
      // and for a 100-row page JSON.stringify takes half the CPU and makes one flat string (the serializer's
      // concatenated one is flattened again by the ETag's hash and the socket write). A string with a JSON
      // content type goes out as it is.
      return reply.type(FORMATS.json.contentType).send(JSON.stringify(page));
    }
    const options: ExportOptions = {
      format,
      csv: csvOptionsOf(query),
      log: request.log,
      limits: ctx.config.exports,
      owner: String(request.grant?.credentialId ?? request.ip),
      response: reply.raw,
      // The compressor's own decision (a stream's size is not known: it is compressed whatever its size).
      compressed: codingOf(request, FORMATS[format].contentType, Infinity) !== undefined,
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
    // Uncompressed, the export's buffers go to the socket as they are: it gives each back once written (export.ts, `exportBytes`).
    if (!options.compressed) givingBack(reply.raw);
    return reply.send(stream);
  };
}

/** Serves one item (JSON only) in its shape, with `Last-Modified`. */
export function itemHandler(ctx: AppContext, def: ResourceDef) {
  return async (request: ItemRequest, reply: FastifyReply) => {
    chooseFormat(undefined, request.headers.accept, ['json']);
    const { id } = request.params;
    const shape = parseShape(request.query.fields, request.query.include);
    requireIncludeScopes(def, shape, request.grant?.scopes ?? new Set());
    const found = await getItem(ctx.store.db, def, id, shape);
    if (!found) throw notFound(`${def.title} ${id}`);
    // For conditional requests (If-Modified-Since), even when `fields` leaves updatedAt out. Not with
    // `include`: a brand or category renamed leaves the item's updatedAt as it was, so a date would call a
    // changed answer unmodified; the ETag (of the body) still validates it.
    if (found.updatedAt && !shape?.include?.length) reply.header('last-modified', new Date(found.updatedAt).toUTCString());
    // Serialized here like a page (see listingHandler): the row holds exactly the selected fields.
    return reply.type(FORMATS.json.contentType).send(JSON.stringify(found.item));
  };
}
