import type { Random } from '../../../seed/random.ts';
import type { Task } from '../../engine.ts';
import { SEO_DESCRIPTION_MAX, SEO_TITLE_MAX } from '../../prompt.ts';
import { chars, clip } from './fit.ts';
import { listFormat } from './intl.ts';
import { capitalise, type Phrases } from './phrases.ts';
import type { View } from './view.ts';
import { LABELS, term } from './vocabulary.ts';

export type ProductTask = Exclude<Task, 'translate'>;

const list = (items: string[], locale: string): string => listFormat(locale).format(items);
const labelled = (v: View, count: number): string => list(v.specs.slice(0, count).map((s) => `${s.label} ${s.value}`), v.locale);
const unique = (texts: string[]): string[] => [...new Set(texts)];

/** The sentences of a description: the opening first, the closing line last. */
function descriptionSentences(v: View, p: Phrases, rng: Random): string[] {
  const sentences = [rng.pick(p.openings)(v)];
  const clauses = v.specs.slice(0, 4).flatMap((s) => (s.key && p.clauses[s.key] ? [p.clauses[s.key]!(s.value)] : []));
  if (clauses.length && rng.chance(0.5)) sentences.push(p.clauseSentence(list(clauses, v.locale)));
  else if (v.specs.length) sentences.push(rng.pick(p.specList)(labelled(v, 4)));
  const details: string[] = [];
  if (v.material) details.push(rng.pick(p.material)(v.material));
  if (v.colour) details.push(rng.pick(p.colour)(v.colour));
  // "Works by hand" says nothing about a spade; the power source matters for what could have another.
  if (v.powerSource && v.powerSourceKey !== 'manual') details.push(rng.pick(p.powerSource)(v));
  if (v.use) details.push(rng.pick(p.use[v.use]));
  sentences.push(...rng.sample(details, details.length));
  if (v.other.length) sentences.push(p.otherList(list(v.other.map((o) => `${o.label}: ${o.value}`), v.locale)));
  if (v.warranty) sentences.push(rng.pick(p.warranty)(v.warranty));
  if (v.origin) sentences.push(rng.pick(p.origin)(v.origin));
  sentences.push(rng.pick(p.closings));
  return sentences;
}

/** The full description, then shorter ones: without the closing line, then dropping sentences from the end; then each opening alone. */
function descriptions(v: View, p: Phrases, rng: Random): string[] {
  const s = descriptionSentences(v, p, rng);
  const out = [s.join(' ')];
  for (let keep = s.length - 1; keep >= 1; keep--) out.push(s.slice(0, keep).join(' '));
  out.push(...p.openings.map((f) => f(v)).sort((a, b) => a.length - b.length));
  return unique(out);
}

function seoTitles(v: View, p: Phrases, rng: Random): string[] {
  const candidates = rng.sample(p.seoTitles, p.seoTitles.length).flatMap((f) => f(v) ?? []).filter((c) => chars(c) <= SEO_TITLE_MAX);
  return unique([...candidates, clip(v.name, SEO_TITLE_MAX)]);
}

function seoDescriptions(v: View, p: Phrases, rng: Random): string[] {
  const lead = rng.pick(p.seoLeads)(v);
  const offer = rng.pick(p.seoOffers)(v);
  const warranty = v.warranty ? rng.pick(p.warranty)(v.warranty) : undefined;
  const out: string[] = [];
  // Richest first; each later option drops what matters least to a searcher.
  for (const specCount of [3, 2, 1, 0]) {
    const specs = specCount && v.specs.length ? `${capitalise(labelled(v, specCount))}.` : undefined;
    for (const parts of [[lead, specs, warranty, offer], [lead, specs, offer], [lead, specs], [lead, offer]]) {
      const text = parts.filter(Boolean).join(' ');
      if (chars(text) <= SEO_DESCRIPTION_MAX) out.push(text);
    }
  }
  out.push(clip(lead, SEO_DESCRIPTION_MAX));
  return unique(out);
}

function summaries(v: View, p: Phrases, rng: Random): string[] {
  const first = rng.pick(p.summaries);
  const out: string[] = [];
  for (const f of [first, ...p.summaries.filter((s) => s !== first)]) {
    for (const count of [4, 3, 2, 1, 0]) out.push(f(v, labelled(v, count), p.stock(v)));
  }
  return unique(out);
}

/**
 * What the built-in engine can write for one task about a product, fullest first: the first is the answer, the
 * others serve a prompt that asks for fewer words.
 */
export function compose(task: ProductTask, v: View, p: Phrases, rng: Random): string[] {
  switch (task) {
    case 'product-description': return descriptions(v, p, rng);
    case 'seo-title': return seoTitles(v, p, rng);
    case 'seo-description': return seoDescriptions(v, p, rng);
    case 'summary': return summaries(v, p, rng);
  }
}

/** The product's facts as "Label: value" lines, the most telling first, for a prompt that asks for bullet points. */
export function factLines(v: View, p: Phrases): string[] {
  const l = v.language;
  const line = (label: string, value: string): string => `${capitalise(label)}: ${value}`;
  const lines = v.specs.map((s) => line(s.label, s.value));
  if (v.material) lines.push(line(LABELS.material[l], v.material));
  if (v.powerSource && v.powerSourceKey !== 'manual') lines.push(line(LABELS.powerSource[l], v.powerSource));
  if (v.use) lines.push(line(LABELS.use[l], term(v.use, l)));
  lines.push(...v.other.map((o) => line(o.label, o.value)));
  if (v.warranty) lines.push(line(LABELS.warranty[l], v.warranty));
  if (v.origin) lines.push(line(LABELS.origin[l], v.origin));
  if (v.colour) lines.push(line(LABELS.colour[l], v.colour));
  if (v.category) lines.push(line(term('category', l), v.category));
  if (v.brand) lines.push(line(term('brand', l), v.brand));
  lines.push(line(term('price', l), v.price), capitalise(p.stock(v)));
  return lines;
}
