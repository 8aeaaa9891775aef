import { randomUUID } from 'node:crypto';
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import type { DestinationStream } from 'pino';
import { engineRoutes } from './ai/engine.route.ts';
import { generateRoutes } from './ai/generate.route.ts';
import { addBearerGuard } from './auth/bearer.ts';
import { metadataRoutes } from './auth/metadata.routes.ts';
import { tokenRoutes } from './auth/token.route.ts';
import type { AppContext } from './context.ts';
import { clientErrorHandler } from './http/client-errors.ts';
import { addCompression } from './http/compression.ts';
import { addConditionalRequests } from './http/conditional.ts';
import { registerErrorHandling } from './http/error-handler.ts';
import { loggerOptions } from './http/log-redaction.ts';
import { requestLogger, writesLevel } from './http/request-logger.ts';
import { addProtocolGuards } from './http/protocol.ts';
import { serverLimits } from './http/server-limits.ts';
import { registerOpenApi } from './http/openapi.ts';
import { addInputGuards, strictBodies } from './http/validation.ts';
import { operationsRoutes } from './http/operations.routes.ts';
import { problemSchema, sendProblem } from './http/problem.ts';
import { resourceRoutes } from './listing/routes.ts';
import { itemSchema, paginationSchema } from './listing/schemas.ts';
import { adminRoutes } from './admin/routes.ts';
import { changesRoutes } from './events/changes.routes.ts';
import { consoleRoutes } from './console/plugin.ts';
import { mcpRoutes } from './mcp/mcp.routes.ts';
import { snapshotFileRoutes, snapshotRoutes } from './snapshots/snapshots.routes.ts';
import { countUsage } from './console/usage.ts';

export interface BuildOptions {
  /** pino logger options (a stream: where lines go, stdout by default), or false for none (tests). */
  logger?: boolean | { level: string; stream?: DestinationStream };
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Builds the whole HTTP application on a context. The server and the tests use this same function. */
export async function buildApp(ctx: AppContext, options: BuildOptions = {}): Promise<FastifyInstance> {
  const logger = options.logger ?? true;
  const app = Fastify({
    // Secrets in logged URLs and fields are redacted (log-redaction.ts).
    logger: logger === false ? false : logger === true ? loggerOptions(ctx.config.logLevel) : loggerOptions(logger.level, logger.stream),
    // A caller's own x-request-id is kept when it is sane, so that a trace spans systems.
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    logController: new LogController({ requestIdLogLabel: 'requestId', disableRequestLogging: true }),
    // pino's child logger, made only when a request writes a line (request-logger.ts).
    ...(logger === false ? {} : { childLoggerFactory: requestLogger }),
    bodyLimit: ctx.config.bodyLimit,
    // Timeouts and size limits of connections; what Node refuses before Fastify sees a request, and what
    // Fastify's router refuses before a route does, answer problems too (docs/operations.md).
    ...serverLimits(ctx.config.http),
    clientErrorHandler: clientErrorHandler(ctx.config.publicUrl),
    frameworkErrors: (error, request, reply) => {
      reply.header('x-request-id', request.id);
      request.server.errorHandler(error, request, reply);
    },
    // While stopping, requests still arriving on open connections get a problem (below), not Fastify's own body.
    return503OnClosing: false,
    ajv: { customOptions: { removeAdditional: false, allErrors: true, coerceTypes: true, useDefaults: true } },
    schemaController: strictBodies,
  });
  // In a fixed order: the app's own hooks, error handling and shared schemas first (their onRoute hooks must
  // see every route, the external plugins' too), then external plugins, then the routes.
  addInputGuards(app);
  ctx.log ??= app.log;

  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  // Callback hooks, not async ones: these run on every request, and an async hook costs a promise and a
  // microtask turn each time. (An early answer in a callback hook does not call done.)
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    if (closing) {
      sendProblem(request, reply, ctx.config.publicUrl, 'service_unavailable', 'This node is shutting down; retry (another node may answer).', undefined, { 'retry-after': '1', connection: 'close' });
      return;
    }
    done();
  });
  addProtocolGuards(app, ctx.config.publicUrl);
  // One log line per request, with its outcome; cheaper than Fastify's two. Only when the level writes it
  // (nothing changes the level of a running server): below it the hook would run on every request for nothing.
  if (writesLevel(app.log, 'info')) {
    app.addHook('onResponse', (request, reply, done) => {
      request.log.info({ method: request.method, url: request.url, status: reply.statusCode, ms: Math.round(reply.elapsedTime * 10) / 10 }, 'request');
      done();
    });
  }

  registerErrorHandling(app, ctx.config.publicUrl);
  app.addSchema(problemSchema);
  app.addSchema(paginationSchema);
  for (const def of ctx.resources.list) app.addSchema(itemSchema(def));

  // External plugins: the OpenAPI document and its UI, before any route so that they collect every one.
  await registerOpenApi(app, ctx);
  // Routes: each route file is a plugin of one shape, FastifyPluginAsync<{ ctx }>, owning its error handling
  // where it differs (the token endpoint, the console); the document lists them in this order.
  await app.register(operationsRoutes, { ctx });
  await app.register(tokenRoutes, { ctx });
  // RFC 9728 and RFC 8414 discovery documents (public), then /mcp, the same tokens and scopes for AI agents.
  await app.register(metadataRoutes, { ctx });
  await app.register(mcpRoutes, { ctx });
  await app.register(
    async (api) => {
      addBearerGuard(api, ctx);
      // Requests and 429s per credential, for the console's usage page (counted in memory, flushed in the background).
      countUsage(api, ctx);
      // gzip/br by Accept-Encoding, then ETags and 304s: before the routes, whose onSend hooks they extend
      // (in this order, so that a 200's ETag names the coding the compressor chose).
      await addCompression(api);
      addConditionalRequests(api);
      await api.register(resourceRoutes, { ctx });
      await api.register(changesRoutes, { ctx });
      await api.register(generateRoutes, { ctx });
      await api.register(engineRoutes, { ctx });
      await api.register(snapshotRoutes, { ctx });
    },
    { prefix: '/api/v2' },
  );
  // A snapshot's file opens to its credential's bearer token or to a signed URL without one: outside the guard, checking either itself.
  await app.register(snapshotFileRoutes, { ctx, prefix: '/api/v2' });
  await app.register(adminRoutes, { ctx, prefix: '/admin/api' });
  await app.register(consoleRoutes, { ctx, prefix: '/admin' });
  return app;
}
