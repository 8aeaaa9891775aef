import type { ExportLimits } from '../../config.ts';
import type { Store } from '../../db/database.ts';
import { AppError } from '../../errors/app-error.ts';

/** Seconds a refused export is told to wait: a running export frees its place when it ends, or within the idle timeout. */
export const EXPORT_RETRY_AFTER_SECONDS = 5;

/** Whole exports running on one store (one node): each holds a database connection until it ends. */
interface Running {
  total: number;
  byOwner: Map<string, number>;
}

const running = new WeakMap<Store, Running>();

/**
 * The most whole exports this node runs at once: the configured cap and, on PostgreSQL, half the pool (each
 * export holds a pool client for its whole length; the other half stays for the API).
 */
export function nodeCap(store: Store, limits: ExportLimits): number {
  return store.pgPool ? Math.min(limits.perNode, Math.max(1, Math.floor(store.pgPool.options.max / 2))) : limits.perNode;
}

/**
 * Takes a place for a whole export of `owner` (a credential), or refuses: `429` when the credential already
 * runs its share (its own doing: it should finish or drop one), `503` when the node is full (anyone's exports:
 * try again shortly, or another node). Both say when to retry. Returns the release, which is safe to call twice.
 */
export function takeExportSlot(store: Store, owner: string, limits: ExportLimits): () => void {
  let state = running.get(store);
  if (!state) running.set(store, (state = { total: 0, byOwner: new Map() }));
  const mine = state.byOwner.get(owner) ?? 0;
  const headers = { 'retry-after': String(EXPORT_RETRY_AFTER_SECONDS) };
  if (mine >= limits.perCredential) {
    throw new AppError('rate_limited', `This credential already runs ${mine} whole exports, the most it may run at once; retry when one has ended, or page with limit and cursor.`, { headers });
  }
  if (state.total >= nodeCap(store, limits)) {
    throw new AppError('service_unavailable', 'Too many whole exports are running at once; retry shortly, or page with limit and cursor.', { headers });
  }
  state.total += 1;
  state.byOwner.set(owner, mine + 1);
  const taken = state;
  let released = false;
  return () => {
    if (released) return;
    released = true;
    taken.total -= 1;
    const left = (taken.byOwner.get(owner) ?? 1) - 1;
    // No entry is kept for a credential that runs nothing: the map stays as small as the running exports.
    if (left > 0) taken.byOwner.set(owner, left);
    else taken.byOwner.delete(owner);
  };
}
