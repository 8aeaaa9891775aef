import type { Executor } from './database.ts';

export async function getSetting(db: Executor, key: string): Promise<string | undefined> {
  const row = await db.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirst();
  return row?.value;
}

export async function setSetting(db: Executor, key: string, value: string): Promise<void> {
  await db.insertInto('settings').values({ key, value }).onConflict((oc) => oc.column('key').doUpdateSet({ value })).execute();
}

/**
 * Reads a setting, creating it with `make()` if absent. Concurrent nodes agree on the first one written, and
 * exactly one of them learns that it created it: the insert itself decides (it returns a row only when it
 * wrote one), rather than a comparison afterwards.
 */
export async function ensureSetting(db: Executor, key: string, make: () => string): Promise<{ value: string; created: boolean }> {
  const existing = await getSetting(db, key);
  if (existing !== undefined) return { value: existing, created: false };
  const value = make();
  const inserted = await db.insertInto('settings').values({ key, value }).onConflict((oc) => oc.column('key').doNothing()).returning('value').executeTakeFirst();
  if (inserted) return { value, created: true };
  const stored = await getSetting(db, key);
  if (stored === undefined) throw new Error(`Setting ${key} was neither inserted nor found`);
  return { value: stored, created: false };
}
