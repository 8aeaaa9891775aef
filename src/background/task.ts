import type { AppContext } from '../context.ts';

/** Something that runs beside the HTTP server (webhook delivery, sync follower, pruning) and stops with it. */
export interface BackgroundTask {
  name: string;
  stop(): Promise<void>;
}

/** Starts one background task on the running app's context; undefined when there is nothing to run. */
export type BackgroundStarter = (ctx: AppContext) => Promise<BackgroundTask | undefined>;
