/** Intl formatters are costly to build and free to reuse: one of each per locale (and currency). */
const cache = new Map<string, unknown>();

function memo<T>(key: string, make: () => T): T {
  let value = cache.get(key) as T | undefined;
  if (value === undefined) {
    value = make();
    cache.set(key, value);
  }
  return value;
}

export const numberFormat = (locale: string): Intl.NumberFormat =>
  memo(`n:${locale}`, () => new Intl.NumberFormat(locale, { maximumFractionDigits: 3 }));
export const currencyFormat = (locale: string, currency: string): Intl.NumberFormat =>
  memo(`c:${locale}:${currency}`, () => new Intl.NumberFormat(locale, { style: 'currency', currency }));
export const listFormat = (locale: string): Intl.ListFormat =>
  memo(`l:${locale}`, () => new Intl.ListFormat(locale, { style: 'long', type: 'conjunction' }));
export const pluralRules = (locale: string): Intl.PluralRules => memo(`p:${locale}`, () => new Intl.PluralRules(locale));
export const regionNames = (locale: string): Intl.DisplayNames => memo(`r:${locale}`, () => new Intl.DisplayNames([locale], { type: 'region' }));
export const sentenceSegmenter = (locale: string): Intl.Segmenter => memo(`s:${locale}`, () => new Intl.Segmenter(locale, { granularity: 'sentence' }));
