import { isIP } from 'node:net';
import type { Executor } from '../db/database.ts';
import { loose } from '../resources/loose.ts';
import { SyncError } from './client.ts';
import { ownMirrors } from './apply.ts';
import type { Mirrors } from './mirrors.ts';

/** Rows each followed collection holds here, by collection; only those that hold any. */
export async function localCatalogue(db: Executor, mirrors: Mirrors = ownMirrors()): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const m of mirrors.list) {
    const row = await loose(db).selectFrom(m.table).select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
    if (Number(row.n) > 0) counts[m.def.collection] = Number(row.n);
  }
  return counts;
}

/**
 * A first sync makes this store's followed collections equal to the main store's: rows the main store does not
 * have are deleted. Into a store that has a catalogue of its own that is a loss nobody asked for by accident,
 * so it is refused unless forced (`--force`, SYNC_FORCE=true), with what would go.
 */
export async function checkFirstSync(db: Executor, mirrors: Mirrors, source: string, force: boolean): Promise<void> {
  if (force) return;
  const counts = await localCatalogue(db, mirrors);
  const held = Object.entries(counts).map(([collection, n]) => `${n} ${collection}`);
  if (held.length === 0) return;
  throw new SyncError(
    `refusing a first sync from ${source}: this store already holds ${held.join(', ')} of its own, which the snapshot would replace with the main store's; pass --force (SYNC_FORCE=true for serve) to replace them`,
    'permanent',
  );
}

/** A warning when the main store is reached over plain http on another machine (the credential and the data travel unencrypted). */
export function insecureSource(baseUrl: string): string | undefined {
  const url = new URL(baseUrl);
  if (url.protocol !== 'http:') return undefined;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const loopback = host === 'localhost' || host.endsWith('.localhost') || (isIP(host) === 4 && host.startsWith('127.')) || host === '::1';
  return loopback ? undefined : `the main store ${url.origin} is reached over plain http: its client secret, tokens and data travel unencrypted; use https`;
}
