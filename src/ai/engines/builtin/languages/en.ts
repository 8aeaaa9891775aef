import type { Phrases } from '../phrases.ts';
import type { View } from '../view.ts';

const from = (v: View): string => (v.brand && !v.brandInName ? ` from ${v.brand}` : '');
const grade = (v: View): string => ({ hobby: 'practical', professional: 'professional-grade', industrial: 'heavy-duty' })[v.use ?? 'hobby'] ?? 'dependable';

const POWER: Record<string, string> = {
  battery: 'It runs on battery power, so no cable gets in your way.',
  mains: 'It plugs straight into the mains for steady power.',
  petrol: 'A petrol engine gives it plenty of power away from any socket.',
  manual: 'It works by hand: no battery, no cable, no fuss.',
  solar: 'It draws its power from the sun.',
};

export const en: Phrases = {
  openings: [
    (v) => `The ${v.name}${from(v)} is a ${v.use ? grade(v) : 'dependable'} choice${v.category ? ` in our ${v.category} range` : ' for everyday work'}.`,
    (v) => `${v.brand && !v.brandInName ? `${v.brand} brings you the ${v.name}` : `Meet the ${v.name}`}${v.category ? `, a ${grade(v)} pick from our ${v.category} range` : ''}.`,
    (v) => `Looking for ${v.category ? `something reliable in ${v.category}` : 'a product you can rely on'}? The ${v.name}${from(v)} makes the job easier.`,
  ],
  clauses: {
    weight: (x) => `weighs ${x}`,
    power: (x) => `delivers ${x}`,
    voltage: (x) => `runs on ${x}`,
    battery: (x) => `has a ${x} battery`,
    length: (x) => `measures ${x}`,
    noise: (x) => `operates at ${x}`,
  },
  clauseSentence: (joined) => `It ${joined}.`,
  specList: [(list) => `Key specifications: ${list}.`, (list) => `At a glance: ${list}.`],
  otherList: (list) => `Further details: ${list}.`,
  material: [(m) => `Made of ${m}, it is built to last.`, (m) => `Material: ${m}.`],
  colour: [(c) => `Available in ${c}.`, (c) => `Colour: ${c}.`],
  powerSource: [(v) => POWER[v.powerSourceKey ?? ''] ?? `Power source: ${v.powerSource}.`, (v) => `Power source: ${v.powerSource}.`],
  use: {
    hobby: ['Ideal for DIY projects at home.', 'Designed for hobby use.'],
    professional: ['Designed for professional use, day after day.', 'Built for professionals.'],
    industrial: ['Made for industrial use and heavy workloads.', 'Designed for industrial use.'],
  },
  warranty: [(w) => `It comes with a ${w.replace(/ years?$/, '-year')} warranty.`, (w) => `Backed by a warranty of ${w}.`],
  origin: [(o) => `Made in ${o}.`, (o) => `Country of origin: ${o}.`],
  closings: ['Order today and get the job done.', 'Add it to your cart and get started.', 'A smart buy for workshop and home.'],
  seoTitles: [
    (v) => (v.category ? `${v.name} | ${v.category}` : undefined),
    (v) => (v.specs[0] ? `${v.name} – ${v.specs[0].value}` : undefined),
    (v) => `Buy ${v.name} online`,
    (v) => (v.brand && !v.brandInName ? `${v.name} | ${v.brand}` : undefined),
  ],
  seoLeads: [
    (v) => `Buy the ${v.name}${from(v)} online.`,
    (v) => `${v.name}${from(v)}${v.category ? ` – ${v.category}` : ''}.`,
    (v) => `Discover the ${v.name}${from(v)}.`,
  ],
  seoOffers: [(v) => `${v.price}${v.inStock ? ', in stock' : ''}.`, (v) => `Now ${v.price}${v.inStock ? ', ready to ship' : ''}.`],
  summaries: [
    (v, facts, stock) => `${v.name}${v.category ? ` (${v.category}${v.brand && !v.brandInName ? `, ${v.brand}` : ''})` : from(v)}${facts ? `: ${facts}` : ''}. ${v.price}, ${stock}.`,
    (v, facts, stock) => `The ${v.name}${from(v)}${facts ? ` in brief: ${facts}` : ` is part of our ${v.category ?? 'range'}`}. Price: ${v.price} (${stock}).`,
  ],
  stock: (v) => (v.inStock ? `${v.stock} in stock` : 'currently out of stock'),
};
