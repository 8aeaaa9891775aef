import { startTokenPruner } from '../auth/token-pruner.ts';
import { startConsoleHousekeeping } from '../console/housekeeping.ts';
import type { AppContext } from '../context.ts';
import { startEventPruner } from '../events/pruner.ts';
import { startWebhookDispatcher } from '../events/webhooks/starter.ts';
import { startSnapshotRunner } from '../snapshots/starter.ts';
import { startSyncFollower } from '../sync/starter.ts';
import type { BackgroundStarter, BackgroundTask } from './task.ts';

/** Everything that runs beside the HTTP server, in the order it starts (it stops in the reverse order). */
export const BACKGROUND_STARTERS: readonly BackgroundStarter[] = [
  startEventPruner,
  startWebhookDispatcher,
  startSyncFollower,
  startSnapshotRunner,
  startConsoleHousekeeping,
  startTokenPruner,
];

/** Stops tasks in the reverse order of their start; one that fails to stop is logged and the others still stop. */
export async function stopBackground(ctx: AppContext, tasks: readonly BackgroundTask[]): Promise<void> {
  for (const task of [...tasks].reverse()) {
    await task.stop().catch((err: unknown) => ctx.log?.error({ err, task: task.name }, 'background task did not stop cleanly'));
  }
}

/** Starts every task; when one cannot start, those already started are stopped again before the error goes on. */
export async function startBackground(ctx: AppContext, starters: readonly BackgroundStarter[] = BACKGROUND_STARTERS): Promise<BackgroundTask[]> {
  const tasks: BackgroundTask[] = [];
  try {
    for (const start of starters) {
      const task = await start(ctx);
      if (task) tasks.push(task);
    }
  } catch (err) {
    await stopBackground(ctx, tasks);
    throw err;
  }
  return tasks;
}
