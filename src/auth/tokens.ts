import type { DB } from '../db/database.ts';
import * as repo from './credentials.repository.ts';
import type { Scope } from './scopes.ts';
import { constantTimeEqual, keyedHash, newAccessToken } from './secrets.ts';

export interface TokenGrant {
  credentialId: number;
  clientId: string;
  scopes: Set<Scope>;
  expiresAt: number;
}

interface CacheEntry {
  grant: TokenGrant | null;
  checkedAt: number;
}

/** How long a node trusts what it read about a token; a disabled credential stops working within this time. */
export const TOKEN_RECHECK_MS = 4000;
const CACHE_MAX = 50_000;
const LAST_USED_PRECISION_MS = 60_000;

export type ClientAuthResult =
  | { ok: true; credential: repo.CredentialRow }
  | { ok: false; reason: string };

/**
 * Issues and verifies access tokens. Tokens are random; only their keyed hash is stored, in the database,
 * so they survive restarts and work on every node. Each node caches verifications briefly.
 */
export class TokenService {
  private readonly cache = new Map<string, CacheEntry>();

  constructor(
    private readonly db: DB,
    private readonly key: string,
    private readonly ttlSeconds: number,
  ) {}

  async authenticateClient(clientId: string, clientSecret: string): Promise<ClientAuthResult> {
    const credential = await repo.findCredentialByClientId(this.db, clientId);
    // Hash even for an unknown client so that timing does not tell which client ids exist.
    const presented = keyedHash(this.key, clientSecret);
    if (!credential || !constantTimeEqual(presented, credential.secret_hash)) return { ok: false, reason: 'Unknown client or wrong secret.' };
    if (!credential.enabled) return { ok: false, reason: 'The credential is disabled.' };
    return { ok: true, credential };
  }

  async issue(credentialId: number, scopes: Scope[]): Promise<{ token: string; expiresIn: number }> {
    const token = newAccessToken();
    const now = Date.now();
    const at = new Date(now).toISOString();
    await this.db.transaction().execute(async (trx) => {
      await repo.insertToken(trx, {
        token_hash: keyedHash(this.key, token),
        credential_id: credentialId,
        scopes: scopes.join(' '),
        expires_at: new Date(now + this.ttlSeconds * 1000).toISOString(),
        created_at: at,
      });
      // What the administrator sees as "last used": the last time the client obtained a token, to the minute.
      // Writing it on every issue made the credential's row a lock that parallel workers of one client queued on.
      await repo.touchLastUsed(trx, credentialId, at, new Date(now - LAST_USED_PRECISION_MS).toISOString());
    });
    return { token, expiresIn: this.ttlSeconds };
  }

  /**
   * Drops what this node cached about a credential's tokens, so that disabling, rotating, re-scoping or
   * deleting it takes effect here at once; other nodes notice within TOKEN_RECHECK_MS.
   */
  forget(credentialId: number): void {
    for (const [token, entry] of this.cache) if (entry.grant?.credentialId === credentialId) this.cache.delete(token);
  }

  /** The grant of a bearer token, or null when it is unknown, expired, or its credential is disabled or gone. */
  async verify(token: string): Promise<TokenGrant | null> {
    const now = Date.now();
    const cached = this.cache.get(token);
    if (cached && now - cached.checkedAt < TOKEN_RECHECK_MS) {
      return cached.grant && cached.grant.expiresAt > now ? cached.grant : null;
    }
    const row = await repo.findToken(this.db, keyedHash(this.key, token));
    const grant: TokenGrant | null =
      row && row.enabled
        ? { credentialId: Number(row.credential_id), clientId: row.client_id, scopes: new Set(row.scopes.split(' ') as Scope[]), expiresAt: Date.parse(row.expires_at) }
        : null;
    if (this.cache.size >= CACHE_MAX) this.cache.delete(this.cache.keys().next().value as string);
    this.cache.set(token, { grant, checkedAt: now });
    return grant && grant.expiresAt > now ? grant : null;
  }

  async pruneExpired(): Promise<number> {
    const result = await repo.deleteExpiredTokens(this.db, new Date().toISOString());
    return Number(result.numDeletedRows);
  }
}
