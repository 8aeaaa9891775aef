import type { FastifyBaseLogger } from 'fastify';
import { SharedEngine } from './ai/shared-engine.ts';
import { ensureAdminToken } from './auth/admin-token.ts';
import { hashingKey } from './auth/credentials.service.ts';
import { TokenService } from './auth/tokens.ts';
import type { Config } from './config.ts';
import type { Store } from './db/database.ts';
import { EventBus } from './events/bus.ts';
import { appRegistry } from './modules/registry.ts';
import { bucketStoreFor, type BucketStore, type Policy } from './ratelimit/bucket.ts';
import { FailureThrottle } from './ratelimit/failures.ts';
import type { Registry } from './resources/registry.ts';

/** What every part of the running service shares: built once, by the server and by tests alike. */
export interface AppContext {
  config: Config;
  store: Store;
  tokens: TokenService;
  buckets: BucketStore;
  /** default and ai: per credential on /api/v2; token and tokenAddress: POST /oauth/token per credential and per source address. */
  policies: { default: Policy; ai: Policy; token: Policy; tokenAddress: Policy };
  /** Wrong admin tokens per source address on this node: one allowance for the admin API and the console's sign-in. */
  adminFailures: FailureThrottle;
  bus: EventBus;
  /** The store's resources: every route, writer, export, feed and follower reads them from here. */
  resources: Registry;
  hashKey: string;
  /** The admin token's hash; `generated` holds the plain token only on the start that created it. */
  admin: { hash: string; generated?: string };
  /** Collections this store follows from a main store (sync): the admin API refuses local edits of them. */
  followed: Set<string>;
  /** The text engine AI_ENGINE names, made once for the whole app (the generate route and the MCP tool share it). */
  textEngine: SharedEngine;
  log?: FastifyBaseLogger;
}

/** `resources`: the store's own by default; a test adds a resource of its own (test/resources/). */
export async function createContext(config: Config, store: Store, options: { resources?: Registry } = {}): Promise<AppContext> {
  const hashKey = await hashingKey(store.db);
  // The engine logs through the app's logger, which buildApp sets on the context after this returns.
  const ctx: AppContext = {
    config,
    store,
    hashKey,
    tokens: new TokenService(store.db, hashKey, config.tokenTtlSeconds, config.maxLiveTokensPerCredential),
    buckets: bucketStoreFor(store),
    policies: {
      default: { name: 'default', rps: config.rateLimit.rps, burst: config.rateLimit.burst },
      ai: { name: 'ai', rps: config.aiRateLimit.rps, burst: config.aiRateLimit.burst },
      token: { name: 'token', rps: config.tokenRateLimit.rps, burst: config.tokenRateLimit.burst },
      tokenAddress: { name: 'token-address', rps: config.tokenAddressRateLimit.rps, burst: config.tokenAddressRateLimit.burst },
    },
    adminFailures: new FailureThrottle({ name: 'admin-failures', ...config.adminFailureLimit }),
    bus: new EventBus(),
    resources: options.resources ?? appRegistry(),
    admin: await ensureAdminToken(store.db, hashKey, config.adminToken),
    followed: new Set(),
    textEngine: new SharedEngine(config, { warn: (message) => ctx.log?.warn(message), error: (message) => ctx.log?.error(message) }),
  };
  return ctx;
}
