import type { Executor } from '../db/database.ts';
import { nowIso } from '../db/database.ts';
import { ensureSetting } from '../db/settings.ts';
import { AppError, notFound } from '../errors/app-error.ts';
import * as repo from './credentials.repository.ts';
import { parseScopes, type Scope } from './scopes.ts';
import { keyedHash, newClientId, newClientSecret, randomSecret } from './secrets.ts';

export interface Credential {
  id: number;
  name: string;
  clientId: string;
  scopes: Scope[];
  enabled: boolean;
  createdAt: string;
  updatedAt: string;
  lastUsedAt: string | null;
}

export interface IssuedCredential {
  id: number;
  name: string;
  clientId: string;
  clientSecret: string;
  scopes: Scope[];
}

/** The installation's key for hashing secrets and tokens, created on first use and shared by all nodes. */
export async function hashingKey(db: Executor): Promise<string> {
  return (await ensureSetting(db, 'hash_key', () => randomSecret('', 32))).value;
}

export function toCredential(row: repo.CredentialRow): Credential {
  return {
    id: Number(row.id),
    name: row.name,
    clientId: row.client_id,
    scopes: row.scopes.split(' ').filter(Boolean) as Scope[],
    enabled: Boolean(row.enabled),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    lastUsedAt: row.last_used_at,
  };
}

export function validateScopes(raw: string | string[]): Scope[] {
  const { scopes, unknown } = parseScopes(Array.isArray(raw) ? raw.join(' ') : raw);
  if (unknown.length) {
    throw new AppError('invalid_body', `Unknown scope "${unknown[0]}".`, { errors: [{ name: 'scopes', reason: `unknown scope "${unknown[0]}"` }] });
  }
  if (scopes.length === 0) throw new AppError('invalid_body', 'A credential needs at least one scope.', { errors: [{ name: 'scopes', reason: 'must name at least one scope' }] });
  return scopes;
}

export async function createCredential(db: Executor, key: string, name: string, scopes: Scope[]): Promise<IssuedCredential> {
  const clientId = newClientId();
  const clientSecret = newClientSecret();
  const now = nowIso();
  const id = await repo.insertCredential(db, {
    name, client_id: clientId, secret_hash: keyedHash(key, clientSecret), scopes: scopes.join(' '), enabled: 1, created_at: now, updated_at: now, last_used_at: null,
  });
  return { id, name, clientId, clientSecret, scopes };
}

export async function listCredentials(db: Executor): Promise<Credential[]> {
  return (await repo.listCredentialRows(db)).map(toCredential);
}

async function mustFind(db: Executor, id: number): Promise<repo.CredentialRow> {
  const row = await repo.findCredential(db, id);
  if (!row) throw notFound(`Credential ${id}`);
  return row;
}

export async function getCredential(db: Executor, id: number): Promise<Credential> {
  return toCredential(await mustFind(db, id));
}

/** Runs `work` in a transaction of its own, or in the caller's when `db` already is one. */
const atomically = <T>(db: Executor, work: (trx: Executor) => Promise<T>): Promise<T> =>
  db.isTransaction ? work(db) : db.transaction().execute(work);

/**
 * Changes name, scopes or enabled state. Disabling or re-scoping revokes the credential's tokens in the same
 * transaction: no moment exists where the change is visible and wider tokens still live, nor the reverse.
 * Callers drop cached verifications (TokenService.forget) after it returns, that is after the commit.
 */
export async function updateCredential(db: Executor, id: number, changes: { name?: string; scopes?: Scope[]; enabled?: boolean }): Promise<Credential> {
  return atomically(db, async (trx) => {
    await mustFind(trx, id);
    await repo.updateCredential(trx, id, {
      ...(changes.name !== undefined ? { name: changes.name } : {}),
      ...(changes.scopes !== undefined ? { scopes: changes.scopes.join(' ') } : {}),
      ...(changes.enabled !== undefined ? { enabled: changes.enabled ? 1 : 0 } : {}),
      updated_at: nowIso(),
    });
    // Tokens carry the scopes they were issued with; narrowing scopes or disabling must not leave wider tokens alive.
    if (changes.enabled === false || changes.scopes !== undefined) await repo.deleteTokensOf(trx, id);
    return getCredential(trx, id);
  });
}

/** A new secret (shown once); the old secret and every token issued with it stop working, in one transaction. */
export async function rotateSecret(db: Executor, key: string, id: number): Promise<IssuedCredential> {
  return atomically(db, async (trx) => {
    const row = await mustFind(trx, id);
    const clientSecret = newClientSecret();
    await repo.updateCredential(trx, id, { secret_hash: keyedHash(key, clientSecret), updated_at: nowIso() });
    await repo.deleteTokensOf(trx, id);
    return { id, name: row.name, clientId: row.client_id, clientSecret, scopes: toCredential(row).scopes };
  });
}

export async function deleteCredential(db: Executor, id: number): Promise<void> {
  if (!(await repo.deleteCredentialRow(db, id))) throw notFound(`Credential ${id}`);
}

/** Finds a credential by client id or numeric id (what CLI users type). */
export async function resolveCredentialId(db: Executor, ref: string): Promise<number> {
  if (/^\d+$/.test(ref)) return Number(ref);
  const row = await repo.findCredentialByClientId(db, ref);
  if (!row) throw notFound(`Credential ${ref}`);
  return Number(row.id);
}
