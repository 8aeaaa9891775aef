import { gunzipSync } from 'node:zlib';
import type { TestApp } from '../helpers/app.ts';
import { until } from '../helpers/wait.ts';
import { SnapshotRunner, type RunnerLog } from '../../src/snapshots/runner.ts';

export interface JobView {
  id: number;
  status: string;
  rows: number;
  seq: number | null;
  size: number | null;
  sha256: string | null;
  downloadUrl?: string;
  error: string | null;
  collection: string;
}

const quiet = { info: () => {}, warn: () => {}, error: () => {} };

/** A runner of the test app's node, as the background starter makes it (the test starts and stops it). */
export function runnerOf(t: Pick<TestApp, 'ctx'>, node?: string, log: RunnerLog = quiet): SnapshotRunner {
  const { ctx } = t;
  return new SnapshotRunner({ store: ctx.store, bus: ctx.bus, resources: ctx.resources, hashKey: ctx.hashKey, settings: ctx.config.snapshots, log, node });
}

export async function createJob(t: TestApp, token: string, body: Record<string, unknown>): Promise<JobView> {
  const res = await t.app.inject({ method: 'POST', url: '/api/v2/snapshots', headers: { authorization: `Bearer ${token}` }, payload: body });
  if (res.statusCode !== 202) throw new Error(`POST /api/v2/snapshots: ${res.statusCode} ${res.body}`);
  return res.json() as JobView;
}

export async function getJob(t: TestApp, token: string, id: number): Promise<JobView> {
  const res = await t.get(`/api/v2/snapshots/${id}`, token);
  if (res.statusCode !== 200) throw new Error(`GET /api/v2/snapshots/${id}: ${res.statusCode} ${res.body}`);
  return res.json() as JobView;
}

/** Waits until the job, as `look` shows it, has finished (completed or failed) and returns it. */
export async function untilFinished(id: number, look: () => Promise<JobView>, ms = 60_000, every = 50): Promise<JobView> {
  let job: JobView | undefined;
  await until(`snapshot ${id} finished`, async () => {
    job = await look();
    return job.status === 'completed' || job.status === 'failed';
  }, ms, every);
  return job!;
}

/** Waits until the job has finished (completed or failed) and returns it. */
export const finished = (t: TestApp, token: string, id: number, ms = 60_000): Promise<JobView> => untilFinished(id, () => getJob(t, token, id), ms);

/** The file of a completed job, with the bearer token, gunzipped into its NDJSON items. */
export async function downloadItems(t: TestApp, token: string, id: number): Promise<Array<Record<string, unknown>>> {
  const res = await t.app.inject({ method: 'GET', url: `/api/v2/snapshots/${id}/file`, headers: { authorization: `Bearer ${token}` } });
  if (res.statusCode !== 200) throw new Error(`file: ${res.statusCode} ${res.body}`);
  return ndjsonItems(res.rawPayload);
}

export function ndjsonItems(gz: Buffer): Array<Record<string, unknown>> {
  const text = gunzipSync(gz).toString('utf8');
  return text.split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** Every item of a collection through the JSON listing, page by page. */
export async function listAll(t: TestApp, token: string, collection: string, query = ''): Promise<Array<Record<string, unknown>>> {
  const items: Array<Record<string, unknown>> = [];
  let url = `/api/v2/${collection}?limit=1000${query}`;
  for (;;) {
    const res = await t.get(url, token);
    if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${res.body}`);
    const body = res.json() as { data: Array<Record<string, unknown>>; pagination: { nextCursor: string | null } };
    items.push(...body.data);
    if (!body.pagination.nextCursor) return items;
    url = `/api/v2/${collection}?limit=1000&cursor=${encodeURIComponent(body.pagination.nextCursor)}`;
  }
}
