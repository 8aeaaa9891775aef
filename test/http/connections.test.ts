import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { dialects } from '../helpers/databases.ts';
import { exchange, parseResponse, startLive, type LiveServer } from './live.ts';

/** Short limits, so that each case takes about a second; the defaults are in config.ts and docs/operations.md. */
const LIMITS = { HEADERS_TIMEOUT_MS: '300', REQUEST_TIMEOUT_MS: '700', KEEP_ALIVE_TIMEOUT_MS: '300' };
/** How long a test waits for the server to close a connection: far above every limit, so only a missing timeout fails. */
const WAIT_MS = 5000;

/** A 408 problem with Connection: close, whose requestId is the x-request-id. */
function assertTimeoutProblem(text: string): void {
  const res = parseResponse(text);
  assert.equal(res.status, 408, text);
  assert.equal(res.headers.connection, 'close');
  assert.match(res.headers['content-type'], /^application\/problem\+json/);
  const body = JSON.parse(res.body);
  assert.equal(body.code, 'request_timeout');
  assert.equal(body.status, 408);
  assert.equal(body.requestId, res.headers['x-request-id']);
}

for (const dialect of await dialects()) {
  describe(`connections held by slow or silent clients are closed (${dialect})`, () => {
    let live: LiveServer;
    before(async () => {
      live = await startLive(dialect, LIMITS);
    });
    after(async () => {
      await live.close();
    });

    it('a body trickled a byte at a time to /oauth/token: 408 and the socket closed', async () => {
      let sent = 0;
      const ex = await exchange(live.port, (s) => {
        s.write(`POST /oauth/token HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\n`);
        const drip = setInterval(() => {
          if (s.destroyed || sent >= 100) return clearInterval(drip);
          s.write('a');
          sent++;
        }, 50);
        s.on('close', () => clearInterval(drip));
      }, WAIT_MS);
      assert.ok(ex.closed, 'the server closed the connection');
      assert.ok(sent < 100, `the server let the client trickle for ${sent} bytes`);
      assertTimeoutProblem(ex.text);
    });

    it('headers begun and then silence: 408 and the socket closed', async () => {
      const ex = await exchange(live.port, (s) => s.write('GET /healthz HTTP/1.1\r\nHost: x\r\n'), WAIT_MS);
      assert.ok(ex.closed);
      assertTimeoutProblem(ex.text);
    });

    it('complete headers announcing a body that never comes: 408 and the socket closed', async () => {
      const ex = await exchange(live.port, (s) => s.write('POST /oauth/token HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 50\r\n\r\n{"gra'), WAIT_MS);
      assert.ok(ex.closed);
      assertTimeoutProblem(ex.text);
    });

    it('a connection opened and never used is closed', async () => {
      const ex = await exchange(live.port, () => {}, WAIT_MS);
      assert.ok(ex.closed);
    });

    it('an idle kept-alive connection is closed after its request', async () => {
      const ex = await exchange(live.port, (s) => s.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n'), WAIT_MS);
      assert.ok(ex.closed);
      const res = parseResponse(ex.text);
      assert.equal(res.status, 200);
      assert.notEqual(res.headers.connection, 'close', 'kept alive, then closed for idleness');
    });

    it('a long-poll answers after waiting longer than the request timeout (it bounds receiving the request only)', async () => {
      const { clientId, clientSecret } = await live.credential(['changes:read', 'brands:read']);
      const token = (await (await fetch(`${live.url}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret }),
      })).json()).access_token as string;
      const head = (await (await fetch(`${live.url}/api/v2/changes/head`, { headers: { authorization: `Bearer ${token}` } })).json()).seq as number;
      const started = Date.now();
      const res = await fetch(`${live.url}/api/v2/changes?after=${head}&wait=1.5`, { headers: { authorization: `Bearer ${token}` } });
      const waited = Date.now() - started;
      assert.equal(res.status, 200, await res.clone().text());
      assert.deepEqual((await res.json()).data, []);
      // The precondition of this case: the answer really came after the request timeout had passed.
      assert.ok(waited > Number(LIMITS.REQUEST_TIMEOUT_MS), `waited only ${waited} ms`);
    });

    it('logs each closed connection at info, never at error', () => {
      assert.deepEqual(live.lines.filter((l) => l.level >= 50).map((l) => l.msg), []);
      assert.ok(live.lines.some((l) => l.msg === 'client error' && l.level === 30));
    });
  });
}
