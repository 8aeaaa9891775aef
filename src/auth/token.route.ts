import formbody from '@fastify/formbody';
import multipart from '@fastify/multipart';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.ts';
import { AppError } from '../errors/app-error.ts';
import { shapeErrors, type Classified } from '../http/error-handler.ts';
import { multipartFields } from '../http/multipart-fields.ts';
import { addressKey } from '../ratelimit/address.ts';
import { rateLimitHeaders, type Policy } from '../ratelimit/bucket.ts';
import { isScope, scopeCatalogue, type Scope } from './scopes.ts';

type OAuthErrorCode = 'invalid_client' | 'invalid_request' | 'unsupported_grant_type' | 'invalid_scope' | 'invalid_grant';

class OAuthError extends Error {
  constructor(readonly error: OAuthErrorCode, readonly description: string, readonly basicChallenge = false) {
    super(description);
  }
}

const oauthErrorSchema = {
  type: 'object',
  required: ['error'],
  properties: {
    error: { type: 'string', enum: ['invalid_client', 'invalid_request', 'unsupported_grant_type', 'invalid_scope', 'invalid_grant'] },
    error_description: { type: 'string' },
  },
} as const;

function sendOAuthError(reply: FastifyReply, e: OAuthError): FastifyReply {
  const status = e.error === 'invalid_client' ? 401 : 400;
  if (status === 401) reply.header('www-authenticate', 'Basic realm="store-api", charset="UTF-8"');
  return reply.code(status).header('cache-control', 'no-store').header('pragma', 'no-cache').send({ error: e.error, error_description: e.description });
}

/** Shapes errors raised before the handler (unparseable bodies, wrong content types) the RFC 6749 way. */
function shapeOAuthProblem(_request: FastifyRequest, reply: FastifyReply, problem: Classified): FastifyReply {
  // The database away is no fault of the request: 503 with Retry-After, in RFC 6749's words for it (§4.1.2.1).
  if (problem.code === 'service_unavailable') {
    return reply.code(503).headers(problem.headers ?? {}).header('cache-control', 'no-store').type('application/json; charset=utf-8').send({ error: 'temporarily_unavailable', error_description: problem.detail });
  }
  // Over a limit of this endpoint: 429 with Retry-After, and `slow_down`, the registered OAuth error for a
  // client that asks the token endpoint too often (RFC 8628 §3.5).
  if (problem.code === 'rate_limited') {
    return reply.code(429).headers(problem.headers ?? {}).header('cache-control', 'no-store').header('pragma', 'no-cache').type('application/json; charset=utf-8').send({ error: 'slow_down', error_description: problem.detail });
  }
  const description = problem.code === 'internal_error' ? problem.detail : `${problem.detail} Send application/x-www-form-urlencoded, multipart/form-data or application/json.`;
  return sendOAuthError(reply.type('application/json; charset=utf-8'), new OAuthError('invalid_request', description));
}

function field(body: Record<string, unknown>, name: string): string | undefined {
  const v = body[name];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw new OAuthError('invalid_request', `Parameter ${name} must be a string.`);
  return v;
}

/** client_secret_basic: RFC 6749 §2.3.1 form-encodes the id and secret before base64. */
function basicCredentials(header: string | undefined): { clientId: string; clientSecret: string } | undefined {
  if (!header || !/^basic /i.test(header)) return undefined;
  const decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) throw new OAuthError('invalid_client', 'Malformed HTTP Basic credentials.', true);
  const unescape = (s: string) => {
    try {
      return decodeURIComponent(s.replace(/\+/g, ' '));
    } catch {
      return s;
    }
  };
  return { clientId: unescape(decoded.slice(0, colon)), clientSecret: unescape(decoded.slice(colon + 1)) };
}

/** Takes one request from `key`'s bucket of `policy` (shared by the nodes on PostgreSQL); over it, a 429 with Retry-After. */
async function withinLimit(ctx: AppContext, policy: Policy, key: string, whose: string): Promise<void> {
  const take = await ctx.buckets.take(`${policy.name}:${key}`, policy);
  if (take.allowed) return;
  throw new AppError('rate_limited', `Too many token requests ${whose}; retry in ${take.retryAfterSeconds} s.`, {
    headers: { ...rateLimitHeaders(policy, take), 'retry-after': String(take.retryAfterSeconds) },
  });
}

/** POST /oauth/token (API.md §1): its body parsers, and its errors in RFC 6749's shape rather than as problems. */
export const tokenRoutes: FastifyPluginAsync<{ ctx: AppContext }> = async (app, { ctx }) => {
  // The scopes of this store's resources (ctx.resources) and the two of none: what a request may name.
  const catalogue = scopeCatalogue(ctx.resources);
  shapeErrors(app, shapeOAuthProblem);
  await app.register(formbody);
  await app.register(multipart, { limits: { fields: 20, fieldSize: 4096, files: 0 } });
  // Fields into the body; a malformed multipart body is a 400 invalid_request, not a logged 500.
  app.addHook('preValidation', multipartFields);

  app.post('/oauth/token', {
    schema: {
      tags: ['OAuth'],
      summary: 'Get an access token (client credentials grant)',
      description:
        'RFC 6749 §4.4. Send `grant_type=client_credentials` with `client_id` and `client_secret` in the body (form, multipart or JSON) ' +
        'or as HTTP Basic. `scope` (space-separated) narrows the token to a subset of the credential\'s scopes.',
      consumes: ['application/x-www-form-urlencoded', 'multipart/form-data', 'application/json'],
      body: {
        type: 'object',
        properties: {
          grant_type: { type: 'string', enum: ['client_credentials'] },
          client_id: { type: 'string' },
          client_secret: { type: 'string' },
          scope: { type: 'string', description: 'Space-separated scopes.' },
        },
      },
      response: {
        200: {
          type: 'object',
          required: ['access_token', 'token_type', 'expires_in', 'scope'],
          properties: { access_token: { type: 'string' }, token_type: { type: 'string', enum: ['Bearer'] }, expires_in: { type: 'integer' }, scope: { type: 'string' } },
        },
        400: oauthErrorSchema,
        401: oauthErrorSchema,
        429: {
          description: 'Too many token requests from this source address, or tokens issued to this client; retry after `Retry-After` seconds.',
          type: 'object', required: ['error'], properties: { error: { type: 'string', enum: ['slow_down'] }, error_description: { type: 'string' } },
        },
        503: { description: 'The database cannot be reached; retry after `Retry-After` seconds.', type: 'object', required: ['error'], properties: { error: { type: 'string', enum: ['temporarily_unavailable'] }, error_description: { type: 'string' } } },
      },
    },
    // The body is validated by hand below so that every failure has an RFC 6749 error code.
    validatorCompiler: () => () => true,
    // Per source address first, before the body is even read: this is what a flood of requests meets.
    onRequest: async (request) => withinLimit(ctx, ctx.policies.tokenAddress, addressKey(request.ip), 'from this address'),
    handler: async (request, reply) => {
      try {
        const body = (request.body ?? {}) as Record<string, unknown>;
        if (typeof body !== 'object' || Array.isArray(body)) throw new OAuthError('invalid_request', 'The body must be a set of parameters.');
        const grantType = field(body, 'grant_type');
        if (!grantType) throw new OAuthError('invalid_request', 'Missing grant_type.');
        if (grantType !== 'client_credentials') throw new OAuthError('unsupported_grant_type', `Grant type "${grantType}" is not supported; use client_credentials.`);
        const basic = basicCredentials(request.headers.authorization);
        const bodyId = field(body, 'client_id');
        const bodySecret = field(body, 'client_secret');
        if (basic && bodySecret !== undefined) throw new OAuthError('invalid_request', 'Use one client authentication method: HTTP Basic or client_secret in the body, not both.');
        const clientId = basic?.clientId ?? bodyId;
        const clientSecret = basic?.clientSecret ?? bodySecret;
        if (basic && bodyId !== undefined && bodyId !== basic.clientId) throw new OAuthError('invalid_request', 'client_id in the body differs from the HTTP Basic one.');
        if (!clientId || clientSecret === undefined) throw new OAuthError('invalid_client', 'Client authentication is required (client_id and client_secret, or HTTP Basic).', true);

        const auth = await ctx.tokens.authenticateClient(clientId, clientSecret);
        if (!auth.ok) throw new OAuthError('invalid_client', auth.reason, true);
        // Per credential, once it is known: a client id that exists is the only key a client cannot invent.
        await withinLimit(ctx, ctx.policies.token, String(auth.credential.id), 'for this client');
        const granted = auth.credential.scopes.split(' ').filter(Boolean) as Scope[];

        const requestedRaw = field(body, 'scope');
        let scopes = granted;
        if (requestedRaw !== undefined && requestedRaw.trim() !== '') {
          const requested = [...new Set(requestedRaw.trim().split(/\s+/))];
          const offender = requested.find((s) => !isScope(s, catalogue) || !granted.includes(s));
          if (offender) throw new OAuthError('invalid_scope', `Scope "${offender}" is not granted to this client.`);
          scopes = requested as Scope[];
        }
        const { token, expiresIn } = await ctx.tokens.issue(Number(auth.credential.id), scopes);
        return reply.header('cache-control', 'no-store').header('pragma', 'no-cache').send({ access_token: token, token_type: 'Bearer', expires_in: expiresIn, scope: scopes.join(' ') });
      } catch (e) {
        if (e instanceof OAuthError) return sendOAuthError(reply, e);
        throw e;
      }
    },
  });
};
