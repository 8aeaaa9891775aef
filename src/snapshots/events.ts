import type { NewEvent } from '../events/log.ts';
import type { SnapshotJob } from './jobs.repository.ts';

/** The event resource of snapshot jobs: the feed shows these events only to the job's own credential (docs/snapshots.md). */
export const SNAPSHOT_EVENT_RESOURCE = 'snapshot';
export const SNAPSHOT_EVENT_TYPES = ['snapshot.completed', 'snapshot.failed'] as const;

/** What a snapshot event carries: the job as `GET /api/v2/snapshots/{id}` shows it, without a download URL (it would expire; ask the job). */
export function snapshotEvent(type: (typeof SNAPSHOT_EVENT_TYPES)[number], job: SnapshotJob): NewEvent {
  return {
    type,
    resource: SNAPSHOT_EVENT_RESOURCE,
    resourceId: job.id,
    data: {
      id: job.id, credentialId: job.credentialId, collection: job.collection, format: job.format, status: job.status, rows: job.rows, seq: job.seq,
      size: job.size, sha256: job.sha256, error: job.error, createdAt: job.createdAt, startedAt: job.startedAt, finishedAt: job.finishedAt, expiresAt: job.expiresAt,
    },
  };
}
