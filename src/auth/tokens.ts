import type { DB } from '../db/database.ts';
import { digest } from '../digest.ts';
import * as repo from './credentials.repository.ts';
import { Lru } from './lru.ts';
import type { Scope } from './scopes.ts';
import { ACCESS_TOKEN_SHAPE, constantTimeEqual, keyedHash, newAccessToken } from './secrets.ts';

export interface TokenGrant {
  credentialId: number;
  clientId: string;
  scopes: Set<Scope>;
  expiresAt: number;
}

/** How long a node trusts what it read about a token; a disabled credential stops working within this time. */
export const TOKEN_RECHECK_MS = 4000;
/** Live tokens a node remembers; each entry is a 43-character hash and a small grant (a few hundred bytes). */
const POSITIVE_MAX = 50_000;
/**
 * Well-formed tokens found unknown, remembered so that a client retrying a revoked token does not cost a
 * lookup per request; in a table of their own so that a flood of made-up tokens cannot evict live ones.
 */
const NEGATIVE_MAX = 10_000;
const LAST_USED_PRECISION_MS = 60_000;

/**
 * The key under which a node remembers a token: SHA-256 of the token behind the installation's key, in one
 * call (digest.ts), several times cheaper than the HMAC under which the database knows it,
 * which only a lookup computes. Like the HMAC it keeps nothing a client sent as it was sent.
 */
const cacheKeyOf = (key: string, token: string): string => digest('sha256', `token-cache\u0000${key}\u0000${token}`);

interface Known {
  grant: TokenGrant;
  /** The token's hash in the database, which a revocation names. */
  hash: string;
}

export type ClientAuthResult =
  | { ok: true; credential: repo.CredentialRow }
  | { ok: false; reason: string };

/**
 * Issues and verifies access tokens. Tokens are random; only their keyed hash is stored, in the database,
 * so they survive restarts and work on every node. Each node caches verifications briefly, keyed by the
 * hash: nothing a client sends is kept as it was sent, and a token that cannot be ours is refused unread.
 */
export class TokenService {
  /** By cache key (cacheKeyOf). */
  private readonly live = new Lru<string, Known>(POSITIVE_MAX, TOKEN_RECHECK_MS);
  private readonly unknown = new Lru<string, true>(NEGATIVE_MAX, TOKEN_RECHECK_MS);
  /** The cache key of a database hash, for the tokens an issue evicts; pruned when it outgrows `live`. */
  private readonly keyOfHash = new Map<string, string>();
  /**
   * Bumped by every revocation. A lookup that started before one may have read a token that is gone now;
   * it answers what it read (the request raced the revocation) but does not cache it.
   */
  private epoch = 0;

  constructor(
    private readonly db: DB,
    private readonly key: string,
    private readonly ttlSeconds: number,
    /** Live tokens one credential may hold; issuing one more deletes the oldest (0: no cap). */
    private readonly maxLiveTokens = 0,
  ) {}

  async authenticateClient(clientId: string, clientSecret: string): Promise<ClientAuthResult> {
    const credential = await repo.findCredentialByClientId(this.db, clientId);
    // Hash even for an unknown client so that timing does not tell which client ids exist.
    const presented = keyedHash(this.key, clientSecret);
    if (!credential || !constantTimeEqual(presented, credential.secret_hash)) return { ok: false, reason: 'Unknown client or wrong secret.' };
    if (!credential.enabled) return { ok: false, reason: 'The credential is disabled.' };
    return { ok: true, credential };
  }

  /** A new token; beyond the credential's cap, its oldest tokens are deleted in the same transaction. */
  async issue(credentialId: number, scopes: Scope[]): Promise<{ token: string; expiresIn: number }> {
    const token = newAccessToken();
    const now = Date.now();
    const at = new Date(now).toISOString();
    const { ttlSeconds, maxLiveTokens } = this;
    const evicted = await this.db.transaction().execute(async (trx) => {
      await repo.insertToken(trx, {
        token_hash: keyedHash(this.key, token),
        credential_id: credentialId,
        scopes: scopes.join(' '),
        expires_at: new Date(now + ttlSeconds * 1000).toISOString(),
        created_at: at,
      });
      // What the administrator sees as "last used": the last time the client obtained a token, to the minute.
      // Writing it on every issue made the credential's row a lock that parallel workers of one client queued on.
      await repo.touchLastUsed(trx, credentialId, at, new Date(now - LAST_USED_PRECISION_MS).toISOString());
      return maxLiveTokens > 0 ? repo.deleteTokensBeyond(trx, credentialId, maxLiveTokens) : [];
    });
    if (evicted.length > 0) {
      this.epoch++;
      for (const hash of evicted) {
        const cacheKey = this.keyOfHash.get(hash);
        if (cacheKey === undefined) continue;
        this.live.delete(cacheKey);
        this.keyOfHash.delete(hash);
      }
    }
    return { token, expiresIn: ttlSeconds };
  }

  /**
   * Drops what this node cached about a credential's tokens, so that disabling, rotating, re-scoping or
   * deleting it takes effect here at once; other nodes notice within TOKEN_RECHECK_MS. Call it after the
   * change has committed.
   */
  forget(credentialId: number): void {
    this.epoch++;
    this.live.deleteWhere((known) => known.grant.credentialId === credentialId);
    // A token refused while its credential was disabled may be valid again once it is enabled.
    this.unknown.clear();
  }

  /** The grant of a bearer token, or null when it is malformed, unknown, expired, or its credential is disabled or gone. */
  async verify(token: string): Promise<TokenGrant | null> {
    const known = this.verifyCached(token);
    return known !== undefined ? known : this.lookup(token);
  }

  /**
   * What this node knows about a token without asking the database: its grant, null (refused), or undefined
   * when only a lookup can tell (then call verify). Synchronous, so that the busiest path of the service,
   * a known token, costs no promise.
   */
  verifyCached(token: string, now = Date.now()): TokenGrant | null | undefined {
    if (!ACCESS_TOKEN_SHAPE.test(token)) return null;
    const cacheKey = cacheKeyOf(this.key, token);
    const cached = this.live.get(cacheKey, now);
    if (cached) return cached.grant.expiresAt > now ? cached.grant : null;
    if (this.unknown.get(cacheKey, now)) return null;
    return undefined;
  }

  private async lookup(token: string): Promise<TokenGrant | null> {
    const now = Date.now();
    const hash = keyedHash(this.key, token);
    const cacheKey = cacheKeyOf(this.key, token);
    const epoch = this.epoch;
    const row = await repo.findToken(this.db, hash);
    const grant: TokenGrant | null =
      row && row.enabled
        ? { credentialId: Number(row.credential_id), clientId: row.client_id, scopes: new Set(row.scopes.split(' ') as Scope[]), expiresAt: Date.parse(row.expires_at) }
        : null;
    if (epoch === this.epoch) {
      if (grant && grant.expiresAt > now) this.remember(cacheKey, { grant, hash }, now);
      else this.unknown.set(cacheKey, true, now);
    }
    return grant && grant.expiresAt > now ? grant : null;
  }

  private remember(cacheKey: string, known: Known, now: number): void {
    this.live.set(cacheKey, known, now);
    this.keyOfHash.set(known.hash, cacheKey);
    // Entries whose token the LRU has let go (expired, evicted, forgotten) go here too, now and then.
    if (this.keyOfHash.size > 2 * POSITIVE_MAX) for (const [hash, key] of this.keyOfHash) if (!this.live.has(key)) this.keyOfHash.delete(hash);
  }

  /** How many verifications this node holds (for tests and metrics): both tables are bounded. */
  cacheSize(): { live: number; unknown: number } {
    return { live: this.live.size, unknown: this.unknown.size };
  }

  async pruneExpired(): Promise<number> {
    const result = await repo.deleteExpiredTokens(this.db, new Date().toISOString());
    return Number(result.numDeletedRows);
  }
}
