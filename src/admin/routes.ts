import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import type { AppContext } from '../context.ts';
import { AppError } from '../errors/app-error.ts';
import { errorResponses } from '../http/responses.ts';
import { itemSchemaId } from '../listing/schemas.ts';
import { WRITERS } from '../modules/writers.ts';
import { createItem, deleteItem, inTransaction, updateItem, type Input, type WritableResource } from '../modules/writer.ts';
import { addAdminGuard } from './admin-token.ts';
import { credentialRoutes } from './credentials.routes.ts';
import { webhookRoutes } from './webhooks.routes.ts';
import { syncRoutes } from './sync.routes.ts';
import { tags, security, idParams, type IdParams } from './route-schemas.ts';

function refuseFollowed(ctx: AppContext, w: WritableResource): void {
  if (ctx.followed.has(w.def.collection)) {
    throw new AppError('conflict', `This store follows ${w.def.collection} from a main store; change them there.`, { errors: [{ name: w.def.collection, reason: 'is synchronised from the main store' }] });
  }
}

/** POST, PATCH and DELETE of every collection: the back office's write door. */
function writeRoutes(app: FastifyInstance, ctx: AppContext, w: WritableResource): void {
  const ref = { $ref: `${itemSchemaId(w.def)}#` };
  const done = () => ctx.bus.appended();
  app.post<{ Body: Input }>(`/${w.def.collection}`, {
    schema: { tags, security, summary: `Create a ${w.def.title.toLowerCase()}`, body: w.createSchema, response: { 201: ref, ...errorResponses(400, 401, 409) } },
    handler: async (request, reply) => {
      refuseFollowed(ctx, w);
      return reply.code(201).send(await inTransaction(ctx.store, (t) => createItem(t, w, request.body), done));
    },
  });
  app.patch<{ Params: IdParams; Body: Input }>(`/${w.def.collection}/:id`, {
    schema: { tags, security, summary: `Change a ${w.def.title.toLowerCase()} (the fields given)`, params: idParams, body: w.patchSchema, response: { 200: ref, ...errorResponses(400, 401, 404, 409) } },
    handler: async (request) => {
      refuseFollowed(ctx, w);
      return inTransaction(ctx.store, (t) => updateItem(t, w, request.params.id, request.body), done);
    },
  });
  app.delete<{ Params: IdParams }>(`/${w.def.collection}/:id`, {
    schema: { tags, security, summary: `Delete a ${w.def.title.toLowerCase()}`, params: idParams, response: { 204: { type: 'null' }, ...errorResponses(401, 404, 409) } },
    handler: async (request, reply) => {
      refuseFollowed(ctx, w);
      await inTransaction(ctx.store, (t) => deleteItem(t, w, request.params.id), done);
      return reply.code(204).send();
    },
  });
}

/** /admin/api: the admin token's guard, JSON bodies only, and every write route of the back office. */
export const adminRoutes: FastifyPluginAsync<{ ctx: AppContext }> = async (app, { ctx }) => {
  addAdminGuard(app, ctx.hashKey, () => ctx.admin.hash, { name: 'admin-failures', ...ctx.config.adminFailureLimit });
  // The admin API speaks JSON only; Fastify's default text/plain parser would turn a stray body into a 400
  // about its shape instead of the 415 that says what is wrong.
  app.removeContentTypeParser('text/plain');
  // Many clients send Content-Type: application/json on a DELETE or a rotate without a body; that is no body,
  // not a malformed one. Anything else goes to Fastify's own parser (prototype-poisoning checks included).
  const json = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) =>
    body === '' ? done(null, undefined) : json(request, body as string, done));
  for (const w of WRITERS) writeRoutes(app, ctx, w);
  // Child plugins: they inherit the guard and the parsers above.
  await app.register(credentialRoutes, { ctx });
  await app.register(webhookRoutes, { ctx });
  await app.register(syncRoutes, { ctx });
};
