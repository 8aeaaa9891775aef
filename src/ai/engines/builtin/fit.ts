/** Length in characters as people count them (code points, so "č" is one). */
export const chars = (s: string): number => [...s].length;

/** Cuts `text` to at most `max` characters at a word boundary, marking the cut with "…". */
export function clip(text: string, max: number): string {
  const cps = [...text.trim()];
  if (cps.length <= max) return cps.join('');
  const head = cps.slice(0, max - 1).join('');
  const space = head.search(/\s+\S*$/);
  const cut = (space > max / 2 ? head.slice(0, space) : head).replace(/[\s,;:–-]+$/u, '');
  return `${cut}…`;
}

// A word: letters and digits, with inner apostrophes, points, commas and hyphens ("1,2", "don't", "Z-285").
const WORD = /[\p{L}\p{N}]+(?:['’.,-][\p{L}\p{N}]+)*/gu;

/** The words of a text, as a reader counts them ("max 30 words"). */
export const wordsOf = (text: string): string[] => text.match(WORD) ?? [];
export const countWords = (text: string): number => wordsOf(text).length;
