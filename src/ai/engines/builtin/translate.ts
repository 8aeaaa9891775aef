import { capitalise } from './phrases.ts';
import { glossary, type BuiltinLanguage } from './vocabulary.ts';

const glossaryEntries = glossary();
const lookup = new Map(glossaryEntries.map((g) => [g.phrase, g.term]));
const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
// Longest phrases first, whole words only, so "stainless steel" wins over "steel".
const TERMS = new RegExp(`(?<![\\p{L}\\p{N}])(?:${glossaryEntries.map((g) => escape(g.phrase)).join('|')})(?![\\p{L}\\p{N}])`, 'giu');
const UNITS = '(?=\\s?(?:kg|g|W|kW|V|Ah|mAh|cm|mm|m|dB|l|ml)\\b)';

/**
 * Term-by-term translation of the store vocabulary (category, parameter and filter names and values, colours,
 * materials) between English, Czech, Slovak and German; decimal numbers before units follow the target's
 * separator. Everything else stays as written: the built-in engine does not pretend to translate free prose.
 */
export function translateTerms(text: string, target: BuiltinLanguage): { text: string; terms: number } {
  let terms = 0;
  let out = text.replace(TERMS, (match) => {
    const term = lookup.get(match.toLowerCase());
    if (!term) return match;
    terms++;
    const word = term[target];
    if (match[0] !== match[0].toLowerCase()) return capitalise(word);
    // German nouns keep their capital; elsewhere a lower-case source word stays lower-case.
    return target === 'de' ? word : word[0].toLowerCase() + word.slice(1);
  });
  out = target === 'en'
    ? out.replace(new RegExp(`(\\d),(\\d+)${UNITS}`, 'g'), '$1.$2')
    : out.replace(new RegExp(`(\\d)\\.(\\d+)${UNITS}`, 'g'), '$1,$2');
  return { text: out, terms };
}
