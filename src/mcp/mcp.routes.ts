import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { chargeRateLimit, verifyBearer } from '../auth/bearer.ts';
import { PROTECTED_RESOURCE_PATH } from '../auth/metadata.routes.ts';
import { countUsage } from '../console/usage.ts';
import type { AppContext } from '../context.ts';
import { AppError } from '../errors/app-error.ts';
import { problemBody } from '../http/problem.ts';
import type { Registry } from '../resources/registry.ts';
import type { ToolCatalogue } from './server.ts';
import type { ToolEnv } from './tool.ts';
import '../http/types.ts';

interface McpRuntime {
  catalogue: ToolCatalogue;
  Transport: typeof StreamableHTTPServerTransport;
}

/**
 * The MCP SDK (with zod, which it loads) is about 37 MB of resident code, and the compiled tool catalogue more:
 * both are loaded on the first POST /mcp rather than at start, so a server no agent talks to does not carry them.
 */
async function loadRuntime(resources: Registry): Promise<McpRuntime> {
  const [{ ToolCatalogue }, { StreamableHTTPServerTransport }] = await Promise.all([
    import('./server.ts'),
    import('@modelcontextprotocol/sdk/server/streamableHttp.js'),
  ]);
  return { catalogue: new ToolCatalogue(resources), Transport: StreamableHTTPServerTransport };
}

/**
 * /mcp: the Model Context Protocol's Streamable HTTP transport (spec 2025-11-25) over the store's tools.
 *
 * Stateless: every POST gets a new MCP server and transport (`sessionIdGenerator: undefined`) that end with
 * the request. No session lives on a node, so any node behind a load balancer answers any request, a restart
 * loses nothing, and memory does not grow with clients; what a session would carry (the caller and its
 * scopes) comes with every request as its bearer token. Answers are plain JSON (`enableJsonResponse`): the
 * tools neither stream nor send notifications, so an SSE stream would only add framing. GET (a server-to-client
 * stream) and DELETE (ending a session) have nothing to serve without sessions: 405, as the spec allows.
 */
export const mcpRoutes: FastifyPluginAsync<{ ctx: AppContext }> = async (app, { ctx }) => {
  let runtime: Promise<McpRuntime> | undefined;
  // Loaded once, shared by concurrent first requests; a failed load is tried again by the next request.
  const loaded = () =>
    (runtime ??= loadRuntime(ctx.resources).catch((error: unknown) => {
      runtime = undefined;
      throw error;
    }));
  // The app's one text engine (ctx.textEngine), which POST /api/v2/ai/generate makes at start.
  const engineOnce = () => ctx.textEngine.get();
  app.addHook('onClose', async () => ctx.textEngine.close());
  countUsage(app, ctx);

  // RFC 9728 §5.1: a 401 points to the protected-resource metadata, where an MCP client learns how to get a token.
  const challenge = `resource_metadata="${ctx.config.publicUrl}${PROTECTED_RESOURCE_PATH}", `;
  // The same token check and the same per-credential bucket as /api/v2: one HTTP request, one take.
  const authenticate = async (request: FastifyRequest, reply: FastifyReply) => {
    request.grant = await verifyBearer(ctx, request.headers.authorization, challenge);
    await chargeRateLimit(ctx, request.grant, ctx.policies.default, reply);
  };

  app.post('/mcp', {
    // JSON-RPC messages are checked by the SDK's transport, which answers JSON-RPC errors that MCP clients understand.
    schema: { hide: true },
    onRequest: authenticate,
    handler: async (request, reply) => {
      const { catalogue, Transport } = await loaded();
      const gone = new AbortController();
      const env: ToolEnv = {
        store: ctx.store,
        hashKey: ctx.hashKey,
        resources: ctx.resources,
        grant: request.grant!,
        publicUrl: ctx.config.publicUrl,
        requestId: String(request.id),
        signal: gone.signal,
        engine: engineOnce,
        buckets: ctx.buckets,
        aiPolicy: ctx.policies.ai,
        ai: ctx.config.ai,
        log: request.log,
        snapshots: ctx.config.snapshots,
      };
      const server = catalogue.server(env);
      const transport = new Transport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      reply.raw.on('close', () => {
        gone.abort();
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      // From here the transport writes the answer; the headers set so far (request id, RateLimit) go with it.
      reply.hijack();
      for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) reply.raw.setHeader(name, value);
      try {
        await transport.handleRequest(request.raw, reply.raw, request.body);
      } catch (error) {
        request.log.error({ err: error }, 'the MCP transport failed');
        if (!reply.raw.headersSent) {
          reply.raw.writeHead(500, { 'content-type': 'application/problem+json; charset=utf-8' });
          reply.raw.end(JSON.stringify(problemBody(ctx.config.publicUrl, String(request.id), 'internal_error', 'The MCP transport failed; the error is logged with this request id.')));
        } else reply.raw.destroy();
      }
    },
  });

  for (const method of ['GET', 'DELETE'] as const) {
    app.route({
      method,
      url: '/mcp',
      schema: { hide: true },
      onRequest: authenticate,
      handler: async () => {
        throw new AppError('method_not_allowed', `This MCP server is stateless: it has no ${method === 'GET' ? 'server-to-client stream' : 'session to end'}. Send JSON-RPC messages with POST.`, { headers: { allow: 'POST' } });
      },
    });
  }
};
