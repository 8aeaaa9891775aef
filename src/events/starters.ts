import type { BackgroundStarter } from '../server.ts';
import { startEventPruner } from './pruner.ts';

/** What the event log runs beside the server; server.ts adds these to its background starters. */
export const eventStarters: BackgroundStarter[] = [startEventPruner];
