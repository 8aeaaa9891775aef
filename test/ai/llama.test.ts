import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { GenerateInput, TextEngine } from '../../src/ai/engine.ts';
import { createEngine } from '../../src/ai/engines/index.ts';
import { llamaEngine } from '../../src/ai/engines/llama.ts';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { testModel } from './fixtures/llama.ts';
import { streamed } from './fixtures/sse.ts';

const fixture = await testModel();
const skip = typeof fixture === 'string' ? fixture : false;
const quiet = { warn: () => {}, error: () => {} };
// Greedy decoding of the bigram model after any prompt that does not end in one of its words.
const EXPECTED = 'the drill is light and strong.';

const input = (over: Partial<GenerateInput> = {}): GenerateInput => ({
  task: undefined, prompt: 'Describe a drill.', text: undefined, language: 'en', product: undefined, maxTokens: 64, temperature: 0,
  signal: new AbortController().signal, ...over,
});

async function collect(engine: TextEngine, over: Partial<GenerateInput> = {}) {
  const run = engine.generate(input(over));
  const pieces: string[] = [];
  for (let step = await run.next(); ; step = await run.next()) {
    if (step.done) return { text: pieces.join(''), pieces, end: step.value };
    pieces.push(step.value);
  }
}

describe('the test model: a GGUF the tests write themselves', { skip }, () => {
  it('is a few hundred KB, and llama.cpp reads its vocabulary as the writer meant', async () => {
    if (typeof fixture === 'string') return;
    assert.ok(fixture.bytes < 600_000, `${fixture.bytes} bytes`);
    assert.equal(fixture.model.greedy().text.trim(), EXPECTED);
    const llama = await fixture.bindings.getLlama({ gpu: false, build: 'never', maxThreads: 1, logLevel: 'error' });
    const model = await llama.loadModel({ modelPath: fixture.path });
    const tokens = model.tokenize('the drill is light and strong.');
    assert.deepEqual(tokens.map((t) => model.detokenize([t]).trim()), ['the', 'drill', 'is', 'light', 'and', 'strong', '.']);
    await model.dispose();
    await llama.dispose();
  });
});

describe('llama engine: node-llama-cpp running the test model', { skip }, () => {
  let engine: TextEngine;
  before(async () => {
    if (typeof fixture === 'string') return;
    engine = await llamaEngine(loadConfig({ AI_ENGINE: 'llama', AI_MODEL_PATH: fixture.path, AI_THREADS: '1' }, {}).ai, quiet);
  });
  after(async () => {
    await engine?.close();
    if (typeof fixture !== 'string') fixture.remove();
  });

  it('generates the model\'s own greedy text, with usage and finishReason "stop"', async () => {
    const { text, end } = await collect(engine);
    assert.equal(text, EXPECTED);
    assert.equal(engine.model, 'bigram-test.gguf');
    assert.equal(end.finishReason, 'stop');
    assert.equal(end.usage.completionTokens, 7);
    // The prompt as the model saw it: chat template, system message, instruction (the test vocabulary spells most of it in bytes).
    assert.ok(end.usage.promptTokens > 50, JSON.stringify(end.usage));
  });

  it('stops at maxTokens with finishReason "length"', async () => {
    const { text, end } = await collect(engine, { maxTokens: 3 });
    assert.equal(text, 'the drill is');
    assert.deepEqual([end.finishReason, end.usage.completionTokens], ['length', 3]);
  });

  it('streams the text piece by piece as the model produces it', async () => {
    const { pieces } = await collect(engine);
    assert.ok(pieces.length >= 4, pieces.join('|'));
    assert.equal(pieces.join(''), EXPECTED);
  });

  it('stops when its signal is aborted, and the next request gets the model at once', async () => {
    const controller = new AbortController();
    const run = engine.generate(input({ signal: controller.signal }));
    const first = await run.next();
    assert.equal(first.done, false);
    controller.abort(new Error('client left'));
    await assert.rejects(async () => {
      for (let step = await run.next(); !step.done; step = await run.next());
    }, /client left/);
    const started = Date.now();
    assert.equal((await collect(engine)).text, EXPECTED);
    assert.ok(Date.now() - started < 5000);
  });

  it('serves concurrent requests one after another on its one sequence', async () => {
    const results = await Promise.all([collect(engine), collect(engine, { maxTokens: 2 }), collect(engine)]);
    assert.deepEqual(results.map((r) => r.text), [EXPECTED, 'the drill', EXPECTED]);
  });
});

describe('llama engine behind POST /api/v2/ai/generate', { skip }, () => {
  let t: TestApp;
  let token: string;
  // A model file of this suite's own, removed with it (its folder in the system's temporary directory).
  let again: Awaited<ReturnType<typeof testModel>> | undefined;
  before(async () => {
    if (typeof fixture === 'string') return;
    again = await testModel();
    if (typeof again === 'string') return;
    t = await createTestApp('sqlite', { seed: { products: 3, seed: 5 }, env: { AI_ENGINE: 'llama', AI_MODEL_PATH: again.path, AI_THREADS: '1' } });
    token = (await t.credential(['ai:generate', 'products:read'])).token;
  });
  after(async () => {
    await t?.close();
    if (again !== undefined && typeof again !== 'string') again.remove();
  });

  const post = (payload: unknown) =>
    t.app.inject({ method: 'POST', url: '/api/v2/ai/generate', payload: payload as never, headers: { authorization: `Bearer ${token}` } });

  it('writes from the product data through the real model, as JSON and as server-sent events', async () => {
    const res = await post({ task: 'product-description', productId: 1, temperature: 0 });
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.deepEqual({ text: body.text, engine: body.engine, model: body.model, finishReason: body.finishReason }, { text: EXPECTED, engine: 'llama', model: 'bigram-test.gguf', finishReason: 'stop' });
    assert.equal(body.usage.completionTokens, 7);
    const sse = await post({ task: 'seo-title', productId: 2, temperature: 0, maxTokens: 4, stream: true });
    const { text, last } = streamed(sse.body);
    assert.equal(text, 'the drill is light');
    assert.deepEqual(last, { event: 'done', data: { finishReason: 'length', usage: (last.data as { usage: unknown }).usage, engine: 'llama', model: 'bigram-test.gguf' } });
  });

  it('refuses to start without a model file', async () => {
    const config = (env: Record<string, string>) => loadConfig({ AI_ENGINE: 'llama', ...env }, {});
    await assert.rejects(createEngine(config({}), quiet), (e) => e instanceof ConfigError && /AI_MODEL_PATH/.test(e.message));
    await assert.rejects(createEngine(config({ AI_MODEL_PATH: '/nonexistent/model.gguf' }), quiet), (e) => e instanceof ConfigError && /does not exist/.test(e.message));
  });
});
