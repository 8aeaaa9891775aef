import { randomInt } from 'node:crypto';
import { AppError } from '../../../errors/app-error.ts';
import { Random } from '../../../seed/random.ts';
import type { GenerateInput, GenerationEnd, Task, TextEngine } from '../../engine.ts';
import { buildMessages, SEO_DESCRIPTION_MAX, SEO_TITLE_MAX } from '../../prompt.ts';
import { compose } from './compose.ts';
import { clip } from './fit.ts';
import { cs } from './languages/cs.ts';
import { de } from './languages/de.ts';
import { en } from './languages/en.ts';
import { sk } from './languages/sk.ts';
import type { Phrases } from './phrases.ts';
import { summarise } from './summarise.ts';
import { countTokens, pieces } from './tokens.ts';
import { translateTerms } from './translate.ts';
import { LOCALES, viewOf } from './view.ts';
import { BUILTIN_LANGUAGES, type BuiltinLanguage } from './vocabulary.ts';

export const BUILTIN_MODEL = 'template-v1';

const PHRASES: Record<BuiltinLanguage, Phrases> = { en, cs, sk, de };

function unsupported(name: string, reason: string): AppError {
  return new AppError('invalid_body', `Field "${name}" ${reason}.`, { errors: [{ name, reason }] });
}

function languageOf(tag: string): BuiltinLanguage {
  const base = tag.toLowerCase().split('-')[0];
  if ((BUILTIN_LANGUAGES as readonly string[]).includes(base)) return base as BuiltinLanguage;
  throw unsupported('language', `is not one the built-in engine writes (${BUILTIN_LANGUAGES.join(', ')}); other languages need AI_ENGINE=openai or llama`);
}

/** Without a task, the built-in engine reads which of its tasks a prompt asks for; it cannot follow free instructions. */
export function taskOf(prompt: string): Task {
  if (/transl|přelo|prelo|übersetz/i.test(prompt)) return 'translate';
  if (/summar|shrn|zhrn|zusammenfass/i.test(prompt)) return 'summary';
  if (/\b(seo\s*)?(title|titulek|titulok|nadpis|titel)\b/i.test(prompt)) return 'seo-title';
  if (/\bseo\b|meta/i.test(prompt)) return 'seo-description';
  return 'product-description';
}

function seedOf(input: GenerateInput, task: Task, language: string): number {
  // The same request gives the same text; temperature > 0 asks for a different wording each time.
  if (input.temperature !== undefined && input.temperature > 0) return randomInt(2 ** 31);
  const key = `${input.product?.id ?? ''}|${task}|${language}|${input.text ?? ''}`;
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

function write(input: GenerateInput, task: Task, language: BuiltinLanguage): string {
  const rng = new Random(seedOf(input, task, language));
  const locale = LOCALES[language];
  if (task === 'translate') {
    if (!input.text) throw unsupported('text', 'is required for the translate task');
    return translateTerms(input.text, language).text;
  }
  if (task === 'summary' && input.text) return summarise(input.text, locale);
  if (input.product) return compose(task, viewOf(input.product, language), PHRASES[language], rng);
  if (input.text && task === 'seo-title') return clip(summarise(input.text, locale, 1), SEO_TITLE_MAX);
  if (input.text && task === 'seo-description') return clip(summarise(input.text, locale, 1), SEO_DESCRIPTION_MAX);
  throw unsupported('productId', `is required: the built-in engine writes ${task === 'product-description' ? 'descriptions' : 'this task'} from product data; free prompts need AI_ENGINE=openai or llama`);
}

/**
 * The default engine: offline, no model. A data-to-text composer that writes a product's copy from its
 * data with phrase banks in English, Czech, Slovak and German, summarises text extractively, and
 * translates the store vocabulary term by term.
 */
export function builtinEngine(): TextEngine {
  return {
    name: 'builtin',
    model: BUILTIN_MODEL,
    async *generate(input: GenerateInput): AsyncGenerator<string, GenerationEnd, undefined> {
      const language = languageOf(input.language);
      const task = input.task ?? taskOf(input.prompt ?? '');
      const text = write(input, task, language);
      const { system, user } = buildMessages({ ...input, task });
      const usage = { promptTokens: countTokens(system) + countTokens(user), completionTokens: 0 };
      for (const piece of pieces(text)) {
        input.signal.throwIfAborted();
        if (usage.completionTokens >= input.maxTokens) return { finishReason: 'length', usage };
        usage.completionTokens++;
        yield piece;
      }
      return { finishReason: 'stop', usage };
    },
    close: async () => {},
  };
}
