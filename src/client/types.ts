// The client's types, computed from the generated schema (schema.ts): a collection added to the API, or a
// parameter added to a listing, reaches the client's signatures by regenerating, with no hand-written copy.
import type { components, paths } from './schema.ts';

type JsonOf<R> = R extends { content: { 'application/json': infer T } } ? T : never;
type GetOf<P extends keyof paths> = paths[P] extends { get: infer O } ? O : never;
type OkJson<O> = O extends { responses: { 200: infer R } } ? JsonOf<R> : never;
type QueryOf<O> = O extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;

/** What a page of a listing looks like (every collection's listing answers this in JSON). */
export interface PageShape {
  data: unknown[];
  pagination: { nextCursor: string | null };
}

/** A collection: `/api/v2/{name}` lists pages of items and `/api/v2/{name}/{id}` gets one. */
export type Collection = {
  [P in keyof paths]: P extends `/api/v2/${infer C}`
    ? C extends `${string}/${string}`
      ? never
      : `/api/v2/${C}/{id}` extends keyof paths
        ? OkJson<GetOf<P>> extends PageShape
          ? C
          : never
        : never
    : never;
}[keyof paths];

type ListPath<C extends Collection> = `/api/v2/${C}`;
type ItemPath<C extends Collection> = `/api/v2/${C}/{id}` & keyof paths;
/** Where a collection's export is: `/api/v2/{name}/export` when the API has it, else the listing itself. */
type ExportPath<C extends Collection> = `/api/v2/${C}/export` extends keyof paths ? `/api/v2/${C}/export` : ListPath<C>;

/** One page of a listing: `data` and `pagination`. */
export type Page<C extends Collection> = OkJson<GetOf<ListPath<C>>>;
/** One item of a collection (`Item<'products'>` is a product). */
export type Item<C extends Collection> = OkJson<GetOf<ItemPath<C>>>;

/** A listing's query: filters, sort, limit, fields… (the cursor is the client's business). */
export type ListQuery<C extends Collection> = Omit<QueryOf<GetOf<ListPath<C>>>, 'cursor' | 'format'>;
/** A single item's query (`fields`, `include` where the API has them). */
export type ItemQuery<C extends Collection> = QueryOf<GetOf<ItemPath<C>>>;
type ExportParameters<C extends Collection> = QueryOf<GetOf<ExportPath<C>>>;
/** The formats a collection exports in (JSON is the listing's). */
export type ExportFormat<C extends Collection> = Exclude<NonNullable<ExportParameters<C> extends { format?: infer F } ? F : never>, 'json'>;
/** An export's query: the listing's filters and the file's options (delimiter, bom…), without `format` and `cursor`. */
export type ExportQuery<C extends Collection> = Omit<ExportParameters<C>, 'format' | 'cursor'>;

/** An RFC 9457 problem as the API sends it. */
export type Problem = components['schemas']['Problem'];
/** The token endpoint's own errors (RFC 6749 §5.2), e.g. `invalid_client`. */
export type TokenErrorCode = JsonOf<paths['/oauth/token']['post']['responses'][400]> extends { error: infer E } ? E : never;
/** What a failed call says went wrong: a problem code, an OAuth error, or `unexpected_response` for an answer of neither shape (a proxy's page). */
export type StoreApiErrorCode = Problem['code'] | TokenErrorCode | 'unexpected_response';
