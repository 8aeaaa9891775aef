import type { BackgroundStarter } from '../server.ts';
import { startEventPruner } from './pruner.ts';
import { WebhookDispatcher } from './webhooks/dispatcher.ts';

/** Delivers webhooks beside the server on every node; nodes share the work through the database. */
export const startWebhookDispatcher: BackgroundStarter = async (ctx) => {
  const dispatcher = new WebhookDispatcher({ store: ctx.store, bus: ctx.bus, config: ctx.config, log: ctx.log });
  dispatcher.start();
  return { name: 'webhook-dispatcher', stop: () => dispatcher.stop() };
};

/** What the event log runs beside the server; server.ts adds these to its background starters. */
export const eventStarters: BackgroundStarter[] = [startEventPruner, startWebhookDispatcher];
