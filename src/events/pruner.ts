import type { AppContext } from '../context.ts';
import type { BackgroundStarter } from '../background/task.ts';
import { pruneEvents } from './feed.ts';
import { pruneDeliveries } from './webhooks/outbox.ts';

const EVERY_MS = 3_600_000;
const DAY_MS = 86_400_000;

/** Deletes events and finished webhook deliveries older than the retention; several nodes may run it at once harmlessly. */
export async function pruneOnce(ctx: AppContext, now = Date.now()): Promise<number> {
  const before = new Date(now - ctx.config.eventRetentionDays * DAY_MS).toISOString();
  const deleted = await pruneEvents(ctx.store.db, before);
  await pruneDeliveries(ctx.store.db, before);
  return deleted;
}

/** Prunes at start and then hourly, beside the server. */
export const startEventPruner: BackgroundStarter = async (ctx) => {
  let running: Promise<unknown> = Promise.resolve();
  const run = () => {
    running = pruneOnce(ctx)
      .then((deleted) => deleted > 0 && ctx.log?.info({ deleted }, 'pruned old events'))
      .catch((err: unknown) => ctx.log?.warn({ err }, 'event pruning failed'));
  };
  const first = setTimeout(run, 10_000);
  const timer = setInterval(run, EVERY_MS);
  first.unref();
  timer.unref();
  return {
    name: 'event-pruner',
    stop: async () => {
      clearTimeout(first);
      clearInterval(timer);
      await running;
    },
  };
};
