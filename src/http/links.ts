/**
 * The URL of the next page as an RFC 8288 `Link` header value: the request's own path and query on the public
 * base URL, with `set` parameters put (replacing any of the same name) and `drop` parameters left out.
 *
 * Only the query is parsed (URLSearchParams), not the whole URL: the path is a route's (the router matched it
 * as it stands), and `new URL` of it cost about 1.5 µs more on every page that has a next one. The query is
 * serialized as `new URL(…).search` would serialize it after the same changes (test/http/links.test.ts).
 */
export function nextLink(publicUrl: string, requestUrl: string, set: Record<string, string>, drop: readonly string[] = []): string {
  const q = requestUrl.indexOf('?');
  const params = new URLSearchParams(q < 0 ? '' : requestUrl.slice(q + 1));
  for (const name of drop) params.delete(name);
  for (const [name, value] of Object.entries(set)) params.set(name, value);
  const search = params.toString();
  return `<${publicUrl}${q < 0 ? requestUrl : requestUrl.slice(0, q)}${search ? `?${search}` : ''}>; rel="next"`;
}
