import { RESOURCES } from '../../modules/registry.ts';

/** Every event type the store records: the changes feed's, plus order.status_changed. */
export const EVENT_TYPES: readonly string[] = [
  ...RESOURCES.flatMap((r) => ['created', 'updated', 'deleted'].map((action) => `${r.event}.${action}`)),
  'order.status_changed',
];

export const PATTERN = '^[a-z*][a-z0-9_.*-]{0,99}$';

/** `*` stands for any run of characters: `*`, `order.*`, `*.deleted`; anything else is an exact name. */
export function patternRegex(pattern: string): RegExp {
  return new RegExp(`^${pattern.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\-]/g, '\\$&')).join('.*')}$`);
}

/** A compiled subscription filter. */
export function eventMatcher(patterns: readonly string[]): (type: string) => boolean {
  const regexes = patterns.map(patternRegex);
  return (type) => regexes.some((r) => r.test(type));
}

/** Patterns that match no event type the store records (most likely typos). */
export function unknownPatterns(patterns: readonly string[]): string[] {
  return patterns.filter((p) => !EVENT_TYPES.some((type) => patternRegex(p).test(type)));
}

/** Parses `'order.*, product.updated'` or a list into distinct trimmed patterns. */
export function parsePatterns(raw: string | readonly string[]): string[] {
  const parts = typeof raw === 'string' ? raw.split(',') : raw;
  return [...new Set(parts.map((p) => p.trim()).filter(Boolean))];
}
