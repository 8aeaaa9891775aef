import type { Executor } from '../db/database.ts';

/** A console session as stored: only the keyed hash of its id. */
export interface SessionRow {
  id_hash: string;
  created_at: string;
  expires_at: string;
}

export async function insertSession(db: Executor, row: SessionRow): Promise<void> {
  await db.insertInto('console_sessions').values(row).execute();
}

/** The session if it has not expired by `now`. */
export const findLiveSession = (db: Executor, idHash: string, now: string) =>
  db.selectFrom('console_sessions').selectAll().where('id_hash', '=', idHash).where('expires_at', '>', now).executeTakeFirst() as Promise<SessionRow | undefined>;

export async function extendSession(db: Executor, idHash: string, expiresAt: string): Promise<void> {
  await db.updateTable('console_sessions').set({ expires_at: expiresAt }).where('id_hash', '=', idHash).execute();
}

export async function deleteSession(db: Executor, idHash: string): Promise<void> {
  await db.deleteFrom('console_sessions').where('id_hash', '=', idHash).execute();
}

export async function deleteExpiredSessions(db: Executor, now: string): Promise<number> {
  const result = await db.deleteFrom('console_sessions').where('expires_at', '<=', now).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Deletes all but the `keep` newest sessions: sign-ins cannot make the table grow without end. */
export async function deleteSessionsBeyond(db: Executor, keep: number): Promise<void> {
  const last = await db.selectFrom('console_sessions').select(['created_at', 'id_hash']).orderBy('created_at', 'desc').orderBy('id_hash', 'desc')
    .offset(keep - 1).limit(1).executeTakeFirst();
  if (!last) return;
  await db.deleteFrom('console_sessions')
    .where((eb) => eb.or([eb('created_at', '<', last.created_at), eb.and([eb('created_at', '=', last.created_at), eb('id_hash', '<', last.id_hash)])]))
    .execute();
}
