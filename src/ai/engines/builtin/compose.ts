import type { Random } from '../../../seed/random.ts';
import type { Task } from '../../engine.ts';
import { SEO_DESCRIPTION_MAX, SEO_TITLE_MAX } from '../../prompt.ts';
import { chars, clip } from './fit.ts';
import { listFormat } from './intl.ts';
import { capitalise, type Phrases } from './phrases.ts';
import type { View } from './view.ts';

type ProductTask = Exclude<Task, 'translate'>;

const list = (items: string[], locale: string): string => listFormat(locale).format(items);
const labelled = (v: View, count: number): string => list(v.specs.slice(0, count).map((s) => `${s.label} ${s.value}`), v.locale);

function description(v: View, p: Phrases, rng: Random): string {
  const sentences = [rng.pick(p.openings)(v)];
  const clauses = v.specs.slice(0, 4).flatMap((s) => (s.key && p.clauses[s.key] ? [p.clauses[s.key]!(s.value)] : []));
  if (clauses.length && rng.chance(0.5)) sentences.push(p.clauseSentence(list(clauses, v.locale)));
  else if (v.specs.length) sentences.push(rng.pick(p.specList)(labelled(v, 4)));
  const details: string[] = [];
  if (v.material) details.push(rng.pick(p.material)(v.material));
  if (v.colour) details.push(rng.pick(p.colour)(v.colour));
  if (v.powerSource) details.push(rng.pick(p.powerSource)(v));
  if (v.use) details.push(rng.pick(p.use[v.use]));
  sentences.push(...rng.sample(details, details.length));
  if (v.other.length) sentences.push(p.otherList(list(v.other.map((o) => `${o.label}: ${o.value}`), v.locale)));
  if (v.warranty) sentences.push(rng.pick(p.warranty)(v.warranty));
  if (v.origin) sentences.push(rng.pick(p.origin)(v.origin));
  sentences.push(rng.pick(p.closings));
  return sentences.join(' ');
}

function seoTitle(v: View, p: Phrases, rng: Random): string {
  const candidates = rng.sample(p.seoTitles, p.seoTitles.length).flatMap((f) => f(v) ?? []);
  return candidates.find((c) => chars(c) <= SEO_TITLE_MAX) ?? clip(v.name, SEO_TITLE_MAX);
}

function seoDescription(v: View, p: Phrases, rng: Random): string {
  const lead = rng.pick(p.seoLeads)(v);
  const offer = rng.pick(p.seoOffers)(v);
  const warranty = v.warranty ? rng.pick(p.warranty)(v.warranty) : undefined;
  // Richest first; each later option drops what matters least to a searcher.
  for (const specCount of [3, 2, 1, 0]) {
    const specs = specCount && v.specs.length ? `${capitalise(labelled(v, specCount))}.` : undefined;
    for (const parts of [[lead, specs, warranty, offer], [lead, specs, offer], [lead, specs]]) {
      const text = parts.filter(Boolean).join(' ');
      if (chars(text) <= SEO_DESCRIPTION_MAX) return text;
    }
  }
  return clip(lead, SEO_DESCRIPTION_MAX);
}

function summary(v: View, p: Phrases, rng: Random): string {
  return rng.pick(p.summaries)(v, labelled(v, 4), p.stock(v));
}

/** Writes one task's text about a product from its localised view. */
export function compose(task: ProductTask, v: View, p: Phrases, rng: Random): string {
  switch (task) {
    case 'product-description': return description(v, p, rng);
    case 'seo-title': return seoTitle(v, p, rng);
    case 'seo-description': return seoDescription(v, p, rng);
    case 'summary': return summary(v, p, rng);
  }
}
