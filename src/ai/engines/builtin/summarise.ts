import { sentenceSegmenter } from './intl.ts';

/** The sentences of a text, whitespace made single. */
export function sentencesOf(text: string, locale: string): string[] {
  return [...sentenceSegmenter(locale).segment(text)].map((s) => s.segment.replace(/\s+/g, ' ').trim()).filter(Boolean);
}

/** How many sentences a summary keeps unless asked: about a third, one to three. */
export const defaultLength = (sentences: number): number => Math.min(3, Math.max(1, Math.round(sentences / 3)));

/**
 * An extractive summary: the `keep` sentences that carry the text's most frequent content words, in their
 * original order. It writes nothing the text does not say, which is what an offline engine can honestly do.
 */
export function extract(text: string, locale: string, keep?: number): string[] {
  const sentences = sentencesOf(text, locale);
  const count = keep ?? defaultLength(sentences.length);
  if (sentences.length <= count) return sentences;
  const words = (s: string): string[] => (s.toLocaleLowerCase(locale).match(/[\p{L}\p{N}]{4,}/gu) ?? []);
  const frequency = new Map<string, number>();
  for (const s of sentences) for (const w of new Set(words(s))) frequency.set(w, (frequency.get(w) ?? 0) + 1);
  const scored = sentences.map((s, i) => {
    const ws = words(s);
    const weight = ws.reduce((sum, w) => sum + (frequency.get(w) ?? 0), 0) / Math.sqrt(ws.length || 1);
    // The opening sentence usually says what the text is about.
    return { i, score: weight * (i === 0 ? 1.5 : 1) };
  });
  const chosen = scored.sort((a, b) => b.score - a.score || a.i - b.i).slice(0, count).sort((a, b) => a.i - b.i);
  return chosen.map((c) => sentences[c.i]);
}

export function summarise(text: string, locale: string, keep?: number): string {
  return extract(text, locale, keep).join(' ');
}
