import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { vocabularyWords } from '../../src/ai/engines/builtin/vocabulary.ts';
import { SENTENCES } from '../../src/seed/catalog.ts';
import { generateCalls } from '../helpers/generate.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { dialects } from '../helpers/databases.ts';
import { problemOf } from '../helpers/problems.ts';

/**
 * The built-in engine on the demo store, as the issue tries it: every task in every language on 50 seeded
 * products. No answer may hold a word of another language (by the engine's own vocabulary tables, a small
 * list of each language's commonest words, and the demo store's English prose), and a prompt is followed or
 * refused, never ignored.
 */
const LANGUAGES = ['en', 'cs', 'sk', 'de'] as const;
type Language = (typeof LANGUAGES)[number];
const TASKS = ['product-description', 'seo-title', 'seo-description', 'summary'] as const;
const PRODUCTS = 50;

// Words that show a language; a word two languages share ("a", "in", "je", "na") belongs to both and proves nothing.
const STOP_WORDS: Record<Language, string> = {
  en: 'the and is are with for of to it its on in from this that your you an a by at be can has have was not all every our buy now',
  cs: 'a je se na pro s z ve v že jsou k od do i to ke ze při po jako také není díky bez má nebo vám váš vaše kupte nyní za den',
  sk: 'a je sa na pre s z vo v že sú k od do aj to ku zo pri po ako tiež nie vďaka bez má alebo vám váš vaša kúpte teraz za',
  de: 'der die das und ist sind mit für von zu auf ein eine einen den dem des sie es nicht im in aus bei auch oder wird jetzt kaufen',
};
const proseWords = new Set(SENTENCES.flatMap((s) => s.text.toLowerCase().match(/\p{L}+/gu) ?? []));
const LEXICON = Object.fromEntries(LANGUAGES.map((l) => {
  const words = new Set([...vocabularyWords(l), ...STOP_WORDS[l].split(' ')]);
  if (l === 'en') for (const w of proseWords) words.add(w);
  return [l, words];
})) as Record<Language, Set<string>>;

/** Words of `text` that belong to another language's lexicon and not to its own; names, units after a number and country codes are taken out first. */
function foreignWords(text: string, language: Language, names: string[]): string[] {
  // Country codes ("AT") are data, the same in every language.
  let rest = text.replace(/\d\s?(?:kg|g|W|V|Ah|cm|mm|m|dB|l|ml|Kč|ks)(?![\p{L}\p{N}])/gu, ' ').replace(/(?<![\p{L}])[A-Z]{2}(?![\p{L}])/gu, ' ');
  for (const name of [...names].sort((a, b) => b.length - a.length)) rest = rest.split(name).join(' ');
  const words = rest.toLowerCase().match(/\p{L}+/gu) ?? [];
  return words.filter((w) => !LEXICON[language].has(w) && LANGUAGES.some((other) => other !== language && LEXICON[other].has(w)));
}
const ownWords = (text: string, language: Language): number => (text.toLowerCase().match(/\p{L}+/gu) ?? []).filter((w) => LEXICON[language].has(w)).length;
const wordCount = (text: string): number => (text.match(/[\p{L}\p{N}]+(?:['’.,-][\p{L}\p{N}]+)*/gu) ?? []).length;

interface Product {
  id: number;
  name: string;
  brandId: number | null;
}

for (const dialect of await dialects()) {
  describe(`the built-in engine on ${PRODUCTS} demo products: one language per answer, prompts followed or refused (${dialect})`, () => {
    let t: TestApp;
    let token: string;
    let products: Product[];
    let brandNames: string[];
    const facts = new Map<number, string>();

    before(async () => {
      t = await createTestApp(dialect, { seed: { products: PRODUCTS, seed: 14 }, env: { AI_RATE_LIMIT_RPS: '100000', AI_RATE_LIMIT_BURST: '100000' } });
      token = (await t.credential(['ai:generate', 'products:read'])).token;
      const reader = (await t.credential(['products:read', 'brands:read', 'product-parameters:read'])).token;
      products = (await t.get(`/api/v2/products?limit=${PRODUCTS}`, reader)).json().data;
      assert.equal(products.length, PRODUCTS);
      brandNames = (await t.get('/api/v2/brands?limit=100', reader)).json().data.map((b: { name: string }) => b.name);
      // Each product's data sheet, in the store's (English) words.
      const parameters = (await t.get('/api/v2/product-parameters?limit=1000', reader)).json().data as Array<{ productId: number; parameterName: string; value: string; unit: string | null }>;
      for (const p of parameters) {
        const line = `${p.parameterName}: ${p.value}${p.unit ? ` ${p.unit}` : ''}.`;
        facts.set(p.productId, [facts.get(p.productId), line].filter(Boolean).join(' '));
      }
    });
    after(() => t.close());

    const { post, text } = generateCalls(() => t, () => token);
    const assertOneLanguage = (answer: string, language: Language, product: Product, what: string) => {
      const foreign = foreignWords(answer, language, [product.name, ...brandNames]);
      assert.deepEqual(foreign, [], `${what} in ${language} mixes in ${foreign.join(', ')}: ${answer}`);
    };

    it('writes every task in every language in that language only', async () => {
      for (const product of products) {
        for (const language of LANGUAGES) {
          for (const task of TASKS) {
            const answer = await text({ task, productId: product.id, language });
            assertOneLanguage(answer, language, product, `${task} of ${product.id}`);
            if (task === 'product-description' || task === 'summary') assert.ok(ownWords(answer, language) >= 2, `${task} reads as ${language}: ${answer}`);
            assert.ok(answer.includes(product.name) || task === 'seo-title', `${task} names the product: ${answer}`);
          }
        }
      }
    });

    it('translates each product\'s data sheet in full, names kept, and refuses its English prose listing the words', async () => {
      for (const product of products) {
        const sheet = `${product.name}. ${facts.get(product.id) ?? ''}`;
        for (const language of LANGUAGES) {
          // A branded name is known by its brand; an unbranded one only from productId.
          const answer = await text({ task: 'translate', text: sheet, language, ...(product.brandId === null ? { productId: product.id } : {}) });
          assert.ok(answer.startsWith(`${product.name}.`), `the name stays as written: ${answer}`);
          assertOneLanguage(answer, language, product, `translation of ${product.id}`);
          if (language !== 'en') assert.notEqual(answer, sheet);
        }
        const description = (await t.get(`/api/v2/products/${product.id}`, token)).json().description as string;
        const refused = problemOf(await post({ task: 'translate', text: description, language: 'cs', productId: product.id }), 422, 'engine_cannot_translate', 'text');
        assert.match(refused.detail, /AI_ENGINE=openai or AI_ENGINE=llama/);
        const listed = refused.errors!.map((e) => /"(.+)"/.exec(e.reason)![1]);
        assert.ok(listed.length > 0);
        const nameWords = new Set(product.name.split(' '));
        for (const word of listed) assert.ok(description.includes(word) && !nameWords.has(word), `"${word}" is a word of the prose, not of the name`);
      }
    });

    it('follows the prompts it reads and refuses any other, for every product and language', async () => {
      for (const product of products.slice(0, 25)) {
        for (const language of LANGUAGES) {
          const bullets = await text({ task: 'product-description', productId: product.id, language, prompt: '3 bullet points' });
          const lines = bullets.split('\n');
          assert.equal(lines.length, 3, bullets);
          for (const line of lines) assert.match(line, /^- \S/);
          assertOneLanguage(bullets, language, product, 'bullet points');

          const full = await text({ task: 'product-description', productId: product.id, language });
          const short = await post({ task: 'product-description', productId: product.id, language, prompt: 'shorter' });
          if (short.statusCode === 200) assert.ok(wordCount(short.json().text) < wordCount(full), `${short.json().text} is shorter than ${full}`);
          else problemOf(short, 422, 'engine_cannot_follow_prompt', 'prompt');

          const limited = await post({ task: 'summary', productId: product.id, language, prompt: 'max 20 words' });
          if (limited.statusCode === 200) assert.ok(wordCount(limited.json().text) <= 20, limited.json().text);
          else problemOf(limited, 422, 'engine_cannot_follow_prompt', 'prompt');

          const caption = problemOf(await post({ productId: product.id, language, prompt: 'Write an Instagram caption with emojis' }), 422, 'engine_cannot_follow_prompt', 'prompt');
          assert.match(caption.errors![0].reason, /"Instagram", "caption", "emojis"/);
          assert.match(caption.detail, /AI_ENGINE=openai or AI_ENGINE=llama/);
        }
        // A language named in the prompt is the language of the answer.
        const names: Record<Language, string> = { en: 'in English', cs: 'in Czech', sk: 'po slovensky', de: 'auf Deutsch' };
        for (const language of LANGUAGES) {
          const answer = await text({ productId: product.id, prompt: `Write a product description ${names[language]}` });
          assertOneLanguage(answer, language, product, `a description asked ${names[language]}`);
          assert.ok(ownWords(answer, language) >= 2, answer);
        }
      }
    });
  });
}
