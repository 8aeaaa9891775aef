export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Polls `check` until it holds; fails naming `what` after `ms` (a bound, not a speed assertion). */
export async function until(what: string, check: () => boolean | Promise<boolean>, ms = 15_000, every = 20): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting until ${what}`);
    await sleep(every);
  }
}
