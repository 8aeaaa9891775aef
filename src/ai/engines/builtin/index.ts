import { randomInt } from 'node:crypto';
import { AppError } from '../../../errors/app-error.ts';
import { Random } from '../../../seed/random.ts';
import type { EngineCapabilities, GenerateInput, GenerationEnd, Task, TextEngine } from '../../engine.ts';
import { buildMessages, languageName, SEO_DESCRIPTION_MAX, SEO_TITLE_MAX } from '../../prompt.ts';
import { compose, factLines, type ProductTask } from './compose.ts';
import { couldBe, detectLanguage } from './detect.ts';
import { clip, countWords } from './fit.ts';
import { INSTRUCTIONS, readPrompt, type PromptReading } from './instructions.ts';
import { cs } from './languages/cs.ts';
import { de } from './languages/de.ts';
import { en } from './languages/en.ts';
import { sk } from './languages/sk.ts';
import type { Phrases } from './phrases.ts';
import { cannotFollow, cannotTranslate, LLM_ENGINES } from './refusals.ts';
import { extract } from './summarise.ts';
import { countTokens, pieces } from './tokens.ts';
import { translate } from './translate.ts';
import { LOCALES, viewOf } from './view.ts';
import { BUILTIN_LANGUAGES, type BuiltinLanguage } from './vocabulary.ts';

export const BUILTIN_MODEL = 'template-v1';

const PHRASES: Record<BuiltinLanguage, Phrases> = { en, cs, sk, de };
/** "3 bullet points" and the like: more than this is no longer a list of key facts. */
const MAX_BULLETS = 10;

export const BUILTIN_CAPABILITIES: EngineCapabilities = {
  tasks: [
    { task: 'product-description', from: ['product'] },
    { task: 'seo-title', from: ['product', 'text'] },
    { task: 'seo-description', from: ['product', 'text'] },
    { task: 'summary', from: ['product', 'text'] },
    { task: 'translate', from: ['text'] },
  ],
  languages: { any: false, tags: [...BUILTIN_LANGUAGES] },
  prompts: { free: false, instructions: INSTRUCTIONS },
  translation: {
    anyText: false,
    description: 'Only text made of the store vocabulary (parameter and filter names and values, colours, materials, the demo categories), ' +
      'numbers, units and codes; names of products and brands are kept as written. Any other word refuses the whole text ' +
      '(422 engine_cannot_translate, listing the words).',
  },
  streaming: true,
};

function unsupported(name: string, reason: string): AppError {
  return new AppError('invalid_body', `Field "${name}" ${reason}.`, { errors: [{ name, reason }] });
}

function languageOf(tag: string): BuiltinLanguage {
  const base = tag.toLowerCase().split('-')[0];
  if ((BUILTIN_LANGUAGES as readonly string[]).includes(base)) return base as BuiltinLanguage;
  throw unsupported('language', `is not one the built-in engine writes (${BUILTIN_LANGUAGES.join(', ')}); other languages need ${LLM_ENGINES}`);
}

const TASK_NAMES: Record<Task, string> = {
  'product-description': 'a product description', 'seo-title': 'an SEO title', 'seo-description': 'an SEO description', summary: 'a summary', translate: 'a translation',
};

/** What to write: the task, the language and the form, from the request and what its prompt says; conflicts are refused. */
interface Plan {
  task: Task;
  language: BuiltinLanguage;
  /** Whether the caller chose the language (field or prompt); otherwise a text is answered in its own. */
  languageChosen: boolean;
  reading: PromptReading;
}

const EMPTY: PromptReading = { tasks: [], languages: [], bullets: undefined, maxWords: undefined, shorter: false, unknown: [] };

function plan(input: GenerateInput): Plan {
  const reading = input.prompt === undefined ? EMPTY : readPrompt(input.prompt);
  if (reading.unknown.length) {
    const words = [...new Set(reading.unknown)];
    throw cannotFollow(
      `It could not follow ${words.slice(0, 10).map((w) => `"${w}"`).join(', ')}${words.length > 10 ? ' …' : ''} in the prompt: it reads only a task, a language ` +
        `(${BUILTIN_LANGUAGES.join(', ')}), "N bullet points", "at most N words" and "shorter".`,
      [`not understood: ${words.slice(0, 50).map((w) => `"${w}"`).join(', ')}`],
    );
  }
  if (reading.tasks.length > 1) throw cannotFollow(`The prompt asks for ${reading.tasks.map((t) => TASK_NAMES[t]).join(' and ')}; it writes one text per request.`);
  const named = reading.tasks[0];
  if (input.task && named && named !== input.task) {
    throw cannotFollow(`The prompt asks for ${TASK_NAMES[named]}, but "task" is "${input.task}"; send one of them.`);
  }
  const task: Task = input.task ?? named ?? (input.product || !input.text ? 'product-description' : 'summary');

  if (reading.languages.length > 1) throw cannotFollow(`The prompt names ${reading.languages.map((l) => languageName(l)).join(' and ')}; it writes one language per request.`);
  const explicit = input.language === undefined ? undefined : languageOf(input.language);
  const asked = reading.languages[0];
  if (explicit && asked && explicit !== asked) {
    throw cannotFollow(`The prompt asks for ${languageName(asked)}, but "language" is "${input.language}"; send "language": "${asked}", or leave it out.`);
  }

  const form = reading.bullets !== undefined || reading.maxWords !== undefined || reading.shorter;
  if (task === 'translate' && form) throw cannotFollow('A translation says all of the text in its own form; it cannot also be shorter or a list.');
  if ((task === 'seo-title' || task === 'seo-description') && reading.bullets !== undefined) throw cannotFollow(`${TASK_NAMES[task]} is one line; it cannot be bullet points.`);
  if (typeof reading.bullets === 'number' && (reading.bullets < 1 || reading.bullets > MAX_BULLETS)) throw cannotFollow(`It writes 1 to ${MAX_BULLETS} bullet points, not ${reading.bullets}.`);
  if (reading.maxWords !== undefined && reading.maxWords < 1) throw cannotFollow('At most 0 words is no text.');
  return { task, language: explicit ?? asked ?? 'en', languageChosen: (explicit ?? asked) !== undefined, reading };
}

function seedOf(input: GenerateInput, task: Task, language: string): number {
  // The same request gives the same text; temperature > 0 asks for a different wording each time.
  if (input.temperature !== undefined && input.temperature > 0) return randomInt(2 ** 31);
  const key = `${input.product?.id ?? ''}|${task}|${language}|${input.text ?? ''}`;
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

const bulleted = (lines: string[]): string => lines.map((l) => `- ${l}`).join('\n');

/** The first text within the word limits a prompt set ("at most N words", "shorter"), or a refusal. */
function fit(candidates: string[], reading: PromptReading, what: string): string {
  const full = candidates[0];
  const fullWords = countWords(full);
  let limit = reading.maxWords ?? Infinity;
  if (reading.shorter) limit = Math.min(limit, Math.ceil(fullWords / 2));
  const fitting = candidates.find((c) => countWords(c) <= limit);
  if (fitting) return fitting;
  const shortest = candidates.reduce((a, b) => (countWords(b) < countWords(a) ? b : a));
  // "Shorter" alone is met by the shortest text it has, if that is shorter at all.
  if (reading.maxWords === undefined && countWords(shortest) < fullWords) return shortest;
  throw cannotFollow(
    reading.maxWords === undefined
      ? `${capitalised(what)} is as short as it writes it (${fullWords} words).`
      : `The shortest ${what} it writes here has ${countWords(shortest)} words, more than ${reading.maxWords}.`,
  );
}
const capitalised = (s: string): string => s[0].toUpperCase() + s.slice(1);

/** N bullet points from lines of facts or sentences; refused when there are fewer than asked. */
function bullets(lines: string[], reading: PromptReading, what: string): string {
  const n = reading.bullets === 'all' ? Math.min(lines.length, 6) : reading.bullets!;
  if (n > lines.length || n === 0) throw cannotFollow(`It has ${lines.length} ${what} to list here, not ${n}.`);
  const text = bulleted(lines.slice(0, n));
  if (reading.maxWords !== undefined && countWords(text) > reading.maxWords) {
    throw cannotFollow(`${n} bullet points of ${what} take ${countWords(text)} words here, more than ${reading.maxWords}.`);
  }
  return text;
}

function fromProduct(input: GenerateInput, p: Plan, task: ProductTask): string {
  const view = viewOf(input.product!, p.language);
  const phrases = PHRASES[p.language];
  if (p.reading.bullets !== undefined) return bullets(factLines(view, phrases), p.reading, 'facts of the product');
  const rng = new Random(seedOf(input, task, p.language));
  return fit(compose(task, view, phrases, rng), p.reading, TASK_NAMES[task].replace(/^an? /, ''));
}

/** Summary, SEO title or description of the caller's text: sentences of the text itself, translated when another language is asked. */
function fromText(input: GenerateInput, p: Plan, task: ProductTask): string {
  const text = input.text!;
  const source = detectLanguage(text);
  const locale = LOCALES[source ?? p.language];
  let out: string;
  if (task === 'summary') {
    if (p.reading.bullets !== undefined) out = bullets(extract(text, locale, p.reading.bullets === 'all' ? undefined : p.reading.bullets), p.reading, 'sentences');
    else {
      const count = extract(text, locale).length;
      const candidates = Array.from({ length: count }, (_, i) => extract(text, locale, count - i).join(' '));
      out = fit(candidates, p.reading, 'summary');
    }
  } else {
    const first = extract(text, locale, 1).join(' ');
    out = fit([clip(first, task === 'seo-title' ? SEO_TITLE_MAX : SEO_DESCRIPTION_MAX)], p.reading, TASK_NAMES[task].replace(/^an? /, ''));
  }
  if (!p.languageChosen || source === p.language || (source === undefined && couldBe(text, p.language))) return out;
  const translated = translate(out, p.language, input.names ?? []);
  if (translated.unknown.length) {
    throw cannotTranslate(translated.unknown, p.language, source
      ? `The text reads as ${languageName(source)} and the ${TASK_NAMES[task].replace(/^an? /, '')} is taken from its sentences. `
      : `The ${TASK_NAMES[task].replace(/^an? /, '')} is taken from the text's sentences, whose language it cannot tell. `);
  }
  return translated.text;
}

function write(input: GenerateInput, p: Plan): string {
  const task = p.task;
  if (task === 'translate') {
    if (!input.text) throw unsupported('text', 'is required for the translate task');
    const names = [...(input.names ?? []), ...(input.product ? [input.product.name, input.product.brand?.name ?? ''] : [])];
    const t = translate(input.text, p.language, names);
    if (t.unknown.length) throw cannotTranslate(t.unknown, p.language);
    return t.text;
  }
  if (task === 'summary' && input.text) return fromText(input, p, task);
  if (input.product) return fromProduct(input, p, task);
  if (input.text && task !== 'product-description') return fromText(input, p, task);
  throw unsupported('productId', `is required: the built-in engine writes ${task === 'product-description' ? 'descriptions' : 'this task'} from product data; free prompts need ${LLM_ENGINES}`);
}

/**
 * The default engine: offline, no model. A data-to-text composer that writes a product's copy from its
 * data with phrase banks in English, Czech, Slovak and German, summarises text extractively, and
 * translates the store vocabulary term by term. It never answers with text it knows is wrong: a text it
 * cannot translate in full, or a prompt it cannot follow, is refused (422) with what it could not do.
 */
export function builtinEngine(): TextEngine {
  return {
    name: 'builtin',
    model: BUILTIN_MODEL,
    async *generate(input: GenerateInput): AsyncGenerator<string, GenerationEnd, undefined> {
      const p = plan(input);
      const text = write(input, p);
      const { system, user } = buildMessages({ ...input, task: p.task, language: p.language });
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

