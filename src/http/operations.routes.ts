import { sql } from 'kysely';
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.ts';
import { notFound } from '../errors/app-error.ts';
import { problemDocs } from './openapi.ts';

const statusSchema = { type: 'object', properties: { status: { type: 'string' }, database: { type: 'string' } } };

/** Health, readiness, the OpenAPI document and the problem-type pages that `type` URLs point to. */
export async function operationsRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }): Promise<void> {
  app.get('/healthz', { schema: { tags: ['Operations'], summary: 'Liveness: the process answers', response: { 200: statusSchema } } }, async () => ({ status: 'ok' }));

  app.get('/readyz', {
    schema: { tags: ['Operations'], summary: 'Readiness: the database answers', response: { 200: statusSchema, 503: statusSchema } },
    handler: async (_request, reply) => {
      try {
        await sql`select 1`.execute(ctx.store.db);
        return { status: 'ready', database: ctx.store.dialect };
      } catch {
        return reply.code(503).send({ status: 'unavailable', database: ctx.store.dialect });
      }
    },
  });

  app.get('/api/v2/openapi.json', { schema: { hide: true } }, async () => app.swagger());

  app.get('/problems', { schema: { hide: true } }, async () => Object.values(problemDocs));
  app.get('/problems/:slug', { schema: { hide: true } }, async (request) => {
    const doc = problemDocs[(request.params as { slug: string }).slug];
    if (!doc) throw notFound('Problem type');
    return doc;
  });
}
