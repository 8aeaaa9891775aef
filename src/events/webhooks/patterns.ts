import { appRegistry } from '../../modules/registry.ts';

/** Every event type the store's own resources record (the registry's catalogue; a context carries `ctx.resources.eventTypes`). */
export const EVENT_TYPES: readonly string[] = appRegistry().eventTypes;

/** The characters and length a pattern may have (also the admin API's JSON Schema `pattern`). */
export const PATTERN = '^[a-z*][a-z0-9_.*-]{0,99}$';
const PATTERN_RE = new RegExp(PATTERN);
/** More wildcards than this say nothing an event type of two words needs, and only make matching work. */
export const MAX_WILDCARDS = 8;
/** Patterns per subscription (the admin API's `maxItems`; the CLI's comma list is held to it too). */
export const MAX_PATTERNS = 50;

/** Why a pattern is refused at subscribe time, or undefined when it is well formed. */
export function patternProblem(pattern: string): string | undefined {
  if (!PATTERN_RE.test(pattern)) return `has a malformed pattern "${pattern.slice(0, 100)}" (lower-case letters, digits, _ . - and *, at most 100 characters)`;
  const wildcards = pattern.split('*').length - 1;
  if (wildcards > MAX_WILDCARDS) return `has a pattern with ${wildcards} wildcards "${pattern}" (at most ${MAX_WILDCARDS})`;
  return undefined;
}

/**
 * Whether `type` matches `pattern`, where `*` stands for any run of characters (`*`, `order.*`, `*.deleted`)
 * and anything else is literal. Hand-written, not a regex: `.*` groups backtrack exponentially on a pattern
 * like `*` × 30 + `x`. This greedy scan keeps only the last `*` to fall back to, so it does at most
 * pattern × type steps whatever the pattern (patterns saved before validation existed included).
 */
export function matchesPattern(pattern: string, type: string): boolean {
  let p = 0;
  let t = 0;
  let star = -1; // the last `*` seen in the pattern
  let resume = 0; // where in `type` that `*` is tried to end next
  while (t < type.length) {
    if (p < pattern.length && pattern[p] === '*') {
      star = p++;
      resume = t;
    } else if (p < pattern.length && pattern[p] === type[t]) {
      p++;
      t++;
    } else if (star >= 0) {
      // The characters since the last `*` did not match here: let that `*` take one more character.
      p = star + 1;
      t = ++resume;
    } else return false;
  }
  while (p < pattern.length && pattern[p] === '*') p++;
  return p === pattern.length;
}

/** A compiled subscription filter. */
export function eventMatcher(patterns: readonly string[]): (type: string) => boolean {
  return (type) => patterns.some((p) => matchesPattern(p, type));
}

/** Patterns that match no event type the store records (most likely typos). */
export function unknownPatterns(patterns: readonly string[], eventTypes: readonly string[] = EVENT_TYPES): string[] {
  return patterns.filter((p) => !eventTypes.some((type) => matchesPattern(p, type)));
}

/** Parses `'order.*, product.updated'` or a list into distinct trimmed patterns. */
export function parsePatterns(raw: string | readonly string[]): string[] {
  const parts = typeof raw === 'string' ? raw.split(',') : raw;
  return [...new Set(parts.map((p) => p.trim()).filter(Boolean))];
}
