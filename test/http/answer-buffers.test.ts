import assert from 'node:assert/strict';
import { once } from 'node:events';
import net, { type AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { until } from '../helpers/wait.ts';

// Large JSON answers go out from buffers that serve later answers once their response has finished
// (src/http/utf8-body.ts). A client that stops reading leaves an answer waiting in the server's socket while
// other clients' answers are made: not one byte of theirs may reach it (given back before its 'finish', the
// waiting answer's buffer took the next answer's bytes from byte 371 039 on). HTTP alone: the database does not
// take part, so SQLite stands for both backends.
const PATHS = [
  '/api/v2/products?limit=1000',
  '/api/v2/products?limit=1000&sort=-id',
  '/api/v2/products?limit=999',
  '/api/v2/products?limit=1000&sort=-updatedAt',
  '/api/v2/products?limit=1000&fields=id,name,description',
  '/api/v2/products?limit=997&sort=-id&fields=id,description,url',
];

interface Answer {
  status: number;
  headers: Map<string, string>;
  body: Buffer;
}

/** Sends `requests` on a new connection, one after another, and reads the answers once all came. */
async function ask(port: number, requests: Array<{ path: string; gzip: boolean }>, token: string): Promise<Answer[]> {
  const socket = net.connect(port, '127.0.0.1');
  await once(socket, 'connect');
  const reading = readAnswers(socket, requests.length);
  socket.write(requests.map((r) => request(r.path, token, r.gzip)).join(''));
  return reading;
}

function request(path: string, token: string, gzip: boolean): string {
  return `GET ${path} HTTP/1.1\r\nHost: store.test\r\nAuthorization: Bearer ${token}\r\n${gzip ? 'Accept-Encoding: gzip\r\n' : ''}\r\n`;
}

function readAnswers(socket: net.Socket, count: number): Promise<Answer[]> {
  return new Promise<Answer[]>((resolve, reject) => {
    const answers: Answer[] = [];
    let pending: Buffer = Buffer.alloc(0);
    socket.on('error', reject);
    socket.on('end', () => reject(new Error(`the connection ended after ${answers.length} of ${count} answers`)));
    socket.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      let parsed: { answer: Answer; rest: Buffer } | undefined;
      while ((parsed = parseAnswer(pending))) {
        answers.push(parsed.answer);
        pending = parsed.rest;
      }
      if (answers.length === count) {
        socket.destroy();
        resolve(answers);
      }
    });
  });
}

/** One HTTP/1.1 answer off the front of `bytes` (by Content-Length, or chunked), or undefined until it is all there. */
function parseAnswer(bytes: Buffer): { answer: Answer; rest: Buffer } | undefined {
  const headEnd = bytes.indexOf('\r\n\r\n');
  if (headEnd < 0) return undefined;
  const [statusLine, ...lines] = bytes.subarray(0, headEnd).toString('latin1').split('\r\n');
  const headers = new Map(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
  const status = Number(statusLine.split(' ')[1]);
  let at = headEnd + 4;
  if (headers.get('transfer-encoding') === 'chunked') {
    const parts: Buffer[] = [];
    for (;;) {
      const lineEnd = bytes.indexOf('\r\n', at);
      if (lineEnd < 0) return undefined;
      const size = parseInt(bytes.subarray(at, lineEnd).toString('latin1'), 16);
      if (bytes.length < lineEnd + 2 + size + 2) return undefined;
      parts.push(bytes.subarray(lineEnd + 2, lineEnd + 2 + size));
      at = lineEnd + 2 + size + 2;
      if (size === 0) return { answer: { status, headers, body: Buffer.concat(parts) }, rest: bytes.subarray(at) };
    }
  }
  const length = Number(headers.get('content-length') ?? 0);
  if (bytes.length < at + length) return undefined;
  return { answer: { status, headers, body: Buffer.from(bytes.subarray(at, at + length)) }, rest: bytes.subarray(at + length) };
}

function firstDifference(a: Buffer, b: Buffer): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return i;
  return n;
}

describe('answer buffers while a client has stopped reading (sqlite)', () => {
  let t: TestApp;
  let token: string;
  let port: number;
  const serverSockets: net.Socket[] = [];
  const expected = new Map<string, { body: Buffer; etag: string }>();

  before(async () => {
    t = await createTestApp('sqlite', { seed: { products: 1500, seed: 7 } });
    token = (await t.credential(['products:read'])).token;
    t.app.server.on('connection', (socket: net.Socket) => serverSockets.push(socket));
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    port = (t.app.server.address() as AddressInfo).port;
    for (const path of PATHS) {
      const res = await t.get(path, token);
      assert.equal(res.statusCode, 200, path);
      expected.set(path, { body: res.rawPayload, etag: res.headers.etag as string });
    }
    const sizes = [...expected.values()].map((e) => e.body.length);
    // Each far larger than what one write hands the kernel at once; each its own.
    assert.ok(Math.min(...sizes) > 150_000, `answers of ${sizes.join(', ')} bytes`);
    assert.equal(new Set([...expected.values()].map((e) => e.etag)).size, PATHS.length, 'six different answers');
  });
  after(() => t.close());

  function check(answer: Answer, path: string, gzip: boolean, what: string): void {
    const want = expected.get(path)!;
    assert.equal(answer.status, 200, what);
    assert.equal(answer.headers.get('content-encoding'), gzip ? 'gzip' : undefined, what);
    const body = gzip ? gunzipSync(answer.body) : answer.body;
    assert.ok(body.equals(want.body), `${what}: ${body.length} bytes, expected ${want.body.length}, first difference at byte ${firstDifference(body, want.body)}`);
    assert.equal(answer.headers.get('etag'), gzip ? `${want.etag.slice(0, -1)}-gz"` : want.etag, what);
  }

  it('an answer waiting for a client that stopped reading keeps its bytes while other answers are made, plain and gzipped', async () => {
    // A client that asks for one answer after another and reads none: each is made alone, so that its buffer
    // is the one free for the next, until the kernel holds no more (some 4 MB) and an answer waits in the server.
    const stalled = net.connect(port, '127.0.0.1');
    await once(stalled, 'connect');
    stalled.pause();
    await until('the server has the connection', () => serverSockets.length > 0 && serverSockets.at(-1)!.remotePort === stalled.localPort);
    const server = serverSockets.at(-1)!;
    let sent = 0;
    try {
      while (server.writableLength === 0) {
        assert.ok(sent < 40, 'an answer waits in the server within 40 answers (about 22 MB)');
        const before = server.bytesWritten;
        stalled.write(request(PATHS[0], token, false));
        sent += 1;
        await until(`answer ${sent} is written`, () => server.bytesWritten > before);
      }
      // Other clients' answers, made while that one waits: any of their bytes in it would show.
      for (let round = 0; round < 3; round++) {
        for (const path of PATHS.slice(1)) {
          const [answer] = await ask(port, [{ path, gzip: round === 1 }], token);
          check(answer, path, round === 1, `another client, round ${round}: ${path}`);
        }
      }
      const reading = readAnswers(stalled, sent);
      stalled.resume();
      (await reading).forEach((a, i) => check(a, PATHS[0], false, `the client that stopped reading, answer ${i + 1} of ${sent}`));
    } finally {
      stalled.destroy();
    }
  });
});
