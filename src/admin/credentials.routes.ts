import type { FastifyPluginAsync } from 'fastify';
import { scopeCatalogue, type Scope } from '../auth/scopes.ts';
import * as service from '../auth/credentials.service.ts';
import type { AppContext } from '../context.ts';
import { errorResponses } from '../http/responses.ts';
import { ID_BOUNDS } from '../modules/common-fields.ts';
import { tags, security, idParams, type IdParams } from './route-schemas.ts';

const credentialSchema = (scopes: string[]) => ({
  type: 'object',
  required: ['id', 'name', 'clientId', 'scopes', 'enabled', 'createdAt', 'updatedAt', 'lastUsedAt'],
  properties: {
    id: { type: 'integer', ...ID_BOUNDS }, name: { type: 'string' }, clientId: { type: 'string' },
    scopes: { type: 'array', items: { type: 'string', enum: scopes } }, enabled: { type: 'boolean' },
    createdAt: { type: 'string', format: 'date-time' }, updatedAt: { type: 'string', format: 'date-time' }, lastUsedAt: { type: ['string', 'null'], format: 'date-time', description: 'When the credential last obtained a token.' },
  },
});
const issuedSchema = {
  type: 'object',
  required: ['id', 'name', 'clientId', 'clientSecret', 'scopes'],
  properties: { id: { type: 'integer', ...ID_BOUNDS }, name: { type: 'string' }, clientId: { type: 'string' }, clientSecret: { type: 'string', description: 'Shown only now; stored as a hash.' }, scopes: { type: 'array', items: { type: 'string' } } },
};
const scopesInput = (scopes: string[]) => ({ type: 'array', minItems: 1, uniqueItems: true, items: { type: 'string', enum: scopes } });

/** /admin/api/credentials: what `store-api credentials …` does, over HTTP. */
export const credentialRoutes: FastifyPluginAsync<{ ctx: AppContext }> = async (app, { ctx }) => {
  const db = ctx.store.db;
  // The read scopes of this store's resources (ctx.resources), and the two scopes of no resource.
  const scopes = Object.keys(scopeCatalogue(ctx.resources));
  app.get('/credentials', { schema: { tags, security, summary: 'List API credentials', response: { 200: { type: 'object', properties: { data: { type: 'array', items: credentialSchema(scopes) } } }, ...errorResponses(401) } } },
    async () => ({ data: await service.listCredentials(db) }));

  app.post<{ Body: { name: string; scopes: Scope[] } }>('/credentials', {
    schema: {
      tags, security, summary: 'Create an API credential (the secret is shown once)',
      body: { type: 'object', additionalProperties: false, required: ['name', 'scopes'], properties: { name: { type: 'string', minLength: 1, maxLength: 200 }, scopes: scopesInput(scopes) } },
      response: { 201: issuedSchema, ...errorResponses(400, 401) },
    },
    handler: async (request, reply) => {
      return reply.code(201).send(await service.createCredential(db, ctx.hashKey, request.body.name, request.body.scopes));
    },
  });

  app.get<{ Params: IdParams }>('/credentials/:id', { schema: { tags, security, summary: 'Get an API credential', params: idParams, response: { 200: credentialSchema(scopes), ...errorResponses(401, 404) } } },
    async (request) => service.getCredential(db, request.params.id));

  app.patch<{ Params: IdParams; Body: { name?: string; scopes?: Scope[]; enabled?: boolean } }>('/credentials/:id', {
    schema: {
      tags, security, summary: 'Rename, change scopes, disable or enable a credential',
      description: 'Disabling, or changing scopes, revokes the credential\'s tokens at once.',
      params: idParams,
      body: { type: 'object', additionalProperties: false, minProperties: 1, properties: { name: { type: 'string', minLength: 1, maxLength: 200 }, scopes: scopesInput(scopes), enabled: { type: 'boolean' } } },
      response: { 200: credentialSchema(scopes), ...errorResponses(400, 401, 404) },
    },
    handler: async (request) => {
      const { id } = request.params;
      const credential = await service.updateCredential(db, id, request.body);
      ctx.tokens.forget(id);
      return credential;
    },
  });

  app.post<{ Params: IdParams }>('/credentials/:id/rotate', {
    schema: { tags, security, summary: 'Rotate the secret (old secret and its tokens stop working)', params: idParams, response: { 200: issuedSchema, ...errorResponses(401, 404) } },
    handler: async (request) => {
      const { id } = request.params;
      const issued = await service.rotateSecret(db, ctx.hashKey, id);
      ctx.tokens.forget(id);
      return issued;
    },
  });

  app.delete<{ Params: IdParams }>('/credentials/:id', {
    schema: { tags, security, summary: 'Delete a credential and its tokens', params: idParams, response: { 204: { type: 'null' }, ...errorResponses(401, 404) } },
    handler: async (request, reply) => {
      const { id } = request.params;
      await service.deleteCredential(db, id);
      ctx.tokens.forget(id);
      return reply.code(204).send();
    },
  });
};
