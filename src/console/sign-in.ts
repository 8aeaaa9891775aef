import type { FastifyInstance, FastifyReply } from 'fastify';
import { constantTimeEqual, keyedHash } from '../auth/secrets.ts';
import type { AppContext } from '../context.ts';
import { crossSiteReason } from './csrf.ts';
import { html } from './html.ts';
import { renderPage, sendHtml } from './layout.ts';
import { hidden } from './page.ts';
import { currentSession, openSession, setSessionCookie } from './session.ts';

const signInBody = { type: 'object', additionalProperties: false, properties: { token: { type: 'string', maxLength: 1000 } } };

function signInPage(reply: FastifyReply, status: number, problem?: string, retryAfter?: number): FastifyReply {
  const body = html`<section class="panel narrow" aria-labelledby="sign-in-title">
    <h2 id="sign-in-title">Sign in with the admin token</h2>
    ${problem ? html`<div class="error-summary" role="alert"><p>${problem}</p></div>` : ''}
    <form method="post" action="/admin/sign-in" class="form">
      <div class="field">
        <label for="token">Admin token</label>
        <input id="token" name="token" type="password" required autocomplete="current-password" spellcheck="false" aria-describedby="token-hint"${status === 401 ? html` aria-invalid="true"` : ''}>
        <p class="hint" id="token-hint">The <code>ADMIN_TOKEN</code> of this store, or the one <code>store-api serve</code> printed on its first start.</p>
      </div>
      <div class="actions"><button type="submit" class="button primary">Sign in</button></div>
    </form>
  </section>`;
  if (retryAfter) reply.header('retry-after', String(retryAfter));
  return sendHtml(reply, renderPage([], { title: 'Store console', body }), status);
}

/**
 * GET and POST /admin/sign-in: the admin token once, checked as the admin API checks it (its keyed hash
 * compared in constant time with the stored one), then a session cookie. Failures are throttled per
 * source address by the admin API's own throttle (`ctx.adminFailures`: one allowance for both doors); while
 * an address is throttled nothing it sends is checked.
 */
export function signInRoutes(app: FastifyInstance, ctx: AppContext, home: string): void {
  const throttle = ctx.adminFailures;
  app.get('/sign-in', { schema: hidden }, async (request, reply) => {
    if (await currentSession(ctx, request)) return reply.code(303).header('location', home).send();
    return signInPage(reply, 200);
  });

  app.post<{ Body: { token?: string } | undefined }>('/sign-in', { schema: { ...hidden, body: signInBody } }, async (request, reply) => {
    const crossSite = crossSiteReason(request, ctx.config);
    if (crossSite) return signInPage(reply, 403, `This sign-in was refused because ${crossSite}.`);
    const wait = throttle.retryAfter(request.ip);
    if (wait > 0) return signInPage(reply, 429, `Too many wrong tokens from your address. Try again in ${wait} seconds.`, wait);
    const token = request.body?.token ?? '';
    if (!constantTimeEqual(keyedHash(ctx.hashKey, token), ctx.admin.hash)) {
      throttle.failed(request.ip);
      request.log.warn({ ip: request.ip }, 'console: wrong admin token');
      return signInPage(reply, 401, 'That is not this store\'s admin token.');
    }
    const session = await openSession(ctx);
    setSessionCookie(reply, request, ctx, session);
    return reply.code(303).headers({ location: home, 'cache-control': 'no-store' }).send();
  });
}
