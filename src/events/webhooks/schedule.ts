/** Jitter spreads retries of many deliveries that failed together (a receiver's outage) over ±20 %. */
const JITTER = 0.2;

/**
 * Milliseconds to wait before the next attempt after `failed` attempts have failed, from the retry
 * schedule (seconds between attempts); undefined when the schedule is used up.
 */
export function retryDelayMs(schedule: readonly number[], failed: number, random: () => number = Math.random): number | undefined {
  if (failed < 1 || failed > schedule.length) return undefined;
  return Math.round(schedule[failed - 1] * 1000 * (1 - JITTER + 2 * JITTER * random()));
}

/** About how long a failing delivery is retried in all, for messages. */
export const scheduleSpan = (schedule: readonly number[]): string => {
  const s = schedule.reduce((a, b) => a + b, 0);
  return s >= 86_400 ? `${(s / 86_400).toFixed(1)} days` : s >= 3600 ? `${(s / 3600).toFixed(1)} hours` : `${Math.round(s * 10) / 10} s`;
};
