import { loose } from './loose.ts';
import type { NaturalKey } from './types.ts';

/** The URL-safe slug of a text: ASCII letters and digits joined by single dashes, at most 80 characters. */
export function slugify(text: string): string {
  return text.normalize('NFKD').replace(/[\u0300-\u036f]/g, '').toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 80) || 'item';
}

const text = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** A natural key of slugged things (brands, categories): the record's slug, or else the slug its name would get. */
export function slugOrNameKey(table: string): NaturalKey {
  return async (w, record) => {
    const slug = text(record.slug) ?? (text(record.name) && slugify(String(record.name)));
    if (slug === undefined) return undefined;
    const row = await loose(w.trx).selectFrom(table).select('id').where('slug', '=', slug).executeTakeFirst();
    return row ? Number(row.id) : undefined;
  };
}
