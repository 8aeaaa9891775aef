/** Exponential back-off with full jitter (AWS architecture blog): spreads retries of many followers apart. */
export interface Backoff {
  baseMs: number;
  capMs: number;
}

export const DEFAULT_BACKOFF: Backoff = { baseMs: 250, capMs: 30_000 };

/** The delay before retry number `attempt` (1 for the first retry): random in [base/2, min(cap, base·2^(attempt-1))]. */
export function backoffDelay(attempt: number, b: Backoff = DEFAULT_BACKOFF, random: () => number = Math.random): number {
  const ceiling = Math.min(b.capMs, b.baseMs * 2 ** Math.min(attempt - 1, 30));
  const floor = Math.min(ceiling, b.baseMs / 2);
  return Math.round(floor + random() * (ceiling - floor));
}

/** Resolves after `ms`, or at once when `signal` aborts (without throwing: the caller checks the signal). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (ms <= 0 || signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}
