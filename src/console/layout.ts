import type { FastifyReply } from 'fastify';
import { csrfInput } from './csrf.ts';
import { html, type Html } from './html.ts';

/** A section of the console's navigation. */
export interface NavItem {
  slug: string;
  title: string;
}

export interface PageContent {
  /** The navigation section this page belongs to (highlighted with aria-current). */
  section?: string;
  title: string;
  body: Html;
  /** A short confirmation of what was just done (shown in a live region). */
  notice?: string;
  /** The session's CSRF token: present when signed in (the sign-out form needs it). */
  csrf?: string;
}

export const STATIC_PREFIX = '/admin/static/';

/**
 * Every answer of the console: pages hold secrets (shown once) and act with the administrator's authority, so
 * they are never cached, never framed, send no Referer elsewhere, and run only the console's own files.
 */
export const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy': "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-frame-options': 'DENY',
  'referrer-policy': 'same-origin',
  'x-content-type-options': 'nosniff',
  'cache-control': 'no-store',
};

function navigation(nav: readonly NavItem[], section: string | undefined, csrf: string): Html {
  return html`<nav class="nav" aria-label="Sections"><ul>${nav.map((n) =>
    html`<li><a href="/admin/${n.slug}"${n.slug === section ? html` aria-current="page"` : ''}>${n.title}</a></li>`)}</ul></nav>
  <form class="sign-out" method="post" action="/admin/sign-out">${csrfInput(csrf)}<button type="submit" class="button quiet">Sign out</button></form>`;
}

/** The whole document: landmarks (banner, navigation, main, contentinfo), a skip link, and the console's own CSS and JS. */
export function renderPage(nav: readonly NavItem[], page: PageContent): Html {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${page.title} · Store console</title>
<link rel="stylesheet" href="${STATIC_PREFIX}console.css">
<script src="${STATIC_PREFIX}console.js" defer></script>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top">
  <a class="brand" href="/admin"><span class="mark" aria-hidden="true">S</span> Store console</a>
  ${page.csrf === undefined ? '' : navigation(nav, page.section, page.csrf)}
</header>
<main id="main" tabindex="-1">
  <h1>${page.title}</h1>
  <div class="notice-region" role="status" aria-live="polite">${page.notice ? html`<p class="notice">${page.notice}</p>` : ''}</div>
  ${page.body}
</main>
<footer class="foot"><p>Store Data API · <a href="/docs">API reference</a></p></footer>
</body>
</html>
`;
}

export function sendHtml(reply: FastifyReply, document: Html, status = 200): FastifyReply {
  return reply.code(status).headers(SECURITY_HEADERS).type('text/html; charset=utf-8').send(document.text);
}
