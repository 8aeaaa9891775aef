/**
 * The store vocabulary the built-in engine knows in every language it writes: parameter and filter names,
 * their common values, and the demo catalogue's categories. Data the vocabulary does not know is used as
 * the store wrote it.
 */

export const BUILTIN_LANGUAGES = ['en', 'cs', 'sk', 'de'] as const;
export type BuiltinLanguage = (typeof BUILTIN_LANGUAGES)[number];

export type Term = Record<BuiltinLanguage, string>;

export const PARAM_KEYS = ['weight', 'power', 'voltage', 'battery', 'length', 'noise', 'material', 'warranty', 'origin'] as const;
export type ParamKey = (typeof PARAM_KEYS)[number];

export const FILTER_KEYS = ['colour', 'powerSource', 'use', 'priceBand'] as const;
export type FilterKey = (typeof FILTER_KEYS)[number];

/** Names of parameters and filters, as a label inside a sentence (German nouns keep their capital). */
export const LABELS: Record<ParamKey | FilterKey, Term> = {
  weight: { en: 'weight', cs: 'hmotnost', sk: 'hmotnosť', de: 'Gewicht' },
  power: { en: 'power', cs: 'příkon', sk: 'príkon', de: 'Leistung' },
  voltage: { en: 'voltage', cs: 'napětí', sk: 'napätie', de: 'Spannung' },
  battery: { en: 'battery capacity', cs: 'kapacita baterie', sk: 'kapacita batérie', de: 'Akkukapazität' },
  length: { en: 'length', cs: 'délka', sk: 'dĺžka', de: 'Länge' },
  noise: { en: 'noise level', cs: 'hlučnost', sk: 'hlučnosť', de: 'Geräuschpegel' },
  material: { en: 'material', cs: 'materiál', sk: 'materiál', de: 'Material' },
  warranty: { en: 'warranty', cs: 'záruka', sk: 'záruka', de: 'Garantie' },
  origin: { en: 'country of origin', cs: 'země původu', sk: 'krajina pôvodu', de: 'Herkunftsland' },
  colour: { en: 'colour', cs: 'barva', sk: 'farba', de: 'Farbe' },
  powerSource: { en: 'power source', cs: 'napájení', sk: 'napájanie', de: 'Energiequelle' },
  use: { en: 'use', cs: 'použití', sk: 'použitie', de: 'Einsatzbereich' },
  priceBand: { en: 'price band', cs: 'cenová hladina', sk: 'cenová hladina', de: 'Preisklasse' },
};

/** Other names a store may give the same parameter or filter. */
const ALIASES: Record<string, ParamKey | FilterKey> = { color: 'colour', origin: 'origin', battery: 'battery', capacity: 'battery' };

const byName = new Map<string, ParamKey | FilterKey>();
for (const [key, term] of Object.entries(LABELS) as Array<[ParamKey | FilterKey, Term]>) {
  for (const name of Object.values(term)) byName.set(name.toLowerCase(), key);
}
for (const [alias, key] of Object.entries(ALIASES)) byName.set(alias, key);

/** Which known parameter or filter a store's name denotes ("Weight", "Hmotnost", "Gewicht" → weight). */
export function keyOf(name: string): ParamKey | FilterKey | undefined {
  return byName.get(name.trim().toLowerCase());
}

/** Values of parameters and filters, and the demo catalogue's categories. */
const TERMS: Term[] = [
  // materials
  { en: 'steel', cs: 'ocel', sk: 'oceľ', de: 'Stahl' },
  { en: 'stainless steel', cs: 'nerezová ocel', sk: 'nehrdzavejúca oceľ', de: 'Edelstahl' },
  { en: 'aluminium', cs: 'hliník', sk: 'hliník', de: 'Aluminium' },
  { en: 'plastic', cs: 'plast', sk: 'plast', de: 'Kunststoff' },
  { en: 'wood', cs: 'dřevo', sk: 'drevo', de: 'Holz' },
  { en: 'fibreglass', cs: 'sklolaminát', sk: 'sklolaminát', de: 'Glasfaser' },
  { en: 'rubber', cs: 'pryž', sk: 'guma', de: 'Gummi' },
  { en: 'glass', cs: 'sklo', sk: 'sklo', de: 'Glas' },
  { en: 'cast iron', cs: 'litina', sk: 'liatina', de: 'Gusseisen' },
  { en: 'polyester', cs: 'polyester', sk: 'polyester', de: 'Polyester' },
  // colours
  { en: 'black', cs: 'černá', sk: 'čierna', de: 'Schwarz' },
  { en: 'red', cs: 'červená', sk: 'červená', de: 'Rot' },
  { en: 'blue', cs: 'modrá', sk: 'modrá', de: 'Blau' },
  { en: 'green', cs: 'zelená', sk: 'zelená', de: 'Grün' },
  { en: 'yellow', cs: 'žlutá', sk: 'žltá', de: 'Gelb' },
  { en: 'grey', cs: 'šedá', sk: 'sivá', de: 'Grau' },
  { en: 'orange', cs: 'oranžová', sk: 'oranžová', de: 'Orange' },
  { en: 'white', cs: 'bílá', sk: 'biela', de: 'Weiß' },
  // power sources
  { en: 'battery', cs: 'akumulátor', sk: 'akumulátor', de: 'Akku' },
  { en: 'mains', cs: 'elektrická síť', sk: 'elektrická sieť', de: 'Netzstrom' },
  { en: 'petrol', cs: 'benzín', sk: 'benzín', de: 'Benzin' },
  { en: 'manual', cs: 'ruční pohon', sk: 'ručný pohon', de: 'Handbetrieb' },
  { en: 'solar', cs: 'solární energie', sk: 'solárna energia', de: 'Solarenergie' },
  // use and price band
  { en: 'hobby', cs: 'hobby', sk: 'hobby', de: 'Hobby' },
  { en: 'professional', cs: 'profesionální', sk: 'profesionálne', de: 'professionell' },
  { en: 'industrial', cs: 'průmyslové', sk: 'priemyselné', de: 'industriell' },
  { en: 'budget', cs: 'levná', sk: 'lacná', de: 'günstig' },
  { en: 'standard', cs: 'standardní', sk: 'štandardná', de: 'Standard' },
  { en: 'premium', cs: 'prémiová', sk: 'prémiová', de: 'Premium' },
  // words of product data sheets
  { en: 'category', cs: 'kategorie', sk: 'kategória', de: 'Kategorie' },
  { en: 'brand', cs: 'značka', sk: 'značka', de: 'Marke' },
  { en: 'price', cs: 'cena', sk: 'cena', de: 'Preis' },
  { en: 'in stock', cs: 'skladem', sk: 'na sklade', de: 'auf Lager' },
  { en: 'out of stock', cs: 'není skladem', sk: 'nie je na sklade', de: 'nicht auf Lager' },
  { en: 'parameters', cs: 'parametry', sk: 'parametre', de: 'Merkmale' },
  { en: 'description', cs: 'popis', sk: 'popis', de: 'Beschreibung' },
  // categories of the demo catalogue
  { en: 'Power Tools', cs: 'Elektrické nářadí', sk: 'Elektrické náradie', de: 'Elektrowerkzeuge' },
  { en: 'Drills', cs: 'Vrtačky', sk: 'Vŕtačky', de: 'Bohrmaschinen' },
  { en: 'Saws', cs: 'Pily', sk: 'Píly', de: 'Sägen' },
  { en: 'Grinders', cs: 'Brusky', sk: 'Brúsky', de: 'Schleifer' },
  { en: 'Sanders', cs: 'Vibrační brusky', sk: 'Vibračné brúsky', de: 'Schleifmaschinen' },
  { en: 'Hand Tools', cs: 'Ruční nářadí', sk: 'Ručné náradie', de: 'Handwerkzeuge' },
  { en: 'Hammers', cs: 'Kladiva', sk: 'Kladivá', de: 'Hämmer' },
  { en: 'Screwdrivers', cs: 'Šroubováky', sk: 'Skrutkovače', de: 'Schraubendreher' },
  { en: 'Pliers', cs: 'Kleště', sk: 'Kliešte', de: 'Zangen' },
  { en: 'Measuring', cs: 'Měřidla', sk: 'Meradlá', de: 'Messwerkzeuge' },
  { en: 'Garden', cs: 'Zahrada', sk: 'Záhrada', de: 'Garten' },
  { en: 'Lawn Mowers', cs: 'Sekačky', sk: 'Kosačky', de: 'Rasenmäher' },
  { en: 'Watering', cs: 'Zavlažování', sk: 'Zavlažovanie', de: 'Bewässerung' },
  { en: 'Garden Tools', cs: 'Zahradní nářadí', sk: 'Záhradné náradie', de: 'Gartenwerkzeuge' },
  { en: 'Pruning', cs: 'Stříhání a prořezávání', sk: 'Strihanie a prerezávanie', de: 'Schnittwerkzeuge' },
  { en: 'Digging', cs: 'Rýče a motyky', sk: 'Rýle a motyky', de: 'Grabwerkzeuge' },
  { en: 'Outdoor Furniture', cs: 'Zahradní nábytek', sk: 'Záhradný nábytok', de: 'Gartenmöbel' },
  { en: 'Home', cs: 'Domácnost', sk: 'Domácnosť', de: 'Haushalt' },
  { en: 'Lighting', cs: 'Osvětlení', sk: 'Osvetlenie', de: 'Beleuchtung' },
  { en: 'Cleaning', cs: 'Úklid', sk: 'Upratovanie', de: 'Reinigung' },
  { en: 'Kitchen', cs: 'Kuchyně', sk: 'Kuchyňa', de: 'Küche' },
  { en: 'Storage', cs: 'Úložné systémy', sk: 'Úložné systémy', de: 'Aufbewahrung' },
  { en: 'Outdoor & Sports', cs: 'Outdoor a sport', sk: 'Outdoor a šport', de: 'Outdoor & Sport' },
  { en: 'Camping', cs: 'Kempování', sk: 'Kempovanie', de: 'Camping' },
  { en: 'Cycling', cs: 'Cyklistika', sk: 'Cyklistika', de: 'Radsport' },
];

/** Every term in every language, by its lower-cased form in any of them. */
const termIndex = new Map<string, Term>();
for (const term of [...TERMS, ...Object.values(LABELS)]) for (const word of Object.values(term)) if (!termIndex.has(word.toLowerCase())) termIndex.set(word.toLowerCase(), term);

/** The term in `language`, or the store's own wording when the vocabulary does not know it. */
export function term(value: string, language: BuiltinLanguage): string {
  return known(value, language) ?? value;
}

/** The term in `language`, or undefined when the vocabulary does not know it (then the engine leaves it out). */
export function known(value: string, language: BuiltinLanguage): string | undefined {
  return termIndex.get(value.trim().toLowerCase())?.[language];
}

/** Every word of the vocabulary in one language, lower-cased: what a text in that language may use. */
export function vocabularyWords(language: BuiltinLanguage): Set<string> {
  const out = new Set<string>();
  for (const t of [...TERMS, ...Object.values(LABELS)]) for (const w of t[language].toLowerCase().match(/\p{L}+/gu) ?? []) out.add(w);
  return out;
}

/** Every known phrase (any language) with its translations, longest first, for term-by-term translation. */
export function glossary(): Array<{ phrase: string; term: Term }> {
  return [...termIndex.entries()].map(([phrase, t]) => ({ phrase, term: t })).sort((a, b) => b.phrase.length - a.phrase.length);
}
