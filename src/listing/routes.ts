import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import type { AppContext } from '../context.ts';
import { errorResponses } from '../http/responses.ts';
import { ID_BOUNDS } from '../modules/common-fields.ts';
import { exportColumnsTable, exportResponseContent } from './formats/docs.ts';
import { EXPORT_FORMATS, FORMATS } from './formats/negotiate.ts';
import type { ResourceDef } from './resource.ts';
import { exportQuerySchema, itemQuerySchema, itemSchemaId, listQuerySchema } from './schemas.ts';
import { itemHandler, listingHandler } from './serve.ts';
import '../http/types.ts';

// Every answer of a negotiated resource says that it depends on Accept, errors included (caches must not mix them).
// A callback hook: an async one costs a promise and a microtask turn per answer.
const varyAccept = (_request: unknown, reply: { header(name: string, value: string): unknown }, payload: unknown, done: (error: null, payload: unknown) => void) => {
  reply.header('vary', 'Accept');
  done(null, payload);
};

const EXPORT_LIMITS =
  'Without `limit` or `cursor` it streams every matching row; with them it pages like JSON and carries `Link`. `includeTotal=true` adds ' +
  '`X-Total-Count`. Whole exports run a few at a time per credential (`429`) and per node (`503`), both with `Retry-After`; one whose ' +
  'client takes no bytes for a minute (by default) is cut off. `HEAD` answers the headers (checking the parameters) without running it.';

/** GET /api/v2/{collection}, its /export and GET /api/v2/{collection}/{id} for one declared resource. */
function collectionRoutes(app: FastifyInstance, ctx: AppContext, def: ResourceDef): void {
  const ref = { $ref: `${itemSchemaId(def)}#` };
  const tags = [def.title.replace(/ value$/, ' values')];

  app.get<{ Querystring: Record<string, unknown> }>(`/${def.collection}`, {
    config: { scope: def.scope },
    onSend: varyAccept,
    schema: {
      tags,
      summary: `List ${def.collection}`,
      description:
        `${def.description} Needs scope \`${def.scope}\`. Keyset-paginated; see \`Link\` and \`pagination.nextCursor\`.\n\n` +
        `The same listing also answers in NDJSON, CSV or XLSX by \`format=\` or \`Accept\` (kept for existing clients); typed clients use ` +
        `\`GET /api/v2/${def.collection}/export\`, which documents those answers. ${EXPORT_LIMITS}`,
      security: [{ oauth2: [def.scope] }],
      querystring: listQuerySchema(def),
      response: {
        // Documented as JSON only, so that generated clients get one answer type; the files are the export operation's.
        200: {
          description: 'The page.',
          content: {
            [FORMATS.json.mediaType]: {
              schema: { type: 'object', required: ['data', 'pagination'], properties: { data: { type: 'array', items: ref }, pagination: { $ref: 'Pagination#' } } },
            },
          },
        },
        ...errorResponses(400, 401, 403, 406, 429, 503),
      },
    },
    handler: listingHandler(ctx, def),
  });

  // A literal segment: find-my-way matches it before the `:id` route, and ids are integers anyway.
  app.get<{ Querystring: Record<string, unknown> }>(`/${def.collection}/export`, {
    config: { scope: def.scope },
    onSend: varyAccept,
    schema: {
      tags,
      summary: `Export ${def.collection}`,
      description:
        `${def.description} Needs scope \`${def.scope}\`. The listing as a file: NDJSON, CSV or XLSX (\`format\`, required), with the same ` +
        `filters, sort, \`fields\`, \`include\` and CSV options as \`GET /api/v2/${def.collection}\`. ${EXPORT_LIMITS}\n\n${exportColumnsTable(def)}`,
      security: [{ oauth2: [def.scope] }],
      querystring: exportQuerySchema(def),
      response: {
        200: {
          description: `The rows as an attachment (\`Content-Disposition: attachment; filename="${def.collection}-<date>.<ndjson|csv|xlsx>"\`).`,
          content: exportResponseContent(def),
        },
        ...errorResponses(400, 401, 403, 406, 429, 503),
      },
    },
    handler: listingHandler(ctx, def, EXPORT_FORMATS),
  });

  app.get<{ Params: { id: number }; Querystring: { fields?: string; include?: string } }>(`/${def.collection}/:id`, {
    config: { scope: def.scope },
    onSend: varyAccept,
    schema: {
      tags,
      summary: `Get one ${def.title.toLowerCase()}`,
      description:
        `Needs scope \`${def.scope}\`. JSON only (the files are for listings): an \`Accept\` that excludes \`application/json\` gets \`406\`. ` +
        '`Last-Modified` is its `updatedAt` (none with `include`, whose data has dates of its own).',
      security: [{ oauth2: [def.scope] }],
      params: { type: 'object', required: ['id'], properties: { id: { type: 'integer', ...ID_BOUNDS, description: 'Positive integer id.' } } },
      querystring: itemQuerySchema(def),
      response: { 200: ref, ...errorResponses(400, 401, 403, 404, 406, 429) },
    },
    handler: itemHandler(ctx, def),
  });
}

/** The listing, export and single-item routes of every resource of the registry (under /api/v2, behind the bearer guard). */
export const resourceRoutes: FastifyPluginAsync<{ ctx: AppContext }> = async (app, { ctx }) => {
  for (const def of ctx.resources.list) collectionRoutes(app, ctx, def);
};
