/** Every scope a credential can hold, with what it grants (API.md §1). */
export const SCOPES = {
  'products:read': 'Read products',
  'categories:read': 'Read categories',
  'brands:read': 'Read brands',
  'product-parameters:read': 'Read product parameter values',
  'product-filters:read': 'Read product filter values',
  'orders:read': 'Read orders',
  'ai:generate': 'Generate text',
  'changes:read': 'Read the changes feed (events of resources the credential can also read)',
} as const;

export type Scope = keyof typeof SCOPES;

export const ALL_SCOPES = Object.keys(SCOPES) as Scope[];

export const isScope = (value: string): value is Scope => Object.hasOwn(SCOPES, value);

/** Parses a space- or comma-separated scope list; returns the unknown entries separately. */
export function parseScopes(raw: string): { scopes: Scope[]; unknown: string[] } {
  const parts = [...new Set(raw.split(/[\s,]+/).filter(Boolean))];
  return { scopes: parts.filter(isScope), unknown: parts.filter((p) => !isScope(p)) };
}
