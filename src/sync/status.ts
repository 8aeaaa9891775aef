import type { Executor } from '../db/database.ts';
import { headSeq } from '../events/log.ts';
import { FOLLOWED_COLLECTIONS } from './mirrors.ts';
import { readState } from './state.ts';

/** A follower that has not heard from the main store for this long is reported as stale. */
export const STALE_AFTER_MS = 60_000;

export interface SyncStatus {
  following: boolean;
  source: string | null;
  phase: 'snapshot' | 'following' | null;
  collections: string[];
  cursor: number | null;
  /** The main store's head as last seen (its last event this follower may read). */
  headSeen: number | null;
  /** Events known on the main store and not applied here yet. */
  lagEvents: number | null;
  /** Seconds from a change on the main store to its application here, for the last applied batch. */
  lagSeconds: number | null;
  lastAppliedAt: string | null;
  lastEventAt: string | null;
  lastContactAt: string | null;
  /** No word from the main store for a minute: the follower is not running, or the main store is away. */
  stale: boolean;
  lastError: string | null;
  lastErrorAt: string | null;
  appliedEvents: number;
  appliedChanges: number;
  snapshots: number;
  snapshotStartedAt: string | null;
  snapshotFinishedAt: string | null;
  /** This store's own feed head: what a follower of this follower reads up to. */
  localHead: number;
}

export async function syncStatus(db: Executor, now = Date.now()): Promise<SyncStatus> {
  const s = await readState(db);
  const localHead = await headSeq(db);
  if (!s) {
    return {
      following: false, source: null, phase: null, collections: [], cursor: null, headSeen: null, lagEvents: null, lagSeconds: null,
      lastAppliedAt: null, lastEventAt: null, lastContactAt: null, stale: false, lastError: null, lastErrorAt: null,
      appliedEvents: 0, appliedChanges: 0, snapshots: 0, snapshotStartedAt: null, snapshotFinishedAt: null, localHead,
    };
  }
  const contact = s.lastContactAt ? Date.parse(s.lastContactAt) : 0;
  return {
    following: true,
    source: s.sourceUrl,
    phase: s.phase,
    collections: FOLLOWED_COLLECTIONS,
    cursor: s.cursorSeq,
    headSeen: s.headSeq,
    lagEvents: s.headSeq === null ? null : Math.max(0, s.headSeq - s.cursorSeq),
    lagSeconds: s.lagMs === null ? null : s.lagMs / 1000,
    lastAppliedAt: s.lastAppliedAt,
    lastEventAt: s.lastEventAt,
    lastContactAt: s.lastContactAt,
    stale: now - contact > STALE_AFTER_MS,
    lastError: s.lastError,
    lastErrorAt: s.lastErrorAt,
    appliedEvents: s.appliedEvents,
    appliedChanges: s.appliedChanges,
    snapshots: s.snapshots,
    snapshotStartedAt: s.snapshotStartedAt,
    snapshotFinishedAt: s.snapshotFinishedAt,
    localHead,
  };
}

/** The status as Prometheus text exposition (GET /admin/api/sync/metrics). */
export function syncMetrics(s: SyncStatus): string {
  const lines: string[] = [];
  const metric = (name: string, type: 'gauge' | 'counter', help: string, value: number | null) => {
    lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`, `${name} ${value ?? 'NaN'}`);
  };
  metric('store_sync_following', 'gauge', 'Whether this store follows a main store (1) or not (0).', s.following ? 1 : 0);
  metric('store_sync_snapshot_in_progress', 'gauge', 'A snapshot of the main store is being copied.', s.phase === 'snapshot' ? 1 : 0);
  metric('store_sync_cursor_seq', 'gauge', 'The last main-store event applied here.', s.cursor);
  metric('store_sync_head_seq', 'gauge', 'The main store\'s head as last seen.', s.headSeen);
  metric('store_sync_lag_events', 'gauge', 'Main-store events not applied here yet.', s.lagEvents);
  metric('store_sync_lag_seconds', 'gauge', 'Delay from a change on the main store to its application here (last batch).', s.lagSeconds);
  metric('store_sync_seconds_since_contact', 'gauge', 'Seconds since the main store last answered.', s.lastContactAt ? Math.max(0, (Date.now() - Date.parse(s.lastContactAt)) / 1000) : null);
  metric('store_sync_applied_events_total', 'counter', 'Main-store events applied.', s.appliedEvents);
  metric('store_sync_applied_changes_total', 'counter', 'Local rows written or deleted by the sync.', s.appliedChanges);
  metric('store_sync_snapshots_total', 'counter', 'Snapshots completed.', s.snapshots);
  return `${lines.join('\n')}\n`;
}
