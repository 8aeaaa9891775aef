import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.ts';
import type { Config } from './config.ts';
import { createContext, type AppContext } from './context.ts';
import { openStore, type Store } from './db/database.ts';
import { migrateToLatest } from './db/migrate.ts';
import { startBackground, stopBackground } from './background/starters.ts';

export interface RunningServer {
  app: FastifyInstance;
  ctx: AppContext;
  store: Store;
  url: string;
  stop(): Promise<void>;
}

/** Migrates, builds the app, listens, starts background work; `stop` undoes it all in reverse order. */
export async function startServer(config: Config, options: { logger?: boolean | { level: string }; store?: Store } = {}): Promise<RunningServer> {
  const store = options.store ?? openStore(config.databaseUrl, { connectTimeoutMs: config.databaseConnectTimeoutMs, writeWaitMs: config.databaseWriteWaitMs });
  await migrateToLatest(store.db);
  const ctx = await createContext(config, store);
  const app = await buildApp(ctx, { logger: options.logger });
  await app.listen({ host: config.host, port: config.port });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
  // Background work starts once the app listens (src/background/starters.ts lists it); if some cannot start,
  // what did start has been stopped, and the server is taken down again rather than left half running.
  const tasks = await startBackground(ctx).catch(async (err: unknown) => {
    await app.close();
    await store.close();
    throw err;
  });
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      // Stop taking requests and finish those in flight, then stop background work, then the database.
      await app.close();
      await stopBackground(ctx, tasks);
      await store.close();
    })());
  return { app, ctx, store, url, stop };
}
