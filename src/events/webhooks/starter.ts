import type { BackgroundStarter } from '../../background/task.ts';
import { WebhookDispatcher } from './dispatcher.ts';

/** Delivers webhooks beside the server on every node; nodes share the work through the database. */
export const startWebhookDispatcher: BackgroundStarter = async (ctx) => {
  const dispatcher = new WebhookDispatcher({ store: ctx.store, bus: ctx.bus, config: ctx.config, log: ctx.log });
  dispatcher.start();
  return { name: 'webhook-dispatcher', stop: () => dispatcher.stop() };
};
