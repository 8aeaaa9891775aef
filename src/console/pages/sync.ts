import { syncStatus } from '../../sync/status.ts';
import { when } from '../forms.ts';
import { html, type Html } from '../html.ts';
import { hidden, type ConsolePage } from '../page.ts';

const fact = (term: string, value: Html | string | number | null) =>
  html`<div><dt>${term}</dt><dd>${value === null || value === '' ? html`<span class="muted">—</span>` : value}</dd></div>`;

/** Sync: whether this store follows a main store, how far behind it is, its last error, and the settings it runs with. Read-only. */
export const syncPage: ConsolePage = {
  slug: 'sync',
  title: 'Sync',
  routes(app, deps) {
    const { ctx } = deps;
    app.get('/sync', { schema: hidden }, async (request, reply) => {
      const s = await syncStatus(ctx.store.db);
      const settings = ctx.config.sync;
      const health = !s.following ? html`<span class="badge">Not following</span>`
        : s.lastError && (!s.lastAppliedAt || (s.lastErrorAt ?? '') > s.lastAppliedAt) ? html`<span class="badge bad">Failing</span>`
        : s.stale ? html`<span class="badge wait">No contact</span>`
        : s.phase === 'snapshot' ? html`<span class="badge wait">Copying snapshot</span>`
        : html`<span class="badge ok">Following</span>`;
      const body = html`<p class="lead">A follower store copies a main store's catalogue (products, categories, brands, parameter and filter values) and then applies its changes feed as it happens. Orders are never copied.</p>
        <section class="panel" aria-labelledby="status-title">
          <div class="panel-head"><h2 id="status-title">Status</h2>${health}</div>
          ${s.following
            ? html`<dl class="facts">
              ${fact('Main store', s.source ? html`<span class="url">${s.source}</span>` : null)}
              ${fact('Phase', s.phase)}
              ${fact('Lag (events)', s.lagEvents)}
              ${fact('Lag (seconds, last batch)', s.lagSeconds === null ? null : s.lagSeconds.toFixed(1))}
              ${fact('Applied events', s.appliedEvents)}
              ${fact('Rows changed', s.appliedChanges)}
              ${fact('Cursor / main head seen', `${s.cursor ?? '—'} / ${s.headSeen ?? '—'}`)}
              ${fact('Last applied', when(s.lastAppliedAt))}
              ${fact('Last contact', when(s.lastContactAt))}
              ${fact('Snapshots taken', s.snapshots)}
              ${fact('Followed collections', html`<ul class="chips">${s.collections.map((c) => html`<li><code>${c}</code></li>`)}</ul>`)}
            </dl>
            ${s.lastError ? html`<div class="alert" role="note"><h3>Last error ${s.lastErrorAt ? html`(${when(s.lastErrorAt)})` : ''}</h3><pre class="answer">${s.lastError}</pre></div>` : ''}`
            : html`<p>This store does not follow a main store; it is a main store itself. Its own changes feed is at event ${s.localHead}.</p>
              <p class="hint">To make it follow one, run <code>store-api sync --from URL --client-id ID --client-secret SECRET --follow</code>, or set <code>SYNC_FROM</code>, <code>SYNC_CLIENT_ID</code> and <code>SYNC_CLIENT_SECRET</code> for <code>serve</code>.</p>`}
        </section>
        <section class="panel" aria-labelledby="settings-title">
          <h2 id="settings-title">Follower settings</h2>
          <p class="hint">Set in the environment of <code>serve</code> (docs/sync.md); shown here, not changed here.</p>
          <dl class="facts">
            ${fact('SYNC_FROM', settings.from ? html`<span class="url">${settings.from}</span>` : 'not set')}
            ${fact('SYNC_CLIENT_ID', settings.clientId ? html`<code>${settings.clientId}</code>` : 'not set')}
            ${fact('SYNC_CLIENT_SECRET', settings.clientSecret ? 'set (not shown)' : 'not set')}
            ${fact('Local edits of followed data', settings.allowLocalEdits ? 'allowed (SYNC_ALLOW_LOCAL_EDITS)' : 'refused')}
            ${fact('Refused here now', ctx.followed.size ? html`<ul class="chips">${[...ctx.followed].map((c) => html`<li><code>${c}</code></li>`)}</ul>` : 'nothing')}
            ${fact('This store\'s feed head', s.localHead)}
          </dl>
        </section>`;
      return deps.show(request, reply, { section: 'sync', title: 'Sync', body });
    });
  },
};
