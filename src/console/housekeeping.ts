import type { BackgroundStarter } from '../background/task.ts';
import { pruneSessions } from './session.ts';
import { pruneUsage, usageOf } from './usage.ts';

/** How often a node writes its usage counts: the console's figures are this much behind at most, per node. */
export const USAGE_FLUSH_MS = 10_000;
const PRUNE_EVERY_MS = 3_600_000;

/**
 * Beside the server on every node: flushes the usage counters every USAGE_FLUSH_MS and once more on the way
 * down (after the HTTP server has finished its last requests, before the database closes), and hourly deletes
 * expired console sessions and usage older than a week. Several nodes doing so at once is harmless.
 */
export const startConsoleHousekeeping: BackgroundStarter = async (ctx) => {
  const counter = usageOf(ctx);
  const db = ctx.store.db;
  const flush = () => counter.flush(db).catch((err: unknown) => ctx.log?.warn({ err }, 'console: usage counts not written yet (kept for the next flush)'));
  const prune = () =>
    Promise.all([pruneSessions(ctx), pruneUsage(db)]).catch((err: unknown) => ctx.log?.warn({ err }, 'console: pruning sessions or usage failed'));
  const flushing = setInterval(() => void flush(), USAGE_FLUSH_MS);
  const pruning = setInterval(() => void prune(), PRUNE_EVERY_MS);
  flushing.unref();
  pruning.unref();
  return {
    name: 'console-housekeeping',
    stop: async () => {
      clearInterval(flushing);
      clearInterval(pruning);
      await flush();
    },
  };
};
