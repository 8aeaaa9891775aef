import { isIPv4, isIPv6 } from 'node:net';

/**
 * What sign-in failures are counted by: an IPv4 address as it is, an IPv6 address by its /64 (what one
 * subscriber holds; counting single IPv6 addresses would give one client 2^64 fresh allowances).
 */
export function addressKey(ip: string): string {
  if (!isIPv6(ip)) return ip;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped && isIPv4(mapped[1])) return mapped[1];
  const halves = ip.replace(/%.*$/, '').split('::');
  const left = halves[0] ? halves[0].split(':') : [];
  const right = halves.length > 1 && halves[1] ? halves[1].split(':') : [];
  const groups = halves.length > 1 ? [...left, ...new Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right] : left;
  return `${groups.slice(0, 4).map((g) => parseInt(g, 16).toString(16)).join(':')}::/64`;
}

export interface ThrottlePolicy {
  /** Failures an address may have in a row before it must wait. */
  burst: number;
  /** Failures forgiven per second after that (one every 30 s by default). */
  perSecond: number;
}

export const SIGN_IN_POLICY: ThrottlePolicy = { burst: 10, perSecond: 1 / 30 };

/**
 * Failed console sign-ins per source address, on this node: a token bucket per address that each failure
 * takes from. While an address's bucket is empty every sign-in from it is refused unread, the right token
 * included (otherwise the answer would still tell a right guess from a wrong one). Addresses come from
 * clients, so the table is bounded: beyond `maxKeys` the least recently failing address is forgotten, which
 * only gives it a full bucket again.
 */
export class SignInThrottle {
  private readonly buckets = new Map<string, { tokens: number; ts: number }>();

  constructor(
    private readonly policy: ThrottlePolicy = SIGN_IN_POLICY,
    readonly maxKeys = 10_000,
  ) {}

  get size(): number {
    return this.buckets.size;
  }

  /** Seconds until `ip` may try again; 0 when it may now. */
  retryAfter(ip: string, now = Date.now()): number {
    const tokens = this.tokens(addressKey(ip), now);
    return tokens >= 1 ? 0 : Math.max(1, Math.ceil((1 - tokens) / this.policy.perSecond));
  }

  /** Counts a failed sign-in of `ip`. */
  failed(ip: string, now = Date.now()): void {
    const key = addressKey(ip);
    const tokens = Math.max(0, this.tokens(key, now) - 1);
    this.buckets.delete(key);
    this.buckets.set(key, { tokens, ts: now });
    if (this.buckets.size > this.maxKeys) this.buckets.delete(this.buckets.keys().next().value as string);
  }

  private tokens(key: string, now: number): number {
    const bucket = this.buckets.get(key);
    return bucket ? Math.min(this.policy.burst, bucket.tokens + ((now - bucket.ts) / 1000) * this.policy.perSecond) : this.policy.burst;
  }
}
