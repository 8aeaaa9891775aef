import { AppError } from '../errors/app-error.ts';

/**
 * How long a write waits its turn before it fails as busy (503, Retry-After): for the other writers of this
 * process (PostgreSQL), for a row lock, or for another process's write transaction (SQLite: an import).
 */
export const DEFAULT_WRITE_WAIT_MS = 30_000;

const busy = (detail: string) => new AppError('service_unavailable', detail, { headers: { 'retry-after': '1' } });

/**
 * A line for write transactions in one process: at most `slots` run at once, the others wait here, first
 * come first served, without a database connection. Writers that wait for a lock (the event-order lock, a
 * row another transaction changes) wait holding a pooled connection; with fewer slots than the pool has
 * connections, they can never take them all, and reads always find one. A writer that has waited `waitMs`,
 * or arrives when `maxWaiting` are already in line, gets a 503 with Retry-After instead of a longer wait.
 */
export class WriteQueue {
  readonly slots: number;
  readonly waitMs: number;
  readonly maxWaiting: number;
  #running = 0;
  readonly #waiting: Array<() => void> = [];

  constructor(slots: number, waitMs: number, maxWaiting = 1000) {
    this.slots = Math.max(1, slots);
    this.waitMs = waitMs;
    this.maxWaiting = maxWaiting;
  }

  /** Writers running now and waiting now. */
  get load(): { running: number; waiting: number } {
    return { running: this.#running, waiting: this.#waiting.length };
  }

  async run<T>(work: () => Promise<T>): Promise<T> {
    await this.#enter();
    try {
      return await work();
    } finally {
      this.#leave();
    }
  }

  #enter(): Promise<void> {
    if (this.#running < this.slots) {
      this.#running++;
      return Promise.resolve();
    }
    if (this.#waiting.length >= this.maxWaiting) return Promise.reject(busy('Too many writes are waiting for the database; retry shortly.'));
    return new Promise((resolve, reject) => {
      // A slot is handed over by #leave: the running count stays as it is.
      const admit = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        this.#waiting.splice(this.#waiting.indexOf(admit), 1);
        reject(busy(`The write waited ${Math.round(this.waitMs / 1000)} s for others to finish; retry shortly.`));
      }, this.waitMs);
      this.#waiting.push(admit);
    });
  }

  #leave(): void {
    const next = this.#waiting.shift();
    if (next) next();
    else this.#running--;
  }
}
