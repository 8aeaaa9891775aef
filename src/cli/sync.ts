import type { Command } from 'commander';
import { pino } from 'pino';
import { loadConfig } from '../config.ts';
import { openStore } from '../db/database.ts';
import { migrateToLatest } from '../db/migrate.ts';
import { runSync, type SyncOutcome } from '../sync/follower.ts';
import { SyncError } from '../sync/client.ts';
import { FOLLOWED_COLLECTIONS } from '../sync/mirrors.ts';
import { forgetState } from '../sync/state.ts';
import { syncStatus, type SyncStatus } from '../sync/status.ts';
import { fail, printResult } from './output.ts';
import { withStore, type GlobalOptions } from './store.ts';
import { count } from './words.ts';

interface SyncOptions {
  from?: string;
  clientId?: string;
  clientSecret?: string;
  follow?: boolean;
  json?: boolean;
  batchSize?: string;
  force?: boolean;
}

function humanOutcome(o: SyncOutcome): string {
  const snapshot = o.snapshot ? `snapshot of ${count(o.snapshot.items, 'item')} (${count(o.snapshot.changes, 'change')}) in ${(o.snapshot.ms / 1000).toFixed(1)} s, then ` : '';
  return `Synchronised from ${o.source}: ${snapshot}${count(o.events, 'event')} applied (${count(o.changes, 'local change')} in all); cursor ${o.cursor}; ${(o.ms / 1000).toFixed(1)} s.`;
}

function humanStatus(s: SyncStatus): string {
  if (!s.following) return `This store follows no main store (its own feed head is ${s.localHead}).`;
  const lag = [s.lagEvents === null ? null : count(s.lagEvents, 'event'), s.lagSeconds === null ? null : `${s.lagSeconds.toFixed(3)} s at the last batch`].filter(Boolean).join(', ');
  return [
    `source:        ${s.source}`,
    `phase:         ${s.phase}${s.stale ? '  (STALE: no answer from the main store for over a minute; is the follower running?)' : ''}`,
    `followed:      ${s.collections.join(', ')}`,
    `cursor:        ${s.cursor}  (main store head seen: ${s.headSeen ?? 'unknown'})`,
    `lag:           ${lag || 'unknown'}`,
    `last applied:  ${s.lastAppliedAt ?? 'never'}  (last event on the main store: ${s.lastEventAt ?? 'none'})`,
    `last contact:  ${s.lastContactAt ?? 'never'}`,
    `applied:       ${count(s.appliedEvents, 'event')}, ${count(s.appliedChanges, 'local change')}, ${count(s.snapshots, 'snapshot')}`,
    `last error:    ${s.lastError ? `${s.lastError} (${s.lastErrorAt})` : 'none'}`,
    `local head:    ${s.localHead}`,
  ].join('\n');
}

/** `store-api sync`: make this store follow a main store, once (catch up) or for ever (--follow); `sync status`; `sync forget`. */
export function registerSync(program: Command): void {
  const global = () => program.opts<GlobalOptions>();
  const cmd = program
    .command('sync')
    .description(`Follow a main store through its changes feed: ${FOLLOWED_COLLECTIONS.join(', ')} (never orders). Without --follow: catch up once and exit.`)
    .option('--from <url>', 'the main store\'s base URL (SYNC_FROM)')
    .option('--client-id <id>', 'a credential of the main store with read scopes and changes:read (SYNC_CLIENT_ID)')
    .option('--client-secret <secret>', 'its secret (SYNC_CLIENT_SECRET; the variable keeps it out of the process list)')
    .option('--follow', 'keep following (long-polling the feed) until stopped with SIGINT or SIGTERM')
    .option('--batch-size <n>', 'events per local transaction', '500')
    .option('--force', 'on a first sync, replace the products, categories, brands and values this store already holds (SYNC_FORCE)')
    .option('--json', 'machine-readable output')
    .action(async (o: SyncOptions) => {
      const config = loadConfig({ DATABASE_URL: global().database, SYNC_FROM: o.from, SYNC_CLIENT_ID: o.clientId, SYNC_CLIENT_SECRET: o.clientSecret });
      const { from, clientId, clientSecret } = config.sync;
      if (!from) fail('sync needs --from URL (or SYNC_FROM): the main store\'s base URL');
      if (!clientId || !clientSecret) fail('sync needs --client-id and --client-secret (or SYNC_CLIENT_ID and SYNC_CLIENT_SECRET): a credential of the main store');
      const batchSize = Number(o.batchSize);
      if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 1000) fail('--batch-size must be an integer from 1 to 1000');
      const log = pino({ level: config.logLevel, base: { task: 'sync' } }, pino.destination(2));
      const store = openStore(config.databaseUrl, { connectTimeoutMs: config.databaseConnectTimeoutMs, writeWaitMs: config.databaseWriteWaitMs });
      const controller = new AbortController();
      const stop = (signal: string) => {
        log.info({ signal }, 'sync: stopping after the batch in progress');
        controller.abort();
      };
      process.once('SIGINT', () => stop('SIGINT'));
      process.once('SIGTERM', () => stop('SIGTERM'));
      try {
        await migrateToLatest(store.db);
        const outcome = await runSync({
          store, from, clientId, clientSecret, follow: Boolean(o.follow), log, signal: controller.signal, batchSize, exitOnStartupError: true,
          force: Boolean(o.force) || config.sync.force, maxBodyBytes: config.sync.maxBodyBytes, snapshotQueueWaitMs: config.sync.snapshotQueueWaitMs,
        });
        printResult(Boolean(o.json), outcome, () => humanOutcome(outcome));
      } catch (error) {
        if (error instanceof SyncError) fail(error.message);
        throw error;
      } finally {
        await store.close();
      }
    });

  // `sync` has --json too, and commander gives it an option that follows the subcommand's name as well.
  const json = (o: { json?: boolean }) => Boolean(o.json || cmd.opts<{ json?: boolean }>().json);

  cmd
    .command('status')
    .description('How far this store is behind its main store: phase, cursor, lag, last contact, last error')
    .option('--json', 'machine-readable output')
    .action(async (o: { json?: boolean }) => {
      await withStore(global(), async (store) => {
        const status = await syncStatus(store.db);
        printResult(json(o), status, () => humanStatus(status));
      });
    });

  cmd
    .command('forget')
    .description('Stop being a follower: forget the main store and the cursor; local edits are allowed again (the data stays)')
    .option('--json', 'machine-readable output')
    .action(async (o: { json?: boolean }) => {
      await withStore(global(), async (store) => {
        const forgotten = await forgetState(store.db);
        printResult(json(o), { forgotten }, () => (forgotten ? 'This store no longer follows a main store.' : 'This store followed no main store.'));
      });
    });
}
