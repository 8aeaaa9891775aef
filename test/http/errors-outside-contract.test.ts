import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ADMIN_TOKEN } from '../helpers/app.ts';
import { dialects } from '../helpers/databases.ts';
import { exchange, parseResponse, startLive, type LiveServer, type RawResponse } from './live.ts';

/** Sends one request as raw bytes (exactly as written: no client normalises the path) and reads the answer. */
async function raw(live: LiveServer, request: string): Promise<RawResponse & { closed: boolean }> {
  const ex = await exchange(live.port, (s) => s.write(request), 5000);
  return { ...parseResponse(ex.text), closed: ex.closed };
}

const get = (path: string, headers = '') => `GET ${path} HTTP/1.1\r\nHost: x\r\n${headers}Connection: close\r\n\r\n`;

/** An RFC 9457 problem with this code, whose requestId is the x-request-id header. */
function assertProblem(res: RawResponse, status: number, code: string): Record<string, unknown> {
  assert.equal(res.status, status, res.body);
  assert.match(res.headers['content-type'] ?? '', /^application\/problem\+json/, res.body);
  const body = JSON.parse(res.body) as Record<string, unknown>;
  assert.equal(body.code, code);
  assert.equal(body.status, status);
  assert.equal(typeof body.title, 'string');
  assert.match(String(body.type), /^http:\/\/store\.test\/problems\//);
  assert.ok(typeof body.requestId === 'string' && body.requestId.length > 0);
  assert.equal(body.requestId, res.headers['x-request-id']);
  return body;
}

const multipart = (parts: string) => {
  const body = `${parts}--xyz--\r\n`;
  return `POST /oauth/token HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=xyz\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
};
const field = (name: string, value: string) => `--xyz\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;

for (const dialect of await dialects()) {
  describe(`errors outside the routes are problems too (${dialect})`, () => {
    let live: LiveServer;
    before(async () => {
      live = await startLive(dialect);
    });
    after(async () => {
      await live.close();
    });

    it('a path that is not valid percent-encoded UTF-8: 400 malformed_request', async () => {
      assertProblem(await raw(live, get('/api/v2/products/%FF')), 400, 'malformed_request');
      assertProblem(await raw(live, get('/problems/%E0%A4%A')), 400, 'malformed_request');
    });

    it('a path parameter over 100 characters: 414 uri_too_long', async () => {
      const body = assertProblem(await raw(live, get(`/api/v2/products/${'1'.repeat(101)}`)), 414, 'uri_too_long');
      assert.doesNotMatch(String(body.detail), /1111/, 'the detail does not echo the path');
    });

    it('headers over 16 KiB: 431 with Connection: close, the whole answer readable, the connection closed', async () => {
      const res = await raw(live, get('/healthz', `X-Filler: ${'a'.repeat(20_000)}\r\n`));
      assertProblem(res, 431, 'headers_too_large');
      assert.equal(res.headers.connection, 'close');
      assert.ok(res.closed);
    });

    it('malformed HTTP: 400 malformed_request with Connection: close', async () => {
      for (const request of ['GARBAGE\r\n\r\n', 'GET / HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n', 'GET / HTTP/9.9\r\n\r\n', 'GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n']) {
        const res = await raw(live, request);
        assertProblem(res, 400, 'malformed_request');
        assert.equal(res.headers.connection, 'close');
        assert.ok(res.closed, request);
      }
    });

    it('what Node would answer bare: CONNECT, HTTP/1.1 without Host, an unknown Expect', async () => {
      const connect = await raw(live, 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
      assertProblem(connect, 405, 'method_not_allowed');
      assert.equal(connect.headers.connection, 'close');
      assert.ok(connect.closed);
      assertProblem(await raw(live, 'GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n'), 400, 'malformed_request');
      // HTTP/1.0 has no Host requirement; an expectation the server does not meet is ignored (RFC 9110 §10.1.1).
      assert.equal((await raw(live, 'GET /healthz HTTP/1.0\r\n\r\n')).status, 200);
      assert.equal((await raw(live, get('/healthz', 'Expect: something-else\r\n'))).status, 200);
    });

    it('404, 405, /docs and the OpenAPI document: problems with requestId', async () => {
      assertProblem(await raw(live, get('/nope')), 404, 'not_found');
      assertProblem(await raw(live, get('/docs/static/nope.js')), 404, 'not_found');
      assertProblem(await raw(live, 'DELETE /api/v2/openapi.json HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'), 405, 'method_not_allowed');
      assertProblem(await raw(live, 'POST /docs HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n'), 405, 'method_not_allowed');
      // A caller's own x-request-id is the problem's requestId.
      const own = assertProblem(await raw(live, get('/nope', 'X-Request-Id: trace-123\r\n')), 404, 'not_found');
      assert.equal(own.requestId, 'trace-123');
    });

    it('/problems answers only its own codes: constructor and __proto__ are 404 problems', async () => {
      for (const slug of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) assertProblem(await raw(live, get(`/problems/${slug}`)), 404, 'not_found');
      const known = await raw(live, get('/problems/uri-too-long'));
      assert.equal(known.status, 200);
      assert.equal(JSON.parse(known.body).code, 'uri_too_long');
    });

    it('malformed multipart to /oauth/token: 400 invalid_request in RFC 6749 form, logged below error', async () => {
      const cases = [
        'POST /oauth/token HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=xyz\r\nContent-Length: 7\r\nConnection: close\r\n\r\ngarbage',
        'POST /oauth/token HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data\r\nContent-Length: 7\r\nConnection: close\r\n\r\ngarbage',
        multipart('--xyz\r\nContent-Disposition: form-data\r\nbroken\r\n\r\nx\r\n'),
        // Limits: a file, more than 20 fields, a field over 4 KiB.
        multipart('--xyz\r\nContent-Disposition: form-data; name="f"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\nhello\r\n'),
        multipart(Array.from({ length: 25 }, (_, i) => field(`f${i}`, 'v')).join('')),
        multipart(field('grant_type', 'client_credentials') + field('client_secret', 'x'.repeat(5000))),
      ];
      for (const request of cases) {
        const res = await raw(live, request);
        assert.equal(res.status, 400, res.body);
        assert.match(res.headers['content-type'] ?? '', /^application\/json/);
        const body = JSON.parse(res.body);
        assert.equal(body.error, 'invalid_request', res.body);
        assert.doesNotMatch(body.error_description, /unexpected/i);
        assert.equal(res.headers['cache-control'], 'no-store');
      }
      // A well-formed multipart body still reaches the handler (which wants client authentication).
      const ok = await raw(live, multipart(field('grant_type', 'client_credentials')));
      assert.equal(ok.status, 401);
      assert.equal(JSON.parse(ok.body).error, 'invalid_client');
      assert.deepEqual(live.lines.filter((l) => l.level >= 50).map((l) => l.msg), []);
    });

    it('body limits: JSON and forms over BODY_LIMIT are refused', async () => {
      const big = 'x'.repeat(1_100_000);
      const json = JSON.stringify({ name: big });
      const admin = await raw(live, `POST /admin/api/brands HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${ADMIN_TOKEN}\r\nContent-Type: application/json\r\nContent-Length: ${json.length}\r\nConnection: close\r\n\r\n${json}`);
      assertProblem(admin, 413, 'payload_too_large');
      const form = `grant_type=client_credentials&client_id=${big}`;
      const token = await raw(live, `POST /oauth/token HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${form.length}\r\nConnection: close\r\n\r\n${form}`);
      assert.equal(token.status, 400);
      assert.equal(JSON.parse(token.body).error, 'invalid_request');
    });

    it('secrets in logged URLs are redacted', async () => {
      await raw(live, get('/api/v2/products?access_token=SECRET-AT-1&limit=1'));
      await raw(live, 'POST /oauth/token?client_secret=SECRET-CS-2&grant_type=client_credentials HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
      await raw(live, get('/nope?Signature=SECRET-SIG-3&token=SECRET-T-4&keep=visible'));
      const text = live.logText();
      assert.doesNotMatch(text, /SECRET-/);
      const urls = live.lines.filter((l) => l.msg === 'request').map((l) => String(l.url));
      assert.ok(urls.includes('/api/v2/products?access_token=[redacted]&limit=1'), urls.join('\n'));
      assert.ok(urls.includes('/oauth/token?client_secret=[redacted]&grant_type=client_credentials'), urls.join('\n'));
      assert.ok(urls.includes('/nope?Signature=[redacted]&token=[redacted]&keep=visible'), urls.join('\n'));
    });

    it('a request arriving while the node shuts down: 503 problem with Retry-After and Connection: close', async () => {
      // Headers begun before close() and finished after it: the request reaches the app while it stops.
      let closing: Promise<void> | undefined;
      const ex = await exchange(live.port, (s) => {
        s.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');
        setTimeout(() => {
          closing = live.app.close();
          setTimeout(() => s.write('\r\n'), 100);
        }, 100);
      }, 5000);
      await closing;
      const res = parseResponse(ex.text);
      const body = assertProblem(res, 503, 'service_unavailable');
      assert.equal(res.headers['retry-after'], '1');
      assert.equal(res.headers.connection, 'close');
      assert.match(String(body.detail), /shutting down/);
      assert.ok(ex.closed);
    });
  });
}
