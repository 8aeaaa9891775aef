import type { FastifyInstance } from 'fastify';
import { constantTimeEqual, keyedHash } from '../auth/secrets.ts';
import { AppError } from '../errors/app-error.ts';
import { errorResponses } from '../http/responses.ts';
import type { FailureThrottle } from '../ratelimit/failures.ts';

/**
 * Guards the admin API: `Authorization: Bearer <ADMIN_TOKEN>`, compared as keyed hashes in constant time.
 * Wrong tokens are throttled per source address (per node) by `throttle`, the context's one shared with the
 * console's sign-in: once an address has used up its allowance, it gets 429 with Retry-After before its token
 * is even looked at, so that guessing cannot go faster than the policy's rate. A request without any
 * Authorization header is not a guess and costs nothing.
 */
export function addAdminGuard(app: FastifyInstance, key: string, hash: () => string | undefined, throttle: FailureThrottle): void {
  app.addHook('onRoute', (route) => {
    // Every admin operation can answer 429 now; the OpenAPI document says so.
    const schema = (route.schema ??= {}) as { response?: Record<string | number, unknown> };
    if (schema.response && !schema.response[429]) schema.response[429] = errorResponses(429)[429];
  });
  app.addHook('onRequest', async (request) => {
    const wait = throttle.retryAfter(request.ip);
    if (wait > 0) {
      throw new AppError('rate_limited', `Too many wrong admin tokens from this address; retry in ${wait} s.`, {
        headers: { 'retry-after': String(wait) },
      });
    }
    const header = request.headers.authorization;
    const match = /^Bearer +(\S+) *$/i.exec(header ?? '');
    const expected = hash();
    if (!match || !expected || !constantTimeEqual(keyedHash(key, match[1]), expected)) {
      if (header) throttle.failed(request.ip);
      throw new AppError('invalid_token', 'The admin API needs Authorization: Bearer <ADMIN_TOKEN>.', {
        headers: { 'www-authenticate': 'Bearer realm="store-api-admin", error="invalid_token"' },
      });
    }
  });
}
