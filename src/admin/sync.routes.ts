import type { FastifyPluginAsync } from 'fastify';
import type { AppContext } from '../context.ts';
import { errorResponses } from '../http/responses.ts';
import { syncMetrics, syncStatus } from '../sync/status.ts';
import { tags, security } from './route-schemas.ts';

const nullableString = { type: ['string', 'null'] };
const nullableNumber = { type: ['number', 'null'] };
const statusSchema = {
  type: 'object',
  required: ['following', 'source', 'phase', 'cursor', 'headSeen', 'lagEvents', 'lagSeconds', 'stale', 'localHead'],
  properties: {
    following: { type: 'boolean', description: 'Whether this store follows a main store.' },
    source: { ...nullableString, description: 'The main store\'s base URL.' },
    phase: { type: ['string', 'null'], enum: ['snapshot', 'following', null], description: '`snapshot` while the listings are copied, then `following` the changes feed.' },
    collections: { type: 'array', items: { type: 'string' }, description: 'The followed collections (orders never are).' },
    cursor: { ...nullableNumber, description: 'The last main-store event (`seq`) applied here.' },
    headSeen: { ...nullableNumber, description: 'The main store\'s head as last seen.' },
    lagEvents: { ...nullableNumber, description: 'Events on the main store not applied here yet.' },
    lagSeconds: { ...nullableNumber, description: 'Delay from a change on the main store to its application here, for the last applied batch.' },
    lastAppliedAt: nullableString,
    lastEventAt: { ...nullableString, description: '`occurredAt` of the last applied event.' },
    lastContactAt: { ...nullableString, description: 'When the main store last answered the follower.' },
    stale: { type: 'boolean', description: 'No answer from the main store for a minute (follower not running, or main store away).' },
    lastError: nullableString,
    lastErrorAt: nullableString,
    appliedEvents: { type: 'number' },
    appliedChanges: { type: 'number' },
    snapshots: { type: 'number' },
    snapshotStartedAt: nullableString,
    snapshotFinishedAt: nullableString,
    localHead: { type: 'number', description: 'This store\'s own changes-feed head (what a follower of this store reads up to).' },
  },
};

/** GET /admin/api/sync (status as JSON) and /admin/api/sync/metrics (Prometheus text): how far this follower is. */
export const syncRoutes: FastifyPluginAsync<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.get('/sync', {
    schema: { tags, security, summary: 'Synchronisation status (this store as a follower of a main store)', response: { 200: statusSchema, ...errorResponses(401) } },
    handler: async () => syncStatus(ctx.store.db),
  });
  app.get('/sync/metrics', {
    schema: {
      tags, security, summary: 'Synchronisation metrics, Prometheus text format',
      produces: ['text/plain'],
      response: { 200: { type: 'string', description: 'Gauges store_sync_lag_events, store_sync_lag_seconds, store_sync_cursor_seq, … and counters store_sync_applied_events_total, …' }, ...errorResponses(401) },
    },
    handler: async (_request, reply) => {
      reply.type('text/plain; version=0.0.4; charset=utf-8');
      return syncMetrics(await syncStatus(ctx.store.db));
    },
  });
};
