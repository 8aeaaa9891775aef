import * as crypto from 'node:crypto';

type OneShot = (algorithm: string, data: string | Buffer, encoding: 'base64url') => string;
// crypto.hash (Node 20.12+) hashes in one call, without a Hash object: a few µs less per call, which is most
// of the cost on the path that uses it (a token's cache key, on every request). Older Node (the engines field
// allows 20.9) uses createHash.
const oneShot = (crypto as { hash?: OneShot }).hash;

/** The base64url digest of `data` (not a secret's hash: HMACs are `keyedHash` in auth/secrets.ts). */
export const digest = (algorithm: 'sha256', data: string | Buffer): string =>
  oneShot ? oneShot(algorithm, data, 'base64url') : crypto.createHash(algorithm).update(data).digest('base64url');
