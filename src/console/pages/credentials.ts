import type { FastifyReply, FastifyRequest } from 'fastify';
import * as service from '../../auth/credentials.service.ts';
import { ALL_SCOPES, SCOPES, type Scope } from '../../auth/scopes.ts';
import type { AppContext } from '../../context.ts';
import type { FieldError } from '../../errors/app-error.ts';
import { liveTokenCounts } from '../console.repository.ts';
import { confirmationBody, errorSummary, field, fieldList, formBody, inputErrors, isConfirmed, oneOrMany, postForm, when } from '../forms.ts';
import { html, type Html } from '../html.ts';
import { hidden, idParams, type ConsoleDeps, type ConsolePage, type IdParams } from '../page.ts';
import { lastRequests } from '../usage.repository.ts';

const NOTICES = {
  saved: 'Changes saved. Tokens issued with the old scopes stopped working.',
  renamed: 'Name saved.',
  disabled: 'Credential disabled: its tokens stopped working, and it cannot obtain new ones.',
  enabled: 'Credential enabled: it can obtain tokens again.',
  deleted: 'Credential deleted, with its tokens.',
} as const;
const noticeQuery = { type: 'object', additionalProperties: false, properties: { notice: { type: 'string', enum: Object.keys(NOTICES) } } };
type Notice = keyof typeof NOTICES;

const nameField = { type: 'string', maxLength: 200 };
const scopesField = oneOrMany({ type: 'string', maxLength: 100 }, ALL_SCOPES.length);
const credentialForm = formBody({ name: nameField, scopes: scopesField });

interface Draft {
  name: string;
  scopes: string[];
}

/** The form's name and scopes, checked by the same rules as the admin API (a name of 1–200 characters, known scopes, at least one). */
function readDraft(body: unknown): { draft: Draft; errors: FieldError[]; scopes?: Scope[] } {
  const draft = { name: (field(body, 'name') ?? '').trim(), scopes: fieldList(body, 'scopes') };
  const errors: FieldError[] = [];
  if (!draft.name) errors.push({ name: 'name', reason: 'must not be empty' });
  let scopes: Scope[] | undefined;
  try {
    scopes = service.validateScopes(draft.scopes);
  } catch (error) {
    errors.push(...inputErrors(error));
  }
  return { draft, errors, scopes };
}

const scopeId = (scope: string) => `scope-${scope.replace(/[^a-z0-9]+/g, '-')}`;

/** A checkbox per scope, labelled with its name and what it grants. */
function scopeChecks(checked: readonly string[]): Html {
  return html`<fieldset class="checks">
    <legend>Scopes <span class="hint">what the credential's tokens may read or do</span></legend>
    ${ALL_SCOPES.map((s) => html`<div class="check">
      <input type="checkbox" name="scopes" value="${s}" id="${scopeId(s)}"${checked.includes(s) ? html` checked` : ''}>
      <label for="${scopeId(s)}"><code>${s}</code> <span>${SCOPES[s]}</span></label>
    </div>`)}
  </fieldset>`;
}

function credentialFields(draft: Draft): Html {
  return html`<div class="field">
      <label for="name">Name</label>
      <input id="name" name="name" required maxlength="200" value="${draft.name}" autocomplete="off" aria-describedby="name-hint">
      <p class="hint" id="name-hint">Who uses it, for example the ERP or the price comparison feed.</p>
    </div>
    ${scopeChecks(draft.scopes)}`;
}

/** Where a ready curl line points: the first collection the credential may read, else the feed head. */
function tryPath(scopes: readonly Scope[]): string | undefined {
  const read = scopes.find((s) => s.endsWith(':read') && s !== 'changes:read');
  if (read) return `/api/v2/${read.slice(0, -':read'.length)}?limit=2`;
  return scopes.includes('changes:read') ? '/api/v2/changes/head' : undefined;
}

/** The secret, shown this once, with copy buttons and a curl line that works as it is. */
function secretPanel(ctx: AppContext, issued: service.IssuedCredential, why: string): Html {
  const base = ctx.config.publicUrl;
  const path = tryPath(issued.scopes);
  const curl = [
    `TOKEN=$(curl -s -X POST ${base}/oauth/token -d grant_type=client_credentials -d client_id=${issued.clientId} -d client_secret=${issued.clientSecret} | sed -E 's/.*"access_token":"([^"]+)".*/\\1/')`,
    ...(path ? [`curl -s "${base}${path}" -H "Authorization: Bearer $TOKEN"`] : []),
  ].join('\n');
  return html`<section class="panel secret" aria-labelledby="secret-title">
    <h2 id="secret-title">${why}</h2>
    <p class="warning"><strong>Copy the secret now.</strong> It is shown only once: the store keeps only a hash of it.</p>
    <div class="field">
      <label for="client-id">Client id</label>
      <div class="copy-row"><input id="client-id" class="mono" readonly value="${issued.clientId}"><button type="button" class="button" data-copy="client-id" hidden>Copy</button></div>
    </div>
    <div class="field">
      <label for="client-secret">Client secret</label>
      <div class="copy-row"><input id="client-secret" class="mono" readonly value="${issued.clientSecret}"><button type="button" class="button primary" data-copy="client-secret" hidden>Copy secret</button></div>
    </div>
    <div class="field">
      <label for="curl-line">Try it with curl</label>
      <div class="copy-row"><textarea id="curl-line" class="mono" readonly rows="7">${curl}</textarea><button type="button" class="button" data-copy="curl-line" hidden>Copy</button></div>
    </div>
    <p><a class="button" href="/admin/credentials/${issued.id}">Done, I have copied it</a></p>
  </section>`;
}

function badge(enabled: boolean): Html {
  return enabled ? html`<span class="badge ok">Enabled</span>` : html`<span class="badge off">Disabled</span>`;
}

function scopeList(scopes: readonly string[]): Html {
  return html`<ul class="chips">${scopes.map((s) => html`<li><code>${s}</code></li>`)}</ul>`;
}

const later = (a: string | null, b: string | undefined): string | null => (b && (!a || b > a) ? b : a);

async function listPage(deps: ConsoleDeps, request: FastifyRequest, reply: FastifyReply, notice: Notice | undefined) {
  const db = deps.ctx.store.db;
  const [credentials, live, lastRequest] = await Promise.all([service.listCredentials(db), liveTokenCounts(db, new Date().toISOString()), lastRequests(db)]);
  const rows = credentials.map((c) => html`<tr>
      <th scope="row" data-label="Name"><a href="/admin/credentials/${c.id}">${c.name}</a></th>
      <td data-label="Client id" class="wide"><code class="id">${c.clientId}</code></td>
      <td data-label="Scopes" class="wide">${scopeList(c.scopes)}</td>
      <td data-label="Status">${badge(c.enabled)}</td>
      <td data-label="Created">${when(c.createdAt)}</td>
      <td data-label="Last used">${when(later(c.lastUsedAt, lastRequest.get(c.id)))}</td>
      <td data-label="Live tokens" class="num">${live.get(c.id) ?? 0}</td>
    </tr>`);
  return deps.show(request, reply, {
    section: 'credentials',
    title: 'API credentials',
    notice: notice && NOTICES[notice],
    body: html`<p class="lead">Each credential is a client id and secret that a system (an ERP, a feed) exchanges for tokens at <code>/oauth/token</code>. Its scopes decide what it may read.</p>
      <p><a class="button primary" href="/admin/credentials/new">New credential</a></p>
      ${credentials.length === 0
        ? html`<p class="empty">No credentials yet.</p>`
        : html`<div class="table-wrap"><table class="stack">
          <caption class="visually-hidden">API credentials</caption>
          <thead><tr><th scope="col">Name</th><th scope="col">Client id</th><th scope="col">Scopes</th><th scope="col">Status</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col" class="num">Live tokens</th></tr></thead>
          <tbody>${rows}</tbody></table></div>`}`,
  });
}

function newForm(deps: ConsoleDeps, request: FastifyRequest, reply: FastifyReply, draft: Draft, errors: FieldError[] = []) {
  return deps.show(request, reply, {
    section: 'credentials',
    title: 'New credential',
    body: html`${errorSummary(errors)}
      ${postForm(request, '/admin/credentials', html`${credentialFields(draft)}<div class="actions"><button type="submit" class="button primary">Create credential</button> <a class="button quiet" href="/admin/credentials">Cancel</a></div>`, { className: 'panel form' })}`,
  }, errors.length ? 400 : 200);
}

/** A credential's page; `notice` after a change (from the query of a GET), `draft` and `errors` after a refused form. */
async function detailPage(deps: ConsoleDeps, request: FastifyRequest, reply: FastifyReply, id: number, { notice, draft, errors = [] }: { notice?: Notice; draft?: Draft; errors?: FieldError[] } = {}) {
  const db = deps.ctx.store.db;
  const c = await service.getCredential(db, id);
  const live = (await liveTokenCounts(db, new Date().toISOString())).get(id) ?? 0;
  const lastRequest = (await lastRequests(db)).get(id);
  const base = `/admin/credentials/${id}`;
  return deps.show(request, reply, {
    section: 'credentials',
    title: c.name,
    notice: notice && NOTICES[notice],
    body: html`<p><a href="/admin/credentials">← All credentials</a></p>
      <dl class="facts">
        <div><dt>Client id</dt><dd><code class="id">${c.clientId}</code></dd></div>
        <div><dt>Status</dt><dd>${badge(c.enabled)}</dd></div>
        <div><dt>Created</dt><dd>${when(c.createdAt)}</dd></div>
        <div><dt>Last token issued</dt><dd>${when(c.lastUsedAt)}</dd></div>
        <div><dt>Last request</dt><dd>${when(lastRequest)}</dd></div>
        <div><dt>Live tokens</dt><dd>${live}</dd></div>
      </dl>
      ${errorSummary(errors)}
      <section class="panel" aria-labelledby="edit-title">
        <h2 id="edit-title">Name and scopes</h2>
        <p class="hint">Changing the scopes ends the credential's current tokens at once; it obtains new ones with the new scopes.</p>
        ${postForm(request, base, html`${credentialFields(draft ?? { name: c.name, scopes: c.scopes })}<div class="actions"><button type="submit" class="button primary">Save changes</button></div>`, { className: 'form' })}
      </section>
      <section class="panel" aria-labelledby="actions-title">
        <h2 id="actions-title">Secret and access</h2>
        <div class="action-list">
          ${postForm(request, `${base}/rotate`, html`<button type="submit" class="button">Rotate secret</button><p class="hint">A new secret is shown once; the old secret and its tokens stop working.</p>`, { confirm: `Rotate the secret of “${c.name}”? The current secret and its tokens stop working at once.` })}
          ${c.enabled
            ? postForm(request, `${base}/disable`, html`<button type="submit" class="button">Disable</button><p class="hint">Its tokens stop working at once; enable it again later.</p>`)
            : postForm(request, `${base}/enable`, html`<button type="submit" class="button">Enable</button><p class="hint">It may obtain tokens again with its secret.</p>`)}
          ${postForm(request, `${base}/delete`, html`<button type="submit" class="button danger">Delete credential</button><p class="hint">The credential and its tokens are deleted for good.</p>`, { confirm: `Delete the credential “${c.name}”? Systems using it lose access at once.` })}
        </div>
      </section>`,
  }, errors.length ? 400 : 200);
}

const see = (reply: FastifyReply, id: number, notice: Notice) => reply.code(303).header('location', `/admin/credentials/${id}?notice=${notice}`).send();

/** Credentials: list, create (secret shown once), change name and scopes, rotate, disable/enable, delete. The admin API's service functions, so its rules hold. */
export const credentialsPage: ConsolePage = {
  slug: 'credentials',
  title: 'Credentials',
  routes(app, deps) {
    const { ctx } = deps;
    const db = ctx.store.db;
    app.get<{ Querystring: { notice?: Notice } }>('/credentials', { schema: { ...hidden, querystring: noticeQuery } }, (request, reply) => listPage(deps, request, reply, request.query.notice));
    app.get('/credentials/new', { schema: hidden }, (request, reply) => newForm(deps, request, reply, { name: '', scopes: [] }));

    app.post('/credentials', { schema: { ...hidden, body: credentialForm } }, async (request, reply) => {
      const { draft, errors, scopes } = readDraft(request.body);
      if (errors.length || !scopes) return newForm(deps, request, reply, draft, errors);
      const issued = await service.createCredential(db, ctx.hashKey, draft.name, scopes);
      return deps.show(request, reply, { section: 'credentials', title: 'Credential created', body: secretPanel(ctx, issued, `“${issued.name}” is ready`) }, 201);
    });

    app.get<{ Params: IdParams; Querystring: { notice?: Notice } }>('/credentials/:id', { schema: { ...hidden, params: idParams, querystring: noticeQuery } }, (request, reply) =>
      detailPage(deps, request, reply, request.params.id, { notice: request.query.notice }));

    app.post<{ Params: IdParams }>('/credentials/:id', { schema: { ...hidden, params: idParams, body: credentialForm } }, async (request, reply) => {
      const { id } = request.params;
      const current = await service.getCredential(db, id);
      const { draft, errors, scopes } = readDraft(request.body);
      if (errors.length || !scopes) return detailPage(deps, request, reply, id, { draft, errors });
      // Only a real change of scopes is sent: the service ends a credential's tokens whenever scopes are set.
      const changed = scopes.length !== current.scopes.length || scopes.some((s) => !current.scopes.includes(s));
      await service.updateCredential(db, id, { name: draft.name, ...(changed ? { scopes } : {}) });
      ctx.tokens.forget(id);
      return see(reply, id, changed ? 'saved' : 'renamed');
    });

    app.post<{ Params: IdParams }>('/credentials/:id/rotate', { schema: { ...hidden, params: idParams, body: formBody({}) } }, async (request, reply) => {
      const { id } = request.params;
      if (!isConfirmed(request.body)) {
        const c = await service.getCredential(db, id);
        return deps.show(request, reply, { section: 'credentials', title: 'Rotate the secret?', body: confirmationBody(request, `/admin/credentials/${id}/rotate`, `Rotate the secret of “${c.name}”? The current secret and its tokens stop working at once.`, 'Rotate secret', `/admin/credentials/${id}`) });
      }
      const issued = await service.rotateSecret(db, ctx.hashKey, id);
      ctx.tokens.forget(id);
      return deps.show(request, reply, { section: 'credentials', title: 'Secret rotated', body: secretPanel(ctx, issued, `New secret of “${issued.name}”`) });
    });

    for (const [action, enabled] of [['disable', false], ['enable', true]] as const) {
      app.post<{ Params: IdParams }>(`/credentials/:id/${action}`, { schema: { ...hidden, params: idParams, body: formBody({}) } }, async (request, reply) => {
        const { id } = request.params;
        await service.updateCredential(db, id, { enabled });
        // This node forgets the tokens it had verified; other nodes within their recheck time (API.md §1).
        ctx.tokens.forget(id);
        return see(reply, id, enabled ? 'enabled' : 'disabled');
      });
    }

    app.post<{ Params: IdParams }>('/credentials/:id/delete', { schema: { ...hidden, params: idParams, body: formBody({}) } }, async (request, reply) => {
      const { id } = request.params;
      if (!isConfirmed(request.body)) {
        const c = await service.getCredential(db, id);
        return deps.show(request, reply, { section: 'credentials', title: 'Delete the credential?', body: confirmationBody(request, `/admin/credentials/${id}/delete`, `Delete the credential “${c.name}”? Systems using it lose access at once.`, 'Delete credential', `/admin/credentials/${id}`) });
      }
      await service.deleteCredential(db, id);
      ctx.tokens.forget(id);
      return reply.code(303).header('location', '/admin/credentials?notice=deleted').send();
    });
  },
};
