import type { BuiltinLanguage } from './vocabulary.ts';

/**
 * The commonest short words of each language the built-in engine writes. A text's language is the one whose
 * words it uses most; words two languages share ("a", "in", "je") count for both and decide nothing.
 */
export const STOP_WORDS: Record<BuiltinLanguage, readonly string[]> = {
  en: ['the', 'and', 'is', 'are', 'with', 'for', 'of', 'to', 'it', 'its', 'on', 'in', 'from', 'this', 'that', 'your', 'you', 'an', 'a', 'by', 'at', 'be', 'can', 'has', 'have', 'was', 'not', 'all', 'every', 'before', 'after', 'during', 'will', 'or'],
  cs: ['a', 'je', 'se', 'na', 'pro', 's', 'z', 've', 'v', 'že', 'jsou', 'k', 'od', 'do', 'i', 'to', 'ke', 'ze', 'jeho', 'který', 'která', 'které', 'při', 'po', 'jako', 'také', 'není', 'díky', 'bez', 'má', 'nebo'],
  sk: ['a', 'je', 'sa', 'na', 'pre', 's', 'z', 'vo', 'v', 'že', 'sú', 'k', 'od', 'do', 'aj', 'to', 'ku', 'zo', 'jeho', 'ktorý', 'ktorá', 'ktoré', 'pri', 'po', 'ako', 'tiež', 'nie', 'vďaka', 'bez', 'má', 'alebo'],
  de: ['der', 'die', 'das', 'und', 'ist', 'sind', 'mit', 'für', 'von', 'zu', 'auf', 'ein', 'eine', 'einen', 'den', 'dem', 'des', 'sie', 'es', 'nicht', 'im', 'in', 'aus', 'bei', 'auch', 'oder', 'wird', 'dank', 'ohne', 'nach'],
};

// Letters that point to a language ("ä" is German and Slovak alike, so it counts for both).
const LETTERS: Partial<Record<BuiltinLanguage, RegExp>> = { cs: /[řůě]/giu, sk: /[äôľĺŕ]/giu, de: /[äöüß]/giu };

const sets = Object.fromEntries(Object.entries(STOP_WORDS).map(([l, ws]) => [l, new Set(ws)])) as Record<BuiltinLanguage, Set<string>>;

/** How much a text reads as each language: 2 a word only that language has, 1 a word it shares, 1 a letter only it has. */
function scores(text: string): Record<BuiltinLanguage, number> {
  const lower = text.toLocaleLowerCase();
  const score: Record<BuiltinLanguage, number> = { en: 0, cs: 0, sk: 0, de: 0 };
  for (const w of lower.match(/\p{L}+/gu) ?? []) {
    const owners = (Object.keys(sets) as BuiltinLanguage[]).filter((l) => sets[l].has(w));
    for (const l of owners) score[l] += owners.length === 1 ? 2 : 1;
  }
  for (const [l, re] of Object.entries(LETTERS) as Array<[BuiltinLanguage, RegExp]>) score[l] += (lower.match(re) ?? []).length;
  return score;
}

/** The language a text reads as, or undefined when it gives no clear clue (a list of terms, or Czech and Slovak alike). */
export function detectLanguage(text: string): BuiltinLanguage | undefined {
  const [best, second] = (Object.entries(scores(text)) as Array<[BuiltinLanguage, number]>).sort((a, b) => b[1] - a[1]);
  return best[1] >= 2 && best[1] > second[1] ? best[0] : undefined;
}

/** Whether the text may well be in `language`: no other language reads better ("Vrtačka je lehká." is Czech or Slovak). */
export function couldBe(text: string, language: BuiltinLanguage): boolean {
  const score = scores(text);
  return score[language] > 0 && Object.values(score).every((s) => s <= score[language]);
}
