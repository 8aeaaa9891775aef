import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.ts';
import type { Config } from './config.ts';
import { createContext, type AppContext } from './context.ts';
import { openStore, type Store } from './db/database.ts';
import { migrateToLatest } from './db/migrate.ts';
import { eventStarters } from './events/starters.ts';
import { startSyncFollower } from './sync/starter.ts';
import { startConsoleHousekeeping } from './console/housekeeping.ts';

/** Something that runs beside the HTTP server (webhook delivery, sync follower, pruning) and stops with it. */
export interface BackgroundTask {
  name: string;
  stop(): Promise<void>;
}

export type BackgroundStarter = (ctx: AppContext) => Promise<BackgroundTask | undefined>;

/** Registered by features that run in the background; `startServer` starts each after the app listens. */
export const backgroundStarters: BackgroundStarter[] = [];
backgroundStarters.push(...eventStarters);
backgroundStarters.push(startSyncFollower);
backgroundStarters.push(startConsoleHousekeeping);

export interface RunningServer {
  app: FastifyInstance;
  ctx: AppContext;
  store: Store;
  url: string;
  stop(): Promise<void>;
}

/** Migrates, builds the app, listens, starts background work; `stop` undoes it all in reverse order. */
export async function startServer(config: Config, options: { logger?: boolean | { level: string }; store?: Store } = {}): Promise<RunningServer> {
  const store = options.store ?? openStore(config.databaseUrl, { connectTimeoutMs: config.databaseConnectTimeoutMs });
  await migrateToLatest(store.db);
  const ctx = await createContext(config, store);
  const app = await buildApp(ctx, { logger: options.logger });
  await app.listen({ host: config.host, port: config.port });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
  const tasks: BackgroundTask[] = [];
  for (const start of backgroundStarters) {
    const task = await start(ctx);
    if (task) tasks.push(task);
  }
  const prune = setInterval(() => void ctx.tokens.pruneExpired().catch((err: unknown) => ctx.log?.warn({ err }, 'token pruning failed')), 3_600_000);
  prune.unref();
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      clearInterval(prune);
      // Stop taking requests and finish those in flight, then stop background work, then the database.
      await app.close();
      for (const task of tasks.reverse()) await task.stop().catch((err: unknown) => ctx.log?.error({ err, task: task.name }, 'background task did not stop cleanly'));
      await store.close();
    })());
  return { app, ctx, store, url, stop };
}
