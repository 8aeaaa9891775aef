import type { FastifyPluginAsync } from 'fastify';
import type { AppContext } from '../context.ts';
import { errorResponses } from '../http/responses.ts';
import { DELIVERY_STATUSES, getDelivery, listDeliveries, replay, type DeliveryStatus, type ReplayRequest } from '../events/webhooks/deliveries.ts';
import { EVENT_TYPES, MAX_PATTERNS, PATTERN } from '../events/webhooks/patterns.ts';
import { SNAPSHOT_EVENT_TYPES } from '../snapshots/events.ts';
import * as service from '../events/webhooks/subscriptions.ts';
import { ID_BOUNDS } from '../modules/common-fields.ts';
import { tags, security, idParams, type IdParams } from './route-schemas.ts';
const nullableString = { type: ['string', 'null'] };
const id = { type: 'integer', ...ID_BOUNDS };
/** A delivery by id or by message id: an id beyond JSON's exact integers (or a NUL) can name none, and is refused. */
const deliveryRef = { type: 'string', pattern: '^(?:[0-9]{1,15}|msg_[A-Za-z0-9_-]{1,100})$', description: 'Delivery id or message id (msg_…).' };
const dateTime = { type: 'string', format: 'date-time' };

const eventsInput = {
  type: 'array', minItems: 1, maxItems: MAX_PATTERNS, uniqueItems: true,
  items: { type: 'string', pattern: PATTERN },
  description: `Event types, with \`*\` wildcards (\`*\`, \`order.*\`). Types: ${[...EVENT_TYPES, ...SNAPSHOT_EVENT_TYPES].map((t) => `\`${t}\``).join(', ')}.`,
};

const webhookProperties = {
  id,
  url: { type: 'string' },
  events: { type: 'array', items: { type: 'string' } },
  description: nullableString,
  enabled: { type: 'boolean' },
  disabledReason: { ...nullableString, description: 'Why the subscription was disabled (410 from the receiver, the retry schedule used up, the administrator).' },
  disabledAt: nullableString,
  previousSecretExpiresAt: { ...nullableString, description: 'During a secret rotation: until when deliveries are also signed with the previous secret.' },
  createdAt: dateTime,
  updatedAt: dateTime,
};
const webhookSchema = { type: 'object', required: Object.keys(webhookProperties), properties: webhookProperties };
const withSecretSchema = {
  type: 'object',
  required: [...Object.keys(webhookProperties), 'secret'],
  properties: { ...webhookProperties, secret: { type: 'string', description: 'The `whsec_…` signing secret; shown only now.' } },
};

const deliveryProperties = {
  id,
  messageId: { type: 'string', description: 'The `webhook-id` header, the same on every attempt.' },
  webhookId: id,
  eventSeq: id,
  eventType: { type: 'string' },
  status: { type: 'string', enum: [...DELIVERY_STATUSES] },
  attempts: { type: 'integer' },
  nextAttemptAt: nullableString,
  lastStatus: { type: ['integer', 'null'] },
  lastError: nullableString,
  deliveredAt: nullableString,
  createdAt: dateTime,
  updatedAt: dateTime,
};
const deliverySchema = { type: 'object', required: Object.keys(deliveryProperties), properties: deliveryProperties };
const attemptSchema = {
  type: 'object',
  required: ['attempt', 'startedAt', 'durationMs', 'statusCode', 'error', 'response', 'node'],
  properties: {
    attempt: { type: 'integer' }, startedAt: dateTime, durationMs: { type: 'integer' }, statusCode: { type: ['integer', 'null'] },
    error: nullableString, response: { ...nullableString, description: 'The first 1 KiB of the answer.' }, node: { type: 'string' },
  },
};

/** /admin/api/webhooks: what `store-api webhooks …` does, over HTTP. */
export const webhookRoutes: FastifyPluginAsync<{ ctx: AppContext }> = async (app, { ctx }) => {
  const db = ctx.store.db;
  const allowPrivate = ctx.config.webhooks.allowPrivate;

  app.get('/webhooks', { schema: { tags, security, summary: 'List webhook subscriptions', response: { 200: { type: 'object', required: ['data'], properties: { data: { type: 'array', items: webhookSchema } } }, ...errorResponses(401) } } },
    async () => ({ data: await service.listWebhooks(db) }));

  app.post<{ Body: service.WebhookInput & { url: string; events: string[] } }>('/webhooks', {
    schema: {
      tags, security, summary: 'Subscribe a URL to events (the secret is shown once)',
      description: 'The URL must resolve to public addresses unless WEBHOOK_ALLOW_PRIVATE=true. Only events after the subscription is made are sent.',
      body: { type: 'object', additionalProperties: false, required: ['url', 'events'], properties: { url: { type: 'string', minLength: 1, maxLength: 2000 }, events: eventsInput, description: { type: ['string', 'null'], maxLength: 500 }, enabled: { type: 'boolean' } } },
      response: { 201: withSecretSchema, ...errorResponses(400, 401) },
    },
    handler: async (request, reply) => reply.code(201).send(await service.createWebhook(db, request.body, allowPrivate, [...ctx.resources.eventTypes, ...SNAPSHOT_EVENT_TYPES])),
  });

  app.get<{ Params: IdParams }>('/webhooks/:id', { schema: { tags, security, summary: 'Get a webhook subscription', params: idParams, response: { 200: webhookSchema, ...errorResponses(401, 404) } } },
    async (request) => service.getWebhook(db, request.params.id));

  app.patch<{ Params: IdParams; Body: service.WebhookInput }>('/webhooks/:id', {
    schema: {
      tags, security, summary: 'Change the URL or events, or disable or enable a subscription',
      description: 'Enabling clears `disabledReason`; deliveries left pending resume.',
      params: idParams,
      body: { type: 'object', additionalProperties: false, minProperties: 1, properties: { url: { type: 'string', minLength: 1, maxLength: 2000 }, events: eventsInput, description: { type: ['string', 'null'], maxLength: 500 }, enabled: { type: 'boolean' } } },
      response: { 200: webhookSchema, ...errorResponses(400, 401, 404) },
    },
    handler: async (request) => {
      const updated = await service.updateWebhook(db, request.params.id, request.body, allowPrivate, [...ctx.resources.eventTypes, ...SNAPSHOT_EVENT_TYPES]);
      ctx.bus.appended();
      return updated;
    },
  });

  app.delete<{ Params: IdParams }>('/webhooks/:id', {
    schema: { tags, security, summary: 'Delete a subscription and its delivery log', params: idParams, response: { 204: { type: 'null' }, ...errorResponses(401, 404) } },
    handler: async (request, reply) => {
      await service.deleteWebhook(db, request.params.id);
      return reply.code(204).send();
    },
  });

  app.post<{ Params: IdParams; Body: { overlapSeconds?: number } | null }>('/webhooks/:id/rotate-secret', {
    schema: {
      tags, security, summary: 'Issue a new signing secret',
      description: `For \`overlapSeconds\` (default ${service.DEFAULT_ROTATION_OVERLAP_SECONDS}) deliveries are signed with the new and the previous secret, so receivers can switch without losing a message; 0 retires the old secret at once.`,
      params: idParams,
      body: { type: ['object', 'null'], additionalProperties: false, properties: { overlapSeconds: { type: 'integer', minimum: 0, maximum: 30 * 86_400 } } },
      response: { 200: withSecretSchema, ...errorResponses(400, 401, 404) },
    },
    handler: async (request) => service.rotateWebhookSecret(db, request.params.id, request.body?.overlapSeconds),
  });

  app.get<{ Params: IdParams; Querystring: { status?: DeliveryStatus; limit?: number; cursor?: string } }>('/webhooks/:id/deliveries', {
    schema: {
      tags, security, summary: 'Deliveries of a subscription, newest first',
      params: idParams,
      querystring: {
        type: 'object', additionalProperties: false,
        properties: { status: { type: 'string', enum: [...DELIVERY_STATUSES] }, limit: { type: 'integer', minimum: 1, maximum: 1000 }, cursor: { type: 'string', pattern: '^[0-9]{1,15}$' } },
      },
      response: { 200: { type: 'object', required: ['data', 'pagination'], properties: { data: { type: 'array', items: deliverySchema }, pagination: { $ref: 'Pagination#' } } }, ...errorResponses(400, 401, 404) },
    },
    handler: async (request) => {
      const { id } = request.params;
      await service.getWebhook(db, id);
      const q = request.query;
      return listDeliveries(db, id, { status: q.status, limit: q.limit, cursor: q.cursor === undefined ? undefined : Number(q.cursor) });
    },
  });

  app.get<{ Params: IdParams & { delivery: string } }>('/webhooks/:id/deliveries/:delivery', {
    schema: {
      tags, security, summary: 'One delivery with every attempt',
      params: { type: 'object', required: ['id', 'delivery'], properties: { id, delivery: deliveryRef } },
      response: { 200: { type: 'object', required: [...Object.keys(deliveryProperties), 'attemptLog'], properties: { ...deliveryProperties, attemptLog: { type: 'array', items: attemptSchema } } }, ...errorResponses(401, 404) },
    },
    handler: async (request) => {
      const p = request.params;
      return getDelivery(db, p.id, p.delivery);
    },
  });

  app.post<{ Params: IdParams; Body: ReplayRequest | null }>('/webhooks/:id/replay', {
    schema: {
      tags, security, summary: 'Send deliveries again (same webhook-id)',
      description: 'Without a body: every failed delivery. `delivery`: that one (id or msg_…). `since`: every matching event since then, sent before or not. A disabled subscription keeps them until it is enabled.',
      params: idParams,
      body: { type: ['object', 'null'], additionalProperties: false, properties: { delivery: deliveryRef, since: { type: 'string', format: 'date-time' } } },
      response: { 200: { type: 'object', required: ['queued'], properties: { queued: { type: 'integer' } } }, ...errorResponses(400, 401, 404) },
    },
    handler: async (request) => {
      const result = await replay(db, request.params.id, request.body ?? {});
      ctx.bus.appended();
      return result;
    },
  });
};
