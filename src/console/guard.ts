import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.ts';
import { crossSiteReason, csrfToken, hasCsrfToken } from './csrf.ts';
import { html } from './html.ts';
import { renderPage, sendHtml } from './layout.ts';
import { currentSession, type ConsoleSession } from './session.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The console session of a signed-in request, and its CSRF token (set by the console's guard). */
    consoleSession?: ConsoleSession & { csrf: string };
  }
}

const SAFE_METHODS = new Set(['GET', 'HEAD']);

/** The CSRF token of the request's session, for the forms of a page (only under the guard, where there is one). */
export function formToken(request: FastifyRequest): string {
  if (!request.consoleSession) throw new Error('formToken outside the console guard');
  return request.consoleSession.csrf;
}

function refuse(reply: FastifyReply, status: number, title: string, text: string): FastifyReply {
  return sendHtml(reply, renderPage([], { title, body: html`<p>${text}</p><p><a class="button" href="/admin/sign-in">Sign in</a></p>` }), status);
}

/**
 * Guards every route of the plugin it is added to:
 * - a live session (cookie): without one a page is a redirect to the sign-in page, and anything else a 401;
 * - on every state-changing request, a same-origin request (Sec-Fetch-Site, Origin) carrying the session's
 *   CSRF token. Both run before the route's handler, so a refused request changes nothing.
 */
export function addConsoleGuard(app: FastifyInstance, ctx: AppContext): void {
  app.decorateRequest('consoleSession', undefined);
  app.addHook('onRequest', async (request, reply) => {
    const session = await currentSession(ctx, request);
    if (!session) {
      if (SAFE_METHODS.has(request.method)) return reply.code(303).headers({ location: '/admin/sign-in', 'cache-control': 'no-store' }).send();
      return refuse(reply, 401, 'Signed out', 'Your console session has ended, or you are not signed in. Nothing was changed.');
    }
    request.consoleSession = { ...session, csrf: csrfToken(ctx, session) };
    if (SAFE_METHODS.has(request.method)) return;
    const crossSite = crossSiteReason(request, ctx.config);
    if (crossSite) return refuse(reply, 403, 'Refused', `This request was refused because ${crossSite}. Nothing was changed.`);
  });
  // After the body is parsed (the token travels in it), before it is validated or acted on.
  app.addHook('preValidation', async (request, reply) => {
    if (SAFE_METHODS.has(request.method) || !request.consoleSession) return;
    if (!hasCsrfToken(request, request.consoleSession.csrf)) {
      return refuse(reply, 403, 'Refused', 'This request did not carry the form token of your session (it may come from another site, or from a page of an earlier session). Nothing was changed.');
    }
  });
}
