import { notFound } from '../errors/app-error.ts';
import type { Registry } from '../resources/registry.ts';
import { ID_BOUNDS } from '../resources/bounds.ts';
import type { JsonSchema } from '../resources/types.ts';
import { findJob, SNAPSHOT_FORMATS, SNAPSHOT_STATUSES } from '../snapshots/jobs.repository.ts';
import { wakeRunners } from '../snapshots/runner.ts';
import { createSnapshot, readableCollection, viewOf, type Asker } from '../snapshots/snapshots.service.ts';
import type { McpTool, ToolEnv } from './tool.ts';

const nullable = (type: string, extra: Record<string, unknown> = {}) => ({ type: [type, 'null'], ...extra });

/** A job as GET /api/v2/snapshots/{id} shows it. */
const jobSchema: JsonSchema & { type: 'object' } = {
  type: 'object',
  required: ['id', 'status', 'collection', 'format', 'filters', 'fields', 'rows', 'seq', 'createdAt', 'startedAt', 'finishedAt', 'expiresAt'],
  properties: {
    id: { type: 'integer' },
    status: { type: 'string', enum: [...SNAPSHOT_STATUSES], description: 'queued → running → completed (or failed); expired once the file is gone.' },
    collection: { type: 'string' },
    format: { type: 'string', enum: [...SNAPSHOT_FORMATS] },
    filters: { type: 'object', additionalProperties: { type: 'string' } },
    fields: { type: ['array', 'null'], items: { type: 'string' } },
    rows: { type: 'integer', description: 'Items written so far (running) or in all (completed).' },
    seq: nullable('integer', { description: 'The changes-feed position of the view the file holds: list_changes with `after` = seq continues from it.' }),
    size: nullable('integer', { description: 'Bytes of the file.' }),
    sha256: nullable('string'),
    error: nullable('string'),
    createdAt: { type: 'string' },
    startedAt: nullable('string'),
    finishedAt: nullable('string'),
    expiresAt: nullable('string'),
    downloadUrl: { type: 'string', description: 'Completed only: a signed URL that needs no token, valid until `downloadUrlExpiresAt`.' },
    downloadUrlExpiresAt: { type: 'string' },
  },
};

const askerOf = (env: ToolEnv): Asker => ({ credentialId: env.grant.credentialId, scopes: env.grant.scopes });
const view = (env: ToolEnv, job: Parameters<typeof viewOf>[0]) => viewOf(job, env.publicUrl, env.hashKey, env.snapshots) as unknown as Record<string, unknown>;

/** create_snapshot and get_snapshot: the bulk export of API.md §5a as two tools (listing and deleting jobs stay REST). */
export function snapshotTools(resources: Registry): McpTool[] {
  const scopes = resources.list.map((r) => r.scope);
  const collections = resources.list.map((r) => r.collection);
  return [
    {
      name: 'create_snapshot',
      title: 'Start a snapshot (bulk export)',
      description:
        'Starts a job that writes every item of a collection (optionally only those matching `filters`, the filters of its list_ tool as text, ' +
        'and only `fields`) from one consistent view into a file: gzipped NDJSON or CSV, or XLSX. Use it for more items than paging through a ' +
        'list_ tool is worth (thousands). Answers the job at once (`status: "queued"`); call get_snapshot with its `id` every few seconds until ' +
        '`status` is `completed` (then `downloadUrl` fetches the file without a token until `downloadUrlExpiresAt`) or `failed` (`error` says why). ' +
        'The job\'s `seq` is the changes-feed position of the view: list_changes with `after` = seq continues from it. Bad filters or fields are ' +
        'refused at once; a credential has a few jobs at most running (rate_limited beyond). Needs the collection\'s read scope.',
      scope: scopes,
      inputSchema: {
        type: 'object',
        additionalProperties: false,
        required: ['collection'],
        properties: {
          collection: { type: 'string', enum: collections, description: 'The collection to export.' },
          format: { type: 'string', enum: [...SNAPSHOT_FORMATS], default: 'ndjson', description: 'ndjson (one JSON item a line) suits programs; csv and xlsx suit spreadsheets.' },
          filters: { type: 'object', maxProperties: 30, additionalProperties: { type: 'string', maxLength: 2000 }, description: 'Filters of the collection\'s listing, e.g. `{ "status": "active" }`.' },
          fields: { type: 'array', maxItems: 100, items: { type: 'string', maxLength: 100 }, description: 'Only these fields (`id` always).' },
        },
      },
      outputSchema: jobSchema,
      readOnly: false,
      call: async (args, env) => {
        const job = await createSnapshot(env.store, env.resources, env.hashKey, env.snapshots, askerOf(env), {
          collection: args.collection as string,
          format: args.format as (typeof SNAPSHOT_FORMATS)[number],
          filters: args.filters as Record<string, string> | undefined,
          fields: args.fields as string[] | undefined,
        });
        wakeRunners(env.store);
        return view(env, job);
      },
    },
    {
      name: 'get_snapshot',
      title: 'Read a snapshot job',
      description:
        'The state of a job started with create_snapshot (only this credential\'s own): `status`, `rows` written, and when `completed` a signed ' +
        '`downloadUrl` (fresh on every call) and the feed `seq`. An unknown id, or another credential\'s job, is a tool error (not_found). ' +
        'Needs the collection\'s read scope.',
      scope: scopes,
      inputSchema: { type: 'object', additionalProperties: false, required: ['id'], properties: { id: { type: 'integer', ...ID_BOUNDS, description: 'The job\'s id.' } } },
      outputSchema: jobSchema,
      readOnly: true,
      call: async (args, env) => {
        const job = await findJob(env.store.db, args.id as number);
        if (!job || job.credentialId !== env.grant.credentialId) throw notFound(`Snapshot ${String(args.id)}`);
        readableCollection(env.resources, job.collection, askerOf(env));
        return view(env, job);
      },
    },
  ];
}
