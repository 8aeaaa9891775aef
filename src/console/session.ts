import type { FastifyReply, FastifyRequest } from 'fastify';
import { keyedHash, randomSecret } from '../auth/secrets.ts';
import type { Config } from '../config.ts';
import type { AppContext } from '../context.ts';
import * as repo from './sessions.repository.ts';

/** What a console session id looks like: anything else in the cookie is refused before it costs a hash or a query. */
const SESSION_SHAPE = /^sdc_[A-Za-z0-9_-]{43}$/;
/** Sessions kept at most; a sign-in beyond it ends the oldest (only the admin token opens one, so this is a backstop). */
const MAX_SESSIONS = 100;
/** A session's expiry is moved on at most this often, so that browsing the console is not a write per page. */
const SLIDE_EVERY_MS = 60_000;

/** The cookie's name: with Secure, the `__Host-` prefix also pins it to this host and path `/` (RFC 6265bis §4.1.3.2). */
const COOKIE = 'sda_console';
const HOST_COOKIE = '__Host-sda_console';

export interface ConsoleSession {
  /** The id as the cookie holds it; the database holds only its keyed hash. */
  id: string;
  expiresAt: string;
}

/**
 * The stored form of a session id. The admin token's hash is part of the key, so rotating ADMIN_TOKEN ends
 * every session opened with the old token (on every node), without a column to compare.
 */
const idHash = (ctx: AppContext, id: string): string => keyedHash(ctx.hashKey, `console-session:${ctx.admin.hash}:${id}`);

/** Whether this request reached the store over https: PUBLIC_URL says so, or a trusted proxy's X-Forwarded-Proto. */
export function servedOverHttps(request: FastifyRequest, config: Config): boolean {
  if (config.publicUrl.startsWith('https:') || request.protocol === 'https') return true;
  if (!config.console.trustForwardedProto) return false;
  const forwarded = request.headers['x-forwarded-proto'];
  return typeof forwarded === 'string' && forwarded.split(',')[0].trim().toLowerCase() === 'https';
}

const cookieName = (secure: boolean): string => (secure ? HOST_COOKIE : COOKIE);

/** Opens a session: a random id (256 bits) for the cookie, its keyed hash in the database. */
export async function openSession(ctx: AppContext, now = Date.now()): Promise<ConsoleSession> {
  const id = randomSecret('sdc_');
  const expiresAt = new Date(now + Math.min(ctx.config.console.sessionIdleMs, ctx.config.console.sessionMaxMs)).toISOString();
  const db = ctx.store.db;
  await repo.deleteExpiredSessions(db, new Date(now).toISOString());
  await repo.insertSession(db, { id_hash: idHash(ctx, id), created_at: new Date(now).toISOString(), expires_at: expiresAt });
  await repo.deleteSessionsBeyond(db, MAX_SESSIONS);
  return { id, expiresAt };
}

/**
 * The live session named by the request's cookie, or undefined. Using it moves its expiry to `idle` from
 * now, but never past the longest session after its sign-in.
 */
export async function currentSession(ctx: AppContext, request: FastifyRequest, now = Date.now()): Promise<ConsoleSession | undefined> {
  const id = request.cookies[cookieName(servedOverHttps(request, ctx.config))];
  if (!id || !SESSION_SHAPE.test(id)) return undefined;
  const hash = idHash(ctx, id);
  const row = await repo.findLiveSession(ctx.store.db, hash, new Date(now).toISOString());
  if (!row) return undefined;
  const { sessionIdleMs, sessionMaxMs } = ctx.config.console;
  const slid = Math.min(now + sessionIdleMs, Date.parse(row.created_at) + sessionMaxMs);
  if (slid - Date.parse(row.expires_at) < SLIDE_EVERY_MS) return { id, expiresAt: row.expires_at };
  const expiresAt = new Date(slid).toISOString();
  await repo.extendSession(ctx.store.db, hash, expiresAt);
  return { id, expiresAt };
}

export async function closeSession(ctx: AppContext, session: ConsoleSession): Promise<void> {
  await repo.deleteSession(ctx.store.db, idHash(ctx, session.id));
}

/** HttpOnly (no script reads it), SameSite=Strict (no other site's page sends it), Secure on https, and an expiry. */
export function setSessionCookie(reply: FastifyReply, request: FastifyRequest, ctx: AppContext, session: ConsoleSession): void {
  const secure = servedOverHttps(request, ctx.config);
  reply.setCookie(cookieName(secure), session.id, {
    httpOnly: true,
    sameSite: 'strict',
    secure,
    path: secure ? '/' : '/admin',
    maxAge: Math.floor(ctx.config.console.sessionMaxMs / 1000),
  });
}

export function clearSessionCookie(reply: FastifyReply, request: FastifyRequest, ctx: AppContext): void {
  const secure = servedOverHttps(request, ctx.config);
  reply.clearCookie(cookieName(secure), { httpOnly: true, sameSite: 'strict', secure, path: secure ? '/' : '/admin' });
}

/** Ends sessions past their expiry (also done at each sign-in); any node may run it. */
export const pruneSessions = (ctx: AppContext, now = Date.now()): Promise<number> => repo.deleteExpiredSessions(ctx.store.db, new Date(now).toISOString());
