/**
 * A map with a maximum entry count and a time to live: what a node may remember about requests without
 * letting clients decide how much it remembers. A Map keeps insertion order, so re-inserting on use makes
 * its first key the least recently used one; that is all an LRU needs (no dependency for thirty lines).
 */
export class Lru<K, V> {
  private readonly entries = new Map<K, { value: V; expiresAt: number }>();

  constructor(
    readonly max: number,
    readonly ttlMs: number,
  ) {
    if (!(max >= 1)) throw new RangeError('An Lru needs room for at least one entry');
  }

  get size(): number {
    return this.entries.size;
  }

  /** The live value of `key` (which becomes the most recently used), or undefined; an expired entry is dropped. */
  get(key: K, now = Date.now()): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    if (entry.expiresAt <= now) return undefined;
    this.entries.set(key, entry);
    return entry.value;
  }

  /** Whether `key` is held (live or not yet dropped), without making it the most recently used. */
  has(key: K): boolean {
    return this.entries.has(key);
  }

  /** Stores `value` for ttlMs, evicting the least recently used entries beyond `max`. */
  set(key: K, value: V, now = Date.now()): void {
    this.entries.delete(key);
    this.entries.set(key, { value, expiresAt: now + this.ttlMs });
    while (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value as K);
  }

  delete(key: K): boolean {
    return this.entries.delete(key);
  }

  /** Drops every entry whose value matches; for invalidation, so it visits at most `max` entries. */
  deleteWhere(test: (value: V, key: K) => boolean): void {
    for (const [key, entry] of this.entries) if (test(entry.value, key)) this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }
}
