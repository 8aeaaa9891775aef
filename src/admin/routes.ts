import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import type { AppContext } from '../context.ts';
import { AppError } from '../errors/app-error.ts';
import { errorResponses } from '../http/responses.ts';
import { itemSchemaId } from '../listing/schemas.ts';
import { inTransaction } from '../events/transaction.ts';
import type { Input, Resource } from '../resources/types.ts';
import { createItem, deleteItem, updateItem } from '../resources/writer.ts';
import { addAdminGuard } from './admin-token.ts';
import { credentialRoutes } from './credentials.routes.ts';
import { webhookRoutes } from './webhooks.routes.ts';
import { syncRoutes } from './sync.routes.ts';
import { tags, security, idParams, type IdParams } from './route-schemas.ts';

function refuseFollowed(ctx: AppContext, r: Resource): void {
  if (ctx.followed.has(r.collection)) {
    throw new AppError('conflict', `This store follows ${r.collection} from a main store; change them there.`, { errors: [{ name: r.collection, reason: 'is synchronised from the main store' }] });
  }
}

/** POST, PATCH and DELETE of every collection: the back office's write door (the write path wakes the event bus itself). */
function writeRoutes(app: FastifyInstance, ctx: AppContext, r: Resource): void {
  const ref = { $ref: `${itemSchemaId(r)}#` };
  app.post<{ Body: Input }>(`/${r.collection}`, {
    schema: { tags, security, summary: `Create a ${r.title.toLowerCase()}`, body: r.createSchema, response: { 201: ref, ...errorResponses(400, 401, 409) } },
    handler: async (request, reply) => {
      refuseFollowed(ctx, r);
      return reply.code(201).send(await inTransaction(ctx.store, ctx.bus, (t) => createItem(t, ctx.resources, r, request.body)));
    },
  });
  app.patch<{ Params: IdParams; Body: Input }>(`/${r.collection}/:id`, {
    schema: { tags, security, summary: `Change a ${r.title.toLowerCase()} (the fields given)`, params: idParams, body: r.patchSchema, response: { 200: ref, ...errorResponses(400, 401, 404, 409) } },
    handler: async (request) => {
      refuseFollowed(ctx, r);
      return inTransaction(ctx.store, ctx.bus, (t) => updateItem(t, ctx.resources, r, request.params.id, request.body));
    },
  });
  app.delete<{ Params: IdParams }>(`/${r.collection}/:id`, {
    schema: { tags, security, summary: `Delete a ${r.title.toLowerCase()}`, params: idParams, response: { 204: { type: 'null' }, ...errorResponses(401, 404, 409) } },
    handler: async (request, reply) => {
      refuseFollowed(ctx, r);
      await inTransaction(ctx.store, ctx.bus, (t) => deleteItem(t, ctx.resources, r, request.params.id));
      return reply.code(204).send();
    },
  });
}

/** /admin/api: the admin token's guard, JSON bodies only, and every write route of the back office. */
export const adminRoutes: FastifyPluginAsync<{ ctx: AppContext }> = async (app, { ctx }) => {
  addAdminGuard(app, ctx.hashKey, () => ctx.admin.hash, ctx.adminFailures);
  // The admin API speaks JSON only; Fastify's default text/plain parser would turn a stray body into a 400
  // about its shape instead of the 415 that says what is wrong.
  app.removeContentTypeParser('text/plain');
  // Many clients send Content-Type: application/json on a DELETE or a rotate without a body; that is no body,
  // not a malformed one. Anything else goes to Fastify's own parser (prototype-poisoning checks included).
  const json = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) =>
    body === '' ? done(null, undefined) : json(request, body as string, done));
  for (const r of ctx.resources.list) writeRoutes(app, ctx, r);
  // Child plugins: they inherit the guard and the parsers above.
  await app.register(credentialRoutes, { ctx });
  await app.register(webhookRoutes, { ctx });
  await app.register(syncRoutes, { ctx });
};
