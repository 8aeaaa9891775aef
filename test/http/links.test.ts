import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { nextLink } from '../../src/http/links.ts';

/** The whole URL parsed and changed: what nextLink must keep answering. */
function throughUrl(publicUrl: string, requestUrl: string, set: Record<string, string>, drop: readonly string[] = []): string {
  const url = new URL(requestUrl, publicUrl);
  for (const name of drop) url.searchParams.delete(name);
  for (const [name, value] of Object.entries(set)) url.searchParams.set(name, value);
  return `<${publicUrl}${url.pathname}${url.search}>; rel="next"`;
}

describe('nextLink', () => {
  it('puts the cursor on the request path and query, on the public base URL', () => {
    assert.equal(nextLink('https://shop.example', '/api/v2/products?limit=100', { cursor: 'abc' }), '<https://shop.example/api/v2/products?limit=100&cursor=abc>; rel="next"');
    assert.equal(nextLink('https://shop.example/store', '/api/v2/products', { cursor: 'a/b=+' }), '<https://shop.example/store/api/v2/products?cursor=a%2Fb%3D%2B>; rel="next"');
  });

  it('replaces a parameter of the same name and leaves out the dropped ones', () => {
    assert.equal(
      nextLink('http://h', '/api/v2/changes?cursor=old&limit=5&after=3&cursor=older', { after: '9' }, ['cursor']),
      '<http://h/api/v2/changes?limit=5&after=9>; rel="next"',
    );
  });

  it('serializes the query as the whole URL would, whatever the request holds', () => {
    const urls = [
      '/api/v2/products',
      '/api/v2/products?',
      '/api/v2/products?limit=100',
      '/api/v2/orders?status=paid,shipped&limit=5&cursor=old',
      '/api/v2/products?a=%20b+c&fields=id,name&include=brand',
      '/api/v2/products?name=%C5%BElu%C5%A5ou%C4%8Dk%C3%BD&x=ž&y=a%26b&z',
      '/api/v2/products?cursor=1&cursor=2&&limit=&=v',
      '/api/v2/products?q=%zz&r=%',
    ];
    for (const url of urls) {
      for (const [set, drop] of [[{ cursor: 'eyJhIjpbMV19.x-_' }, []], [{ after: '12' }, ['cursor']], [{ cursor: 'ž &?#' }, ['limit', 'nope']]] as const) {
        assert.equal(nextLink('http://127.0.0.1:8080', url, set, drop), throughUrl('http://127.0.0.1:8080', url, set, drop), `${url} ${JSON.stringify(set)} ${drop.join(',')}`);
      }
    }
  });
});
