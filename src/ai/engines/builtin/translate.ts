import { wordsOf } from './fit.ts';
import { regionNames } from './intl.ts';
import { capitalise } from './phrases.ts';
import { LOCALES, years } from './view.ts';
import { glossary, type BuiltinLanguage } from './vocabulary.ts';

const glossaryEntries = glossary();
const lookup = new Map(glossaryEntries.map((g) => [g.phrase, g.term]));
const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const WHOLE = (pattern: string): RegExp => new RegExp(`(?<![\\p{L}\\p{N}])(?:${pattern})(?![\\p{L}\\p{N}])`, 'giu');
// Longest phrases first, whole words only, so "stainless steel" wins over "steel".
const TERMS = WHOLE(glossaryEntries.map((g) => escape(g.phrase)).join('|'));
const UNIT_LIST = ['kg', 'g', 'W', 'kW', 'V', 'Ah', 'mAh', 'cm', 'mm', 'm', 'dB', 'l', 'ml'];
const UNITS_AHEAD = `(?=\\s?(?:${UNIT_LIST.join('|')})\\b)`;
/** Words that read the same in every language: units, currencies, multiplication. */
const UNIVERSAL = new Set([...UNIT_LIST, 'h', 'min', 'km', 'CZK', 'EUR', 'Kč', 'x', 'Wh', 'kWh', 'rpm', 'SKU', 'EAN', 'LED', 'USB', 'IP'].map((u) => u.toLowerCase()));
/** ISO 3166 country codes ("CN", "DE"), as data sheets give a country of origin. */
const isCountryCode = (word: string): boolean => /^[A-Z]{2}$/.test(word) && regionNames('en').of(word) !== word;
const NUMBER = /^[+-]?\d+(?:[.,]\d+)*$/u;
/** Model codes and article numbers: letters and digits in one word ("Z285", "SKU-0000012", "18V"). */
const CODE = /^(?=.*\p{L})(?=.*\p{N})[\p{L}\p{N}][\p{L}\p{N}./-]*$/u;

export const isCode = (word: string): boolean => CODE.test(word);
const keepsAsIs = (word: string): boolean => NUMBER.test(word) || CODE.test(word) || UNIVERSAL.has(word.toLowerCase()) || isCountryCode(word);

type Range = [number, number];

/**
 * Where the text names a product or a brand: each known name, and after it the capitalised words and codes
 * up to the last code within six words ("Nordwerk" + " Pro Garden Fork Z285"), which is how a product name
 * continues its brand. Those ranges are never translated.
 */
export function nameRanges(text: string, names: readonly string[]): Range[] {
  const ranges: Range[] = [];
  const known = [...new Set(names.map((n) => n.trim()).filter((n) => n.length > 1))].sort((a, b) => b.length - a.length);
  if (!known.length) return ranges;
  for (const m of text.matchAll(WHOLE(known.map(escape).join('|')))) {
    const start = m.index;
    let end = start + m[0].length;
    const tail = /^(?:[ \t]+|-)([\p{Lu}\p{N}][\p{L}\p{N}./-]*?)(?=[.,;:!?)]*(?:\s|$))/u;
    let at = end;
    for (let i = 0; i < 6; i++) {
      const t = tail.exec(text.slice(at));
      if (!t) break;
      at += t[0].length;
      if (CODE.test(t[1])) end = at;
    }
    ranges.push([start, end]);
  }
  // Merge overlaps (a brand inside a product name).
  ranges.sort((a, b) => a[0] - b[0]);
  const merged: Range[] = [];
  for (const r of ranges) {
    const last = merged.at(-1);
    if (last && r[0] <= last[1]) last[1] = Math.max(last[1], r[1]);
    else merged.push([...r]);
  }
  return merged;
}

export interface Translation {
  text: string;
  /** Words of the text it has no translation of, in order; the translation is only good when this is empty. */
  unknown: string[];
}

// "2 years", "5 let", "3 Jahre": the number decides the word's form in the target language (view.ts `years`).
const YEARS = new RegExp(`(?<![\\p{L}\\p{N}.,])(\\d+)\\s+(?:years?|rok|roky|roku|let|rokov|roka|Jahre?)(?![\\p{L}\\p{N}])`, 'giu');

function translateSegment(segment: string, target: BuiltinLanguage, unknown: string[]): string {
  const blank = (m: string): string => ' '.repeat(m.length);
  const residual = segment.replace(YEARS, blank).replace(TERMS, blank);
  for (const word of wordsOf(residual)) if (!keepsAsIs(word)) unknown.push(word);
  const out = segment.replace(YEARS, (_, n: string) => years(Number(n), target, LOCALES[target])).replace(TERMS, (match) => {
    const term = lookup.get(match.toLowerCase());
    if (!term) return match;
    const word = term[target];
    if (match[0] !== match[0].toLowerCase()) return capitalise(word);
    // German nouns keep their capital; elsewhere a lower-case source word stays lower-case.
    return target === 'de' ? word : word[0].toLowerCase() + word.slice(1);
  });
  // Decimal numbers before units follow the target's separator.
  return target === 'en'
    ? out.replace(new RegExp(`(\\d),(\\d+)${UNITS_AHEAD}`, 'g'), '$1.$2')
    : out.replace(new RegExp(`(\\d)\\.(\\d+)${UNITS_AHEAD}`, 'g'), '$1,$2');
}

/**
 * Translates a text made of the store vocabulary (category, parameter and filter names and values, colours,
 * materials) between English, Czech, Slovak and German, term by term. Numbers, units and codes stay; names of
 * products and brands stay as written. Every other word is reported in `unknown`: the built-in engine does
 * not pretend to translate free prose, and the caller refuses the whole text rather than mix languages.
 */
export function translate(text: string, target: BuiltinLanguage, names: readonly string[] = []): Translation {
  const unknown: string[] = [];
  let out = '';
  let at = 0;
  for (const [start, end] of nameRanges(text, names)) {
    out += translateSegment(text.slice(at, start), target, unknown) + text.slice(start, end);
    at = end;
  }
  out += translateSegment(text.slice(at), target, unknown);
  return { text: out, unknown };
}
