import assert from 'node:assert/strict';
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { createEngine } from '../../src/ai/engines/index.ts';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { problemOf } from '../helpers/problems.ts';
import { chunk, startLoopback, type LoopbackServer } from './fixtures/bad-servers.ts';
import { testModel } from './fixtures/llama.ts';
import { startModelServer, type ModelServer } from './fixtures/model-server.ts';
import { streamed } from './fixtures/sse.ts';

const fixture = await testModel();
const skip = typeof fixture === 'string' ? fixture : false;
const EXPECTED = 'the drill is light and strong.';
const quiet = { warn: () => {}, error: () => {} };

async function appFor(env: Record<string, string>): Promise<{ t: TestApp; post: (payload: unknown) => Promise<LightMyRequestResponse>; token: string }> {
  const t = await createTestApp('sqlite', { seed: { products: 3, seed: 9 }, env: { AI_ENGINE: 'openai', AI_MODEL: 'bigram-test', AI_MAX_RETRIES: '0', ...env } });
  const { token } = await t.credential(['ai:generate', 'products:read']);
  const post = (payload: unknown) => t.app.inject({ method: 'POST', url: '/api/v2/ai/generate', payload: payload as never, headers: { authorization: `Bearer ${token}` } });
  return { t, post, token };
}

describe('openai engine: the official client against an OpenAI-compatible server running the test model', { skip }, () => {
  let server: ModelServer;
  let app: Awaited<ReturnType<typeof appFor>>;
  before(async () => {
    if (typeof fixture === 'string') return;
    server = await startModelServer(fixture.bindings, fixture.path, 'bigram-test');
    app = await appFor({ AI_BASE_URL: server.url });
  });
  after(async () => {
    await app?.t.close();
    await server?.close();
    if (typeof fixture !== 'string') fixture.remove();
  });

  it('returns the model\'s tokens, with the usage the server counted', async () => {
    const res = await app.post({ task: 'product-description', productId: 2, temperature: 0 });
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.deepEqual({ ...body, usage: undefined }, { text: EXPECTED, engine: 'openai', model: 'bigram-test', finishReason: 'stop', usage: undefined });
    assert.equal(body.usage.completionTokens, 7);
    assert.ok(body.usage.promptTokens > 50);
    // What the server was asked: the product's facts, the task, and the caller's limits.
    const asked = server.requests.at(-1)!;
    const product = (await app.t.get('/api/v2/products/2', app.token)).json();
    assert.equal(asked.model, 'bigram-test');
    assert.equal(asked.max_tokens, 300);
    assert.equal(asked.temperature, 0);
    assert.match(asked.messages![0].content, /Write in English/);
    assert.ok(asked.messages![1].content.includes(`Product: ${product.name}`));
    assert.match(asked.messages![1].content, /product description/);
  });

  it('passes maxTokens on and reports finishReason "length"', async () => {
    const body = (await app.post({ task: 'summary', productId: 1, temperature: 0, maxTokens: 2 })).json();
    assert.deepEqual([body.text, body.finishReason, body.usage.completionTokens], ['the drill', 'length', 2]);
  });

  it('streams the server\'s tokens on as server-sent events', async () => {
    const res = await app.post({ prompt: 'Describe the drill in German.', language: 'de', temperature: 0, stream: true });
    assert.match(String(res.headers['content-type']), /^text\/event-stream/);
    const { text, last, tokens } = streamed(res.body);
    assert.equal(text, EXPECTED);
    assert.ok(tokens >= 4);
    assert.equal(last.event, 'done');
    assert.equal((last.data as { engine: string }).engine, 'openai');
    assert.match(server.requests.at(-1)!.messages![0].content, /Write in German/);
  });

  it('follows a free prompt (the built-in engine would refuse it) and is told which names to keep', async () => {
    const caption = await app.post({ prompt: 'Write an Instagram caption with emojis', productId: 1, temperature: 0 });
    assert.equal(caption.statusCode, 200, caption.body);
    const asked = server.requests.at(-1)!;
    assert.match(asked.messages![0].content, /Write in English unless the instructions ask for another language/);
    assert.match(asked.messages![1].content, /Write an Instagram caption with emojis/);
    const brand = (await app.t.get('/api/v2/brands/1', (await app.t.credential(['brands:read'])).token)).json().name as string;
    const translated = await app.post({ task: 'translate', text: `${brand} makes daily tools.`, language: 'cs', temperature: 0 });
    assert.equal(translated.statusCode, 200, translated.body);
    assert.ok(server.requests.at(-1)!.messages![1].content.includes(`Names to keep as they are: ${brand}`));
  });
});

describe('openai engine: failures are 502 and 504 problems, never a hang', () => {
  const servers: LoopbackServer[] = [];
  const apps: TestApp[] = [];
  const serve = async (handle: Parameters<typeof startLoopback>[0]) => {
    const s = await startLoopback(handle);
    servers.push(s);
    return s;
  };
  const open = async (env: Record<string, string>) => {
    const a = await appFor(env);
    apps.push(a.t);
    return a;
  };
  after(async () => {
    for (const t of apps) await t.close();
    for (const s of servers) await s.close();
  });

  it('502 engine_failed when the server answers 500, after the configured retries, without its message', async () => {
    const failing = await serve((_req, res) => res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":{"message":"secret internals"}}'));
    const { post } = await open({ AI_BASE_URL: failing.url, AI_MAX_RETRIES: '1' });
    const res = await post({ task: 'summary', productId: 1 });
    const problem = problemOf(res, 502, 'engine_failed');
    assert.match(problem.detail, /HTTP 500/);
    assert.doesNotMatch(res.body, /secret internals/);
    assert.equal(failing.requests, 2, 'one retry');
  });

  it('502 engine_failed when nothing listens at AI_BASE_URL', async () => {
    const gone = await serve(() => {});
    const url = gone.url;
    await gone.close();
    servers.pop();
    const { post } = await open({ AI_BASE_URL: url });
    problemOf(await post({ task: 'summary', productId: 1 }), 502, 'engine_failed');
  });

  it('504 engine_timeout when the server never answers within AI_TIMEOUT_MS', async () => {
    const silent = await serve(() => {});
    const { post } = await open({ AI_BASE_URL: silent.url, AI_TIMEOUT_MS: '400', AI_MAX_RETRIES: '3' });
    const started = Date.now();
    problemOf(await post({ task: 'summary', productId: 1 }), 504, 'engine_timeout');
    assert.ok(Date.now() - started < 3000, `answered after ${Date.now() - started} ms`);
    // Streaming: before the first piece it is an ordinary problem too.
    problemOf(await post({ task: 'summary', productId: 1, stream: true }), 504, 'engine_timeout');
  });

  it('a stream that stalls after its first token ends with an error event', async () => {
    const stalling = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(chunk('Hello'));
    });
    const { post } = await open({ AI_BASE_URL: stalling.url, AI_TIMEOUT_MS: '500' });
    const res = await post({ task: 'summary', productId: 1, stream: true });
    assert.equal(res.statusCode, 200);
    const { text, last } = streamed(res.body);
    assert.equal(text, 'Hello');
    assert.equal(last.event, 'error');
    assert.equal((last.data as { code: string }).code, 'engine_timeout');
    assert.equal((last.data as { status: number }).status, 504);
  });

  it('a client that disconnects stops the generation upstream, streamed or not', async () => {
    let sent = 0;
    let closedAt = 0;
    const slow = await serve((_req, res) => {
      sent = 0;
      closedAt = 0;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const timer = setInterval(() => {
        res.write(chunk(` word${++sent}`));
        if (sent >= 500) {
          clearInterval(timer);
          res.end(`${chunk('', 'stop')}data: [DONE]\n\n`);
        }
      }, 20);
      res.on('close', () => {
        clearInterval(timer);
        closedAt = Date.now();
      });
    });
    const { t, token } = await open({ AI_BASE_URL: slow.url });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.server.address() as AddressInfo;
    for (const stream of [true, false]) {
      const leftAt = await new Promise<number>((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port, path: '/api/v2/ai/generate', method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' } }, (res) => {
          assert.equal(res.statusCode, 200);
          res.on('data', (data: Buffer) => {
            if (data.toString().includes('event: token')) {
              req.destroy();
              resolve(Date.now());
            }
          });
        });
        req.on('error', (e) => (e.message.includes('socket hang up') || e.message.includes('aborted') ? undefined : reject(e)));
        req.end(JSON.stringify({ task: 'summary', productId: 1, stream }));
        if (!stream) {
          // A JSON answer comes only at the end: leave once the engine is busy generating.
          const wait = setInterval(() => {
            if (sent >= 3) {
              clearInterval(wait);
              req.destroy();
              resolve(Date.now());
            }
          }, 5);
        }
      });
      for (let i = 0; i < 100 && !closedAt; i++) await new Promise((r) => setTimeout(r, 20));
      assert.ok(closedAt > 0, `stream=${stream}: the engine server saw its request closed`);
      assert.ok(closedAt - leftAt < 1000, `stream=${stream}: upstream closed ${closedAt - leftAt} ms after the client left`);
      assert.ok(sent < 100, `stream=${stream}: generation stopped early (${sent} of 500 chunks)`);
    }
  });

  it('refuses to start without AI_MODEL or a server, and with an unknown engine', async () => {
    const engine = (env: Record<string, string>) => createEngine(loadConfig(env, {}), quiet);
    await assert.rejects(engine({ AI_ENGINE: 'openai', AI_BASE_URL: 'http://127.0.0.1:1/v1' }), (e) => e instanceof ConfigError && /AI_MODEL/.test(e.message));
    await assert.rejects(engine({ AI_ENGINE: 'openai', AI_MODEL: 'x' }), (e) => e instanceof ConfigError && /AI_BASE_URL/.test(e.message));
    await assert.rejects(engine({ AI_ENGINE: 'gpt' }), (e) => e instanceof ConfigError && /builtin, openai, llama/.test(e.message));
  });
});
