import { capitalise, type Phrases } from '../phrases.ts';
import type { View } from '../view.ts';

const od = (v: View): string => (v.brand && !v.brandInName ? ` od značky ${v.brand}` : '');
const FOR: Record<string, string> = { hobby: 'domácich majstrov', professional: 'profesionálov', industrial: 'náročnú priemyselnú prevádzku' };

const POWER: Record<string, string> = {
  battery: 'Vďaka napájaniu z akumulátora vás nebude obmedzovať žiadny kábel.',
  mains: 'Napájanie zo siete zaisťuje stály výkon.',
  petrol: 'Benzínový motor poskytuje dostatok výkonu aj ďaleko od zásuvky.',
  manual: 'Funguje ručne – bez batérie a bez kábla.',
  solar: 'Energiu čerpá zo slnka.',
};

export const sk: Phrases = {
  openings: [
    (v) => `${v.name}${od(v)} je spoľahlivou voľbou${v.category ? ` v kategórii ${v.category}` : ' na každodennú prácu'}.`,
    (v) => `Predstavujeme ${v.name}${od(v)} – ${v.use ? `pomocníka pre ${FOR[v.use]}` : 'spoľahlivého pomocníka'}${v.category ? ` z kategórie ${v.category}` : ''}.`,
    (v) => `Hľadáte spoľahlivé vybavenie${v.category ? ` z kategórie ${v.category}` : ''}? ${v.name}${od(v)} vám prácu uľahčí.`,
  ],
  clauses: {
    weight: (x) => `váži ${x}`,
    power: (x) => `má príkon ${x}`,
    voltage: (x) => `pracuje s napätím ${x}`,
    battery: (x) => `má akumulátor s kapacitou ${x}`,
    length: (x) => `meria ${x}`,
    noise: (x) => `má hlučnosť ${x}`,
  },
  clauseSentence: (joined) => `${capitalise(joined)}.`,
  specList: [(list) => `Hlavné parametre: ${list}.`, (list) => `V skratke: ${list}.`],
  otherList: (list) => `Ďalšie parametre: ${list}.`,
  material: [(m) => `Hlavným materiálom je ${m}.`, (m) => `Materiál: ${m}.`],
  colour: [(c) => `Farebné vyhotovenie: ${c}.`, (c) => `Farba: ${c}.`],
  powerSource: [(v) => POWER[v.powerSourceKey ?? ''] ?? `Napájanie: ${v.powerSource}.`, (v) => `Napájanie: ${v.powerSource}.`],
  use: {
    hobby: ['Ideálne pre domácich majstrov.', 'Určené na hobby použitie.'],
    professional: ['Určené na profesionálne použitie deň čo deň.', 'Vyrobené pre profesionálov.'],
    industrial: ['Určené na priemyselné použitie a veľkú záťaž.', 'Zvládne aj náročnú priemyselnú prevádzku.'],
  },
  warranty: [(w) => `Záruka ${w}.`, (w) => `Na výrobok sa vzťahuje záruka ${w}.`],
  origin: [(o) => `Krajina pôvodu: ${o}.`, (o) => `Pôvod: ${o}.`],
  closings: ['Objednajte ešte dnes a pustite sa do práce.', 'Vložte do košíka a začnite.', 'Múdry nákup do dielne aj domácnosti.'],
  seoTitles: [
    (v) => (v.category ? `${v.name} | ${v.category}` : undefined),
    (v) => (v.specs[0] ? `${v.name} – ${v.specs[0].value}` : undefined),
    (v) => `${v.name} – kúpiť online`,
    (v) => (v.brand && !v.brandInName ? `${v.name} | ${v.brand}` : undefined),
  ],
  seoLeads: [
    (v) => `Kúpte ${v.name}${od(v)} online.`,
    (v) => `${v.name}${od(v)}${v.category ? ` – ${v.category}` : ''}.`,
    (v) => `Objavte ${v.name}${od(v)}.`,
  ],
  seoOffers: [(v) => `Cena ${v.price}${v.inStock ? ', na sklade' : ''}.`, (v) => `Teraz za ${v.price}${v.inStock ? ', ihneď na odoslanie' : ''}.`],
  summaries: [
    (v, facts, stock) => `${v.name}${v.category ? ` (${v.category}${v.brand && !v.brandInName ? `, ${v.brand}` : ''})` : od(v)}${facts ? `: ${facts}` : ''}. Cena ${v.price}, ${stock}.`,
    (v, facts, stock) => `${v.name}${od(v)}${facts ? ` v skratke: ${facts}` : ` patrí do kategórie ${v.category ?? 'nášho sortimentu'}`}. Cena: ${v.price} (${stock}).`,
  ],
  stock: (v) => (v.inStock ? `na sklade ${v.stock} ks` : 'momentálne nie je na sklade'),
};
