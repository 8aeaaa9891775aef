import type { FastifyPluginAsync } from 'fastify';
import type { AppContext } from '../context.ts';
import { scopeCatalogue } from './scopes.ts';

/** Where each document lives (RFC 9728 §3, RFC 8414 §3): the well-known path at the root of the host. */
export const PROTECTED_RESOURCE_PATH = '/.well-known/oauth-protected-resource';
export const AUTHORIZATION_SERVER_PATH = '/.well-known/oauth-authorization-server';
/** The authorization endpoint, which exists only to refuse (see below). */
export const AUTHORIZE_PATH = '/oauth/authorize';

const protectedResourceSchema = {
  type: 'object',
  required: ['resource', 'authorization_servers', 'scopes_supported', 'bearer_methods_supported'],
  properties: {
    resource: { type: 'string', format: 'uri', description: 'The protected resource: the MCP endpoint.' },
    resource_name: { type: 'string' },
    authorization_servers: { type: 'array', items: { type: 'string', format: 'uri' }, description: 'Issuers whose RFC 8414 metadata describes how to get a token.' },
    scopes_supported: { type: 'array', items: { type: 'string' } },
    bearer_methods_supported: { type: 'array', items: { type: 'string', enum: ['header'] }, description: 'Only the Authorization header (RFC 6750 §2.1).' },
    resource_documentation: { type: 'string', format: 'uri' },
  },
} as const;

const authorizationServerSchema = {
  type: 'object',
  required: ['issuer', 'authorization_endpoint', 'token_endpoint', 'grant_types_supported', 'token_endpoint_auth_methods_supported', 'scopes_supported', 'response_types_supported'],
  properties: {
    issuer: { type: 'string', format: 'uri' },
    authorization_endpoint: { type: 'string', format: 'uri', description: 'Refuses every request (`unsupported_response_type`): tokens come only from the client credentials grant.' },
    token_endpoint: { type: 'string', format: 'uri' },
    grant_types_supported: { type: 'array', items: { type: 'string', enum: ['client_credentials'] } },
    token_endpoint_auth_methods_supported: { type: 'array', items: { type: 'string', enum: ['client_secret_basic', 'client_secret_post'] } },
    scopes_supported: { type: 'array', items: { type: 'string' } },
    response_types_supported: { type: 'array', items: { type: 'string' }, description: 'Empty: there is no authorization endpoint (client credentials only).' },
    service_documentation: { type: 'string', format: 'uri' },
  },
} as const;

/**
 * The two public discovery documents an MCP client (or any OAuth client) reads after a 401 from /mcp:
 * RFC 9728 protected-resource metadata, whose `authorization_servers` leads to the RFC 8414 metadata of
 * POST /oauth/token. No token needed; they only say what the store's public contract already says.
 */
export const metadataRoutes: FastifyPluginAsync<{ ctx: AppContext }> = async (app, { ctx }) => {
  const base = ctx.config.publicUrl;
  const scopes = Object.keys(scopeCatalogue(ctx.resources));
  const cacheControl = 'public, max-age=3600';

  app.get(PROTECTED_RESOURCE_PATH, {
    schema: {
      tags: ['OAuth'],
      summary: 'Protected-resource metadata of /mcp (RFC 9728)',
      description: 'What a client answered `401` by `/mcp` reads (the `resource_metadata` of `WWW-Authenticate`): the resource, the authorization server and the scopes.',
      response: { 200: protectedResourceSchema },
    },
    handler: async (_request, reply) => {
      reply.header('cache-control', cacheControl);
      return {
        resource: `${base}/mcp`,
        resource_name: 'Store Data API (Model Context Protocol)',
        authorization_servers: [base],
        scopes_supported: scopes,
        bearer_methods_supported: ['header'],
        resource_documentation: `${base}/docs`,
      };
    },
  });

  app.get(AUTHORIZATION_SERVER_PATH, {
    schema: {
      tags: ['OAuth'],
      summary: 'Authorization-server metadata (RFC 8414)',
      description: 'The token endpoint, its one grant (client credentials) and client authentication methods, and every scope of the store. ' +
        '`response_types_supported` is empty: there is no user authorization, and the authorization endpoint named only refuses.',
      response: { 200: authorizationServerSchema },
    },
    handler: async (_request, reply) => {
      reply.header('cache-control', cacheControl);
      return {
        issuer: base,
        authorization_endpoint: `${base}${AUTHORIZE_PATH}`,
        token_endpoint: `${base}/oauth/token`,
        grant_types_supported: ['client_credentials'],
        // What POST /oauth/token accepts: HTTP Basic, or client_id and client_secret in the body (form, multipart or JSON).
        token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
        scopes_supported: scopes,
        response_types_supported: [],
        service_documentation: `${base}/docs`,
      };
    },
  });

  // RFC 8414 lets a server without an authorization-code grant leave `authorization_endpoint` out, but the MCP SDK's
  // client (its ClientCredentialsProvider included) refuses metadata without one. So it is named, and answers what
  // RFC 6749 §4.1.2.1 says for a response type the server does not support; with no registered redirect URI it
  // redirects nowhere.
  app.get(AUTHORIZE_PATH, {
    schema: {
      // Not an operation of the API (it has no success answer); docs/mcp.md says why it is there.
      hide: true,
      summary: 'Authorization endpoint (always refuses)',
      description: 'There is no user authorization: every request gets `400 unsupported_response_type`. Get tokens from `POST /oauth/token` with client credentials.',
      response: { 400: { type: 'object', required: ['error'], properties: { error: { type: 'string', enum: ['unsupported_response_type'] }, error_description: { type: 'string' } } } },
    },
    handler: async (_request, reply) =>
      reply.code(400).header('cache-control', 'no-store').send({
        error: 'unsupported_response_type',
        error_description: 'This store issues tokens only by the client credentials grant: POST client_id and client_secret to /oauth/token.',
      }),
  });
};
