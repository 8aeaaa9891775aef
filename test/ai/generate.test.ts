import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { loadProductFacts } from '../../src/ai/product-context.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { dialects } from '../helpers/databases.ts';
import { problemOf } from '../helpers/problems.ts';
import { streamed } from './fixtures/sse.ts';

const TASKS = ['product-description', 'seo-title', 'seo-description', 'summary'] as const;
const chars = (s: string) => [...s].length;

interface Generation {
  text: string;
  engine: string;
  model: string;
  finishReason: string;
  usage: { promptTokens: number; completionTokens: number };
}

for (const dialect of await dialects()) {
  describe(`POST /api/v2/ai/generate with the built-in engine (${dialect})`, () => {
    let t: TestApp;
    let token: string;
    let product: { id: number; name: string };

    before(async () => {
      t = await createTestApp(dialect, { seed: { products: 30, seed: 11 }, env: { AI_RATE_LIMIT_RPS: '1000', AI_RATE_LIMIT_BURST: '100000', AI_MAX_PROMPT_CHARS: '2000' } });
      token = (await t.credential(['ai:generate', 'products:read'])).token;
      product = (await t.get('/api/v2/products/3', token)).json();
    });
    after(() => t.close());

    const post = (payload: unknown, auth = token, headers: Record<string, string> = {}) =>
      t.app.inject({ method: 'POST', url: '/api/v2/ai/generate', payload: payload as never, headers: { authorization: `Bearer ${auth}`, ...headers } });
    const generate = async (payload: unknown): Promise<Generation> => {
      const res = await post(payload);
      assert.equal(res.statusCode, 200, res.body);
      return res.json();
    };

    it('writes every task for a real product: it names the product and differs by task', async () => {
      const texts = new Map<string, string>();
      for (const task of TASKS) {
        const g = await generate({ task, productId: product.id });
        assert.equal(g.engine, 'builtin');
        assert.equal(g.model, 'template-v1');
        assert.equal(g.finishReason, 'stop');
        assert.ok(g.text.includes(product.name), `${task} names the product: ${g.text}`);
        assert.ok(g.usage.promptTokens > 0 && g.usage.completionTokens > 0, JSON.stringify(g.usage));
        texts.set(task, g.text);
      }
      assert.equal(new Set(texts.values()).size, TASKS.length, 'each task writes a different text');
      assert.ok(chars(texts.get('product-description')!) > chars(texts.get('summary')!), 'a description is longer than a summary');
      // The description speaks of the product's real parameters, with their values.
      const params = (await t.get(`/api/v2/product-parameters?productId=${product.id}`, (await t.credential(['product-parameters:read'])).token)).json().data as Array<{ parameterName: string; value: string }>;
      const measured = params.filter((p) => ['Weight', 'Power', 'Voltage', 'Length'].includes(p.parameterName));
      for (const p of measured) assert.ok(texts.get('product-description')!.includes(p.value), `mentions ${p.parameterName} ${p.value}`);
    });

    it('gives the engines the product with its brand, category path, parameters and filter values', async () => {
      const all = (await t.credential(['products:read', 'brands:read', 'categories:read', 'product-parameters:read', 'product-filters:read'])).token;
      const p = (await t.get(`/api/v2/products/${product.id}`, all)).json();
      const facts = (await loadProductFacts(t.ctx.store.db, product.id))!;
      assert.equal(facts.name, p.name);
      assert.equal(facts.price, p.price);
      assert.equal(facts.brand?.name, p.brandId === null ? undefined : (await t.get(`/api/v2/brands/${p.brandId}`, all)).json().name);
      const path: string[] = [];
      for (let id = p.categoryId; id !== null; ) {
        const c = (await t.get(`/api/v2/categories/${id}`, all)).json();
        path.unshift(c.name);
        id = c.parentId;
      }
      assert.ok(path.length >= 2);
      assert.deepEqual(facts.categoryPath, path);
      const params = (await t.get(`/api/v2/product-parameters?productId=${product.id}`, all)).json().data;
      assert.deepEqual(facts.parameters, params.map((x: { parameterName: string; value: string; unit: string | null }) => ({ name: x.parameterName, value: x.value, unit: x.unit })));
      const filters = (await t.get(`/api/v2/product-filters?productId=${product.id}`, all)).json().data;
      assert.deepEqual(facts.filters, filters.map((x: { filterName: string; value: string }) => ({ name: x.filterName, value: x.value })));
      assert.equal(await loadProductFacts(t.ctx.store.db, 999_999), undefined);
    });

    it('writes English, Czech, Slovak and German, with the local number and price formats', async () => {
      const summaries = new Map<string, string>();
      for (const language of ['en', 'cs', 'sk', 'de']) summaries.set(language, (await generate({ task: 'summary', productId: product.id, language })).text);
      assert.match(summaries.get('en')!, /in stock|out of stock/);
      assert.match(summaries.get('cs')!, /Cena:? .*(skladem|není skladem)/);
      assert.match(summaries.get('sk')!, /Cena:? .*na sklade/);
      assert.match(summaries.get('de')!, /auf Lager/);
      assert.match(summaries.get('en')!, /CZK\s?[\d,]+\.\d\d/);
      assert.match(summaries.get('cs')!, /\d,\d\d\s?Kč/);
      assert.equal(new Set(summaries.values()).size, 4);
      const de = await generate({ task: 'product-description', productId: product.id, language: 'de-AT' });
      assert.match(de.text, /Kategorie|Wahl|Helfer|Ausrüstung/);
      const other = await post({ task: 'summary', productId: product.id, language: 'fr' });
      problemOf(other, 400, 'invalid_body', 'language');
    });

    it('keeps SEO titles within 60 and SEO descriptions within 160 characters, even for a very long name', async () => {
      const long = await t.admin('POST', '/admin/api/products', {
        articleNumber: 'LONG-1', name: `Nordwerk ${'Extra Long Professional Cordless Impact Drill Driver '.repeat(4)}X1`, status: 'active', price: '1999.00', currency: 'CZK', vatRate: 21, stock: 0,
      });
      assert.equal(long.statusCode, 201, long.body);
      const ids = [...Array.from({ length: 30 }, (_, i) => i + 1), long.json().id as number];
      for (const productId of ids) {
        for (const language of ['en', 'cs', 'sk', 'de']) {
          const title = await generate({ task: 'seo-title', productId, language });
          const description = await generate({ task: 'seo-description', productId, language });
          assert.ok(chars(title.text) <= 60 && chars(title.text) > 10, `${chars(title.text)}: ${title.text}`);
          assert.ok(chars(description.text) <= 160 && chars(description.text) > 30, `${chars(description.text)}: ${description.text}`);
        }
      }
    });

    it('words the same request the same way, and varies with temperature and between products', async () => {
      const a = await generate({ task: 'product-description', productId: product.id });
      const b = await generate({ task: 'product-description', productId: product.id });
      assert.equal(a.text, b.text);
      const warm = new Set<string>();
      for (let i = 0; i < 8; i++) warm.add((await generate({ task: 'product-description', productId: product.id, temperature: 1 })).text);
      assert.ok(warm.size >= 2, 'temperature > 0 gives other wordings');
      const openings = new Set<string>();
      for (let id = 1; id <= 12; id++) openings.add((await generate({ task: 'product-description', productId: id })).text.split(' ').slice(0, 2).join(' '));
      assert.ok(openings.size >= 3, `openings vary: ${[...openings].join(' | ')}`);
    });

    it('stops at maxTokens with finishReason "length"', async () => {
      const full = await generate({ task: 'product-description', productId: product.id });
      const cut = await generate({ task: 'product-description', productId: product.id, maxTokens: 5 });
      assert.equal(cut.finishReason, 'length');
      assert.equal(cut.usage.completionTokens, 5);
      assert.ok(full.text.startsWith(cut.text) && cut.text.length < full.text.length);
      assert.ok(full.usage.completionTokens > 5);
    });

    it('streams server-sent events with "stream": true or Accept: text/event-stream', async () => {
      const plain = await generate({ task: 'seo-description', productId: product.id, language: 'cs' });
      for (const [payload, headers] of [
        [{ task: 'seo-description', productId: product.id, language: 'cs', stream: true }, {}],
        [{ task: 'seo-description', productId: product.id, language: 'cs' }, { accept: 'text/event-stream' }],
      ] as const) {
        const res = await post(payload, token, headers);
        assert.equal(res.statusCode, 200);
        assert.match(String(res.headers['content-type']), /^text\/event-stream/);
        assert.equal(res.headers['cache-control'], 'no-cache');
        assert.match(String(res.headers['ratelimit-policy']), /"ai"/);
        const { text, last, tokens } = streamed(res.body);
        assert.equal(text, plain.text);
        assert.equal(last.event, 'done');
        assert.deepEqual(last.data, { finishReason: 'stop', usage: plain.usage, engine: 'builtin', model: 'template-v1' });
        assert.equal(tokens, plain.usage.completionTokens);
      }
      const cut = streamed((await post({ task: 'product-description', productId: product.id, maxTokens: 3, stream: true })).body);
      assert.equal(cut.tokens, 3);
      assert.equal((cut.last.data as { finishReason: string }).finishReason, 'length');
    });

    it('summarises and translates text', async () => {
      const text = 'The garden hose is twenty metres long. It resists kinks and frost. The brass fittings fit every standard tap. ' +
        'It weighs 2.3 kg. The hose comes with a five-year warranty. The garden hose stays flexible in frost and sun.';
      const summary = await generate({ task: 'summary', text });
      const sentences = text.split(/(?<=\.) /);
      assert.ok(summary.text.length < text.length);
      for (const s of summary.text.split(/(?<=\.) /)) assert.ok(sentences.includes(s), `an extract of the text: ${s}`);
      const cs = await generate({ task: 'translate', text: 'Colour: red. Weight: 1.2 kg. Material: stainless steel. Category: Drills', language: 'cs' });
      assert.equal(cs.text, 'Barva: červená. Hmotnost: 1,2 kg. Materiál: nerezová ocel. Kategorie: Vrtačky');
      const de = await generate({ task: 'translate', text: cs.text, language: 'de' });
      assert.equal(de.text, 'Farbe: Rot. Gewicht: 1,2 kg. Material: Edelstahl. Kategorie: Bohrmaschinen');
      const inferred = await generate({ prompt: 'Write an SEO title please', productId: product.id });
      assert.ok(chars(inferred.text) <= 60 && inferred.text.includes(product.name));
    });

    it('answers 400 for a request without prompt and task, unknown fields, bad values, or translate without text', async () => {
      problemOf(await post({}), 400, 'invalid_body', 'prompt');
      problemOf(await post({ task: 'summary', productId: 1, colour: 'red' }), 400, 'invalid_body', 'colour');
      problemOf(await post({ task: 'poem', productId: 1 }), 400, 'invalid_body', 'task');
      problemOf(await post({ task: 'summary', productId: 1, maxTokens: 0 }), 400, 'invalid_body', 'maxTokens');
      problemOf(await post({ task: 'summary', productId: 1, maxTokens: 5000 }), 400, 'invalid_body', 'maxTokens');
      problemOf(await post({ task: 'summary', productId: '1' }), 400, 'invalid_body', 'productId');
      problemOf(await post({ task: 'summary', productId: 1, temperature: 3 }), 400, 'invalid_body', 'temperature');
      problemOf(await post({ task: 'summary', productId: 1, language: 'english!' }), 400, 'invalid_body', 'language');
      problemOf(await post({ task: 'translate', language: 'de' }), 400, 'invalid_body', 'text');
      // The built-in engine cannot follow a free instruction, and says so rather than ignore it.
      const free = problemOf(await post({ prompt: 'Write a poem about spring' }), 422, 'engine_cannot_follow_prompt', 'prompt');
      assert.match(free.detail, /AI_ENGINE=openai or AI_ENGINE=llama/);
      // An instruction it reads, with nothing to write from.
      const nothing = problemOf(await post({ prompt: 'Write an SEO title' }), 400, 'invalid_body', 'productId');
      assert.match(nothing.detail, /AI_ENGINE=openai or AI_ENGINE=llama/);
    });

    it('answers 404 for an unknown product, 413 for a prompt over the limit', async () => {
      problemOf(await post({ task: 'summary', productId: 999_999 }), 404, 'not_found');
      problemOf(await post({ prompt: 'x'.repeat(2001), productId: 1 }), 413, 'payload_too_large');
      problemOf(await post({ task: 'translate', text: 'y'.repeat(1500), prompt: 'z'.repeat(600) }), 413, 'payload_too_large');
      const big = await t.app.inject({ method: 'POST', url: '/api/v2/ai/generate', payload: JSON.stringify({ prompt: 'x'.repeat(1_100_000) }), headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' } });
      problemOf(big, 413, 'payload_too_large');
    });

    it('needs ai:generate, and products:read to write from a product', async () => {
      const none = await t.app.inject({ method: 'POST', url: '/api/v2/ai/generate', payload: { task: 'summary', productId: 1 } });
      problemOf(none, 401, 'invalid_token');
      const reader = (await t.credential(['products:read'])).token;
      const denied = await post({ task: 'summary', productId: 1 }, reader);
      problemOf(denied, 403, 'insufficient_scope');
      assert.match(String(denied.headers['www-authenticate']), /scope="ai:generate"/);
      const writer = (await t.credential(['ai:generate'])).token;
      const noProducts = await post({ task: 'summary', productId: 1 }, writer);
      problemOf(noProducts, 403, 'insufficient_scope');
      assert.match(String(noProducts.headers['www-authenticate']), /error="insufficient_scope", scope="products:read"/);
      // Without a product, ai:generate alone is enough.
      assert.equal((await post({ task: 'translate', text: 'red', language: 'de' }, writer)).statusCode, 200);
    });
  });

  describe(`text generation rate limit (${dialect})`, () => {
    let t: TestApp;
    before(async () => {
      t = await createTestApp(dialect, { seed: { products: 2, seed: 2 }, env: { AI_RATE_LIMIT_RPS: '0.01', AI_RATE_LIMIT_BURST: '2' } });
    });
    after(() => t.close());

    it('has its own, lower policy: 429 with Retry-After once the burst is used, while listings still answer', async () => {
      const { token } = await t.credential(['ai:generate', 'products:read']);
      const post = () => t.app.inject({ method: 'POST', url: '/api/v2/ai/generate', payload: { task: 'seo-title', productId: 1 }, headers: { authorization: `Bearer ${token}` } });
      const first = await post();
      assert.equal(first.statusCode, 200);
      assert.match(String(first.headers['ratelimit-policy']), /^"ai";q=2;w=\d+/);
      assert.equal((await post()).statusCode, 200);
      const limited = await post();
      problemOf(limited, 429, 'rate_limited');
      assert.ok(Number(limited.headers['retry-after']) >= 1);
      assert.equal((await t.get('/api/v2/products?limit=1', token)).statusCode, 200);
    });
  });
}
