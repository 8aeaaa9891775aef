import type { BackgroundStarter } from '../background/task.ts';

const EVERY_MS = 3_600_000;

/** Deletes expired bearer tokens hourly, beside the server; several nodes may run it at once harmlessly. */
export const startTokenPruner: BackgroundStarter = async (ctx) => {
  let running: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    running = ctx.tokens.pruneExpired().catch((err: unknown) => ctx.log?.warn({ err }, 'token pruning failed'));
  }, EVERY_MS);
  timer.unref();
  return {
    name: 'token-pruner',
    stop: async () => {
      clearInterval(timer);
      await running;
    },
  };
};
