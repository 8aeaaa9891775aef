import { AppError } from '../../../errors/app-error.ts';
import { languageName } from '../../prompt.ts';

/** Which engines do what the built-in one refuses; every refusal says so. */
export const LLM_ENGINES = 'AI_ENGINE=openai or AI_ENGINE=llama';

/** Bounds a refusal's list: a 20 000-character text may hold thousands of unknown words. */
const MAX_LISTED = 50;
const quote = (words: string[], max: number): string =>
  words.slice(0, max).map((w) => `"${w}"`).join(', ') + (words.length > max ? ` and ${words.length - max} more` : '');

/** A prompt the built-in engine cannot follow: refused, never ignored. */
export function cannotFollow(reason: string, errors: string[] = [reason]): AppError {
  return new AppError('engine_cannot_follow_prompt', `${reason} The built-in engine does not follow free prompts; ${LLM_ENGINES} does.`, {
    errors: errors.map((r) => ({ name: 'prompt', reason: r })),
  });
}

/** Words the built-in engine has no translation of: the whole text is refused, not half translated. */
export function cannotTranslate(words: string[], target: string, lead = ''): AppError {
  const distinct = [...new Set(words)];
  return new AppError(
    'engine_cannot_translate',
    `${lead}The built-in engine cannot translate ${distinct.length === 1 ? 'this word' : `these ${distinct.length} words`} into ${languageName(target)}: ` +
      `${quote(distinct, 10)}. It translates only the store vocabulary (parameter and filter names and values, colours, materials, ` +
      `categories), numbers, units and names of products and brands (kept as written). ${LLM_ENGINES} translates any text.`,
    { errors: distinct.slice(0, MAX_LISTED).map((w) => ({ name: 'text', reason: `no translation of "${w}"` })) },
  );
}
