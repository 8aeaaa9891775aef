import { listCredentials } from '../../auth/credentials.service.ts';
import { when } from '../forms.ts';
import { html, type Html } from '../html.ts';
import { hidden, type ConsolePage } from '../page.ts';
import { USAGE_FLUSH_MS } from '../housekeeping.ts';
import { hourOf, usageOf } from '../usage.ts';
import { lastRequests, usageSince } from '../usage.repository.ts';

const HOUR_MS = 3_600_000;
const HOURS = 24;

/** 24 hourly bars (requests, with their 429s in a second colour) as inline SVG: attributes, no inline styles, so the CSP holds. */
function chart(name: string, hours: string[], series: Map<string, { requests: number; rateLimited: number }>): Html {
  const max = Math.max(1, ...hours.map((h) => series.get(h)?.requests ?? 0));
  const w = 6;
  const gap = 2;
  const height = 32;
  const bars = hours.map((h, i) => {
    const v = series.get(h) ?? { requests: 0, rateLimited: 0 };
    const total = Math.round((v.requests / max) * height);
    const limited = Math.round((v.rateLimited / max) * height);
    const x = i * (w + gap);
    return html`<rect class="bar" x="${x}" y="${height - total}" width="${w}" height="${total}"></rect>${limited > 0 ? html`<rect class="bar limited" x="${x}" y="${height - limited}" width="${w}" height="${limited}"></rect>` : ''}`;
  });
  const busiest = hours.reduce((best, h) => ((series.get(h)?.requests ?? 0) > (series.get(best)?.requests ?? 0) ? h : best), hours[0]);
  const label = `Requests of ${name} per hour over the last 24 hours; the busiest hour, from ${busiest.slice(11, 16)} UTC, had ${series.get(busiest)?.requests ?? 0}.`;
  return html`<svg class="spark" viewBox="0 0 ${hours.length * (w + gap)} ${height}" width="${hours.length * (w + gap)}" height="${height}" role="img" aria-label="${label}"><title>${label}</title><rect class="base" x="0" y="${height - 1}" width="${hours.length * (w + gap)}" height="1"></rect>${bars}</svg>`;
}

/** Usage: requests and 429s per credential over the last 24 hours, and each credential's last request. */
export const usagePage: ConsolePage = {
  slug: 'usage',
  title: 'Usage',
  routes(app, deps) {
    const { ctx } = deps;
    const db = ctx.store.db;
    app.get('/usage', { schema: hidden }, async (request, reply) => {
      // This node's counts since its last flush are written first; other nodes' are at most one flush interval old.
      await usageOf(ctx).flush(db);
      const now = Date.now();
      const hours = Array.from({ length: HOURS }, (_, i) => hourOf(now - (HOURS - 1 - i) * HOUR_MS));
      const [credentials, rows, last] = await Promise.all([listCredentials(db), usageSince(db, hours[0]), lastRequests(db)]);
      const byCredential = new Map<number, Map<string, { requests: number; rateLimited: number }>>();
      for (const r of rows) {
        const series = byCredential.get(r.credentialId) ?? new Map<string, { requests: number; rateLimited: number }>();
        series.set(r.hour, { requests: r.requests, rateLimited: r.rateLimited });
        byCredential.set(r.credentialId, series);
      }
      const sum = (series: Map<string, { requests: number; rateLimited: number }> | undefined, key: 'requests' | 'rateLimited') =>
        [...(series?.values() ?? [])].reduce((n, v) => n + v[key], 0);
      const body = html`<p class="lead">Requests each credential made to <code>/api/v2</code> in the last 24 hours, and how many were refused by its rate limit (429). Counted on every node and added up; figures from other nodes can be up to ${USAGE_FLUSH_MS / 1000} s behind.</p>
        ${credentials.length === 0 ? html`<p class="empty">No credentials yet.</p>` : html`<div class="table-wrap"><table class="stack usage">
          <caption class="visually-hidden">Usage per credential, last 24 hours</caption>
          <thead><tr><th scope="col">Credential</th><th scope="col" class="num">Requests (24 h)</th><th scope="col" class="num">429s (24 h)</th><th scope="col">Last request</th><th scope="col">Per hour</th></tr></thead>
          <tbody>${credentials.map((c) => {
            const series = byCredential.get(c.id);
            return html`<tr>
              <th scope="row" data-label="Credential"><a href="/admin/credentials/${c.id}">${c.name}</a>${c.enabled ? '' : html` <span class="badge off">Disabled</span>`}</th>
              <td data-label="Requests (24 h)" class="num">${sum(series, 'requests')}</td>
              <td data-label="429s (24 h)" class="num">${sum(series, 'rateLimited')}</td>
              <td data-label="Last request">${when(last.get(c.id))}</td>
              <td data-label="Per hour" class="wide">${chart(c.name, hours, series ?? new Map())}</td>
            </tr>`;
          })}</tbody></table></div>`}`;
      return deps.show(request, reply, { section: 'usage', title: 'Usage', body });
    });
  },
};
