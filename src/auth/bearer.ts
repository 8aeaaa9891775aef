import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.ts';
import { AppError } from '../errors/app-error.ts';
import { rateLimitHeaders } from '../ratelimit/bucket.ts';
import '../http/types.ts';

const REALM = 'realm="store-api"';

function invalidToken(description: string): AppError {
  return new AppError('invalid_token', description, {
    headers: { 'www-authenticate': `Bearer ${REALM}, error="invalid_token", error_description="${description.replace(/"/g, "'")}"` },
  });
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
    const header = request.headers.authorization;
    if (!header) throw invalidToken('Missing Authorization: Bearer token.');
    const match = /^Bearer +([A-Za-z0-9._~+/-]+=*) *$/i.exec(header);
    if (!match) throw invalidToken('The Authorization header is not a Bearer token.');
    const grant = await ctx.tokens.verify(match[1]);
    if (!grant) throw invalidToken('The access token is invalid or expired, or its credential is disabled.');
    request.grant = grant;

    const scope = request.routeOptions.config.scope;
    if (scope !== null && !(scope && grant.scopes.has(scope))) {
      throw new AppError('insufficient_scope', `This operation needs the scope "${scope}".`, {
        headers: { 'www-authenticate': `Bearer ${REALM}, error="insufficient_scope", scope="${scope}"` },
      });
    }

    const policy = ctx.policies[request.routeOptions.config.ratePolicy ?? 'default'];
    const take = await ctx.buckets.take(`${policy.name}:${grant.credentialId}`, policy);
    const headers = rateLimitHeaders(policy, take);
    reply.headers(headers);
    if (!take.allowed) {
      throw new AppError('rate_limited', `Rate limit exceeded; retry in ${take.retryAfterSeconds} s.`, {
        headers: { ...headers, 'retry-after': String(take.retryAfterSeconds) },
      });
    }
  });
}
