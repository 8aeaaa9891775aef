import type { Command } from 'commander';
import { registerWebhooks } from './webhooks.ts';
import { registerSync } from './sync.ts';

/** Commands of features beyond the core (webhooks, sync), each adding itself here. */
export const extraCommands: Array<(program: Command) => void> = [];
extraCommands.push(registerWebhooks);
extraCommands.push(registerSync);
