import type { HttpLimits } from '../config.ts';

/** Node's default, stated: request line and headers together; beyond it a 431 problem (client-errors.ts). */
export const MAX_HEADER_BYTES = 16_384;

/**
 * Fastify's server options that bound what one connection can hold (docs/operations.md, "Timeouts and
 * limits"). Fastify leaves Node's request timeout off (0) and keeps idle connections 72 s; here:
 * - `http.headersTimeout` / `requestTimeout`: from a request's first byte, its headers and then all of it
 *   (body included) must have arrived, or it gets a 408 and the connection closes. They bound receiving
 *   only: a long-poll or an export answers for as long as it needs.
 * - `connectionsCheckingInterval`: how often Node looks for requests past those limits (its default, 30 s,
 *   would let a slow request overstay by that much).
 * - `keepAliveTimeout`: an idle kept-alive connection closes.
 * - `connectionTimeout`: a socket on which nothing moves either way closes (a client that stopped
 *   reading an answer); above the longest quiet answer (config.ts checks it).
 * - `maxParamLength`: Fastify's 100, stated; a longer path parameter is a 414 problem.
 */
export function serverLimits(limits: HttpLimits) {
  return {
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    connectionTimeout: limits.idleTimeoutMs,
    routerOptions: { maxParamLength: 100 },
    http: {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(limits.headersTimeoutMs / 5))),
      maxHeaderSize: MAX_HEADER_BYTES,
      // Checked by a hook instead, which answers a problem (protocol.ts); Node's own check answers a bare 400.
      requireHostHeader: false,
    },
  };
}
