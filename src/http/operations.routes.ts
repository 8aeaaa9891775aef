import { sql } from 'kysely';
import type { FastifyPluginAsync } from 'fastify';
import type { AppContext } from '../context.ts';
import { AppError, notFound } from '../errors/app-error.ts';
import { CONNECTION_LOSS_RETRY_AFTER } from './error-handler.ts';
import { problemDocs } from './openapi.ts';

/** A readiness probe gives up after this: a database that answers slower is not ready (and the probe stays cheap). */
const READY_TIMEOUT_MS = 2000;

/** Whether `query` succeeds within `ms` (it may still run after; the pool's own timeouts bound it). */
async function answersWithin(query: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([query.then(() => true, () => false), late]);
  } finally {
    clearTimeout(timer);
  }
}

const statusSchema = { type: 'object', properties: { status: { type: 'string' }, database: { type: 'string' } } };

/** What a browser opening the root sees: where to go next (relative links, nothing interpolated; the console's own CSS). */
const ROOT_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Store Data API</title><link rel="stylesheet" href="/admin/static/console.css"></head>
<body><main id="main"><h1>Store Data API</h1>
<p class="lead">Read access to this store's products, categories, brands, parameter and filter values and orders, with OAuth 2.0 client-credentials tokens.</p>
<ul><li><a href="/admin">Store console</a>: API credentials and their scopes, webhooks, usage, sync (sign in with the admin token)</li>
<li><a href="/docs">API reference</a></li><li><a href="/api/v2/openapi.json">OpenAPI document</a></li></ul></main></body></html>
`;

/** The root's links, health, readiness, the OpenAPI document and the problem-type pages that `type` URLs point to. */
export const operationsRoutes: FastifyPluginAsync<{ ctx: AppContext }> = async (app, { ctx }) => {
  // The root says where things are: links as JSON for clients, a small page for browsers (which ask for HTML first).
  app.get('/', { schema: { hide: true } }, async (request, reply) => {
    reply.header('vary', 'Accept');
    if (/\btext\/html\b/.test(request.headers.accept ?? '')) return reply.type('text/html; charset=utf-8').header('cache-control', 'no-cache').send(ROOT_PAGE);
    const base = ctx.config.publicUrl;
    return { name: 'Store Data API', links: { console: `${base}/admin`, reference: `${base}/docs`, openapi: `${base}/api/v2/openapi.json`, token: `${base}/oauth/token`, api: `${base}/api/v2` } };
  });
  app.get('/healthz', {
    schema: {
      operationId: 'getHealth',
      tags: ['Operations'],
      summary: 'Liveness: the process answers',
      description: 'No authentication; touches no database (see `/readyz` for that), so a restart is the only cure for a failure.',
      response: { 200: statusSchema },
    },
  }, async () => ({ status: 'ok' }));

  // One probe at a time, however many load balancers ask: probes during an outage share its answer.
  let probing: Promise<boolean> | undefined;
  const probe = () =>
    (probing ??= answersWithin(sql`select 1`.execute(ctx.store.db), READY_TIMEOUT_MS).finally(() => {
      probing = undefined;
    }));

  app.get('/readyz', {
    schema: {
      operationId: 'getReadiness',
      tags: ['Operations'],
      summary: 'Readiness: the database answers',
      description: `No authentication. \`503 service_unavailable\` (a problem, with \`Retry-After\`) while the database does not answer within ${READY_TIMEOUT_MS / 1000} s.`,
      response: {
        200: statusSchema,
        503: { description: 'An RFC 9457 problem (`service_unavailable`, with `Retry-After`): the database does not answer.', content: { 'application/problem+json': { schema: { $ref: 'Problem#' } } } },
      },
    },
    handler: async () => {
      if (!(await probe())) {
        throw new AppError('service_unavailable', `The ${ctx.store.dialect} database does not answer.`, { headers: { 'retry-after': CONNECTION_LOSS_RETRY_AFTER } });
      }
      return { status: 'ready', database: ctx.store.dialect };
    },
  });

  app.get('/api/v2/openapi.json', { schema: { hide: true } }, async () => app.swagger());

  app.get('/problems', { schema: { hide: true } }, async () => Object.values(problemDocs));
  app.get<{ Params: { slug: string } }>('/problems/:slug', { schema: { hide: true } }, async (request) => {
    const { slug } = request.params;
    // Own keys only: `constructor` or `__proto__` must not reach Object.prototype.
    if (!Object.hasOwn(problemDocs, slug)) throw notFound('Problem type');
    return problemDocs[slug];
  });
};
