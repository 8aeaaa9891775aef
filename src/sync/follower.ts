import { isConnectionLoss } from '../db/connection-loss.ts';
import type { Store } from '../db/database.ts';
import { nowIso } from '../db/database.ts';
import { applyChangeSet, changeSetOfEvents } from './apply.ts';
import { backoffDelay, DEFAULT_BACKOFF, sleep, type Backoff } from './backoff.ts';
import { MainStoreClient, SyncError, type ChangesPage, type SyncLog } from './client.ts';
import type { EventBus } from '../events/bus.ts';
import { appRegistry } from '../modules/registry.ts';
import type { Registry } from '../resources/registry.ts';
import { mirrorsOf } from './mirrors.ts';
import { relaxedCommit } from './rows.ts';
import { checkFirstSync, insecureSource } from './guard.ts';
import { takeSnapshot } from './snapshot.ts';
import { advanceCursor, beginSnapshot, noteContact, noteError, noteHead, readState } from './state.ts';
import { checkChangesPage } from './validate.ts';

export interface SyncOptions {
  store: Store;
  from: string;
  clientId: string;
  clientSecret: string;
  /** Keep following after catching up (long-polling the feed) until `signal` aborts. */
  follow: boolean;
  log: SyncLog;
  signal?: AbortSignal;
  /** Events per local transaction (and per feed request). */
  batchSize?: number;
  /** Long-poll wait of the feed, in seconds. */
  waitSeconds?: number;
  /**
   * In follow mode, whether a permanent error before the first success (a wrong URL, a refused
   * credential, missing scopes) ends the run. The CLI ends, one line on stderr; `serve` keeps trying.
   */
  exitOnStartupError?: boolean;
  /** The resources of this store (by default its own): which of them it follows, and how each is copied. */
  resources?: Registry;
  /** This process's event bus, woken after each local transaction that recorded events (the server's own long-polling readers and webhooks). */
  bus?: EventBus;
  /** Retry pacing (tests shorten it). */
  backoff?: Backoff;
  /** A first sync into a store whose followed collections hold rows replaces them (`--force`, SYNC_FORCE); otherwise it is refused. */
  force?: boolean;
  /** The largest answer of the main store read (SYNC_MAX_BODY_BYTES). */
  maxBodyBytes?: number;
  /** How long a first copy waits for a snapshot job the main store keeps queued before it pages instead (SYNC_SNAPSHOT_QUEUE_WAIT_MS). */
  snapshotQueueWaitMs?: number;
}

export interface SyncOutcome {
  source: string;
  snapshot: { items: number; changes: number; ms: number; via: 'snapshots' | 'paging' } | null;
  events: number;
  changes: number;
  cursor: number;
  ms: number;
}

const BATCH = 500;
const WAIT_SECONDS = 25;
/** How often an idle follower writes that the main store still answers (status shows it). */
const CONTACT_EVERY_MS = 10_000;
const HEAD_EVERY_MS = 5_000;
/** The longest wait before trying again when the local database could not be reached. */
const LOCAL_RETRY_MAX_MS = 5_000;

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Makes this store follow a main store: a snapshot when it has none (or the main store pruned past its
 * cursor), then the changes feed in `seq` order, each batch applied in one local transaction together with
 * the cursor. One-shot mode stops when caught up; follow mode long-polls for ever, retrying whatever fails.
 */
export async function runSync(o: SyncOptions): Promise<SyncOutcome> {
  const started = Date.now();
  const { store, log } = o;
  const mirrors = mirrorsOf(o.resources ?? appRegistry());
  const batchSize = o.batchSize ?? BATCH;
  const wait = o.follow ? (o.waitSeconds ?? WAIT_SECONDS) : 0;
  let lastErrorNote = 0;
  const client = new MainStoreClient({
    baseUrl: o.from,
    clientId: o.clientId,
    clientSecret: o.clientSecret,
    signal: o.signal,
    maxAttempts: o.follow ? Infinity : 6,
    backoff: o.backoff,
    maxBodyBytes: o.maxBodyBytes,
    onRetry: (error, attempt, delayMs) => {
      log.warn({ error: error.message, status: error.status, attempt, retryInMs: delayMs }, 'sync: main store request failed; retrying');
      // The state shows the last error; written at most every second so an outage does not hammer the database.
      if (Date.now() - lastErrorNote > 1000) {
        lastErrorNote = Date.now();
        void noteError(store.db, error.message, nowIso()).catch(() => undefined);
      }
    },
  });
  const outcome: SyncOutcome = { source: client.baseUrl, snapshot: null, events: 0, changes: 0, cursor: 0, ms: 0 };
  const insecure = insecureSource(client.baseUrl);
  if (insecure) log.warn({ source: client.baseUrl }, `sync: ${insecure}`);
  let connected = false;
  let failures = 0;

  const checkScopes = async () => {
    const scopes = await client.scopes();
    const missing = mirrors.requiredScopes.filter((s) => !scopes.has(s));
    if (missing.length) throw new SyncError(`the credential lacks scopes on the main store: ${missing.join(', ')} (a follower needs ${mirrors.requiredScopes.join(', ')})`, 'permanent');
  };

  const applyPage = async (page: ChangesPage, cursor: number): Promise<number> => {
    const last = page.data[page.data.length - 1];
    const t0 = Date.now();
    const { set, ignored } = changeSetOfEvents(page.data, mirrors);
    const recorded = { events: 0 };
    const result = await store.db.transaction().execute(async (trx) => {
      await relaxedCommit(trx, store.dialect);
      const w = { trx, dialect: store.dialect, now: nowIso(), recorded };
      const applied = await applyChangeSet(w, set, mirrors);
      const lagMs = Math.max(0, Date.now() - Date.parse(last.occurredAt));
      await advanceCursor(trx, { cursor: last.seq, events: page.data.length, changes: applied.changed, lastEventAt: last.occurredAt, lagMs, now: w.now });
      if (!page.pagination.hasMore) await noteHead(trx, last.seq);
      return { ...applied, lagMs };
    });
    // Woken after the commit, by the write path itself.
    if (recorded.events > 0) o.bus?.appended();
    outcome.events += page.data.length;
    outcome.changes += result.changed;
    log.info({ from: cursor, to: last.seq, events: page.data.length, changes: result.changed, ignored, deferred: result.deferred, lagMs: result.lagMs, ms: Date.now() - t0 }, 'sync: applied a batch');
    return last.seq;
  };

  try {
    return await followLoop();
  } finally {
    client.close();
  }

  async function followLoop(): Promise<SyncOutcome> {
    let lastContactNote = 0;
    let lastHeadCheck = 0;
    /** The main store pruned past our cursor: start a snapshot (inside the try, so a failure here is retried too). */
    let restart = false;
    while (!o.signal?.aborted) {
      try {
        if (restart) {
          const head = await client.head().catch(() => 0);
          await beginSnapshot(store.db, client.baseUrl, head, nowIso());
          restart = false;
        }
        if (!connected) await checkScopes();
        let state = await readState(store.db);
        if (!state || state.sourceUrl !== client.baseUrl || state.phase === 'snapshot') {
          // Never followed anything: the snapshot would replace a catalogue of this store's own.
          if (!state) await checkFirstSync(store.db, mirrors, client.baseUrl, o.force ?? false);
          if (state && state.sourceUrl !== client.baseUrl) log.warn({ previous: state.sourceUrl, source: client.baseUrl }, 'sync: the main store changed; taking a fresh snapshot');
          const s = await takeSnapshot(store, client, mirrors, log, o.bus, o.signal, o.snapshotQueueWaitMs);
          connected = true;
          outcome.snapshot = { items: s.items, changes: s.changes, ms: s.ms, via: s.via };
          outcome.changes += s.changes;
          state = (await readState(store.db))!;
        }
        let cursor = state.cursorSeq;
        let pending: Promise<ChangesPage> | undefined;
        for (;;) {
          const page = await (pending ?? client.changes(cursor, batchSize, wait));
          pending = undefined;
          checkChangesPage(page, mirrors);
          connected = true;
          failures = 0;
          const more = page.pagination.hasMore && page.data.length > 0;
          if (more) {
            // The next batch travels while this one is written; the cursor it asks from is already known.
            pending = client.changes(page.data[page.data.length - 1].seq, batchSize, wait);
            pending.catch(() => undefined);
            if (Date.now() - lastHeadCheck > HEAD_EVERY_MS) {
              lastHeadCheck = Date.now();
              void client.head().then((head) => noteHead(store.db, head)).catch(() => undefined);
            }
          }
          if (page.data.length > 0) cursor = await applyPage(page, cursor);
          else if (Date.now() - lastContactNote > CONTACT_EVERY_MS) {
            lastContactNote = Date.now();
            await noteContact(store.db, nowIso(), cursor);
          }
          outcome.cursor = cursor;
          if (!more && !o.follow) {
            await noteContact(store.db, nowIso(), cursor);
            outcome.ms = Date.now() - started;
            return outcome;
          }
          if (o.signal?.aborted) break;
        }
      } catch (error) {
        if (o.signal?.aborted || (error instanceof SyncError && error.kind === 'stopped')) break;
        if (error instanceof SyncError && error.kind === 'cursor_expired') {
          log.warn({ error: error.message }, 'sync: the main store no longer has the events after our cursor; taking a fresh snapshot');
          restart = true;
          continue;
        }
        const permanent = error instanceof SyncError && error.kind === 'permanent';
        if (!o.follow || (permanent && !connected && o.exitOnStartupError)) {
          await noteError(store.db, describe(error), nowIso()).catch(() => undefined);
          throw error;
        }
        failures++;
        // The local database away (a restart, a failover) is retried soon whatever the main store's pacing.
        const delay = Math.min(backoffDelay(failures, o.backoff ?? DEFAULT_BACKOFF), !(error instanceof SyncError) && isConnectionLoss(error) ? LOCAL_RETRY_MAX_MS : Infinity);
        log.error({ error: describe(error), retryInMs: delay }, 'sync: follower step failed; retrying');
        await noteError(store.db, describe(error), nowIso()).catch(() => undefined);
        await sleep(delay, o.signal);
      }
    }
    outcome.ms = Date.now() - started;
    return outcome;
  }
}
