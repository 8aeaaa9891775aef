import type { Field } from '../listing/resource.ts';

export const idField: Field = { name: 'id', column: 't.id', type: 'id', description: 'Positive integer id.' };
export const createdAtField: Field = { name: 'createdAt', column: 't.created_at', type: 'datetime', description: 'When it was created (RFC 3339, UTC).' };
export const updatedAtField: Field = { name: 'updatedAt', column: 't.updated_at', type: 'datetime', description: 'When it last changed (RFC 3339, UTC).' };

export const PRODUCT_STATUSES = ['active', 'draft', 'archived'] as const;
export const ORDER_STATUSES = ['new', 'paid', 'processing', 'shipped', 'delivered', 'cancelled', 'returned'] as const;
