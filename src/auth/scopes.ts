import { appRegistry } from '../modules/registry.ts';
import type { Registry } from '../resources/registry.ts';
import type { ReadScope } from '../resources/types.ts';

/** A scope a credential can hold: the read scope of a collection, or one of the two that no collection has. */
export type Scope = ReadScope | 'ai:generate' | 'changes:read';

/** Scopes that belong to no collection (API.md §1). */
const OTHER_SCOPES = {
  'ai:generate': 'Generate text',
  'changes:read': 'Read the changes feed (events of resources the credential can also read)',
} as const;

/** Every scope of a store, with what it grants: each collection's read scope (from the registry), then the others. */
export function scopeCatalogue(resources: Registry): Readonly<Record<Scope, string>> {
  return { ...Object.fromEntries(resources.scopes.map((s) => [s.scope, s.description])), ...OTHER_SCOPES } as Record<Scope, string>;
}

/** The catalogue of the store's own resources (the console and CLI list it; the app reads `scopeCatalogue(ctx.resources)`). */
export const SCOPES = scopeCatalogue(appRegistry());

export const ALL_SCOPES = Object.keys(SCOPES) as Scope[];

export const isScope = (value: string, catalogue: Readonly<Record<string, string>> = SCOPES): value is Scope => Object.hasOwn(catalogue, value);

/** Parses a space- or comma-separated scope list; returns the unknown entries separately. */
export function parseScopes(raw: string, catalogue: Readonly<Record<string, string>> = SCOPES): { scopes: Scope[]; unknown: string[] } {
  const parts = [...new Set(raw.split(/[\s,]+/).filter(Boolean))];
  return { scopes: parts.filter((p) => isScope(p, catalogue)), unknown: parts.filter((p) => !isScope(p, catalogue)) };
}
