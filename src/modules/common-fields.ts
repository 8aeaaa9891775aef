import type { FieldDeclaration } from '../resources/types.ts';

export const idField: FieldDeclaration = { name: 'id', column: 'id', type: 'id', description: 'Positive integer id.' };
export const createdAtField: FieldDeclaration = { name: 'createdAt', column: 'created_at', type: 'datetime', description: 'When it was created (RFC 3339, UTC).' };
export const updatedAtField: FieldDeclaration = { name: 'updatedAt', column: 'updated_at', type: 'datetime', description: 'When it last changed (RFC 3339, UTC).' };

export const PRODUCT_STATUSES = ['active', 'draft', 'archived'] as const;
export const ORDER_STATUSES = ['new', 'paid', 'processing', 'shipped', 'delivered', 'cancelled', 'returned'] as const;

/**
 * Bounds of integer inputs. Ids are bigint in PostgreSQL but must also survive JSON (2^53); counts and
 * positions are 32-bit integer columns. A number past them would fail in the database as a 500.
 */
export const ID_BOUNDS = { minimum: 1, maximum: Number.MAX_SAFE_INTEGER } as const;
export const INT32_BOUNDS = { minimum: -2_147_483_648, maximum: 2_147_483_647 } as const;

/** A URL-safe slug as an input. */
export const slugInput = (maxLength: number) => ({ type: 'string', pattern: '^[a-z0-9]+(-[a-z0-9]+)*$', maxLength });
