import type { FastifyPluginAsync } from 'fastify';
import type { Scope } from '../auth/scopes.ts';
import type { AppContext } from '../context.ts';
import { AppError } from '../errors/app-error.ts';
import { nextLink } from '../http/links.ts';
import { errorResponses } from '../http/responses.ts';
import { ID_BOUNDS } from '../modules/common-fields.ts';
import type { Registry } from '../resources/registry.ts';
import { prunedThrough, readEvents, type StoredEvent } from './feed.ts';
import { headSeq } from './log.ts';
import { EventSignal } from './signal.ts';
import '../http/types.ts';

export const CHANGES_DEFAULT_LIMIT = 50;
export const CHANGES_MAX_LIMIT = 1000;
export const MAX_WAIT_SECONDS = 30;
/** How often a long-poll looks at the log on its own, in case a wake-up was missed. */
const LOOK_MS = { listening: 5000, alone: 1000 };

const tags = ['Changes'];
const security = [{ oauth2: ['changes:read'] }];

/** An event of the feed, documented from the store's resources (`ctx.resources`): their event names and extra event types. */
const changeSchema = (resources: Registry) => ({
  type: 'object',
  required: ['seq', 'type', 'resource', 'resourceId', 'occurredAt', 'data'],
  properties: {
    seq: { type: 'integer', ...ID_BOUNDS, description: 'Position in the log; grows strictly, with gaps.' },
    type: {
      type: 'string',
      examples: [`${resources.list[0].event}.updated`, ...resources.extraEventTypes.map((e) => e.type)],
      description: `\`<resource>.created|updated|deleted\`${resources.extraEventTypes.map((e) => `, and \`${e.type}\` beside \`${e.beside}\``).join('')}; \`snapshot.completed\` and \`snapshot.failed\` of the reader's own snapshot jobs.`,
    },
    resource: { type: 'string', enum: [...resources.list.map((r) => r.event), 'snapshot'], description: '`snapshot` for `snapshot.completed` and `snapshot.failed`, shown only to the credential whose job it is.' },
    resourceId: { type: 'integer', ...ID_BOUNDS },
    occurredAt: { type: 'string', format: 'date-time' },
    data: { type: 'object', additionalProperties: true, description: `The item as it then was; \`{ "id" }\` for \`.deleted\`${resources.extraEventTypes.map((e) => `; ${e.data} for \`${e.type}\``).join('')}.` },
  },
});

const querySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    after: { type: 'integer', minimum: 0, maximum: ID_BOUNDS.maximum, description: 'Return events with a greater `seq` (default 0: from the oldest kept).' },
    cursor: { type: 'string', pattern: '^[0-9]{1,15}$', description: 'Same as `after` (the `nextCursor` of the previous page), for generic pagination clients.' },
    limit: { type: 'integer', minimum: 1, maximum: CHANGES_MAX_LIMIT, description: `Page size, 1 to ${CHANGES_MAX_LIMIT} (default ${CHANGES_DEFAULT_LIMIT}).` },
    wait: { type: 'number', minimum: 0, maximum: MAX_WAIT_SECONDS, description: `Long-poll: when no event is newer than \`after\`, wait up to this many seconds (0 to ${MAX_WAIT_SECONDS}) for one before answering.` },
  },
};

interface ChangesQuery {
  after?: number;
  cursor?: string;
  limit?: number;
  wait?: number;
}

/** Event resources a token may see: those whose collection's read scope it holds (undefined: all). */
export function visibleResources(scopes: ReadonlySet<Scope>, resources: Registry): string[] | undefined {
  const visible = resources.list.filter((r) => scopes.has(r.scope)).map((r) => r.event);
  return visible.length === resources.list.length ? undefined : visible;
}

// The stored `data` is already JSON text written by recordEvents; splicing it in saves a parse and a
// stringify per event on the path followers poll hardest. The schema above still documents the shape.
function eventJson(e: StoredEvent): string {
  return `{"seq":${e.seq},"type":${JSON.stringify(e.type)},"resource":${JSON.stringify(e.resource)},"resourceId":${e.resourceId},"occurredAt":${JSON.stringify(e.occurredAt)},"data":${e.data}}`;
}

/** GET /api/v2/changes and /api/v2/changes/head (API.md §5). */
export const changesRoutes: FastifyPluginAsync<{ ctx: AppContext }> = async (app, { ctx }) => {
  const db = ctx.store.db;
  const signal = new EventSignal(ctx.store, ctx.bus);
  // Long-polls answer at once when the server stops, rather than holding the shutdown for 30 s.
  app.addHook('preClose', async () => signal.close());

  app.get<{ Querystring: ChangesQuery }>('/changes', {
    config: { scope: 'changes:read' },
    schema: {
      tags,
      security,
      summary: 'Follow the changes feed',
      description:
        'Events that changed store data, in `seq` order, only of resources the token may also read (so `seq` has gaps). ' +
        '`pagination.nextCursor` is where to continue (`after`); it is the last `seq` returned, or `after` itself when nothing is newer. ' +
        'With `wait`, an empty answer is held until an event arrives or the time passes. A position older than the kept events (30 days by default) ' +
        'gets `410 cursor_expired`: take a snapshot through the listings and follow from `GET /api/v2/changes/head`.',
      querystring: querySchema,
      response: {
        200: {
          type: 'object',
          required: ['data', 'pagination'],
          properties: {
            data: { type: 'array', items: changeSchema(ctx.resources) },
            pagination: {
              type: 'object',
              required: ['limit', 'nextCursor', 'hasMore'],
              properties: {
                limit: { type: 'integer' },
                nextCursor: { type: 'string', description: 'The `after` of the next request: the last `seq` returned, or the given `after` when no event is newer.' },
                hasMore: { type: 'boolean', description: 'More events are already there (follow `Link`).' },
              },
            },
          },
        },
        ...errorResponses(400, 401, 403, 410, 429),
      },
    },
    handler: async (request, reply) => {
      const q = request.query;
      if (q.after !== undefined && q.cursor !== undefined && Number(q.cursor) !== q.after) {
        throw new AppError('invalid_parameter', 'Send either "after" or "cursor", not both.', { errors: [{ name: 'cursor', reason: 'conflicts with after' }] });
      }
      const after = q.after ?? (q.cursor !== undefined ? Number(q.cursor) : 0);
      const limit = q.limit ?? CHANGES_DEFAULT_LIMIT;
      const resources = visibleResources(request.grant!.scopes, ctx.resources);
      const deadline = Date.now() + (q.wait ?? 0) * 1000;
      const gone = new AbortController();
      reply.raw.once('close', () => gone.abort());

      let events: StoredEvent[];
      for (;;) {
        const generation = signal.generation;
        events = await readEvents(db, { after, limit: limit + 1, resources, credentialId: request.grant!.credentialId });
        // Read first, then the watermark: pruning raises the watermark before it deletes, so a read that
        // missed pruned events always sees the raised watermark here.
        if (after < (await prunedThrough(db))) {
          throw new AppError('cursor_expired', `Events after ${after} are no longer kept. Take a snapshot and follow from GET /api/v2/changes/head.`, { errors: [{ name: 'after', reason: 'is older than the oldest kept event' }] });
        }
        const left = deadline - Date.now();
        if (events.length > 0 || left <= 0 || gone.signal.aborted || signal.isClosed) break;
        await signal.wait(generation, Math.min(left, signal.hearsOtherNodes ? LOOK_MS.listening : LOOK_MS.alone), gone.signal);
      }

      const hasMore = events.length > limit;
      const page = hasMore ? events.slice(0, limit) : events;
      const nextCursor = page.length > 0 ? page[page.length - 1].seq : after;
      // `after` replaces `cursor`: the two must not disagree on the next page.
      if (hasMore) reply.header('link', nextLink(ctx.config.publicUrl, request.url, { after: String(nextCursor) }, ['cursor']));
      reply.type('application/json; charset=utf-8');
      return reply.send(`{"data":[${page.map(eventJson).join(',')}],"pagination":{"limit":${limit},"nextCursor":"${nextCursor}","hasMore":${hasMore}}}`);
    },
  });

  app.get('/changes/head', {
    config: { scope: 'changes:read' },
    schema: {
      tags,
      security,
      summary: 'The current head of the changes feed',
      description: 'The `seq` to follow from after taking a snapshot through the listings: `GET /api/v2/changes?after={seq}`.',
      response: { 200: { type: 'object', required: ['seq'], properties: { seq: { type: 'integer', minimum: 0 } } }, ...errorResponses(401, 403, 429) },
    },
    handler: async () => ({ seq: Math.max(await headSeq(db), await prunedThrough(db)) }),
  });
};
