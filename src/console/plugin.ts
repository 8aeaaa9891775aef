import { join } from 'node:path';
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import fastifyStatic from '@fastify/static';
import type { FastifyError, FastifyPluginAsync } from 'fastify';
import type { AppContext } from '../context.ts';
import { PROBLEMS } from '../errors/codes.ts';
import { PACKAGE_ROOT } from '../package-root.ts';
import { classify } from '../http/error-handler.ts';
import { addConsoleGuard } from './guard.ts';
import { html } from './html.ts';
import { renderPage, sendHtml, type NavItem } from './layout.ts';
import type { ConsoleDeps } from './page.ts';
import { CONSOLE_PAGES } from './pages.ts';
import { closeSession, clearSessionCookie } from './session.ts';
import { signInRoutes } from './sign-in.ts';

const STATIC_DIR = join(PACKAGE_ROOT, 'src', 'console', 'static');
/** Forms of the console are small; a larger body is refused before it is parsed. */
const FORM_BODY_LIMIT = 64 * 1024;

/**
 * The administrator's console, registered under /admin: server-rendered pages (no build step, nothing from
 * the internet), a session cookie after one sign-in with the admin token, and CSRF protection on every
 * state-changing request. Its routes stay out of the public OpenAPI document.
 */
export const consoleRoutes: FastifyPluginAsync<{ ctx: AppContext }> = async (app, { ctx }) => {
  await app.register(cookie);
  await app.register(formbody, { bodyLimit: FORM_BODY_LIMIT });
  await app.register(fastifyStatic, {
    root: STATIC_DIR,
    prefix: '/static/',
    decorateReply: false,
    index: false,
    list: false,
    maxAge: '1h',
    setHeaders: (reply) => reply.header('x-content-type-options', 'nosniff'),
  });

  const nav: NavItem[] = CONSOLE_PAGES.map((p) => ({ slug: p.slug, title: p.title }));
  const home = `/admin/${CONSOLE_PAGES[0].slug}`;

  // Errors of console routes are pages, not problem documents: the same classification, shown to a person.
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const problem = classify(error);
    if (problem.code === 'internal_error') request.log.error({ err: error }, 'console request failed');
    const status = PROBLEMS[problem.code].status;
    const details = problem.errors?.length ? html`<ul>${problem.errors.map((e) => html`<li><strong>${e.name}</strong> ${e.reason}</li>`)}</ul>` : '';
    reply.headers(problem.headers ?? {});
    const body = html`<div class="alert" role="alert"><p>${problem.detail}</p>${details}</div><p><a href="${home}">Back to the console</a></p>`;
    return sendHtml(reply, renderPage(request.consoleSession ? nav : [], { title: PROBLEMS[problem.code].title, body, csrf: request.consoleSession?.csrf }), status);
  });

  signInRoutes(app, ctx, home);

  await app.register(async (guarded) => {
    addConsoleGuard(guarded, ctx);
    const deps: ConsoleDeps = {
      ctx,
      show: (request, reply, content, status = 200) => sendHtml(reply, renderPage(nav, { ...content, csrf: request.consoleSession?.csrf }), status),
    };
    guarded.get('/', { schema: { hide: true } }, async (_request, reply) => reply.code(303).header('location', home).send());
    guarded.post('/sign-out', { schema: { hide: true, body: { type: 'object', properties: { _csrf: { type: 'string', maxLength: 200 } } } } }, async (request, reply) => {
      if (request.consoleSession) await closeSession(ctx, request.consoleSession);
      clearSessionCookie(reply, request, ctx);
      return reply.code(303).headers({ location: '/admin/sign-in', 'cache-control': 'no-store', 'clear-site-data': '"cache"' }).send();
    });
    for (const page of CONSOLE_PAGES) page.routes(guarded, deps);
  });
};
