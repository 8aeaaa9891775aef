import type { Scope } from '../auth/scopes.ts';
import type { TokenGrant } from '../auth/tokens.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The scope a bearer token needs for this route. Every route under /api/v2 declares one, or `null` for
     * "any valid token" on purpose; a route that declares neither is refused when it is registered.
     */
    scope?: Scope | null;
    /** Which rate-limit policy the route draws from; `default` unless set. */
    ratePolicy?: 'default' | 'ai';
  }
  interface FastifyRequest {
    grant?: TokenGrant;
  }
}

export {};
