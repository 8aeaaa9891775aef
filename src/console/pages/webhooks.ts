import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FieldError } from '../../errors/app-error.ts';
import { DELIVERY_STATUSES, getDelivery, listDeliveries, replay, type Delivery, type DeliveryStatus } from '../../events/webhooks/deliveries.ts';
import { EVENT_TYPES, MAX_PATTERNS, parsePatterns } from '../../events/webhooks/patterns.ts';
import * as service from '../../events/webhooks/subscriptions.ts';
import { failedCount, lastAnswers } from '../console.repository.ts';
import { confirmationBody, errorSummary, field, fieldList, formBody, inputErrors, isConfirmed, oneOrMany, postForm, when } from '../forms.ts';
import { html, type Html } from '../html.ts';
import { hidden, idParams, type ConsoleDeps, type ConsolePage, type IdParams } from '../page.ts';

const NOTICES = {
  saved: 'Subscription saved.',
  disabled: 'Subscription disabled: nothing is sent until it is enabled again (deliveries wait).',
  enabled: 'Subscription enabled: waiting deliveries resume, new events are sent.',
  deleted: 'Subscription deleted, with its delivery log.',
  replayed: 'Queued again; the dispatcher sends it within a moment.',
} as const;
type Notice = keyof typeof NOTICES;

/** Deliveries shown per page of the log. */
const PAGE_SIZE = 25;
/** How much of a receiver's answer the log shows (the attempt page shows the stored 1 KiB). */
const EXCERPT = 140;

const detailQuery = {
  type: 'object', additionalProperties: false,
  properties: {
    notice: { type: 'string', enum: Object.keys(NOTICES) },
    queued: { type: 'integer', minimum: 0 },
    status: { type: 'string', enum: [...DELIVERY_STATUSES] },
    cursor: { type: 'string', pattern: '^[0-9]{1,15}$' },
  },
};
/** A subscription page's query, as `detailQuery` has validated it: a notice after a change, the delivery log's filter and page. */
interface DetailQuery {
  notice?: Notice;
  queued?: number;
  status?: DeliveryStatus;
  cursor?: string;
}
const webhookForm = formBody({
  url: { type: 'string', maxLength: 2000 },
  description: { type: 'string', maxLength: 500 },
  events: oneOrMany({ type: 'string', maxLength: 100 }, EVENT_TYPES.length + 20),
  patterns: { type: 'string', maxLength: 2000 },
});
const deliveryParams = { type: 'object', required: ['id', 'delivery'], additionalProperties: false, properties: { id: { type: 'integer', minimum: 1 }, delivery: { type: 'integer', minimum: 1 } } };
type DeliveryParams = IdParams & { delivery: number };

/** The catalogue by resource: `product` → product.created, product.updated, …; wildcards per group and for all. */
const GROUPS: Array<{ resource: string; types: string[] }> = [];
for (const type of EVENT_TYPES) {
  const resource = type.slice(0, type.indexOf('.'));
  const group = GROUPS.find((g) => g.resource === resource) ?? GROUPS[GROUPS.push({ resource, types: [] }) - 1];
  group.types.push(type);
}
const CATALOGUE = new Set(['*', ...GROUPS.map((g) => `${g.resource}.*`), ...EVENT_TYPES]);

interface Draft {
  url: string;
  description: string;
  events: string[];
}

function readDraft(body: unknown): Draft {
  const typed = field(body, 'patterns') ?? '';
  return { url: (field(body, 'url') ?? '').trim(), description: (field(body, 'description') ?? '').trim(), events: parsePatterns([...fieldList(body, 'events'), ...typed.split(',')]) };
}

const eventId = (pattern: string) => `event-${pattern.replace(/\*/g, 'all').replace(/[^a-z0-9]+/g, '-')}`;

function eventCheck(pattern: string, label: string, checked: readonly string[]): Html {
  return html`<div class="check"><input type="checkbox" name="events" value="${pattern}" id="${eventId(pattern)}"${checked.includes(pattern) ? html` checked` : ''}>
    <label for="${eventId(pattern)}"><code>${pattern}</code> <span>${label}</span></label></div>`;
}

/** URL, description, and the events: a checkbox per type of the catalogue and per wildcard, and a field for other patterns. */
function webhookFields(draft: Draft): Html {
  const other = draft.events.filter((e) => !CATALOGUE.has(e));
  return html`<div class="field">
      <label for="url">Receiver URL</label>
      <input id="url" name="url" type="url" inputmode="url" required maxlength="2000" value="${draft.url}" placeholder="https://erp.example.com/hooks/store" aria-describedby="url-hint">
      <p class="hint" id="url-hint">Events are sent by POST, signed as Standard Webhooks. Private and loopback addresses are refused unless the operator allows them.</p>
    </div>
    <div class="field">
      <label for="description">Description <span class="hint">(optional)</span></label>
      <input id="description" name="description" maxlength="500" value="${draft.description}">
    </div>
    <fieldset class="checks events">
      <legend>Events <span class="hint">pick types, or whole groups with a <code>*</code> wildcard</span></legend>
      ${eventCheck('*', 'every event', draft.events)}
      <div class="event-groups">${GROUPS.map((g) => html`<fieldset class="event-group"><legend>${g.resource}</legend>
        ${eventCheck(`${g.resource}.*`, `every ${g.resource} event`, draft.events)}
        ${g.types.map((t) => eventCheck(t, t.slice(g.resource.length + 1).replace(/_/g, ' '), draft.events))}
      </fieldset>`)}</div>
      <div class="field">
        <label for="patterns">Other patterns <span class="hint">(optional, comma-separated)</span></label>
        <input id="patterns" name="patterns" value="${other.join(', ')}" placeholder="*.deleted" aria-describedby="patterns-hint">
        <p class="hint" id="patterns-hint"><code>*</code> stands for any text; at most ${MAX_PATTERNS} patterns.</p>
      </div>
    </fieldset>`;
}

function secretPanel(hook: service.WebhookWithSecret, why: string, rotated: boolean): Html {
  return html`<section class="panel secret" aria-labelledby="secret-title">
    <h2 id="secret-title">${why}</h2>
    <p class="warning"><strong>Copy the signing secret now.</strong> It is shown only once. Your receiver verifies each delivery's <code>webhook-signature</code> with it (any Standard Webhooks library does).</p>
    ${rotated && hook.previousSecretExpiresAt ? html`<p class="hint">Until ${when(hook.previousSecretExpiresAt)} deliveries are signed with the previous secret too, so the receiver can switch without losing a message.</p>` : ''}
    <div class="field">
      <label for="signing-secret">Signing secret</label>
      <div class="copy-row"><input id="signing-secret" class="mono" readonly value="${hook.secret}"><button type="button" class="button primary" data-copy="signing-secret" hidden>Copy secret</button></div>
    </div>
    <p><a class="button" href="/admin/webhooks/${hook.id}">Done, I have copied it</a></p>
  </section>`;
}

function state(hook: service.Webhook): Html {
  return hook.enabled ? html`<span class="badge ok">Enabled</span>` : html`<span class="badge off">Disabled</span>`;
}

const DELIVERY_BADGE: Record<string, string> = { delivered: 'ok', pending: 'wait', failed: 'bad' };

function excerpt(text: string | null | undefined): Html {
  if (!text) return html`<span class="muted">—</span>`;
  const flat = text.replace(/\s+/g, ' ').trim();
  return html`<span class="excerpt">${flat.length > EXCERPT ? `${flat.slice(0, EXCERPT)}…` : flat}</span>`;
}

async function deliveryLog(deps: ConsoleDeps, request: FastifyRequest, hook: service.Webhook, q: DetailQuery): Promise<Html> {
  const db = deps.ctx.store.db;
  const page = await listDeliveries(db, hook.id, { status: q.status, limit: PAGE_SIZE, cursor: q.cursor === undefined ? undefined : Number(q.cursor) });
  const answers = await lastAnswers(db, page.data.map((d) => d.id));
  const failed = await failedCount(db, hook.id);
  const base = `/admin/webhooks/${hook.id}`;
  const filter = (status: DeliveryStatus | undefined, label: string) =>
    html`<li><a href="${base}${status ? `?status=${status}` : ''}#deliveries"${q.status === status ? html` aria-current="true"` : ''}>${label}</a></li>`;
  const row = (d: Delivery) => {
    const answer = answers.get(d.id);
    return html`<tr>
      <th scope="row" data-label="Event"><code>${d.eventType}</code> <span class="muted">#${d.eventSeq}</span></th>
      <td data-label="Status"><span class="badge ${DELIVERY_BADGE[d.status] ?? ''}">${d.status}</span></td>
      <td data-label="Attempts" class="num">${d.attempts}</td>
      <td data-label="Last status" class="num">${d.lastStatus ?? html`<span class="muted">—</span>`}</td>
      <td data-label="Answer" class="wide">${excerpt(answer?.response ?? answer?.error ?? d.lastError)}</td>
      <td data-label="Next retry">${d.nextAttemptAt ? when(d.nextAttemptAt) : html`<span class="muted">—</span>`}</td>
      <td data-label="Actions" class="row-actions wide">
        <a href="${base}/deliveries/${d.id}">Attempts<span class="visually-hidden"> of delivery ${d.id}</span></a>
        ${postForm(request, `${base}/deliveries/${d.id}/replay`, html`<button type="submit" class="button small">Replay<span class="visually-hidden"> delivery ${d.id}</span></button>`, { className: 'inline' })}
      </td>
    </tr>`;
  };
  return html`<section class="panel" id="deliveries" aria-labelledby="log-title">
    <div class="panel-head">
      <h2 id="log-title">Delivery log</h2>
      ${failed > 0 ? postForm(request, `${base}/replay-failed`, html`<button type="submit" class="button">Replay all failed (${failed})</button>`, { className: 'inline' }) : ''}
    </div>
    <nav aria-label="Filter deliveries"><ul class="filters">${filter(undefined, 'All')}${filter('pending', 'Pending')}${filter('delivered', 'Delivered')}${filter('failed', 'Failed')}</ul></nav>
    ${page.data.length === 0
      ? html`<p class="empty">No deliveries${q.status ? ` ${q.status}` : ''} yet. Events after the subscription was made appear here.</p>`
      : html`<div class="table-wrap"><table class="stack deliveries">
        <caption class="visually-hidden">Deliveries, newest first</caption>
        <thead><tr><th scope="col">Event</th><th scope="col">Status</th><th scope="col" class="num">Attempts</th><th scope="col" class="num">Last status</th><th scope="col">Answer</th><th scope="col">Next retry</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
        <tbody>${page.data.map(row)}</tbody></table></div>`}
    ${page.pagination.nextCursor ? html`<p><a href="${base}?${q.status ? `status=${q.status}&` : ''}cursor=${page.pagination.nextCursor}#deliveries">Older deliveries →</a></p>` : ''}
  </section>`;
}

async function listPage(deps: ConsoleDeps, request: FastifyRequest, reply: FastifyReply, notice: Notice | undefined) {
  const hooks = await service.listWebhooks(deps.ctx.store.db);
  return deps.show(request, reply, {
    section: 'webhooks',
    title: 'Webhooks',
    notice: notice && NOTICES[notice],
    body: html`<p class="lead">A subscription sends the store's events (a product changed, an order's status changed) to a URL of yours as they happen, signed, retried for about three days until your receiver answers 2xx.</p>
      <p><a class="button primary" href="/admin/webhooks/new">New subscription</a></p>
      ${hooks.length === 0
        ? html`<p class="empty">No subscriptions yet.</p>`
        : html`<div class="table-wrap"><table class="stack">
          <caption class="visually-hidden">Webhook subscriptions</caption>
          <thead><tr><th scope="col">Receiver URL</th><th scope="col">Events</th><th scope="col">Status</th><th scope="col">Created</th></tr></thead>
          <tbody>${hooks.map((h) => html`<tr>
            <th scope="row" data-label="Receiver URL"><a href="/admin/webhooks/${h.id}" class="url">${h.url}</a>${h.description ? html`<div class="muted">${h.description}</div>` : ''}</th>
            <td data-label="Events" class="wide"><ul class="chips">${h.events.map((e) => html`<li><code>${e}</code></li>`)}</ul></td>
            <td data-label="Status">${state(h)}${h.disabledReason ? html`<div class="muted">${h.disabledReason}</div>` : ''}</td>
            <td data-label="Created">${when(h.createdAt)}</td>
          </tr>`)}</tbody></table></div>`}`,
  });
}

function newForm(deps: ConsoleDeps, request: FastifyRequest, reply: FastifyReply, draft: Draft, errors: FieldError[] = []) {
  return deps.show(request, reply, {
    section: 'webhooks',
    title: 'New subscription',
    body: html`${errorSummary(errors)}
      ${postForm(request, '/admin/webhooks', html`${webhookFields(draft)}<div class="actions"><button type="submit" class="button primary">Subscribe</button> <a class="button quiet" href="/admin/webhooks">Cancel</a></div>`, { className: 'panel form' })}`,
  }, errors.length ? 400 : 200);
}

/** A subscription's page; `query` from a GET (notice, the log's filter and page), `draft` and `errors` after a refused form. */
async function detailPage(deps: ConsoleDeps, request: FastifyRequest, reply: FastifyReply, id: number, { query: q = {}, draft, errors = [] }: { query?: DetailQuery; draft?: Draft; errors?: FieldError[] } = {}) {
  const hook = await service.getWebhook(deps.ctx.store.db, id);
  const base = `/admin/webhooks/${id}`;
  const notice = q.notice === 'replayed' && q.queued !== undefined ? `${q.queued} ${q.queued === 1 ? 'delivery' : 'deliveries'} queued again; the dispatcher sends them within a moment.` : q.notice && NOTICES[q.notice];
  return deps.show(request, reply, {
    section: 'webhooks',
    title: hook.description || 'Subscription',
    notice,
    body: html`<p><a href="/admin/webhooks">← All subscriptions</a></p>
      <dl class="facts">
        <div class="wide"><dt>Receiver URL</dt><dd class="url">${hook.url}</dd></div>
        <div class="wide"><dt>Events</dt><dd><ul class="chips">${hook.events.map((e) => html`<li><code>${e}</code></li>`)}</ul></dd></div>
        <div><dt>Status</dt><dd>${state(hook)}</dd></div>
        <div><dt>Created</dt><dd>${when(hook.createdAt)}</dd></div>
        ${hook.previousSecretExpiresAt ? html`<div><dt>Previous secret also signs until</dt><dd>${when(hook.previousSecretExpiresAt)}</dd></div>` : ''}
      </dl>
      ${hook.enabled ? '' : html`<div class="alert" role="note"><h2>Why it is disabled</h2><p>${hook.disabledReason ?? 'No reason was recorded.'}${hook.disabledAt ? html` (${when(hook.disabledAt)})` : ''}</p><p>Deliveries wait while it is disabled; enabling it resumes them, and <em>Replay all failed</em> sends the ones that gave up.</p></div>`}
      ${await deliveryLog(deps, request, hook, q)}
      ${errorSummary(errors)}
      <section class="panel" aria-labelledby="edit-title">
        <h2 id="edit-title">Receiver and events</h2>
        ${postForm(request, base, html`${webhookFields(draft ?? { url: hook.url, description: hook.description ?? '', events: hook.events })}<div class="actions"><button type="submit" class="button primary">Save changes</button></div>`, { className: 'form' })}
      </section>
      <section class="panel" aria-labelledby="actions-title">
        <h2 id="actions-title">Secret and state</h2>
        <div class="action-list">
          ${postForm(request, `${base}/rotate`, html`<button type="submit" class="button">Rotate signing secret</button><p class="hint">A new secret is shown once; for a day the old one signs too.</p>`, { confirm: 'Issue a new signing secret? It is shown once; the previous one keeps signing for a day.' })}
          ${hook.enabled
            ? postForm(request, `${base}/disable`, html`<button type="submit" class="button">Disable</button><p class="hint">Nothing is sent until it is enabled; deliveries wait.</p>`)
            : postForm(request, `${base}/enable`, html`<button type="submit" class="button">Enable</button><p class="hint">Waiting deliveries resume.</p>`)}
          ${postForm(request, `${base}/delete`, html`<button type="submit" class="button danger">Delete subscription</button><p class="hint">With its delivery log.</p>`, { confirm: `Delete the subscription to ${hook.url}, with its delivery log?` })}
        </div>
      </section>`,
  }, errors.length ? 400 : 200);
}

/** Webhooks: subscribe, secret shown once, rotate, disable/enable, delete; the delivery log with replay. The admin API's functions, so its rules hold. */
export const webhooksPage: ConsolePage = {
  slug: 'webhooks',
  title: 'Webhooks',
  routes(app, deps) {
    const { ctx } = deps;
    const db = ctx.store.db;
    const allowPrivate = ctx.config.webhooks.allowPrivate;
    const see = (reply: FastifyReply, id: number, notice: Notice, extra = '') => reply.code(303).header('location', `/admin/webhooks/${id}?notice=${notice}${extra}`).send();

    app.get<{ Querystring: { notice?: Notice } }>('/webhooks', { schema: { ...hidden, querystring: { type: 'object', additionalProperties: false, properties: { notice: { type: 'string', enum: ['deleted'] } } } } }, (request, reply) => listPage(deps, request, reply, request.query.notice));
    app.get('/webhooks/new', { schema: hidden }, (request, reply) => newForm(deps, request, reply, { url: '', description: '', events: [] }));

    app.post('/webhooks', { schema: { ...hidden, body: webhookForm } }, async (request, reply) => {
      const draft = readDraft(request.body);
      if (!draft.url) return newForm(deps, request, reply, draft, [{ name: 'url', reason: 'must not be empty' }]);
      try {
        const hook = await service.createWebhook(db, { url: draft.url, events: draft.events, description: draft.description || null }, allowPrivate);
        return deps.show(request, reply, { section: 'webhooks', title: 'Subscribed', body: secretPanel(hook, `Events now go to ${hook.url}`, false) }, 201);
      } catch (error) {
        return newForm(deps, request, reply, draft, inputErrors(error));
      }
    });

    app.get<{ Params: IdParams; Querystring: DetailQuery }>('/webhooks/:id', { schema: { ...hidden, params: idParams, querystring: detailQuery } }, (request, reply) =>
      detailPage(deps, request, reply, request.params.id, { query: request.query }));

    app.post<{ Params: IdParams }>('/webhooks/:id', { schema: { ...hidden, params: idParams, body: webhookForm } }, async (request, reply) => {
      const { id } = request.params;
      const draft = readDraft(request.body);
      if (!draft.url) return detailPage(deps, request, reply, id, { draft, errors: [{ name: 'url', reason: 'must not be empty' }] });
      try {
        await service.updateWebhook(db, id, { url: draft.url, events: draft.events, description: draft.description || null }, allowPrivate);
      } catch (error) {
        return detailPage(deps, request, reply, id, { draft, errors: inputErrors(error) });
      }
      ctx.bus.appended();
      return see(reply, id, 'saved');
    });

    app.post<{ Params: IdParams }>('/webhooks/:id/rotate', { schema: { ...hidden, params: idParams, body: formBody({}) } }, async (request, reply) => {
      const { id } = request.params;
      if (!isConfirmed(request.body)) {
        await service.getWebhook(db, id);
        return deps.show(request, reply, { section: 'webhooks', title: 'Rotate the secret?', body: confirmationBody(request, `/admin/webhooks/${id}/rotate`, 'Issue a new signing secret? It is shown once; the previous one keeps signing for a day.', 'Rotate signing secret', `/admin/webhooks/${id}`) });
      }
      const hook = await service.rotateWebhookSecret(db, id);
      return deps.show(request, reply, { section: 'webhooks', title: 'Secret rotated', body: secretPanel(hook, `New signing secret for ${hook.url}`, true) });
    });

    for (const [action, enabled] of [['disable', false], ['enable', true]] as const) {
      app.post<{ Params: IdParams }>(`/webhooks/:id/${action}`, { schema: { ...hidden, params: idParams, body: formBody({}) } }, async (request, reply) => {
        const { id } = request.params;
        await service.updateWebhook(db, id, { enabled }, allowPrivate);
        ctx.bus.appended();
        return see(reply, id, enabled ? 'enabled' : 'disabled');
      });
    }

    app.post<{ Params: IdParams }>('/webhooks/:id/delete', { schema: { ...hidden, params: idParams, body: formBody({}) } }, async (request, reply) => {
      const { id } = request.params;
      if (!isConfirmed(request.body)) {
        const hook = await service.getWebhook(db, id);
        return deps.show(request, reply, { section: 'webhooks', title: 'Delete the subscription?', body: confirmationBody(request, `/admin/webhooks/${id}/delete`, `Delete the subscription to ${hook.url}, with its delivery log?`, 'Delete subscription', `/admin/webhooks/${id}`) });
      }
      await service.deleteWebhook(db, id);
      return reply.code(303).header('location', '/admin/webhooks?notice=deleted').send();
    });

    app.post<{ Params: IdParams }>('/webhooks/:id/replay-failed', { schema: { ...hidden, params: idParams, body: formBody({}) } }, async (request, reply) => {
      const { id } = request.params;
      const { queued } = await replay(db, id, {});
      ctx.bus.appended();
      return see(reply, id, 'replayed', `&queued=${queued}`);
    });

    app.post<{ Params: DeliveryParams }>('/webhooks/:id/deliveries/:delivery/replay', { schema: { ...hidden, params: deliveryParams, body: formBody({}) } }, async (request, reply) => {
      const { id, delivery } = request.params;
      const { queued } = await replay(db, id, { delivery });
      ctx.bus.appended();
      return see(reply, id, 'replayed', `&queued=${queued}`);
    });

    app.get<{ Params: DeliveryParams }>('/webhooks/:id/deliveries/:delivery', { schema: { ...hidden, params: deliveryParams } }, async (request, reply) => {
      const { id, delivery } = request.params;
      const hook = await service.getWebhook(db, id);
      const d = await getDelivery(db, id, delivery);
      return deps.show(request, reply, {
        section: 'webhooks',
        title: `Delivery ${d.id}`,
        body: html`<p><a href="/admin/webhooks/${id}#deliveries">← Delivery log of ${hook.url}</a></p>
          <dl class="facts">
            <div><dt>Event</dt><dd><code>${d.eventType}</code> #${d.eventSeq}</dd></div>
            <div><dt>Status</dt><dd><span class="badge ${DELIVERY_BADGE[d.status] ?? ''}">${d.status}</span></dd></div>
            <div><dt>webhook-id</dt><dd><code class="id">${d.messageId}</code></dd></div>
            <div><dt>Next retry</dt><dd>${d.nextAttemptAt ? when(d.nextAttemptAt) : html`<span class="muted">—</span>`}</dd></div>
            <div><dt>Delivered</dt><dd>${when(d.deliveredAt)}</dd></div>
          </dl>
          ${postForm(request, `/admin/webhooks/${id}/deliveries/${d.id}/replay`, html`<button type="submit" class="button">Replay this delivery</button>`, { className: 'inline' })}
          <section class="panel" aria-labelledby="attempts-title"><h2 id="attempts-title">Attempts</h2>
          ${d.attemptLog.length === 0
            ? html`<p class="empty">No attempt yet.</p>`
            : html`<div class="table-wrap"><table class="stack">
              <thead><tr><th scope="col">#</th><th scope="col">Started</th><th scope="col" class="num">Took</th><th scope="col" class="num">Status</th><th scope="col">Answer or error</th><th scope="col">Node</th></tr></thead>
              <tbody>${d.attemptLog.map((a) => html`<tr>
                <th scope="row" data-label="#">${a.attempt}</th><td data-label="Started">${when(a.startedAt)}</td><td data-label="Took" class="num">${a.durationMs} ms</td>
                <td data-label="Status" class="num">${a.statusCode ?? '—'}</td><td data-label="Answer or error" class="wide"><pre class="answer">${a.response ?? a.error ?? ''}</pre></td><td data-label="Node"><code>${a.node}</code></td>
              </tr>`)}</tbody></table></div>`}
          </section>`,
      });
    });
  },
};
