import { invalidParameter } from '../../errors/app-error.ts';
import { parseBoolean } from '../parse.ts';
import { CSV_DEFAULTS, type CsvOptions } from './csv.ts';

/**
 * CSV for the spreadsheet of a locale (`locale=cs-CZ`): the list separator and decimal mark its Excel and
 * LibreOffice expect, a BOM so that they read UTF-8, and spreadsheet cells (dates they read as dates, number-like
 * text kept as text; see csv.ts). Locales whose decimal mark is a comma list with `;`, because `,` would split
 * their numbers.
 */
export const CSV_LOCALES = {
  'cs-CZ': ',',
  'sk-SK': ',',
  'de-DE': ',',
  'de-AT': ',',
  'pl-PL': ',',
  'fr-FR': ',',
  'it-IT': ',',
  'es-ES': ',',
  'nl-NL': ',',
  'de-CH': '.',
  'en-GB': '.',
  'en-US': '.',
} as const satisfies Record<string, '.' | ','>;

export type CsvLocale = keyof typeof CSV_LOCALES;
export const CSV_LOCALE_NAMES = Object.keys(CSV_LOCALES) as CsvLocale[];
export const CSV_DECIMALS = ['.', ','] as const;

export interface CsvQuery {
  delimiter?: unknown;
  bom?: unknown;
  escapeFormulas?: unknown;
  decimal?: unknown;
  locale?: unknown;
}

/** The CSV options of a request: the locale's, then each explicit `delimiter`, `bom`, `decimal` over them. */
export function csvOptionsOf(query: CsvQuery): CsvOptions {
  const options: CsvOptions = { ...CSV_DEFAULTS };
  if (query.locale !== undefined) {
    const locale = String(query.locale);
    const decimal = Object.hasOwn(CSV_LOCALES, locale) ? CSV_LOCALES[locale as CsvLocale] : undefined;
    if (!decimal) throw invalidParameter('locale', `must be one of ${CSV_LOCALE_NAMES.join(', ')}`);
    Object.assign(options, { decimal, delimiter: decimal === ',' ? ';' : ',', bom: true, spreadsheet: true });
  }
  if (query.delimiter !== undefined) options.delimiter = String(query.delimiter);
  if (query.bom !== undefined) options.bom = parseBoolean('bom', String(query.bom));
  if (query.escapeFormulas !== undefined) options.escapeFormulas = parseBoolean('escapeFormulas', String(query.escapeFormulas));
  if (query.decimal !== undefined) options.decimal = String(query.decimal) as CsvOptions['decimal'];
  if (options.decimal === ',' && options.delimiter === ',') {
    throw invalidParameter(query.decimal !== undefined ? 'decimal' : 'delimiter', 'cannot be `,` together with a decimal comma: use delimiter=; (or tab)');
  }
  return options;
}
