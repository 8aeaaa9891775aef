import { sql } from 'kysely';
import type { Dialect, Executor } from '../db/database.ts';

/** A text names few brands; this bounds a pathological one. */
const MAX_NAMES = 100;

/**
 * The store's brand names that occur in a text (case-insensitively), so that an engine keeps them as written
 * instead of translating "Bohemia Garden" word by word. One scan of the brands table, which is small; product
 * names are recognised from their brand (translate.ts) or from `productId`.
 */
export async function brandNamesIn(db: Executor, dialect: Dialect, text: string): Promise<string[]> {
  const lower = text.toLowerCase();
  const found = dialect === 'postgres' ? sql<number>`strpos(${lower}, name_lc)` : sql<number>`instr(${lower}, name_lc)`;
  const rows = await db.selectFrom('brands').select('name').where(found, '>', 0).limit(MAX_NAMES).execute();
  return rows.map((r) => r.name);
}
