// The typed client of the Store Data API: `import { createStoreClient } from 'store-data-api/client'`.
// openapi-fetch underneath, typed by schema.ts (generated from the live OpenAPI document by openapi-typescript);
// docs/client.md says how to use it and how it is built and regenerated.
import createClient, { type Client } from 'openapi-fetch';
import { StoreApiError } from './errors.ts';
import { EXPORT_PATHS, type paths } from './schema.ts';
import { TokenSource, type Credentials } from './token.ts';
import type { Collection, ExportFormat, ExportQuery, Item, ItemQuery, ListQuery, Page, PageShape } from './types.ts';

export { StoreApiError } from './errors.ts';
export type { components, operations, paths } from './schema.ts';
export type { Collection, ExportFormat, ExportQuery, Item, ItemQuery, ListQuery, Page, Problem, StoreApiErrorCode, TokenErrorCode } from './types.ts';

export interface StoreClientOptions extends Credentials {
  /** The API's base URL, e.g. `https://store.example.com` (without `/api/v2`). */
  baseUrl: string;
  /** A fetch of your own (a proxy agent, a test's recorder); the global one by default. */
  fetch?: (request: Request) => Promise<Response>;
}

export interface CallOptions {
  /** Aborts the call (and a download in progress). */
  signal?: AbortSignal;
}

export interface StoreClient {
  /** Every item of every page of a listing, fetched page by page as the loop asks: `for await (const p of client.list('products'))`. */
  list<C extends Collection>(collection: C, options?: { query?: ListQuery<C> } & CallOptions): AsyncIterableIterator<Item<C>>;
  /** Every page of a listing (`data` and `pagination`), following `nextCursor`. */
  pages<C extends Collection>(collection: C, options?: { query?: ListQuery<C> } & CallOptions): AsyncIterableIterator<Page<C>>;
  /** One item by id; a `StoreApiError` with `status` 404 when there is none. */
  get<C extends Collection>(collection: C, id: number, options?: { query?: ItemQuery<C> } & CallOptions): Promise<Item<C>>;
  /** A whole export (every matching row) as a web stream of the file's bytes, read as it downloads. */
  export<C extends Collection>(collection: C, options: { format: ExportFormat<C>; query?: ExportQuery<C> } & CallOptions): Promise<ReadableStream<Uint8Array>>;
  /** The openapi-fetch client itself, authenticated the same way, for every other operation (`client.api.GET('/api/v2/changes', …)`). */
  readonly api: Client<paths, 'application/json'>;
}

/** A loose view of the query and path parameters; the public signatures above carry the real types. */
type Parameters = { query?: object; path?: Record<string, number> };

/** A client that gets its own tokens with the credential, renews them before they expire, and once more when the API refuses one. */
export function createStoreClient(options: StoreClientOptions): StoreClient {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const fetchImpl = options.fetch ?? ((request: Request) => globalThis.fetch(request));
  const tokens = new TokenSource(baseUrl, options, fetchImpl);

  /** Sends with a Bearer token; on a 401 renews the token and sends once more. */
  const authorizedFetch = async (request: Request): Promise<Response> => {
    const retry = request.clone();
    const send = async (r: Request) => {
      const token = await tokens.get();
      r.headers.set('authorization', `Bearer ${token}`);
      return { token, response: await fetchImpl(r) };
    };
    const first = await send(request);
    if (first.response.status !== 401) return first.response;
    tokens.invalidate(first.token);
    await first.response.body?.cancel();
    return (await send(retry)).response;
  };
  const api = createClient<paths, 'application/json'>({ baseUrl, fetch: authorizedFetch });

  // openapi-fetch's generics cannot follow a path built from a generic collection name, so the calls below go
  // through this one untyped door; what they return is typed by the signatures of StoreClient.
  const request = api.request as unknown as (
    method: 'get',
    path: string,
    init: { params: Parameters; parseAs?: 'json' | 'stream'; signal?: AbortSignal },
  ) => Promise<{ data?: unknown; error?: unknown; response: Response }>;
  const getOk = async (path: string, params: Parameters, signal: AbortSignal | undefined, parseAs: 'json' | 'stream' = 'json') => {
    const { data, error, response } = await request('get', path, { params, parseAs, signal });
    if (!response.ok) throw StoreApiError.from(response, error);
    return data;
  };

  async function* pages<C extends Collection>(collection: C, opts: { query?: ListQuery<C> } & CallOptions = {}): AsyncIterableIterator<Page<C>> {
    // The same query with each page's cursor, as the API's own `Link: rel="next"` does (a cursor sent with
    // different filters is refused, the same ones are fine).
    let cursor: string | undefined;
    do {
      const page = (await getOk(`/api/v2/${collection}`, { query: { ...opts.query, ...(cursor ? { cursor } : {}) } }, opts.signal)) as PageShape;
      yield page as Page<C>;
      cursor = page.pagination.nextCursor ?? undefined;
    } while (cursor);
  }

  async function* list<C extends Collection>(collection: C, opts: { query?: ListQuery<C> } & CallOptions = {}): AsyncIterableIterator<Item<C>> {
    for await (const page of pages(collection, opts)) yield* (page as PageShape).data as Array<Item<C>>;
  }

  return {
    api,
    pages,
    list,
    get: async (collection, id, opts = {}) => (await getOk(`/api/v2/${collection}/{id}`, { path: { id }, query: opts.query }, opts.signal)) as Item<typeof collection>,
    export: async (collection, opts) => {
      const exportPath = `/api/v2/${collection}/export`;
      // The API has a route of its own for exports (`/export`) or exports from the listing; the generated schema says which.
      const path = exportPaths.has(exportPath) ? exportPath : `/api/v2/${collection}`;
      const body = await getOk(path, { query: { ...opts.query, format: opts.format } }, opts.signal, 'stream');
      if (!(body instanceof ReadableStream)) throw new StoreApiError({ status: 200, code: 'unexpected_response', detail: 'The export came without a body.' });
      return body as ReadableStream<Uint8Array>;
    },
  };
}

const exportPaths = new Set<string>(EXPORT_PATHS);
