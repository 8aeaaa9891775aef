import type { Scope } from '../auth/scopes.ts';
import type { TokenGrant } from '../auth/tokens.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The scope a bearer token needs for this route (routes under /api/v2). */
    scope?: Scope;
    /** Which rate-limit policy the route draws from; `default` unless set. */
    ratePolicy?: 'default' | 'ai';
  }
  interface FastifyRequest {
    grant?: TokenGrant;
  }
}

export {};
