import { ConfigError } from '../config.ts';
import type { AppContext } from '../context.ts';
import type { BackgroundStarter } from '../background/task.ts';
import type { SyncLog } from './client.ts';
import { runSync } from './follower.ts';
import { mirrorsOf } from './mirrors.ts';
import { followsMain } from './state.ts';

/** How often `serve` looks whether a `sync` run in another process made this store a follower. */
const LOOK_EVERY_MS = 5_000;

/** Marks the followed collections so the admin API refuses local edits of them (unless SYNC_ALLOW_LOCAL_EDITS). */
export function setFollowed(ctx: AppContext, follows: boolean): void {
  for (const c of mirrorsOf(ctx.resources).collections) {
    if (follows && !ctx.config.sync.allowLocalEdits) ctx.followed.add(c);
    else ctx.followed.delete(c);
  }
}

const silentLog: SyncLog = { info: () => {}, warn: () => {}, error: () => {} };

/**
 * Beside `serve`: with SYNC_FROM, a follower that never gives up; without it, a watch on the sync state so
 * that a store made a follower by `store-api sync` (in another process) refuses local edits too.
 */
export const startSyncFollower: BackgroundStarter = async (ctx) => {
  const { from, clientId, clientSecret } = ctx.config.sync;
  const look = async () => {
    if (!from) setFollowed(ctx, await followsMain(ctx.store.db));
  };
  await look();
  const timer = setInterval(() => void look().catch((err: unknown) => ctx.log?.warn({ err }, 'sync: could not read the sync state')), LOOK_EVERY_MS);
  timer.unref();
  if (!from) return { name: 'sync-watch', stop: async () => clearInterval(timer) };

  if (!clientId || !clientSecret) throw new ConfigError('SYNC_FROM needs SYNC_CLIENT_ID and SYNC_CLIENT_SECRET (a credential of the main store with read scopes)');
  setFollowed(ctx, true);
  const controller = new AbortController();
  const log = ctx.log?.child({ task: 'sync' }) ?? silentLog;
  const running = runSync({
    store: ctx.store, from, clientId, clientSecret, follow: true, log, signal: controller.signal,
    exitOnStartupError: false, resources: ctx.resources, bus: ctx.bus, force: ctx.config.sync.force, maxBodyBytes: ctx.config.sync.maxBodyBytes, snapshotQueueWaitMs: ctx.config.sync.snapshotQueueWaitMs,
  }).catch((err: unknown) => log.error({ error: err instanceof Error ? err.message : String(err) }, 'sync: follower stopped'));
  return {
    name: 'sync-follower',
    stop: async () => {
      clearInterval(timer);
      controller.abort();
      await running;
    },
  };
};
