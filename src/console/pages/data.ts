import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.ts';
import { AppError, invalidParameter, notFound } from '../../errors/app-error.ts';
import { decodeCursor } from '../../listing/cursor.ts';
import { COMMON_FILTERS, DEFAULT_LIMIT, filteredQuery, getOne, listPage, MAX_LIMIT, plan, sortsOf, type ListRequest, type Page } from '../../listing/engine.ts';
import { FORMATS } from '../../listing/formats/negotiate.ts';
import { contentDisposition, exportAll, type ExportOptions } from '../../listing/formats/send.ts';
import { commonListParameters } from '../../listing/schemas.ts';
import { ID_BOUNDS } from '../../resources/bounds.ts';
import type { Resource, Row } from '../../resources/types.ts';
import { html, type Html } from '../html.ts';
import type { ConsoleDeps, ConsolePage } from '../page.ts';

/** Whole exports started from the console count under this one owner (besides the node's cap), whoever signed in. */
export const CONSOLE_EXPORT_OWNER = 'console';
/** Characters of a text shown in a table cell; the whole text is on the item's page (and in the cell's title). */
const CELL_TEXT = 48;
const CONTROL = new Set(['limit', 'cursor', 'sort']);

type Query = Record<string, string | string[] | undefined>;

const collectionParams = { type: 'object', required: ['collection'], additionalProperties: false, properties: { collection: { type: 'string', maxLength: 100 } } };
const itemParams = {
  type: 'object', required: ['collection', 'id'], additionalProperties: false,
  properties: { collection: { type: 'string', maxLength: 100 }, id: { type: 'integer', ...ID_BOUNDS } },
};

/** `product-parameters` → `Product parameters`. */
const labelOf = (def: Resource): string => def.collection.charAt(0).toUpperCase() + def.collection.slice(1).replace(/-/g, ' ');

function resourceOf(ctx: AppContext, collection: string): Resource {
  const def = ctx.resources.byCollection.get(collection);
  if (!def) throw notFound(`Collection "${collection}"`);
  return def;
}

/** One value of a query parameter; a repeated one is refused as the listing would not know which to use. */
function one(query: Query, name: string): string | undefined {
  const v = query[name];
  if (Array.isArray(v)) throw invalidParameter(name, 'must be given once');
  return v === undefined || v.trim() === '' ? undefined : v;
}

/**
 * The listing request of a console query: what a GET form sends, empty fields left out (a form sends every
 * field). Filters and sort are the engine's to validate; the limit is checked here as the public route's schema does.
 */
function listRequestOf(query: Query): ListRequest {
  const filters: Record<string, string> = {};
  for (const name of Object.keys(query)) {
    if (CONTROL.has(name) || name === 'format') continue;
    const value = one(query, name);
    if (value !== undefined) filters[name] = value;
  }
  const rawLimit = one(query, 'limit');
  if (rawLimit !== undefined && !(/^\d{1,5}$/.test(rawLimit) && Number(rawLimit) >= 1 && Number(rawLimit) <= MAX_LIMIT)) {
    throw invalidParameter('limit', `must be an integer from 1 to ${MAX_LIMIT}`);
  }
  return { limit: rawLimit === undefined ? undefined : Number(rawLimit), cursor: one(query, 'cursor'), sort: one(query, 'sort'), filters };
}

/** A query string of the given parameters (empty ones left out). */
function queryString(params: Record<string, string | number | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A value in a table cell: short, one line; the full text in the title. */
function cell(value: unknown): Html {
  if (value === null || value === undefined) return html`<span class="muted">—</span>`;
  if (Array.isArray(value)) return html`<span class="muted">${value.length} ${value.length === 1 ? 'item' : 'items'}</span>`;
  // An object (an address) reads best as its values in order; its page shows it whole.
  const text = isRecord(value) ? Object.values(value).filter((v) => v !== null && v !== '').map((v) => (typeof v === 'object' ? JSON.stringify(v) : String(v))).join(', ') : String(value);
  return text.length > CELL_TEXT ? html`<span title="${text.slice(0, 1000)}">${text.slice(0, CELL_TEXT - 1)}…</span>` : html`${text}`;
}

/** A value on an item's page: nested lists of objects as a small table, other objects as JSON. */
function detail(value: unknown, caption: string): Html {
  if (value === null || value === undefined) return html`<span class="muted">—</span>`;
  if (Array.isArray(value)) {
    if (value.length === 0) return html`<span class="muted">none</span>`;
    if (value.every(isRecord)) {
      const columns = [...new Set(value.flatMap((v) => Object.keys(v)))];
      return html`<div class="table-wrap nested"><table><caption class="visually-hidden">${caption}</caption>
        <thead><tr>${columns.map((c) => html`<th scope="col">${c}</th>`)}</tr></thead>
        <tbody>${value.map((v) => html`<tr>${columns.map((c) => html`<td>${v[c] === null || v[c] === undefined ? html`<span class="muted">—</span>` : isRecord(v[c]) || Array.isArray(v[c]) ? JSON.stringify(v[c]) : String(v[c])}</td>`)}</tr>`)}</tbody>
      </table></div>`;
    }
  }
  if (isRecord(value) || Array.isArray(value)) return html`<pre class="answer">${JSON.stringify(value, null, 2)}</pre>`;
  return html`<span class="value">${String(value)}</span>`;
}

/** The collections as links, the current one marked: a new resource of the registry appears here by itself. */
const picker = (ctx: AppContext, current?: Resource): Html => html`<nav aria-label="Collections"><ul class="filters">${ctx.resources.list.map((r) =>
  html`<li><a href="/admin/data/${r.collection}"${r === current ? html` aria-current="true"` : ''}>${labelOf(r)}</a></li>`)}</ul></nav>`;

/** The filter form, generated from the declaration: its filters and the common ones, the sorts, the limit. */
function filterForm(def: Resource, values: { filters: Record<string, string>; sort?: string; limit?: number }): Html {
  const common = commonListParameters(def);
  const filters = [
    ...def.filters.map((f) => ({ name: f.name, hint: f.description })),
    ...COMMON_FILTERS.filter((name) => !def.filters.some((f) => f.name === name)).map((name) => ({ name, hint: String(common[name].description ?? '') })),
  ];
  return html`<form method="get" action="/admin/data/${def.collection}" class="data-filters" aria-label="Filter ${labelOf(def).toLowerCase()}">
    <div class="filter-grid">
      ${filters.map((f) => html`<div class="field">
        <label for="f-${f.name}">${f.name}</label>
        <input id="f-${f.name}" name="${f.name}" type="text" value="${values.filters[f.name] ?? ''}" aria-describedby="f-${f.name}-hint" spellcheck="false" autocomplete="off">
        <p class="hint" id="f-${f.name}-hint">${f.hint}</p>
      </div>`)}
      <div class="field">
        <label for="f-sort">Sort</label>
        <select id="f-sort" name="sort">
          <option value="">Default (${def.defaultSort})</option>
          ${sortsOf(def).map((s) => html`<option value="${s}"${s === values.sort ? html` selected` : ''}>${s.startsWith('-') ? `${s.slice(1)}, descending` : `${s}, ascending`}</option>`)}
        </select>
      </div>
      <div class="field">
        <label for="f-limit">Rows per page</label>
        <input id="f-limit" name="limit" type="number" min="1" max="${MAX_LIMIT}" inputmode="numeric" value="${values.limit ?? ''}" placeholder="${DEFAULT_LIMIT}" aria-describedby="f-limit-hint">
        <p class="hint" id="f-limit-hint">1 to ${MAX_LIMIT} (default ${DEFAULT_LIMIT}).</p>
      </div>
    </div>
    <div class="actions"><button type="submit" class="button primary">Apply</button> <a class="button quiet" href="/admin/data/${def.collection}">Clear</a></div>
  </form>`;
}

function rowsTable(def: Resource, page: Page): Html {
  if (page.data.length === 0) return html`<p class="empty">Nothing matches these filters.</p>`;
  const [idField, ...rest] = def.fields;
  return html`<div class="table-wrap data-table"><table>
    <caption class="visually-hidden">${labelOf(def)}: this page's rows</caption>
    <thead><tr>${def.fields.map((f) => html`<th scope="col">${f.name}</th>`)}</tr></thead>
    <tbody>${page.data.map((row) => html`<tr>
      <th scope="row"><a href="/admin/data/${def.collection}/${String(row[idField.name])}" aria-label="${def.title} ${String(row[idField.name])}">${String(row[idField.name])}</a></th>
      ${rest.map((f) => html`<td${f.type === 'money' || f.type === 'integer' || f.type === 'number' ? html` class="num"` : ''}>${cell(row[f.name])}</td>`)}
    </tr>`)}</tbody>
  </table></div>`;
}

/** The listing page: picker, form, the engine's page or its 400 message, next-page link, downloads. */
async function listingPage(deps: ConsoleDeps, request: FastifyRequest<{ Params: { collection: string }; Querystring: Query }>, reply: FastifyReply): Promise<FastifyReply> {
  const { ctx } = deps;
  const def = resourceOf(ctx, request.params.collection);
  let shown: { filters: Record<string, string>; sort?: string; limit?: number } = { filters: {} };
  let content: Html;
  let status = 200;
  try {
    const listRequest = listRequestOf(request.query);
    shown = { filters: listRequest.filters, sort: listRequest.sort, limit: listRequest.limit };
    // A later page shows the filters and sort its cursor carries (the engine reapplies them from the cursor).
    if (listRequest.cursor !== undefined) {
      const state = decodeCursor(listRequest.cursor, ctx.hashKey);
      shown = { filters: state.filters, sort: state.sort, limit: listRequest.limit };
    }
    const page = await listPage(ctx.store.db, def, listRequest, ctx.hashKey);
    const current = queryString({ ...shown.filters, sort: shown.sort });
    content = html`<div class="data-bar">
        <p class="muted">${page.data.length} ${page.data.length === 1 ? 'row' : 'rows'} on this page${listRequest.cursor ? ' (a later page)' : ''}.</p>
        <div class="actions downloads">
          <a class="button" href="/admin/data/${def.collection}/download${queryString({ ...shown.filters, sort: shown.sort, format: 'csv' })}" download>Download CSV</a>
          <a class="button" href="/admin/data/${def.collection}/download${queryString({ ...shown.filters, sort: shown.sort, format: 'xlsx' })}" download>Download XLSX</a>
        </div>
      </div>
      ${rowsTable(def, page)}
      <nav class="pager" aria-label="Pages">
        ${listRequest.cursor ? html`<a class="button quiet" href="/admin/data/${def.collection}${current}">First page</a>` : ''}
        ${page.pagination.nextCursor ? html`<a class="button" rel="next" href="/admin/data/${def.collection}${queryString({ cursor: page.pagination.nextCursor, limit: listRequest.limit })}">Next page</a>` : ''}
      </nav>
      <p class="hint">Downloads hold every row matching the filters (not only this page), as <code>GET /api/v2/${def.collection}?format=csv</code> gives them.</p>`;
  } catch (error) {
    // The listing's own refusal of a parameter (a malformed filter, an unknown sort, an altered cursor) is shown with the form.
    if (!(error instanceof AppError) || (error.code !== 'invalid_parameter' && error.code !== 'cursor_mismatch')) throw error;
    status = 400;
    content = html`<div class="alert" role="alert"><p>${error.message}</p>${error.errors?.length ? html`<ul>${error.errors.map((e) => html`<li><strong>${e.name}</strong> ${e.reason}</li>`)}</ul>` : ''}</div>`;
  }
  const body = html`${picker(ctx, def)}
    <p class="lead">${def.description} Read-only; the same listing as <code>GET /api/v2/${def.collection}</code> (scope <code>${def.scope}</code>).</p>
    <section class="panel filters-panel" aria-labelledby="filters-title"><h2 id="filters-title">Filters</h2>${filterForm(def, shown)}</section>
    ${content}`;
  return deps.show(request, reply, { section: 'data', title: labelOf(def), body }, status);
}

/**
 * Data: a read-only browser of every collection of the registry, through the listing engine itself (listPage,
 * getOne, exportAll): the public listing's filters, sorts, signed cursors and exports, no query of its own.
 */
export const dataPage: ConsolePage = {
  slug: 'data',
  title: 'Data',
  routes(app, deps) {
    const { ctx } = deps;

    app.get('/data', { schema: { hide: true } }, async (request, reply) => {
      const body = html`<p class="lead">Every collection of the API, as a client with its scope reads it: the listing's own filters, sorts and pages, one item, and CSV or XLSX downloads. Nothing can be changed here.</p>
        <div class="table-wrap"><table>
          <caption class="visually-hidden">Collections</caption>
          <thead><tr><th scope="col">Collection</th><th scope="col">What it holds</th><th scope="col">Scope</th></tr></thead>
          <tbody>${ctx.resources.list.map((r) => html`<tr><th scope="row"><a href="/admin/data/${r.collection}">${labelOf(r)}</a></th><td>${r.description}</td><td><code>${r.scope}</code></td></tr>`)}</tbody>
        </table></div>`;
      return deps.show(request, reply, { section: 'data', title: 'Data', body });
    });

    app.get<{ Params: { collection: string }; Querystring: Query }>('/data/:collection', { schema: { hide: true, params: collectionParams } }, (request, reply) => listingPage(deps, request, reply));

    // The export of the current filter, streamed by the public listing's exportAll: its node cap (this console
    // counting as one owner), its idle timeout, its Content-Disposition. The session authenticates it: a
    // browser's download link cannot carry a bearer token.
    app.get<{ Params: { collection: string }; Querystring: Query }>('/data/:collection/download', { schema: { hide: true, params: collectionParams } }, async (request, reply) => {
      const def = resourceOf(ctx, request.params.collection);
      const format = one(request.query, 'format');
      if (format !== 'csv' && format !== 'xlsx') throw invalidParameter('format', 'must be csv or xlsx');
      const { filters, sort } = listRequestOf(request.query);
      const listPlan = plan(def, { filters, sort }, ctx.hashKey);
      const options: ExportOptions = {
        format,
        csv: { delimiter: ',', bom: false, escapeFormulas: true },
        log: request.log,
        limits: ctx.config.exports,
        owner: CONSOLE_EXPORT_OWNER,
        response: reply.raw,
      };
      const headers = { 'cache-control': 'no-store', 'x-content-type-options': 'nosniff', 'content-disposition': contentDisposition(def, format) };
      if (request.method === 'HEAD') {
        await filteredQuery(ctx.store.db, listPlan);
        return reply.headers(headers).type(FORMATS[format].contentType).send('');
      }
      const { stream } = await exportAll(ctx.store, def, listPlan, false, `store-api console export ${request.id}`, options);
      return reply.headers(headers).type(FORMATS[format].contentType).send(stream);
    });

    app.get<{ Params: { collection: string; id: number } }>('/data/:collection/:id', { schema: { hide: true, params: itemParams } }, async (request, reply) => {
      const def = resourceOf(ctx, request.params.collection);
      const { id } = request.params;
      const item: Row | undefined = await getOne(ctx.store.db, def, id);
      if (!item) throw notFound(`${def.title} ${id}`);
      const nested = Object.keys(def.nested ?? {});
      const body = html`${picker(ctx, def)}
        <p><a href="/admin/data/${def.collection}">← ${labelOf(def)}</a> · as <code>GET /api/v2/${def.collection}/${id}</code> answers it</p>
        <section class="panel" aria-labelledby="fields-title"><h2 id="fields-title">Fields</h2>
          <dl class="facts item-facts">${def.fields.map((f) => html`<div${f.type === 'object' || f.type === 'array' || (typeof item[f.name] === 'string' && String(item[f.name]).length > CELL_TEXT) ? html` class="wide"` : ''}><dt>${f.name}</dt><dd>${detail(item[f.name], f.name)}</dd></div>`)}</dl>
        </section>
        ${nested.map((name) => html`<section class="panel" aria-labelledby="nested-${name}"><h2 id="nested-${name}">${name}</h2>${detail(item[name], `${def.title} ${id}: ${name}`)}</section>`)}`;
      return deps.show(request, reply, { section: 'data', title: `${def.title} ${id}`, body });
    });
  },
};
