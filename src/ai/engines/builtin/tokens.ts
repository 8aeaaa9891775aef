/**
 * The built-in engine's notion of a token: a word (letters, marks and digits) or a single other character,
 * with the whitespace before it. Pieces concatenate back to the exact text, so streaming them loses nothing,
 * and `maxTokens` and `usage` count the same pieces.
 */
const PIECE = /\s*(?:[\p{L}\p{M}\p{N}]+|[^\s\p{L}\p{M}\p{N}])/gu;

export function pieces(text: string): string[] {
  const out: string[] = text.match(PIECE) ?? [];
  const consumed = out.reduce((n, p) => n + p.length, 0);
  if (consumed < text.length) {
    // Only trailing whitespace is left unmatched; keep it with the last piece.
    if (out.length) out[out.length - 1] += text.slice(consumed);
    else out.push(text);
  }
  return out;
}

export const countTokens = (text: string): number => (text.match(PIECE) ?? []).length;
