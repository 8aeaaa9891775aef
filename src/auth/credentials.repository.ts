import type { Executor } from '../db/database.ts';
import type { CredentialTable } from '../db/tables.ts';

export type CredentialRow = Omit<CredentialTable, 'id'> & { id: number };

export const findCredentialByClientId = (db: Executor, clientId: string) =>
  db.selectFrom('credentials').selectAll().where('client_id', '=', clientId).executeTakeFirst() as Promise<CredentialRow | undefined>;

export const findCredential = (db: Executor, id: number) =>
  db.selectFrom('credentials').selectAll().where('id', '=', id).executeTakeFirst() as Promise<CredentialRow | undefined>;

export const listCredentialRows = (db: Executor) =>
  db.selectFrom('credentials').selectAll().orderBy('id').execute() as Promise<CredentialRow[]>;

export async function insertCredential(db: Executor, row: Omit<CredentialRow, 'id'>): Promise<number> {
  const { id } = await db.insertInto('credentials').values(row).returning('id').executeTakeFirstOrThrow();
  return Number(id);
}

export async function updateCredential(db: Executor, id: number, changes: Partial<Omit<CredentialRow, 'id'>>): Promise<boolean> {
  const result = await db.updateTable('credentials').set(changes).where('id', '=', id).executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Sets last_used_at unless it is already at or after `since`: most calls then write (and lock) nothing. */
export async function touchLastUsed(db: Executor, id: number, at: string, since: string): Promise<void> {
  await db.updateTable('credentials').set({ last_used_at: at }).where('id', '=', id)
    .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', since)]))
    .execute();
}

export async function deleteCredentialRow(db: Executor, id: number): Promise<boolean> {
  const result = await db.deleteFrom('credentials').where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export async function insertToken(db: Executor, row: { token_hash: string; credential_id: number; scopes: string; expires_at: string; created_at: string }): Promise<void> {
  await db.insertInto('tokens').values(row).execute();
}

/** A token with the state of its credential, for verification. */
export const findToken = (db: Executor, tokenHash: string) =>
  db
    .selectFrom('tokens as k')
    .innerJoin('credentials as c', 'c.id', 'k.credential_id')
    .select(['k.credential_id', 'k.scopes', 'k.expires_at', 'c.enabled', 'c.client_id'])
    .where('k.token_hash', '=', tokenHash)
    .executeTakeFirst();

export const deleteTokensOf = (db: Executor, credentialId: number) => db.deleteFrom('tokens').where('credential_id', '=', credentialId).execute();

/**
 * Deletes a credential's tokens beyond its `keep` newest (by creation, then hash) and returns their hashes,
 * so that the caller can drop them from its cache too.
 */
export async function deleteTokensBeyond(db: Executor, credentialId: number, keep: number): Promise<string[]> {
  const last = await db.selectFrom('tokens').select(['created_at', 'token_hash']).where('credential_id', '=', credentialId)
    .orderBy('created_at', 'desc').orderBy('token_hash', 'desc').offset(keep - 1).limit(1).executeTakeFirst();
  if (!last) return [];
  const deleted = await db.deleteFrom('tokens').where('credential_id', '=', credentialId)
    .where((eb) => eb.or([eb('created_at', '<', last.created_at), eb.and([eb('created_at', '=', last.created_at), eb('token_hash', '<', last.token_hash)])]))
    .returning('token_hash').execute();
  return deleted.map((r) => r.token_hash);
}

export const deleteExpiredTokens = (db: Executor, nowIso: string) => db.deleteFrom('tokens').where('expires_at', '<', nowIso).executeTakeFirst();
