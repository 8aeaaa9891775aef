import type { Use, View } from './view.ts';
import type { ParamKey } from './vocabulary.ts';

/**
 * One language's phrase bank. Every entry with several variants is a list the composer picks from, so the
 * same product reads differently per task and per seed. Sentences are built so that no word has to agree
 * with the product name's grammatical gender or case (colon lists, verb clauses, fixed nouns).
 */
export interface Phrases {
  /** An opening sentence of a description; it names the product. */
  openings: Array<(v: View) => string>;
  /** Verb clauses about measurable facts ("weighs 1.2 kg"), joined into one sentence by `clauseSentence`. */
  clauses: Partial<Record<ParamKey, (value: string) => string>>;
  clauseSentence: (joined: string) => string;
  /** "Key specifications: weight 1.2 kg, power 750 W." */
  specList: Array<(list: string) => string>;
  /** Parameters the vocabulary does not know. */
  otherList: (list: string) => string;
  material: Array<(m: string) => string>;
  colour: Array<(c: string) => string>;
  powerSource: Array<(v: View) => string>;
  use: Record<Use, string[]>;
  warranty: Array<(w: string) => string>;
  origin: Array<(o: string) => string>;
  closings: string[];
  /** Candidates for an SEO title; the composer takes the first (in seeded order) that fits 60 characters. */
  seoTitles: Array<(v: View) => string | undefined>;
  /** Parts of an SEO description, dropped from the end while it is longer than 160 characters. */
  seoLeads: Array<(v: View) => string>;
  seoOffers: Array<(v: View) => string>;
  /** A one- or two-sentence summary; `facts` lists the main specifications ('' when there are none), `stock` is from `stock`. */
  summaries: Array<(v: View, facts: string, stock: string) => string>;
  stock: (v: View) => string;
}

export const capitalise = (s: string): string => (s ? s[0].toLocaleUpperCase() + s.slice(1) : s);
