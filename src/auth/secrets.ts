import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** 256 random bits, URL-safe. Secrets this strong need no slow KDF: a keyed hash cannot be brute-forced. */
export const randomSecret = (prefix: string, bytes = 32): string => `${prefix}${randomBytes(bytes).toString('base64url')}`;

export const newClientId = (): string => `sda_${randomBytes(12).toString('hex')}`;
export const newClientSecret = (): string => randomSecret('sds_');
export const newAccessToken = (): string => randomSecret('sdt_');

/**
 * What every access token this service issues looks like: the prefix and 32 bytes in unpadded base64url.
 * Anything else cannot be ours, so it is refused before it costs a hash, a lookup or a cache entry.
 */
export const ACCESS_TOKEN_SHAPE = /^sdt_[A-Za-z0-9_-]{43}$/;

/** HMAC-SHA256 under the installation's hashing key (stored once in settings, shared by every node). */
export function keyedHash(key: string, value: string): string {
  return createHmac('sha256', key).update(value).digest('base64url');
}

export function constantTimeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
