import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createCredential, hashingKey } from '../../src/auth/credentials.service.ts';
import type { Scope } from '../../src/auth/scopes.ts';
import { loadConfig } from '../../src/config.ts';
import { sql } from 'kysely';
import type { Dialect, Store } from '../../src/db/database.ts';
import { seedStore } from '../../src/seed/seed.ts';
import { startServer, type RunningServer } from '../../src/server.ts';
import { runSync, type SyncOptions, type SyncOutcome } from '../../src/sync/follower.ts';
import { FOLLOWED_COLLECTIONS, REQUIRED_SCOPES } from '../../src/sync/mirrors.ts';
import { readState } from '../../src/sync/state.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.ts';

export const ADMIN = 'sync-test-admin-0123456789abcdefghijkl';
export type Item = Record<string, unknown> & { id: number };

/** A real store on loopback: its own database, a server on a port of its own, a read credential. */
export interface Instance {
  database: TestDatabase;
  server: RunningServer;
  url: string;
  port: number;
  /** A credential of this store for a follower of it. */
  follower: { clientId: string; clientSecret: string };
  /** A fresh token of this store that reads everything (for comparisons). */
  token(): Promise<string>;
  /** A request to this store's admin API, by full path (/admin/api/…). */
  admin(method: 'POST' | 'PATCH' | 'DELETE' | 'GET', path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }>;
  /** Stops the server (the database stays). */
  stop(): Promise<void>;
  /** Starts the server again on the same port. */
  restart(): Promise<void>;
  close(): Promise<void>;
}

export interface InstanceOptions {
  seed?: number;
  env?: Record<string, string>;
}

async function tokenFor(url: string, clientId: string, clientSecret: string): Promise<string> {
  const res = await fetch(`${url}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret }) });
  assert.equal(res.status, 200, await res.clone().text());
  return ((await res.json()) as { access_token: string }).access_token;
}

export async function startInstance(dialect: Dialect, options: InstanceOptions = {}): Promise<Instance> {
  const database = await createTestDatabase(dialect);
  if (options.seed) await seedStore(database.store, { products: options.seed, orders: 5, seed: 3 });
  const key = await hashingKey(database.store.db);
  const follower = await createCredential(database.store.db, key, 'follower', REQUIRED_SCOPES as Scope[]);
  const reader = await createCredential(database.store.db, key, 'reader', ['products:read', 'categories:read', 'brands:read', 'product-parameters:read', 'product-filters:read', 'orders:read', 'changes:read']);
  const configFor = (port: number) => loadConfig({
    DATABASE_URL: database.url, HOST: '127.0.0.1', PORT: String(port), ADMIN_TOKEN: ADMIN, RATE_LIMIT_RPS: '100000', RATE_LIMIT_BURST: '100000', TOKEN_RATE_LIMIT_RPS: '100000', TOKEN_RATE_LIMIT_BURST: '100000', TOKEN_ADDRESS_RATE_LIMIT_RPS: '100000', TOKEN_ADDRESS_RATE_LIMIT_BURST: '100000', LOG_LEVEL: 'silent', ...options.env,
  }, {});
  let server = await startServer(configFor(0), { logger: false });
  const port = Number(new URL(server.url).port);
  const instance: Instance = {
    database,
    server,
    url: server.url,
    port,
    follower: { clientId: follower.clientId, clientSecret: follower.clientSecret },
    token: () => tokenFor(instance.url, reader.clientId, reader.clientSecret),
    admin: async (method, path, body) => {
      const res = await fetch(`${instance.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${ADMIN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
    },
    stop: () => server.stop(),
    restart: async () => {
      server = await startServer(configFor(port), { logger: false });
      instance.server = server;
    },
    close: async () => {
      await server.stop();
      await database.drop();
    },
  };
  return instance;
}

/** Every item of a collection through the public API, page by page. */
export async function listAll(store: Instance, collection: string): Promise<Item[]> {
  const { url } = store;
  const token = await store.token();
  const items: Item[] = [];
  let cursor: string | null = null;
  do {
    const res: Response = await fetch(`${url}/api/v2/${collection}?limit=1000${cursor ? `&cursor=${cursor}` : ''}`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(res.status, 200, `${collection}: ${await res.clone().text()}`);
    const body = (await res.json()) as { data: Item[]; pagination: { nextCursor: string | null } };
    items.push(...body.data);
    cursor = body.pagination.nextCursor;
  } while (cursor);
  return items;
}

/** Every followed collection, item by item, is the same over both stores' APIs. */
export async function assertSameData(main: Instance, follower: Instance): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const collection of FOLLOWED_COLLECTIONS) {
    const [a, b] = await Promise.all([listAll(main, collection), listAll(follower, collection)]);
    assert.equal(b.length, a.length, `${collection}: ${b.length} items on the follower, ${a.length} on the main store`);
    assert.deepEqual(b, a, `${collection} differ`);
    counts[collection] = a.length;
  }
  return counts;
}

export async function mainHead(main: Instance): Promise<number> {
  const res = await fetch(`${main.url}/api/v2/changes/head`, { headers: { authorization: `Bearer ${await main.token()}` } });
  return ((await res.json()) as { seq: number }).seq;
}

export async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 20_000, everyMs = 50): Promise<number> {
  const started = Date.now();
  for (;;) {
    if (await check()) return Date.now() - started;
    if (Date.now() - started > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Waits until the follower's cursor reached the main store's head (orders excepted, which it cannot see). */
export async function waitCaughtUp(main: Instance, follower: Instance, timeoutMs = 20_000): Promise<void> {
  const head = await mainHead(main);
  await waitFor(`the follower to reach seq ${head}`, async () => ((await readState(follower.database.store.db))?.cursorSeq ?? -1) >= head, timeoutMs);
}

const quiet = { info: () => {}, warn: () => {}, error: () => {} };

/** A follower running in this process (what `serve` with SYNC_FROM runs), stopped by `stop()`. */
export function followInProcess(main: Instance, follower: Instance, options: Partial<SyncOptions> = {}): { done: Promise<SyncOutcome>; stop(): Promise<SyncOutcome> } {
  const controller = new AbortController();
  const done = runSync({
    store: follower.database.store, from: main.url, ...main.follower, follow: true, log: quiet, signal: controller.signal,
    bus: follower.server.ctx.bus, ...options,
  });
  return { done, stop: async () => { controller.abort(); return done; } };
}

export function syncOnce(main: Instance, follower: Instance, options: Partial<SyncOptions> = {}): Promise<SyncOutcome> {
  return runSync({ store: follower.database.store, from: main.url, ...main.follower, follow: false, log: quiet, ...options });
}

/** `store-api sync --follow` as a child process, as an operator runs it. */
export function followAsChild(main: Instance, follower: Instance): ChildProcess {
  return spawn(process.execPath, ['bin/store-api.js', 'sync', '--follow', '--from', main.url], {
    env: { ...process.env, DATABASE_URL: follower.database.url, SYNC_CLIENT_ID: main.follower.clientId, SYNC_CLIENT_SECRET: main.follower.clientSecret, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
}

/** A product of the test, with a unique article number. */
export const newProduct = (n: number, extra: Record<string, unknown> = {}) => ({ articleNumber: `SYNC-${n}`, name: `Synced product ${n}`, price: '99.90', currency: 'CZK', vatRate: 21, stock: n, ...extra });

/** The names of a table's indexes (every kind), sorted. */
export async function indexesOf(store: Store, table: string): Promise<string[]> {
  const r = store.dialect === 'postgres'
    ? await sql<{ name: string }>`select indexname as name from pg_indexes where tablename = ${table} and schemaname = current_schema()`.execute(store.db)
    : await sql<{ name: string }>`select name from sqlite_master where type = 'index' and tbl_name = ${table}`.execute(store.db);
  return r.rows.map((x) => x.name).sort();
}
