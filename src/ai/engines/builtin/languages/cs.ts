import { capitalise, type Phrases } from '../phrases.ts';
import type { View } from '../view.ts';

const od = (v: View): string => (v.brand && !v.brandInName ? ` od značky ${v.brand}` : '');
const FOR: Record<string, string> = { hobby: 'domácí kutily', professional: 'profesionály', industrial: 'náročný průmyslový provoz' };

const POWER: Record<string, string> = {
  battery: 'Díky napájení z akumulátoru vás nebude omezovat žádný kabel.',
  mains: 'Napájení ze sítě zajišťuje stálý výkon.',
  petrol: 'Benzínový motor poskytuje dostatek výkonu i daleko od zásuvky.',
  manual: 'Funguje ručně – bez baterie a bez kabelu.',
  solar: 'Energii čerpá ze slunce.',
};

export const cs: Phrases = {
  openings: [
    (v) => `${v.name}${od(v)} je spolehlivou volbou${v.category ? ` v kategorii ${v.category}` : ' pro každodenní práci'}.`,
    (v) => `Představujeme ${v.name}${od(v)} – ${v.use ? `pomocníka pro ${FOR[v.use]}` : 'spolehlivého pomocníka'}${v.category ? ` z kategorie ${v.category}` : ''}.`,
    (v) => `Hledáte spolehlivé vybavení${v.category ? ` z kategorie ${v.category}` : ''}? ${v.name}${od(v)} vám práci usnadní.`,
  ],
  clauses: {
    weight: (x) => `váží ${x}`,
    power: (x) => `má příkon ${x}`,
    voltage: (x) => `pracuje s napětím ${x}`,
    battery: (x) => `má akumulátor s kapacitou ${x}`,
    length: (x) => `měří ${x}`,
    noise: (x) => `má hlučnost ${x}`,
  },
  clauseSentence: (joined) => `${capitalise(joined)}.`,
  specList: [(list) => `Hlavní parametry: ${list}.`, (list) => `V kostce: ${list}.`],
  otherList: (list) => `Další parametry: ${list}.`,
  material: [(m) => `Hlavním materiálem je ${m}.`, (m) => `Materiál: ${m}.`],
  colour: [(c) => `Barevné provedení: ${c}.`, (c) => `Barva: ${c}.`],
  powerSource: [(v) => POWER[v.powerSourceKey ?? ''] ?? `Napájení: ${v.powerSource}.`, (v) => `Napájení: ${v.powerSource}.`],
  use: {
    hobby: ['Ideální pro domácí kutily.', 'Určeno pro hobby použití.'],
    professional: ['Určeno pro profesionální použití den co den.', 'Vyrobeno pro profesionály.'],
    industrial: ['Určeno pro průmyslové použití a velkou zátěž.', 'Zvládne i náročný průmyslový provoz.'],
  },
  warranty: [(w) => `Záruka ${w}.`, (w) => `Na výrobek se vztahuje záruka ${w}.`],
  origin: [(o) => `Země původu: ${o}.`, (o) => `Původ: ${o}.`],
  closings: ['Objednejte ještě dnes a pusťte se do práce.', 'Vložte do košíku a začněte.', 'Chytrý nákup pro dílnu i domácnost.'],
  seoTitles: [
    (v) => (v.category ? `${v.name} | ${v.category}` : undefined),
    (v) => (v.specs[0] ? `${v.name} – ${v.specs[0].value}` : undefined),
    (v) => `${v.name} – koupit online`,
    (v) => (v.brand && !v.brandInName ? `${v.name} | ${v.brand}` : undefined),
  ],
  seoLeads: [
    (v) => `Kupte ${v.name}${od(v)} online.`,
    (v) => `${v.name}${od(v)}${v.category ? ` – ${v.category}` : ''}.`,
    (v) => `Objevte ${v.name}${od(v)}.`,
  ],
  seoOffers: [(v) => `Cena ${v.price}${v.inStock ? ', skladem' : ''}.`, (v) => `Nyní za ${v.price}${v.inStock ? ', ihned k odeslání' : ''}.`],
  summaries: [
    (v, facts, stock) => `${v.name}${v.category ? ` (${v.category}${v.brand && !v.brandInName ? `, ${v.brand}` : ''})` : od(v)}${facts ? `: ${facts}` : ''}. Cena ${v.price}, ${stock}.`,
    (v, facts, stock) => `${v.name}${od(v)}${facts ? ` v kostce: ${facts}` : ` patří do kategorie ${v.category ?? 'našeho sortimentu'}`}. Cena: ${v.price} (${stock}).`,
  ],
  stock: (v) => (v.inStock ? `skladem ${v.stock} ks` : 'momentálně není skladem'),
};
