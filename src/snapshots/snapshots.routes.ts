import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { chargeRateLimit, verifyBearer } from '../auth/bearer.ts';
import type { AppContext } from '../context.ts';
import { AppError, notFound } from '../errors/app-error.ts';
import { nextLink } from '../http/links.ts';
import { errorResponses } from '../http/responses.ts';
import { readRange } from './chunks.ts';
import { deleteJob, findJob, listJobs, SNAPSHOT_FORMATS, SNAPSHOT_STATUSES, type SnapshotJob } from './jobs.repository.ts';
import { parseRange } from './range.ts';
import { wakeRunners } from './runner.ts';
import { createSnapshot, FILE_TYPES, fileName, readableCollection, validSignature, viewOf, type Asker, type SnapshotRequest } from './snapshots.service.ts';
import '../http/types.ts';

const tags = ['Snapshots'];
const LIST_DEFAULT = 20;
const LIST_MAX = 100;
const ID = { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER };
const nullable = (type: string, extra: Record<string, unknown> = {}) => ({ type: [type, 'null'], ...extra });

const jobSchema = {
  type: 'object',
  required: ['id', 'status', 'collection', 'format', 'filters', 'fields', 'rows', 'seq', 'createdAt', 'startedAt', 'finishedAt', 'expiresAt'],
  properties: {
    id: ID,
    status: { type: 'string', enum: [...SNAPSHOT_STATUSES] },
    collection: { type: 'string' },
    format: { type: 'string', enum: [...SNAPSHOT_FORMATS] },
    filters: { type: 'object', additionalProperties: { type: 'string' } },
    fields: { type: ['array', 'null'], items: { type: 'string' } },
    rows: { type: 'integer', description: 'Items written so far (while running) or in all (completed).' },
    seq: nullable('integer', { description: 'The changes-feed position of the view the file holds: follow `GET /api/v2/changes?after={seq}` from it.' }),
    size: nullable('integer', { description: 'Bytes of the file (gzipped).' }),
    sha256: nullable('string', { description: 'SHA-256 of the file, hex; also its `ETag`.' }),
    error: nullable('string'),
    createdAt: { type: 'string', format: 'date-time' },
    startedAt: nullable('string', { format: 'date-time' }),
    finishedAt: nullable('string', { format: 'date-time' }),
    expiresAt: nullable('string', { format: 'date-time', description: 'When the file is removed (SNAPSHOT_TTL_DAYS after completion).' }),
    downloadUrl: { type: 'string', format: 'uri', description: 'Completed only: a signed URL that needs no header, valid until `downloadUrlExpiresAt`.' },
    downloadUrlExpiresAt: { type: 'string', format: 'date-time' },
  },
};

const idParams = { type: 'object', required: ['id'], properties: { id: { ...ID, description: 'The snapshot id.' } } };

const asker = (request: FastifyRequest): Asker => ({ credentialId: request.grant!.credentialId, scopes: request.grant!.scopes });

/** The job if it is the asker's own and of a collection its token may read: 404 for another credential's job, 403 without the scope. */
async function ownJob(ctx: AppContext, id: number, who: Asker): Promise<SnapshotJob> {
  const job = await findJob(ctx.store.db, id);
  if (!job || job.credentialId !== who.credentialId) throw notFound(`Snapshot ${id}`);
  readableCollection(ctx.resources, job.collection, who);
  return job;
}

/**
 * POST/GET/DELETE /api/v2/snapshots (API.md §5a), behind the bearer guard. The scope is the collection's read
 * scope, which only the body (or the job) names: the guard lets any valid token in (`scope: null`) and each
 * route checks the job's scope itself.
 */
export const snapshotRoutes: FastifyPluginAsync<{ ctx: AppContext }> = async (app, { ctx }) => {
  const settings = ctx.config.snapshots;
  // Alternatives (OpenAPI ORs the entries of `security`): any one collection's read scope lets a token in; the job's collection decides.
  const security = ctx.resources.list.map((r) => ({ oauth2: [r.scope] }));
  const view = (job: SnapshotJob) => viewOf(job, ctx.config.publicUrl, ctx.hashKey, settings);

  app.post<{ Body: SnapshotRequest }>('/snapshots', {
    config: { scope: null },
    schema: {
      tags,
      security,
      summary: 'Start a snapshot (a consistent bulk export as a job)',
      description:
        'Queues a job that writes every item of `collection` matching `filters` (the listing\'s filter parameters, as strings) from one consistent view, ' +
        'records the feed `seq` of that view, and stores the file gzipped (XLSX as it is). Needs the collection\'s read scope. ' +
        `A credential has at most SNAPSHOTS_PER_CREDENTIAL (default 4) jobs queued or running: \`429\` with \`Retry-After\` beyond. Poll \`Location\`, or wait for the \`snapshot.completed\` event.`,
      body: {
        type: 'object',
        required: ['collection'],
        additionalProperties: false,
        properties: {
          collection: { type: 'string', maxLength: 100, description: `One of ${ctx.resources.list.map((r) => `\`${r.collection}\``).join(', ')}.` },
          format: { type: 'string', enum: [...SNAPSHOT_FORMATS], default: 'ndjson' },
          filters: { type: 'object', maxProperties: 30, additionalProperties: { type: 'string', maxLength: 2000 }, description: 'Filters of the listing, e.g. `{ "status": "active" }`.' },
          fields: { type: 'array', maxItems: 100, items: { type: 'string', maxLength: 100 }, description: 'Only these fields (`id` always).' },
        },
      },
      response: { 202: jobSchema, ...errorResponses(400, 401, 403, 429) },
    },
    handler: async (request, reply) => {
      const job = await createSnapshot(ctx.store, ctx.resources, ctx.hashKey, settings, asker(request), request.body);
      wakeRunners(ctx.store);
      return reply.code(202).header('location', `${ctx.config.publicUrl}/api/v2/snapshots/${job.id}`).send(view(job));
    },
  });

  app.get<{ Querystring: { limit?: number; cursor?: number } }>('/snapshots', {
    config: { scope: null },
    schema: {
      tags,
      security,
      summary: 'List this credential\'s snapshots',
      description: 'The jobs of the credential of the token, newest first, in the listing envelope.',
      querystring: {
        type: 'object',
        additionalProperties: false,
        properties: { limit: { type: 'integer', minimum: 1, maximum: LIST_MAX }, cursor: { ...ID, description: 'From `nextCursor`.' } },
      },
      response: {
        200: {
          type: 'object',
          required: ['data', 'pagination'],
          properties: {
            data: { type: 'array', items: jobSchema },
            pagination: { type: 'object', required: ['limit', 'nextCursor', 'hasMore'], properties: { limit: { type: 'integer' }, nextCursor: { type: ['string', 'null'] }, hasMore: { type: 'boolean' } } },
          },
        },
        ...errorResponses(400, 401, 429),
      },
    },
    handler: async (request, reply) => {
      const limit = request.query.limit ?? LIST_DEFAULT;
      const jobs = await listJobs(ctx.store.db, request.grant!.credentialId, limit + 1, request.query.cursor);
      const hasMore = jobs.length > limit;
      if (hasMore) jobs.length = limit;
      const nextCursor = hasMore ? String(jobs[jobs.length - 1].id) : null;
      if (nextCursor) reply.header('link', nextLink(ctx.config.publicUrl, request.url, { cursor: nextCursor }));
      return { data: jobs.map(view), pagination: { limit, nextCursor, hasMore } };
    },
  });

  app.get<{ Params: { id: number } }>('/snapshots/:id', {
    config: { scope: null },
    schema: {
      tags,
      security,
      summary: 'Get a snapshot job',
      description: 'Its status, rows, `seq`, and when completed a signed `downloadUrl`. Another credential\'s job is `404`.',
      params: idParams,
      response: { 200: jobSchema, ...errorResponses(400, 401, 403, 404, 429) },
    },
    handler: async (request) => view(await ownJob(ctx, request.params.id, asker(request))),
  });

  app.delete<{ Params: { id: number } }>('/snapshots/:id', {
    config: { scope: null },
    schema: {
      tags,
      security,
      summary: 'Cancel or remove a snapshot',
      description: 'A queued or running job is cancelled (its node stops at its next lease renewal); a finished one is removed with its file.',
      params: idParams,
      response: { 204: { type: 'null', description: 'Cancelled or removed.' }, ...errorResponses(400, 401, 403, 404, 429) },
    },
    handler: async (request, reply) => {
      const job = await ownJob(ctx, request.params.id, asker(request));
      await deleteJob(ctx.store.db, job.id);
      return reply.code(204).send();
    },
  });
};

/** The bearer check of the guard (auth/bearer.ts), for the one route that also opens to a signed URL: a valid token, then the credential's rate limit. */
async function bearerAsker(ctx: AppContext, request: FastifyRequest, reply: FastifyReply): Promise<Asker> {
  const grant = await verifyBearer(ctx, request.headers.authorization);
  request.grant = grant;
  await chargeRateLimit(ctx, grant, ctx.policies.default, reply);
  return { credentialId: grant.credentialId, scopes: grant.scopes };
}

interface FileQuery {
  expires?: number;
  signature?: string;
}

/**
 * GET /api/v2/snapshots/{id}/file: the file, with the bearer token of the job's credential or through the
 * signed URL of the job (`expires` and `signature`, no header: a browser link, an ETL tool). Registered
 * outside the bearer guard, which would refuse a request without a token; it checks either itself.
 * One `Range` resumes a download (206, or 416 beyond the file); the `ETag` is the file's sha256.
 */
export const snapshotFileRoutes: FastifyPluginAsync<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.get<{ Params: { id: number }; Querystring: FileQuery }>('/snapshots/:id/file', {
    config: { scope: null },
    schema: {
      tags,
      // Any one collection's read scope (alternatives), or none at all with a signed URL.
      security: [...ctx.resources.list.map((r) => ({ oauth2: [r.scope] })), {}],
      summary: 'Download a snapshot\'s file',
      description:
        'With the bearer token of the job\'s credential, or with no header through the signed `downloadUrl` of the job (valid 1 hour by default; ' +
        'altered or expired: `403`). `.ndjson.gz` and `.csv.gz` are served as `application/gzip` files (no `Content-Encoding`: the download is the gzip file). ' +
        'One `Range` resumes (`206`; beyond the file `416`); `If-Range` with the `ETag` (the sha256) guards a resume.',
      params: idParams,
      querystring: {
        type: 'object',
        additionalProperties: false,
        properties: {
          expires: { type: 'integer', minimum: 0, maximum: 99_999_999_999, description: 'Of a signed URL: until when (Unix seconds).' },
          signature: { type: 'string', maxLength: 100, description: 'Of a signed URL.' },
        },
      },
      response: {
        200: { description: 'The whole file.', content: { 'application/gzip': { schema: { type: 'string', format: 'binary' } }, [FILE_TYPES.xlsx]: { schema: { type: 'string', format: 'binary' } } } },
        206: { description: 'The range asked for.', content: { 'application/gzip': { schema: { type: 'string', format: 'binary' } }, [FILE_TYPES.xlsx]: { schema: { type: 'string', format: 'binary' } } } },
        ...errorResponses(400, 401, 403, 404, 409, 416, 429),
      },
    },
    handler: async (request, reply) => {
      const { id } = request.params;
      const { expires, signature } = request.query;
      let job: SnapshotJob | undefined;
      if (signature !== undefined || expires !== undefined) {
        if (signature === undefined || expires === undefined || !validSignature(ctx.hashKey, id, expires, signature)) {
          throw new AppError('forbidden', 'The signed URL is altered or expired; ask GET /api/v2/snapshots/{id} for a fresh one.');
        }
        job = await findJob(ctx.store.db, id);
        if (!job) throw notFound(`Snapshot ${id}`);
      } else {
        job = await ownJob(ctx, id, await bearerAsker(ctx, request, reply));
      }
      if (job.status === 'expired') throw notFound(`The file of snapshot ${id} (it expired at ${job.expiresAt})`);
      if (job.status !== 'completed' || job.size === null || job.sha256 === null) {
        throw new AppError('conflict', `Snapshot ${id} is ${job.status}; its file exists once it is completed.`);
      }
      const size = job.size;
      const etag = `"${job.sha256}"`;
      reply.header('accept-ranges', 'bytes').header('etag', etag).header('cache-control', 'private, no-transform')
        .header('content-disposition', `attachment; filename="${fileName(job)}"`).type(FILE_TYPES[job.format]);
      const ifRange = request.headers['if-range'];
      const range = ifRange !== undefined && ifRange !== etag ? { kind: 'whole' as const } : parseRange(request.headers.range, size);
      if (range.kind === 'unsatisfiable') {
        reply.header('content-range', `bytes */${size}`);
        throw new AppError('range_not_satisfiable', `The file of snapshot ${id} has ${size} bytes.`, { headers: { 'content-range': `bytes */${size}` } });
      }
      const [start, end] = range.kind === 'part' ? [range.start, range.end] : [0, size - 1];
      if (range.kind === 'part') reply.code(206).header('content-range', `bytes ${start}-${end}/${size}`);
      reply.header('content-length', String(end - start + 1));
      if (size === 0 || request.method === 'HEAD') return reply.send('');
      return reply.send(readRange(ctx.store.db, job.id, start, end));
    },
  });
};
