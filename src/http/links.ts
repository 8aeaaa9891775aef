/**
 * The URL of the next page as an RFC 8288 `Link` header value: the request's own path and query on the public
 * base URL, with `set` parameters put (replacing any of the same name) and `drop` parameters left out.
 */
export function nextLink(publicUrl: string, requestUrl: string, set: Record<string, string>, drop: readonly string[] = []): string {
  const url = new URL(requestUrl, publicUrl);
  for (const name of drop) url.searchParams.delete(name);
  for (const [name, value] of Object.entries(set)) url.searchParams.set(name, value);
  return `<${publicUrl}${url.pathname}${url.search}>; rel="next"`;
}
