import type { Phrases } from '../phrases.ts';
import type { View } from '../view.ts';

const von = (v: View): string => (v.brand && !v.brandInName ? ` von ${v.brand}` : '');
const KIND: Record<string, string> = { hobby: 'praktischen', professional: 'professionellen', industrial: 'robusten' };

const POWER: Record<string, string> = {
  battery: 'Dank Akkubetrieb stört kein Kabel.',
  mains: 'Der Netzanschluss sorgt für konstante Leistung.',
  petrol: 'Ein Benzinmotor liefert viel Leistung, auch fernab jeder Steckdose.',
  manual: 'Funktioniert ganz ohne Strom, rein von Hand.',
  solar: 'Die Energie kommt von der Sonne.',
};

export const de: Phrases = {
  openings: [
    (v) => `${v.name}${von(v)}: eine zuverlässige Wahl${v.category ? ` in der Kategorie ${v.category}` : ' für den Alltag'}.`,
    (v) => `Mit ${v.name}${von(v)} holen Sie sich einen ${v.use ? KIND[v.use] : 'zuverlässigen'} Helfer${v.category ? ` aus der Kategorie ${v.category}` : ''}.`,
    (v) => `Sie suchen zuverlässige Ausrüstung${v.category ? ` aus der Kategorie ${v.category}` : ''}? ${v.name}${von(v)} erleichtert Ihnen die Arbeit.`,
  ],
  clauses: {
    weight: (x) => `wiegt ${x}`,
    power: (x) => `leistet ${x}`,
    voltage: (x) => `arbeitet mit ${x}`,
    battery: (x) => `hat einen Akku mit ${x}`,
    length: (x) => `ist ${x} lang`,
    noise: (x) => `erreicht einen Geräuschpegel von ${x}`,
  },
  clauseSentence: (joined) => `Das Produkt ${joined}.`,
  specList: [(list) => `Die wichtigsten Daten: ${list}.`, (list) => `Auf einen Blick: ${list}.`],
  otherList: (list) => `Weitere Merkmale: ${list}.`,
  material: [(m) => `Das Hauptmaterial ist ${m}.`, (m) => `Material: ${m}.`],
  colour: [(c) => `Erhältlich in der Farbe ${c}.`, (c) => `Farbe: ${c}.`],
  powerSource: [(v) => POWER[v.powerSourceKey ?? ''] ?? `Energiequelle: ${v.powerSource}.`, (v) => `Energiequelle: ${v.powerSource}.`],
  use: {
    hobby: ['Ideal für Heimwerker.', 'Für den Hobbybereich gemacht.'],
    professional: ['Für den professionellen Einsatz, Tag für Tag.', 'Gemacht für Profis.'],
    industrial: ['Für den industriellen Einsatz und hohe Belastung.', 'Hält auch dem Industriealltag stand.'],
  },
  warranty: [(w) => `Garantie: ${w}.`, (w) => `Sie erhalten ${w} Garantie.`],
  origin: [(o) => `Hergestellt in ${o}.`, (o) => `Herkunftsland: ${o}.`],
  closings: ['Jetzt bestellen und direkt loslegen.', 'Gleich in den Warenkorb legen.', 'Eine lohnende Anschaffung für Werkstatt und Haushalt.'],
  seoTitles: [
    (v) => (v.category ? `${v.name} | ${v.category}` : undefined),
    (v) => (v.specs[0] ? `${v.name} – ${v.specs[0].value}` : undefined),
    (v) => `${v.name} online kaufen`,
    (v) => (v.brand && !v.brandInName ? `${v.name} | ${v.brand}` : undefined),
  ],
  seoLeads: [
    (v) => `${v.name}${von(v)} online kaufen.`,
    (v) => `${v.name}${von(v)}${v.category ? ` – ${v.category}` : ''}.`,
    (v) => `Entdecken Sie ${v.name}${von(v)}.`,
  ],
  seoOffers: [(v) => `Jetzt für ${v.price}${v.inStock ? ', sofort lieferbar' : ''}.`, (v) => `Preis: ${v.price}${v.inStock ? ', auf Lager' : ''}.`],
  summaries: [
    (v, facts, stock) => `${v.name}${v.category ? ` (${v.category}${v.brand && !v.brandInName ? `, ${v.brand}` : ''})` : von(v)}${facts ? `: ${facts}` : ''}. ${v.price}, ${stock}.`,
    (v, facts, stock) => `${v.name}${von(v)}${facts ? ` – die Eckdaten: ${facts}` : ` gehört zur Kategorie ${v.category ?? 'unseres Sortiments'}`}. Preis: ${v.price} (${stock}).`,
  ],
  stock: (v) => (v.inStock ? `${v.stock} Stück auf Lager` : 'derzeit nicht auf Lager'),
};
