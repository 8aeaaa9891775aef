import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.ts';
import { AppError } from '../errors/app-error.ts';
import { rateLimitHeaders, type Policy } from '../ratelimit/bucket.ts';
import type { TokenGrant } from './tokens.ts';
import '../http/types.ts';

const REALM = 'realm="store-api"';

function invalidToken(description: string, challenge: string): AppError {
  return new AppError('invalid_token', description, {
    headers: { 'www-authenticate': `Bearer ${REALM}, ${challenge}error="invalid_token", error_description="${description.replace(/"/g, "'")}"` },
  });
}

/**
 * The grant of a request's `Authorization: Bearer` token (RFC 6750), or a 401 invalid_token. `challenge`: more
 * parameters of the WWW-Authenticate answer, each followed by ", " (/mcp names its RFC 9728 `resource_metadata`).
 */
export async function verifyBearer(ctx: AppContext, header: string | undefined, challenge = ''): Promise<TokenGrant> {
  if (!header) throw invalidToken('Missing Authorization: Bearer token.', challenge);
  const match = /^Bearer +([A-Za-z0-9._~+/-]+=*) *$/i.exec(header);
  if (!match) throw invalidToken('The Authorization header is not a Bearer token.', challenge);
  const grant = await ctx.tokens.verify(match[1]);
  if (!grant) throw invalidToken('The access token is invalid or expired, or its credential is disabled.', challenge);
  return grant;
}

/** Takes one request from the credential's bucket of `policy`; the answer carries the RateLimit headers, and is a 429 when it is empty. */
export async function chargeRateLimit(ctx: AppContext, grant: TokenGrant, policy: Policy, reply: FastifyReply): Promise<void> {
  const take = await ctx.buckets.take(`${policy.name}:${grant.credentialId}`, policy);
  const headers = rateLimitHeaders(policy, take);
  reply.headers(headers);
  if (!take.allowed) {
    throw new AppError('rate_limited', `Rate limit exceeded; retry in ${take.retryAfterSeconds} s.`, {
      headers: { ...headers, 'retry-after': String(take.retryAfterSeconds) },
    });
  }
}

/**
 * Guards every route of the plugin it is added to: a valid bearer token (RFC 6750), the route's scope,
 * then the credential's rate limit, whose headers every answer carries.
 *
 * Refuse by default: a route that forgets to declare its scope would otherwise let any token through, so
 * registering one fails (the server does not start). A route open to any valid token says `scope: null`.
 */
export function addBearerGuard(app: FastifyInstance, ctx: AppContext): void {
  app.addHook('onRoute', (route) => {
    if (route.config?.scope === undefined) {
      throw new Error(`${String(route.method)} ${route.url} declares no scope: set config.scope, or config.scope = null for any valid token`);
    }
  });
  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    const grant = await verifyBearer(ctx, request.headers.authorization);
    request.grant = grant;

    const scope = request.routeOptions.config.scope;
    if (scope !== null && !(scope && grant.scopes.has(scope))) {
      throw new AppError('insufficient_scope', `This operation needs the scope "${scope}".`, {
        headers: { 'www-authenticate': `Bearer ${REALM}, error="insufficient_scope", scope="${scope}"` },
      });
    }

    await chargeRateLimit(ctx, grant, ctx.policies[request.routeOptions.config.ratePolicy ?? 'default'], reply);
  });
}
