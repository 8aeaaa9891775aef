import type { FieldDeclaration } from '../resources/types.ts';

export const idField: FieldDeclaration = { name: 'id', column: 'id', type: 'id', description: 'Positive integer id.' };
export const createdAtField: FieldDeclaration = { name: 'createdAt', column: 'created_at', type: 'datetime', description: 'When it was created (RFC 3339, UTC).' };
export const updatedAtField: FieldDeclaration = { name: 'updatedAt', column: 'updated_at', type: 'datetime', description: 'When it last changed (RFC 3339, UTC).' };

export const PRODUCT_STATUSES = ['active', 'draft', 'archived'] as const;
export const ORDER_STATUSES = ['new', 'paid', 'processing', 'shipped', 'delivered', 'cancelled', 'returned'] as const;

export { ID_BOUNDS, INT32_BOUNDS } from '../resources/bounds.ts';

/** A URL-safe slug as an input. */
export const slugInput = (maxLength: number) => ({ type: 'string', pattern: '^[a-z0-9]+(-[a-z0-9]+)*$', maxLength });
