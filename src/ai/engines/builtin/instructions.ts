import type { PromptInstruction, Task } from '../../engine.ts';
import type { BuiltinLanguage } from './vocabulary.ts';

/**
 * The closed set of instructions the built-in engine reads in a `prompt`, in English, Czech, Slovak and German:
 * which task, which language, N bullet points, at most N words, shorter. Whatever else a prompt says is
 * reported as not understood, so the engine refuses it instead of ignoring it.
 */
export interface PromptReading {
  tasks: Task[];
  /** Languages to write in (a source language, "from English", is read and set aside). */
  languages: BuiltinLanguage[];
  /** A number, or `all` for "as a bulleted list" without one. */
  bullets: number | 'all' | undefined;
  maxWords: number | undefined;
  shorter: boolean;
  /** Words of the prompt it could not read, as written. */
  unknown: string[];
}

export const INSTRUCTIONS: PromptInstruction[] = [
  { name: 'task', description: 'Names one task, when the request has no `task` or the same one.', examples: ['Write an SEO title', 'Shrň to', 'Übersetze ins Deutsche'] },
  { name: 'language', description: 'Names a language it writes (English, Czech, Slovak, German), when `language` is absent or the same.', examples: ['in German', 'česky', 'po slovensky', 'auf Englisch'] },
  { name: 'bullets', description: 'N bullet points (1 to 10) of the product\'s facts or of the text\'s sentences; refused when there are fewer. Descriptions and summaries only.', examples: ['3 bullet points', 've 3 bodech', 'in 5 Stichpunkten', 'as a bulleted list'] },
  { name: 'maxWords', description: 'At most N words: the fullest text that fits, refused when even the shortest does not. Not for translations.', examples: ['max 30 words', 'nejvýše 30 slov', 'höchstens 30 Wörter'] },
  { name: 'shorter', description: 'About half the usual length. Not for translations.', examples: ['shorter', 'stručně', 'kürzer'] },
];

const NUMBER_WORDS: Record<string, number> = {
  one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9, ten: 10,
  jeden: 1, jedna: 1, jedno: 1, dva: 2, dvě: 2, dve: 2, tři: 3, tri: 3, čtyři: 4, štyri: 4, pět: 5, päť: 5, šest: 6, šesť: 6,
  sedm: 7, sedem: 7, osm: 8, osem: 8, devět: 9, deväť: 9, deset: 10, desať: 10,
  eins: 1, ein: 1, eine: 1, zwei: 2, drei: 3, vier: 4, fünf: 5, sechs: 6, sieben: 7, acht: 8, neun: 9, zehn: 10,
};
const NUM = `\\d{1,4}|${Object.keys(NUMBER_WORDS).join('|')}`;
const numberOf = (s: string): number => NUMBER_WORDS[s.toLowerCase()] ?? Number(s);

/** Whole words only; JavaScript's \b knows no letters beyond ASCII. */
const words = (pattern: string): RegExp => new RegExp(`(?<![\\p{L}\\p{N}])(?:${pattern})(?![\\p{L}\\p{N}])`, 'giu');

const LANGUAGE_WORDS = 'english|czech|slovak|german|angličtin\\p{L}*|češtin\\p{L}*|slovenštin\\p{L}*|slovenčin\\p{L}*|němčin\\p{L}*|nemčin\\p{L}*|' +
  'anglick[yuáé]|česk[yuáé]|slovensk[yuáé]|německ[yuáé]|nemeck[yuáé]|englisch\\p{L}*|tschechisch\\p{L}*|slowakisch\\p{L}*|deutsch\\p{L}*';
function languageOfWord(word: string): BuiltinLanguage {
  const w = word.toLowerCase();
  if (/^(engl|angl)/.test(w)) return 'en';
  if (/^(czech|češ|česk|tschech)/.test(w)) return 'cs';
  if (/^(slovak|sloven|slowak)/.test(w)) return 'sk';
  return 'de';
}

const SOURCE = words(`(?:from|z|ze|zo|aus\\s+dem|aus)\\s+(?:${LANGUAGE_WORDS})`);
const TARGET = words(`(?:(?:in|into|to|v|ve|vo|do|po|auf|ins)\\s+)?(${LANGUAGE_WORDS})`);
const BULLET_WORDS = 'bullet[\\s-]?points?|bullets|points|key\\s+points|odrážk\\p{L}*|bod(?:y|ů|ech|och|ov)?|stichpunkt\\p{L}*|aufzählungspunkt\\p{L}*|punkte[n]?';
const BULLETS_N = words(`(${NUM})\\s+(?:(?:short|krátk\\p{L}*|kurz\\p{L}*)\\s+)?(?:${BULLET_WORDS})`);
const BULLETS = words('(?:as\\s+)?(?:a\\s+)?(?:bullet(?:ed)?[\\s-]?(?:point\\s+)?list|bullet[\\s-]?points|bullets|list)|odrážk\\p{L}*|(?:v|ve|vo)\\s+bod(?:ech|och)|' +
  'stichpunkt\\p{L}*|aufzählung\\p{L}*|(?:als\\s+)?liste|seznam\\p{L}*|zoznam\\p{L}*');
const MAX_WORDS = words('(?:(?:at\\s+most|max(?:imum)?\\.?|up\\s+to|no\\s+more\\s+than|not\\s+more\\s+than|under|below|within|less\\s+than|fewer\\s+than|' +
  'nejvýše|maximálně|nanejvýš|nanajvýš|najviac|maximálne|do|höchstens|maximal|bis\\s+zu|unter|weniger\\s+als)\\s+)?' +
  `(${NUM})\\s+(?:words?|slov(?:a|o|y|ech|ách)?|wörter[n]?|worte[n]?)`);
const SHORTER = words('shorter|short|brief(?:ly)?|concise(?:ly)?|succinct(?:ly)?|kratší|kratš\\p{L}*|krátk\\p{L}*|krátce|stručn\\p{L}*|kürzer|kurz(?:e|en|er|es)?|knapp\\p{L}*');

const TASKS: Array<[Task, RegExp]> = [
  ['seo-title', words('seo[\\s-]*(?:title|titulek|titulok|titel|nadpis)|(?:page|meta|product)\\s+title|title|titulek|titulok|titel|nadpis|headline|überschrift')],
  ['seo-description', words('(?:seo|meta)[\\s-]*(?:description|popis(?:ek)?|beschreibung)|metapopis|seo|meta')],
  ['summary', words('summar\\p{L}*|shrnutí|shrň\\p{L}*|shrn\\p{L}*|zhrnutie|zhrň\\p{L}*|zhrn\\p{L}*|zusammenfass\\p{L}*|fasse|zusammen')],
  ['translate', words('translat\\p{L}*|přelož\\p{L}*|prelož\\p{L}*|překlad\\p{L}*|preklad\\p{L}*|übersetz\\p{L}*')],
  ['product-description', words('(?:product\\s+)?description|describe|popis\\p{L}*|opis\\p{L}*|produktbeschreibung|beschreib\\p{L}*|produkttext|product\\s+copy')],
];

/** Words that carry no instruction ("please write a … for this product"). */
const FILLER = new Set(`
please pls kindly write create generate make produce give me us a an the for of this that these product products item it its
text copy in with about as and to into can you could would now some our my your shop store page online version only just from based on
prosím napiš napište vytvoř vytvořte udělej udělejte vygeneruj vygenerujte dej dejte mi nám pro k ke tento tuto toto tohoto této
produkt produktu výrobek výrobku zboží text v ve na a jako o do s se z ze náš našeho jen pouze formou formě podobě
napíš napíšte vytvor vytvorte sprav spravte daj dajte pre ku túto tohto tejto výrobok tovar vo so zo nášho iba len forme
bitte schreib schreibe schreiben sie du erstelle erstellen erzeuge generiere mach mache gib mir uns ein eine einen einer der die das
den dem des für zu zum zur dieses diesen diese dieser produkt produkts artikel auf mit und als von nur seite form ins
`.split(/\s+/).filter(Boolean));

/** Reads a prompt; what it recognises is taken out, and every other word but filler is `unknown`. */
export function readPrompt(prompt: string): PromptReading {
  const reading: PromptReading = { tasks: [], languages: [], bullets: undefined, maxWords: undefined, shorter: false, unknown: [] };
  let rest = prompt;
  const take = (re: RegExp, on: (groups: string[]) => void): void => {
    rest = rest.replace(re, (...args: unknown[]) => {
      on(args.slice(1, -2).map((g) => (typeof g === 'string' ? g : '')));
      return ' ';
    });
  };
  take(SOURCE, () => {});
  take(BULLETS_N, ([n]) => (reading.bullets = numberOf(n)));
  take(BULLETS, () => (reading.bullets ??= 'all'));
  take(MAX_WORDS, ([n]) => (reading.maxWords = Math.min(reading.maxWords ?? Infinity, numberOf(n))));
  take(SHORTER, () => (reading.shorter = true));
  take(TARGET, ([name]) => reading.languages.push(languageOfWord(name)));
  for (const [task, re] of TASKS) take(re, () => reading.tasks.push(task));
  reading.tasks = [...new Set(reading.tasks)];
  reading.languages = [...new Set(reading.languages)];
  reading.unknown = (rest.match(/[\p{L}\p{N}]+(?:['’-][\p{L}\p{N}]+)*/gu) ?? []).filter((w) => !FILLER.has(w.toLowerCase()));
  return reading;
}
