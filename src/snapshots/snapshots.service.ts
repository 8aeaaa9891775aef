import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Scope } from '../auth/scopes.ts';
import type { SnapshotSettings } from '../config.ts';
import type { Store } from '../db/database.ts';
import { nowIso } from '../db/database.ts';
import { AppError } from '../errors/app-error.ts';
import { filteredQuery, plan } from '../listing/engine.ts';
import type { Registry } from '../resources/registry.ts';
import type { Resource } from '../resources/types.ts';
import { activeJobs, insertJob, type SnapshotFormat, type SnapshotJob } from './jobs.repository.ts';

/** Seconds a client over its job cap is told to wait: a job of an average collection takes about this long. */
export const SNAPSHOT_RETRY_AFTER_SECONDS = 10;

export interface SnapshotRequest {
  collection: string;
  format: SnapshotFormat;
  filters?: Record<string, string>;
  fields?: string[];
}

/** Who asks: the credential and the scopes of its token. */
export interface Asker {
  credentialId: number;
  scopes: ReadonlySet<Scope>;
}

/** The job as the API shows it (GET /api/v2/snapshots/{id}). */
export interface SnapshotView {
  id: number;
  status: SnapshotJob['status'];
  collection: string;
  format: SnapshotFormat;
  filters: Record<string, string>;
  fields: string[] | null;
  rows: number;
  seq: number | null;
  size: number | null;
  sha256: string | null;
  error: string | null;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  expiresAt: string | null;
  downloadUrl?: string;
  downloadUrlExpiresAt?: string;
}

export const insufficientScope = (scope: string): AppError =>
  new AppError('insufficient_scope', `This snapshot needs the scope "${scope}".`, {
    headers: { 'www-authenticate': `Bearer realm="store-api", error="insufficient_scope", scope="${scope}"` },
  });

/** The collection of a request or a job, if the asker may read it (403 naming the scope otherwise). */
export function readableCollection(resources: Registry, collection: string, asker: Asker): Resource {
  const def = resources.byCollection.get(collection);
  if (!def) {
    const names = resources.list.map((r) => r.collection).join(', ');
    throw new AppError('invalid_body', `collection must be one of ${names}.`, { errors: [{ name: 'collection', reason: `must be one of ${names}` }] });
  }
  if (!asker.scopes.has(def.scope)) throw insufficientScope(def.scope);
  return def;
}

/**
 * Queues a snapshot: the collection must be one the token may read, and the filters and fields are checked
 * now, exactly as the listing checks them (400 naming the parameter), so that a job never fails on its input.
 * A credential holds at most SNAPSHOTS_PER_CREDENTIAL queued and running jobs (429 with Retry-After beyond).
 */
export async function createSnapshot(store: Store, resources: Registry, hashKey: string, settings: SnapshotSettings, asker: Asker, r: SnapshotRequest): Promise<SnapshotJob> {
  const def = readableCollection(resources, r.collection, asker);
  const filters = r.filters ?? {};
  // The listing's own checks: unknown or malformed filters and fields are the 400 the listing would answer.
  await filteredQuery(store.db, plan(def, { filters, shape: r.fields ? { fields: r.fields } : undefined }, hashKey));
  const fields = r.fields ? ['id', ...new Set(r.fields.filter((f) => f !== 'id'))] : null;
  const active = await activeJobs(store.db, asker.credentialId);
  if (active >= settings.perCredential) {
    throw new AppError('rate_limited', `This credential already has ${active} snapshots queued or running, the most it may have; retry when one has finished.`, {
      headers: { 'retry-after': String(SNAPSHOT_RETRY_AFTER_SECONDS) },
    });
  }
  return insertJob(store.db, { credentialId: asker.credentialId, collection: def.collection, format: r.format, filters, fields }, nowIso());
}

// The signing key is derived from the installation's key, so a signature made for one purpose is useless for another.
const keyOf = (hashKey: string) => createHmac('sha256', hashKey).update('store-data-api snapshot url v1').digest();
const signatureOf = (hashKey: string, id: number, expires: number) => createHmac('sha256', keyOf(hashKey)).update(`${id}.${expires}`).digest('base64url');

/** A download URL that needs no header: valid until `expires` (Unix seconds), for this job only. */
export function signedFileUrl(publicUrl: string, hashKey: string, id: number, expires: number): string {
  return `${publicUrl}/api/v2/snapshots/${id}/file?expires=${expires}&signature=${signatureOf(hashKey, id, expires)}`;
}

/** Whether `signature` is ours for this job and `expires` has not passed. */
export function validSignature(hashKey: string, id: number, expires: number, signature: string, now = Date.now()): boolean {
  if (!Number.isSafeInteger(expires) || expires * 1000 < now) return false;
  const given = Buffer.from(signature);
  const wanted = Buffer.from(signatureOf(hashKey, id, expires));
  return given.length === wanted.length && timingSafeEqual(given, wanted);
}

/** The job as the API shows it; a completed one with a fresh signed URL (SNAPSHOT_URL_TTL_SECONDS, never past the file's expiry). */
export function viewOf(job: SnapshotJob, publicUrl: string, hashKey: string, settings: SnapshotSettings, now = Date.now()): SnapshotView {
  const view: SnapshotView = {
    id: job.id, status: job.status, collection: job.collection, format: job.format, filters: job.filters, fields: job.fields, rows: job.rows,
    seq: job.seq, size: job.size, sha256: job.sha256, error: job.error, createdAt: job.createdAt, startedAt: job.startedAt, finishedAt: job.finishedAt,
    expiresAt: job.expiresAt,
  };
  if (job.status === 'completed') {
    const until = Math.min(Math.floor(now / 1000) + settings.urlTtlSeconds, job.expiresAt ? Math.floor(Date.parse(job.expiresAt) / 1000) : Infinity);
    view.downloadUrl = signedFileUrl(publicUrl, hashKey, job.id, until);
    view.downloadUrlExpiresAt = new Date(until * 1000).toISOString();
  }
  return view;
}

const EXTENSIONS: Record<SnapshotFormat, string> = { ndjson: 'ndjson.gz', csv: 'csv.gz', xlsx: 'xlsx' };
export const FILE_TYPES: Record<SnapshotFormat, string> = { ndjson: 'application/gzip', csv: 'application/gzip', xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet' };

/** `products-2026-11-23.ndjson.gz`: the collection and the day (UTC) of the view it holds. */
export const fileName = (job: SnapshotJob): string => `${job.collection}-${(job.finishedAt ?? job.createdAt).slice(0, 10)}.${EXTENSIONS[job.format]}`;
