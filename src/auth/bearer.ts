import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.ts';
import { AppError } from '../errors/app-error.ts';
import { policyHeader, rateLimitHeader, rateLimitHeaders, type Policy, type Take } from '../ratelimit/bucket.ts';
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
  const token = bearerToken(header, challenge);
  return granted(ctx.tokens.verifyCached(token) ?? (await ctx.tokens.verify(token)), challenge);
}

const BEARER = /^Bearer +([A-Za-z0-9._~+/-]+=*) *$/i;

/** The token of an `Authorization: Bearer` header, or a 401. */
function bearerToken(header: string | undefined, challenge: string): string {
  if (!header) throw invalidToken('Missing Authorization: Bearer token.', challenge);
  const match = BEARER.exec(header);
  if (!match) throw invalidToken('The Authorization header is not a Bearer token.', challenge);
  return match[1];
}

function granted(grant: TokenGrant | null, challenge: string): TokenGrant {
  if (!grant) throw invalidToken('The access token is invalid or expired, or its credential is disabled.', challenge);
  return grant;
}

/** Takes one request from the credential's bucket of `policy`; the answer carries the RateLimit headers, and is a 429 when it is empty. */
export async function chargeRateLimit(ctx: AppContext, grant: TokenGrant, policy: Policy, reply: FastifyReply): Promise<void> {
  const key = `${policy.name}:${grant.credentialId}`;
  charged(ctx.buckets.takeNow(key, policy) ?? (await ctx.buckets.take(key, policy)), policy, reply);
}

function charged(take: Take, policy: Policy, reply: FastifyReply): void {
  if (take.allowed) {
    // Header by header: no object of headers per request on the busiest path.
    reply.header('ratelimit-policy', policyHeader(policy));
    reply.header('ratelimit', rateLimitHeader(policy, take));
    return;
  }
  const headers = rateLimitHeaders(policy, take);
  reply.headers(headers);
  throw new AppError('rate_limited', `Rate limit exceeded; retry in ${take.retryAfterSeconds} s.`, {
    headers: { ...headers, 'retry-after': String(take.retryAfterSeconds) },
  });
}

const policyOf = (ctx: AppContext, request: FastifyRequest): Policy => ctx.policies[request.routeOptions.config.ratePolicy ?? 'default'];

function authorize(request: FastifyRequest, grant: TokenGrant): void {
  request.grant = grant;
  const scope = request.routeOptions.config.scope;
  if (scope !== null && !(scope && grant.scopes.has(scope))) {
    throw new AppError('insufficient_scope', `This operation needs the scope "${scope}".`, {
      headers: { 'www-authenticate': `Bearer ${REALM}, error="insufficient_scope", scope="${scope}"` },
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
  // A callback hook, synchronous when the node knows the token and can charge the bucket itself (the common
  // case): an async hook costs a promise and a microtask turn per request. The checks and their order are
  // the same either way: token, scope, then the rate limit.
  app.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => {
    const token = bearerToken(request.headers.authorization, '');
    const known = ctx.tokens.verifyCached(token);
    if (known === undefined) {
      ctx.tokens.verify(token).then((grant) => {
        authorize(request, granted(grant, ''));
        return chargeRateLimit(ctx, grant!, policyOf(ctx, request), reply);
      }).then(() => done(), done);
      return;
    }
    authorize(request, granted(known, ''));
    const policy = policyOf(ctx, request);
    const key = `${policy.name}:${known!.credentialId}`;
    const take = ctx.buckets.takeNow(key, policy);
    if (take) {
      charged(take, policy, reply);
      done();
      return;
    }
    ctx.buckets.take(key, policy).then((t) => charged(t, policy, reply)).then(() => done(), done);
  });
}
