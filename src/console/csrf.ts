import type { FastifyRequest } from 'fastify';
import { constantTimeEqual, keyedHash } from '../auth/secrets.ts';
import type { Config } from '../config.ts';
import type { AppContext } from '../context.ts';
import { html, type Html } from './html.ts';
import { servedOverHttps, type ConsoleSession } from './session.ts';

/** The form field (and the header, for scripts) that carries the token. */
export const CSRF_FIELD = '_csrf';
export const CSRF_HEADER = 'x-csrf-token';

/**
 * The session's synchronizer token: an HMAC of the session id under the installation's key. Another site can
 * neither read it (it is only in our pages) nor derive it (it needs the HttpOnly cookie and the key), and it
 * dies with its session. Derived rather than stored, so every node computes the same token without a lookup.
 */
export const csrfToken = (ctx: AppContext, session: ConsoleSession): string => keyedHash(ctx.hashKey, `console-csrf:${session.id}`);

export const csrfInput = (token: string): Html => html`<input type="hidden" name="${CSRF_FIELD}" value="${token}">`;

/** Whether the request carries the session's token, compared in constant time. */
export function hasCsrfToken(request: FastifyRequest, expected: string): boolean {
  const body = request.body as Record<string, unknown> | undefined;
  const given = (body && typeof body === 'object' ? body[CSRF_FIELD] : undefined) ?? request.headers[CSRF_HEADER];
  return typeof given === 'string' && constantTimeEqual(given, expected);
}

/**
 * Why a state-changing request is not from one of our own pages, or undefined when it may be. Browsers say
 * where a request comes from (Sec-Fetch-Site, Origin); a client that says nothing (curl, an old browser) is
 * left to the token alone. The own origin is PUBLIC_URL's, or the Host the request was sent to.
 */
export function crossSiteReason(request: FastifyRequest, config: Config): string | undefined {
  const site = request.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none') return `the browser marked it ${String(site)}`;
  const origin = request.headers.origin;
  if (origin === undefined) return undefined;
  const own = new Set([new URL(config.publicUrl).origin]);
  if (request.headers.host) own.add(`${servedOverHttps(request, config) ? 'https' : 'http'}://${request.headers.host.toLowerCase()}`);
  return own.has(origin.toLowerCase()) ? undefined : `it came from ${origin === 'null' ? 'an opaque origin' : 'another origin'}`;
}
