import { AppError } from '../errors/app-error.ts';
import { prunedThrough, readEvents } from '../events/feed.ts';
import { ID_BOUNDS } from '../resources/bounds.ts';
import type { Registry } from '../resources/registry.ts';
import type { McpTool } from './tool.ts';

const MAX_LIMIT = 100;
const DEFAULT_LIMIT = 50;

/** list_changes: the changes feed (GET /api/v2/changes) without its long-poll, which a model has no use for. */
export function changesTool(resources: Registry): McpTool {
  return {
    name: 'list_changes',
    title: 'Changes since a position',
    description:
      'What changed in the store, in order: events `{ seq, type, resource, resourceId, occurredAt, data }` where `type` is ' +
      `\`<resource>.created|updated|deleted\` (resources: ${resources.list.map((r) => r.event).join(', ')}) and \`data\` the item as it then was ` +
      '(`{ id }` for a deletion), and `snapshot.completed|failed` of this credential\'s own snapshot jobs. Only events of resources this ' +
      'token may also read are shown, so `seq` has gaps. Start with `after` = 0 ' +
      '(the oldest kept) or a `seq` you saw; `pagination.nextCursor` is the `after` of the next call (the last `seq` returned), and ' +
      '`pagination.hasMore` says more events are already waiting. A position older than the kept events is a tool error (cursor_expired). ' +
      'Needs scope `changes:read`.',
    scope: 'changes:read',
    inputSchema: {
      type: 'object',
      additionalProperties: false,
      properties: {
        after: { type: 'integer', minimum: 0, maximum: ID_BOUNDS.maximum, default: 0, description: 'Return events with a greater `seq` (0: from the oldest kept).' },
        limit: { type: 'integer', minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT, description: `Events per page, 1 to ${MAX_LIMIT} (default ${DEFAULT_LIMIT}).` },
      },
    },
    outputSchema: {
      type: 'object',
      required: ['data', 'pagination'],
      properties: {
        data: {
          type: 'array',
          items: {
            type: 'object',
            required: ['seq', 'type', 'resource', 'resourceId', 'occurredAt', 'data'],
            properties: {
              seq: { type: 'integer' },
              type: { type: 'string' },
              resource: { type: 'string', enum: [...resources.list.map((r) => r.event), 'snapshot'] },
              resourceId: { type: 'integer' },
              occurredAt: { type: 'string' },
              data: { type: 'object' },
            },
          },
        },
        pagination: {
          type: 'object',
          required: ['limit', 'nextCursor', 'hasMore'],
          properties: { limit: { type: 'integer' }, nextCursor: { type: 'string', description: 'The `after` of the next call.' }, hasMore: { type: 'boolean' } },
        },
      },
    },
    readOnly: true,
    call: async (args, env) => {
      const after = args.after as number;
      const limit = args.limit as number;
      // Events of resources whose read scope the token holds (as the REST feed); undefined: every resource.
      const visible = resources.list.filter((r) => env.grant.scopes.has(r.scope)).map((r) => r.event);
      const events = await readEvents(env.store.db, { after, limit: limit + 1, resources: visible.length === resources.list.length ? undefined : visible, credentialId: env.grant.credentialId });
      if (after < (await prunedThrough(env.store.db))) {
        throw new AppError('cursor_expired', `Events after ${after} are no longer kept. Take a fresh copy through the listings and follow from the current head.`, { errors: [{ name: 'after', reason: 'is older than the oldest kept event' }] });
      }
      const hasMore = events.length > limit;
      const page = hasMore ? events.slice(0, limit) : events;
      return {
        data: page.map((e) => ({ ...e, data: JSON.parse(e.data) as unknown })),
        pagination: { limit, nextCursor: String(page.length > 0 ? page[page.length - 1].seq : after), hasMore },
      };
    },
  };
}
