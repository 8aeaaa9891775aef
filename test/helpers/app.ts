import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import type { Migration } from 'kysely';
import { buildApp } from '../../src/app.ts';
import { createCredential } from '../../src/auth/credentials.service.ts';
import type { Scope } from '../../src/auth/scopes.ts';
import { loadConfig, type Config } from '../../src/config.ts';
import { createContext, type AppContext } from '../../src/context.ts';
import type { Dialect } from '../../src/db/database.ts';
import type { Registry } from '../../src/resources/registry.ts';
import { seedStore, type SeedOptions } from '../../src/seed/seed.ts';
import { createTestDatabase, type TestDatabase } from './databases.ts';

/** Long enough for the start-up check (MIN_ADMIN_TOKEN_LENGTH). */
export const ADMIN_TOKEN = 'test-admin-token-0123456789abcdefghij';

/** Limits high enough that suites which mint many tokens or probe admin routes are not throttled (tests of the limits set their own). */
const UNTHROTTLED = {
  RATE_LIMIT_RPS: '100000', RATE_LIMIT_BURST: '100000', TOKEN_RATE_LIMIT_RPS: '100000', TOKEN_RATE_LIMIT_BURST: '100000',
  TOKEN_ADDRESS_RATE_LIMIT_RPS: '100000', TOKEN_ADDRESS_RATE_LIMIT_BURST: '100000', ADMIN_FAILURE_RATE_LIMIT_RPS: '100000', ADMIN_FAILURE_RATE_LIMIT_BURST: '100000',
};

export interface TestApp {
  dialect: Dialect;
  app: FastifyInstance;
  ctx: AppContext;
  database: TestDatabase;
  config: Config;
  /** A request to the admin API with the admin token. */
  admin(method: 'POST' | 'PATCH' | 'DELETE' | 'GET', url: string, payload?: unknown): Promise<LightMyRequestResponse>;
  /** A fresh credential with these scopes, and a token for it. */
  credential(scopes: Scope[]): Promise<{ clientId: string; clientSecret: string; token: string }>;
  /** A GET with a bearer token. */
  get(url: string, token: string, headers?: Record<string, string>): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

export interface TestAppOptions {
  env?: Record<string, string>;
  seed?: SeedOptions;
  /** The store's resources (by default its own); with `migrations` for the tables of those it adds. */
  resources?: Registry;
  migrations?: Record<string, Migration>;
}

/** The app exactly as the server builds it, on a fresh database of the given dialect, with fixtures from the seeder. */
export async function createTestApp(dialect: Dialect, options: TestAppOptions = {}): Promise<TestApp> {
  const database = await createTestDatabase(dialect, options.migrations);
  if (options.seed) await seedStore(database.store, options.seed);
  const config = loadConfig({ DATABASE_URL: database.url, ADMIN_TOKEN, ...UNTHROTTLED, PUBLIC_URL: 'http://store.test', ...options.env }, {});
  const ctx = await createContext(config, database.store, { resources: options.resources });
  const app = await buildApp(ctx, { logger: false });
  await app.ready();
  return {
    dialect,
    app,
    ctx,
    database,
    config,
    admin: (method, url, payload) => app.inject({ method, url, payload: payload as never, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }),
    credential: async (scopes) => {
      const issued = await createCredential(database.store.db, ctx.hashKey, `test ${scopes.join(' ')}`, scopes);
      const res = await app.inject({ method: 'POST', url: '/oauth/token', payload: { grant_type: 'client_credentials', client_id: issued.clientId, client_secret: issued.clientSecret } });
      if (res.statusCode !== 200) throw new Error(`token request failed: ${res.body}`);
      return { clientId: issued.clientId, clientSecret: issued.clientSecret, token: res.json().access_token as string };
    },
    get: (url, token, headers = {}) => app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}`, ...headers } }),
    close: async () => {
      await app.close();
      await database.drop();
    },
  };
}
