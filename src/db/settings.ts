import type { Executor } from './database.ts';

export async function getSetting(db: Executor, key: string): Promise<string | undefined> {
  const row = await db.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirst();
  return row?.value;
}

export async function setSetting(db: Executor, key: string, value: string): Promise<void> {
  await db.insertInto('settings').values({ key, value }).onConflict((oc) => oc.column('key').doUpdateSet({ value })).execute();
}

/** Reads a setting, creating it with `make()` if absent; concurrent nodes agree on the first one written. */
export async function ensureSetting(db: Executor, key: string, make: () => string): Promise<{ value: string; created: boolean }> {
  const existing = await getSetting(db, key);
  if (existing !== undefined) return { value: existing, created: false };
  const value = make();
  await db.insertInto('settings').values({ key, value }).onConflict((oc) => oc.column('key').doNothing()).execute();
  const stored = (await getSetting(db, key))!;
  return { value: stored, created: stored === value };
}
