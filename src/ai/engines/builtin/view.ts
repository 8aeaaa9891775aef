import type { ProductFacts } from '../../product-context.ts';
import { currencyFormat, numberFormat, pluralRules, regionNames } from './intl.ts';
import { keyOf, known, LABELS, type BuiltinLanguage, type FilterKey, type ParamKey } from './vocabulary.ts';

/** A fact ready for a sentence: its label and its value with the unit, both in the target language. */
export interface Spec {
  key: ParamKey | undefined;
  label: string;
  value: string;
}

export type Use = 'hobby' | 'professional' | 'industrial';

/** A product as the built-in engine speaks of it in one language: every value localised and formatted. */
export interface View {
  language: BuiltinLanguage;
  locale: string;
  name: string;
  brand: string | undefined;
  /** Whether the product name already says the brand (then "… from Brand" would repeat it). */
  brandInName: boolean;
  category: string | undefined;
  /** Measurable specifications, the most telling first: power, voltage, battery, length, noise, weight. */
  specs: Spec[];
  /** Other parameters whose name and value the vocabulary knows (or whose value is a number). */
  other: Spec[];
  material: string | undefined;
  warrantyYears: number | undefined;
  warranty: string | undefined;
  origin: string | undefined;
  colour: string | undefined;
  powerSource: string | undefined;
  /** The power source in English ("battery"), to choose a phrase. */
  powerSourceKey: string | undefined;
  use: Use | undefined;
  price: string;
  inStock: boolean;
  stock: number;
}

const MEASURES: ParamKey[] = ['power', 'voltage', 'battery', 'length', 'noise', 'weight'];

export const LOCALES: Record<BuiltinLanguage, string> = { en: 'en-GB', cs: 'cs-CZ', sk: 'sk-SK', de: 'de-DE' };

const NUMBER = /^-?\d+(\.\d+)?$/;

function formatNumber(raw: string, locale: string): string {
  return NUMBER.test(raw) ? numberFormat(locale).format(Number(raw)) : raw;
}

/** "2 years", "2 roky", "5 let", "5 rokov", "2 Jahre": the plural forms each language needs. */
export function years(n: number, language: BuiltinLanguage, locale: string): string {
  const forms: Record<BuiltinLanguage, Partial<Record<Intl.LDMLPluralRule, string>>> = {
    en: { one: 'year', other: 'years' },
    cs: { one: 'rok', few: 'roky', many: 'roku', other: 'let' },
    sk: { one: 'rok', few: 'roky', many: 'roka', other: 'rokov' },
    de: { one: 'Jahr', other: 'Jahre' },
  };
  const rule = pluralRules(locale).select(n);
  return `${formatNumber(String(n), locale)} ${forms[language][rule] ?? forms[language].other}`;
}

/** The country's name in the language, for an ISO 3166 code; undefined for anything else (a name in the store's language). */
function countryName(code: string, locale: string): string | undefined {
  if (!/^[A-Za-z]{2}$/.test(code)) return undefined;
  try {
    const name = regionNames(locale).of(code.toUpperCase());
    return name && name.toUpperCase() !== code.toUpperCase() ? name : undefined;
  } catch {
    return undefined;
  }
}

function price(facts: ProductFacts, locale: string): string {
  const amount = Number(facts.price);
  if (!Number.isFinite(amount)) return `${facts.price} ${facts.currency}`;
  try {
    return currencyFormat(locale, facts.currency).format(amount);
  } catch {
    return `${formatNumber(facts.price, locale)} ${facts.currency}`;
  }
}

/**
 * The product in one language. What the vocabulary cannot say in that language (a parameter, value or category
 * the store named in its own words) is left out rather than quoted in another language: the text stays in one
 * language. Names of the product and its brand are used as they are.
 */
export function viewOf(facts: ProductFacts, language: BuiltinLanguage): View {
  const locale = LOCALES[language];
  const brand = facts.brand?.name;
  // The deepest category the vocabulary knows ("Digging" or, failing that, "Garden").
  const category = facts.categoryPath.map((c) => known(c, language)).filter((c) => c !== undefined).at(-1);
  const view: View = {
    language,
    locale,
    name: facts.name,
    brand,
    brandInName: brand !== undefined && facts.name.toLowerCase().includes(brand.toLowerCase()),
    category,
    specs: [],
    other: [],
    material: undefined,
    warrantyYears: undefined,
    warranty: undefined,
    origin: undefined,
    colour: undefined,
    powerSource: undefined,
    powerSourceKey: undefined,
    use: undefined,
    price: price(facts, locale),
    inStock: facts.stock > 0,
    stock: facts.stock,
  };
  const measured = new Map<ParamKey, Spec>();
  for (const p of facts.parameters) {
    const key = keyOf(p.name);
    const value = p.value.trim();
    if (key === 'material') view.material = known(value, language);
    else if (key === 'origin') view.origin = countryName(value, locale);
    else if (key === 'warranty' && NUMBER.test(value)) {
      view.warrantyYears = Number(value);
      view.warranty = years(Number(value), language, locale);
    } else if (key && (MEASURES as string[]).includes(key) && NUMBER.test(value)) {
      measured.set(key as ParamKey, { key: key as ParamKey, label: LABELS[key][language], value: `${formatNumber(value, locale)}${p.unit ? ` ${p.unit}` : ''}` });
    } else {
      const label = key ? LABELS[key][language] : known(p.name, language);
      const said = NUMBER.test(value) ? formatNumber(value, locale) : known(value, language);
      if (label && said) view.other.push({ key: undefined, label, value: `${said}${p.unit ? ` ${p.unit}` : ''}` });
    }
  }
  if (!measured.has('weight') && facts.weight !== null && facts.weight > 0) {
    measured.set('weight', { key: 'weight', label: LABELS.weight[language], value: `${formatNumber(String(facts.weight), locale)} kg` });
  }
  view.specs = MEASURES.flatMap((k) => measured.get(k) ?? []);
  for (const f of facts.filters) {
    const key = keyOf(f.name) as FilterKey | undefined;
    const value = f.value.trim();
    if (key === 'colour') view.colour = known(value, language);
    else if (key === 'powerSource') {
      view.powerSource = known(value, language);
      view.powerSourceKey = known(value, 'en')?.toLowerCase();
    } else if (key === 'use') {
      const en = known(value, 'en')?.toLowerCase();
      if (en === 'hobby' || en === 'professional' || en === 'industrial') view.use = en;
    }
  }
  return view;
}
