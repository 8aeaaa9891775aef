import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { describeEngine } from '../../src/ai/engines/index.ts';
import { loadConfig } from '../../src/config.ts';
import { generateCalls } from '../helpers/generate.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { dialects } from '../helpers/databases.ts';
import { problemOf } from '../helpers/problems.ts';

const words = (text: string): number => (text.match(/[\p{L}\p{N}]+(?:['’.,-][\p{L}\p{N}]+)*/gu) ?? []).length;
const listed = (errors: Array<{ reason: string }> | undefined): string[] => (errors ?? []).map((e) => /"(.+)"/.exec(e.reason)![1]);

describe('describeEngine for each AI_ENGINE (settings only, nothing loaded)', () => {
  it('says what the llama and openai engines can do: any language, free prompts, any text, streaming', () => {
    for (const env of [{ AI_ENGINE: 'llama', AI_MODEL_PATH: '/models/qwen2.5-0.5b-instruct-q4_k_m.gguf' }, { AI_ENGINE: 'openai', AI_MODEL: 'gpt-4o-mini', AI_API_KEY: 'sk-test' }]) {
      const d = describeEngine(loadConfig(env, {}).ai);
      assert.equal(d.name, env.AI_ENGINE);
      assert.equal(d.model, env.AI_ENGINE === 'llama' ? 'qwen2.5-0.5b-instruct-q4_k_m.gguf' : 'gpt-4o-mini');
      assert.deepEqual(d.capabilities.languages, { any: true, tags: [] });
      assert.deepEqual(d.capabilities.prompts, { free: true, instructions: [] });
      assert.equal(d.capabilities.translation.anyText, true);
      assert.equal(d.capabilities.streaming, true);
      assert.deepEqual(d.capabilities.tasks.map((t) => t.task), ['product-description', 'seo-title', 'seo-description', 'summary', 'translate']);
    }
  });
});

for (const dialect of await dialects()) {
  describe(`the built-in engine refuses what it cannot do, and says what it can (${dialect})`, () => {
    let t: TestApp;
    let token: string;
    let product: { id: number; name: string };

    before(async () => {
      t = await createTestApp(dialect, {
        seed: { products: 12, seed: 5 },
        env: { AI_RATE_LIMIT_RPS: '1000', AI_RATE_LIMIT_BURST: '5000', AI_MAX_PROMPT_CHARS: '5000' },
      });
      token = (await t.credential(['ai:generate', 'products:read'])).token;
      product = (await t.get('/api/v2/products/4', token)).json();
    });
    after(() => t.close());

    const { post, text } = generateCalls(() => t, () => token);
    const refused = async (payload: Record<string, unknown>, code: 'engine_cannot_translate' | 'engine_cannot_follow_prompt') => {
      const problem = problemOf(await post(payload), 422, code, code === 'engine_cannot_translate' ? 'text' : 'prompt');
      assert.match(problem.detail, /AI_ENGINE=openai or AI_ENGINE=llama/, 'a refusal names the engines that can');
      return problem;
    };

    it('GET /api/v2/ai/engine describes the built-in engine and its limits; it needs ai:generate', async () => {
      const res = await t.get('/api/v2/ai/engine', token);
      assert.equal(res.statusCode, 200, res.body);
      const d = res.json();
      assert.equal(d.engine, 'builtin');
      assert.equal(d.model, 'template-v1');
      assert.deepEqual(d.languages, { any: false, tags: ['en', 'cs', 'sk', 'de'] });
      assert.equal(d.prompts.free, false);
      assert.deepEqual(d.prompts.instructions.map((i: { name: string }) => i.name), ['task', 'language', 'bullets', 'maxWords', 'shorter']);
      assert.equal(d.translation.anyText, false);
      assert.equal(d.streaming, true);
      assert.deepEqual(d.tasks.find((x: { task: string }) => x.task === 'product-description'), { task: 'product-description', from: ['product'] });
      assert.deepEqual(d.tasks.find((x: { task: string }) => x.task === 'translate'), { task: 'translate', from: ['text'] });
      assert.deepEqual(d.limits, {
        maxTokens: 4096, defaultMaxTokens: 300, maxPromptChars: 5000, timeoutMs: t.config.ai.timeoutMs, seoTitleMaxChars: 60, seoDescriptionMaxChars: 160,
        rateLimit: { requestsPerSecond: 1000, burst: 5000 },
      });
      // Each example of an instruction is one the engine follows.
      for (const instruction of d.prompts.instructions as Array<{ name: string; examples: string[] }>) {
        for (const example of instruction.examples) {
          const task = instruction.name === 'task' ? {} : { task: 'product-description' };
          const res = await post({ ...task, prompt: example, productId: product.id, text: 'Colour: red. Material: steel.' });
          assert.equal(res.statusCode, 200, `${example}: ${res.body}`);
        }
      }
      problemOf(await t.app.inject({ method: 'GET', url: '/api/v2/ai/engine' }), 401, 'invalid_token');
      const denied = await t.get('/api/v2/ai/engine', (await t.credential(['products:read'])).token);
      problemOf(denied, 403, 'insufficient_scope');
      assert.match(String(denied.headers['www-authenticate']), /scope="ai:generate"/);
      const doc = (await t.app.inject({ method: 'GET', url: '/api/v2/openapi.json' })).json();
      assert.deepEqual(Object.keys(doc.paths['/api/v2/ai/engine'].get.responses['200'].content['application/json'].schema.properties).sort(),
        ['engine', 'languages', 'limits', 'model', 'prompts', 'streaming', 'tasks', 'translation']);
      assert.ok(doc.paths['/api/v2/ai/generate'].post.responses['422'], 'the refusals are in the document');
    });

    it('translates a text of store vocabulary in full, keeping brand and product names as written', async () => {
      const sheet = 'Bohemia Garden: Colour: green. Material: steel. Warranty: 2 years. Country of origin: CN. Weight: 1.5 kg.';
      assert.equal(await text({ task: 'translate', text: sheet, language: 'cs' }), 'Bohemia Garden: Barva: zelená. Materiál: ocel. Záruka: 2 roky. Země původu: CN. Hmotnost: 1,5 kg.');
      assert.equal(await text({ task: 'translate', text: sheet.replace('2 years', '5 years'), language: 'sk' }), 'Bohemia Garden: Farba: zelená. Materiál: oceľ. Záruka: 5 rokov. Krajina pôvodu: CN. Hmotnosť: 1,5 kg.');
      assert.equal(await text({ task: 'translate', text: 'Bohemia Garden Pro Garden Fork Z285: Garden', language: 'de' }), 'Bohemia Garden Pro Garden Fork Z285: Garten',
        'a product name (a brand, then capitalised words up to a model code) is kept; the category after it is translated');
      const named = await text({ task: 'translate', text: `${product.name}. Colour: red.`, productId: product.id, language: 'de' });
      assert.equal(named, `${product.name}. Farbe: Rot.`);
    });

    it('refuses a text it cannot translate in full, listing the words and naming the engines that can', async () => {
      // The example: it once answered "Nordwerk Precision Zahrada Fork Z285", "Built for daily použití on the job site".
      const problem = await refused({ task: 'translate', text: 'Nordwerk Precision Garden Fork Z285. Built for daily use on the job site.', language: 'cs' }, 'engine_cannot_translate');
      assert.deepEqual(listed(problem.errors), ['Built', 'for', 'daily', 'on', 'the', 'job', 'site']);
      assert.match(problem.detail, /into Czech/);
      // A name it does not know as a brand is not guessed at: its unknown words are refused too.
      assert.deepEqual(listed((await refused({ task: 'translate', text: 'Acme Garden Fork X1', language: 'de' }, 'engine_cannot_translate')).errors), ['Acme', 'Fork']);
      // A summary asked in another language than its text's is a translation too.
      const english = 'The garden hose is twenty metres long. It resists kinks and frost. The brass fittings fit every standard tap.';
      const summary = await refused({ task: 'summary', text: english, language: 'cs' }, 'engine_cannot_translate');
      assert.match(summary.detail, /reads as English/);
      // Text of the vocabulary is summarised in the language asked.
      assert.ok(['Farbe: Rot.', 'Material: Stahl.'].includes(await text({ task: 'summary', text: 'Colour: red. Material: steel.', language: 'de' })));
      assert.equal(await text({ task: 'summary', text: 'Vrtačka je lehká a silná.', language: 'cs' }), 'Vrtačka je lehká a silná.');
    });

    it('follows the instructions it reads: bullet points, word limits, shorter, a language, a task', async () => {
      const bullets = await text({ productId: product.id, prompt: '3 bullet points' });
      assert.equal(bullets.split('\n').length, 3);
      for (const line of bullets.split('\n')) assert.match(line, /^- [A-Z][^:]*: \S/);
      const czech = await text({ productId: product.id, prompt: 'napiš to ve 4 bodech', language: 'cs' });
      assert.equal(czech.split('\n').length, 4);
      assert.match(czech, /^- (Příkon|Napětí|Kapacita baterie|Délka|Hlučnost|Hmotnost): /);
      assert.ok((await text({ task: 'summary', productId: product.id, prompt: 'as a bulleted list' })).split('\n').length >= 2);

      const full = await text({ task: 'product-description', productId: product.id });
      const shorter = await text({ task: 'product-description', productId: product.id, prompt: 'Shorter, please' });
      assert.ok(words(shorter) <= Math.ceil(words(full) / 2), `${words(shorter)} of ${words(full)}: ${shorter}`);
      assert.ok(shorter.includes(product.name));
      const limited = await text({ task: 'product-description', productId: product.id, prompt: 'at most 25 words' });
      assert.ok(words(limited) <= 25, limited);

      // A language named in the prompt is the language of the answer: the same text as asking with `language`.
      const german = await text({ task: 'product-description', productId: product.id, language: 'de' });
      assert.equal(await text({ task: 'product-description', productId: product.id, prompt: 'in German' }), german);
      assert.equal(await text({ productId: product.id, prompt: 'Schreibe eine Produktbeschreibung auf Deutsch' }), german);
      assert.equal(await text({ productId: product.id, prompt: 'Write an SEO title please' }), await text({ task: 'seo-title', productId: product.id }));
      assert.equal(await text({ prompt: 'Translate into German', text: 'Colour: red.' }), 'Farbe: Rot.');
      assert.equal(await text({ prompt: 'Translate from English to Slovak', text: 'Material: stainless steel.' }), 'Materiál: nehrdzavejúca oceľ.');
    });

    it('refuses a prompt it cannot follow, never ignores it', async () => {
      // The examples: an Instagram caption answered with the ordinary description, "3 bullet points" with prose.
      const caption = await refused({ task: 'product-description', productId: product.id, prompt: 'Write an Instagram caption with emojis' }, 'engine_cannot_follow_prompt');
      assert.equal(caption.errors![0].reason, 'not understood: "Instagram", "caption", "emojis"');
      await refused({ productId: product.id, prompt: 'Make it sound exciting' }, 'engine_cannot_follow_prompt');
      await refused({ productId: product.id, prompt: 'in French' }, 'engine_cannot_follow_prompt');
      const conflict = await refused({ productId: product.id, prompt: 'in German', language: 'cs' }, 'engine_cannot_follow_prompt');
      assert.match(conflict.detail, /"language": "de"/);
      assert.match((await refused({ task: 'seo-title', productId: product.id, prompt: 'summarise it' }, 'engine_cannot_follow_prompt')).detail, /"task" is "seo-title"/);
      await refused({ productId: product.id, prompt: 'an SEO title and a summary' }, 'engine_cannot_follow_prompt');
      await refused({ task: 'seo-title', productId: product.id, prompt: '3 bullet points' }, 'engine_cannot_follow_prompt');
      await refused({ task: 'translate', text: 'Colour: red.', language: 'de', prompt: 'shorter' }, 'engine_cannot_follow_prompt');
      await refused({ productId: product.id, prompt: '20 bullet points' }, 'engine_cannot_follow_prompt');
      assert.match((await refused({ productId: product.id, prompt: 'max 3 words' }, 'engine_cannot_follow_prompt')).detail, /shortest .* has \d+ words, more than 3/);
      // Streamed, a refusal is an ordinary problem answer: it comes before the first token.
      const streamed = await post({ productId: product.id, prompt: 'Write a haiku', stream: true });
      problemOf(streamed, 422, 'engine_cannot_follow_prompt', 'prompt');
    });
  });

  describe(`GET /api/v2/ai/engine with an OpenAI-compatible engine configured (${dialect})`, () => {
    let t: TestApp;
    before(async () => {
      t = await createTestApp(dialect, { env: { AI_ENGINE: 'openai', AI_BASE_URL: 'http://127.0.0.1:9/v1', AI_MODEL: 'llama3.2' } });
    });
    after(() => t.close());

    it('says it follows free prompts, writes any language and translates any text', async () => {
      const d = (await t.get('/api/v2/ai/engine', (await t.credential(['ai:generate'])).token)).json();
      assert.equal(d.engine, 'openai');
      assert.equal(d.model, 'llama3.2');
      assert.deepEqual(d.prompts, { free: true, instructions: [] });
      assert.deepEqual(d.languages, { any: true, tags: [] });
      assert.equal(d.translation.anyText, true);
      assert.equal(d.streaming, true);
    });
  });
}
