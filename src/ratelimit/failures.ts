import { addressKey } from './address.ts';
import { MemoryBuckets, type Policy } from './bucket.ts';

/** Source addresses whose failed attempts a node remembers at most (each a few dozen bytes). */
export const THROTTLED_ADDRESSES = 10_000;

/**
 * Wrong admin tokens per source address, on this node: one allowance for every door that takes the admin token
 * (the admin API's bearer header and the console's sign-in form), so that guessing through both goes no faster
 * than through one. Each failure takes from the address's bucket; while it is empty every attempt from it is
 * refused before the token is looked at, the right one included (otherwise the answer would still tell a right
 * guess from a wrong one). Addresses count by addressKey (an IPv6 client by its /64); the table is bounded.
 */
export class FailureThrottle {
  private readonly buckets: MemoryBuckets;

  constructor(
    readonly policy: Policy,
    maxKeys = THROTTLED_ADDRESSES,
  ) {
    this.buckets = new MemoryBuckets(maxKeys);
  }

  /** Addresses remembered now. */
  get size(): number {
    return this.buckets.size;
  }

  /** Seconds until `ip` may try again; 0 when it may now. */
  retryAfter(ip: string): number {
    return this.buckets.peek(addressKey(ip), this.policy).retryAfterSeconds;
  }

  /** Counts a wrong token from `ip`. */
  failed(ip: string): void {
    this.buckets.takeNow(addressKey(ip), this.policy);
  }
}
