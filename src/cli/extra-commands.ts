import type { Command } from 'commander';

/** Commands of features beyond the core (webhooks, sync), each adding itself here. */
export const extraCommands: Array<(program: Command) => void> = [];
