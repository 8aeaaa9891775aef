import assert from 'node:assert/strict';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { createContext, type AppContext } from '../../src/context.ts';
import { ADMIN_TOKEN, type TestApp } from '../helpers/app.ts';

/** The `name=value` pair of a Set-Cookie header, and its attributes (lower-case names). */
export function parseSetCookie(header: string): { name: string; value: string; attributes: Map<string, string> } {
  const [pair, ...rest] = header.split(';').map((s) => s.trim());
  const eq = pair.indexOf('=');
  const attributes = new Map(rest.map((a) => {
    const i = a.indexOf('=');
    return i < 0 ? [a.toLowerCase(), ''] : [a.slice(0, i).toLowerCase(), a.slice(i + 1)];
  }));
  return { name: pair.slice(0, eq), value: pair.slice(eq + 1), attributes };
}

export const setCookies = (res: LightMyRequestResponse): string[] => {
  const h = res.headers['set-cookie'];
  return h === undefined ? [] : Array.isArray(h) ? h : [h];
};

/** The CSRF token in a console page's forms. */
export function csrfOf(body: string): string {
  const m = /name="_csrf" value="([^"]+)"/.exec(body);
  assert.ok(m, 'the page has a form with a CSRF token');
  return m[1];
}

/** A urlencoded form body; arrays repeat their field. */
export function form(fields: Record<string, string | string[]>): string {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(fields)) for (const one of Array.isArray(v) ? v : [v]) p.append(k, one);
  return p.toString();
}

export interface Browserish {
  cookie: string;
  csrf: string;
  get(url: string, headers?: Record<string, string>): Promise<LightMyRequestResponse>;
  post(url: string, fields: Record<string, string | string[]>, headers?: Record<string, string>): Promise<LightMyRequestResponse>;
}

/** Signs in to the console with the admin token, as a same-origin browser form would, and returns a client that carries the cookie. */
export async function signIn(app: FastifyInstance, options: { token?: string; remoteAddress?: string } = {}): Promise<Browserish> {
  const res = await app.inject({
    method: 'POST', url: '/admin/sign-in', remoteAddress: options.remoteAddress,
    headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: form({ token: options.token ?? ADMIN_TOKEN }),
  });
  assert.equal(res.statusCode, 303, res.body);
  const { name, value } = parseSetCookie(setCookies(res)[0]);
  const cookie = `${name}=${value}`;
  const page = await app.inject({ method: 'GET', url: '/admin/credentials', headers: { cookie } });
  assert.equal(page.statusCode, 200);
  const csrf = csrfOf(page.body);
  const client: Browserish = {
    cookie,
    csrf,
    get: (url, headers = {}) => app.inject({ method: 'GET', url, headers: { cookie, ...headers } }),
    post: (url, fields, headers = {}) => app.inject({
      method: 'POST', url, payload: form({ _csrf: csrf, ...fields }),
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin', ...headers },
    } as InjectOptions),
  };
  return client;
}

/** Another node of the same store: its own context and app on the same database (and other settings when given). */
export async function anotherNode(t: TestApp, env: Record<string, string> = {}): Promise<{ app: FastifyInstance; ctx: AppContext }> {
  const config = loadConfig({ DATABASE_URL: t.database.url, ADMIN_TOKEN, PUBLIC_URL: 'http://store.test', RATE_LIMIT_RPS: '100000', RATE_LIMIT_BURST: '100000', ...env }, {});
  const ctx = await createContext(config, t.database.store);
  const app = await buildApp(ctx, { logger: false });
  await app.ready();
  return { app, ctx };
}
