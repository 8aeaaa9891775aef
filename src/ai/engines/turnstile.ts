/** One at a time, in arrival order; a caller whose signal fires while waiting leaves the line. */
export class Turnstile {
  private tail: Promise<void> = Promise.resolve();

  async enter(signal: AbortSignal): Promise<() => void> {
    let release!: () => void;
    const mine = new Promise<void>((resolve) => (release = resolve));
    const before = this.tail;
    this.tail = before.then(() => mine);
    signal.throwIfAborted();
    try {
      await new Promise<void>((resolve, reject) => {
        const onAbort = (): void => reject(signal.reason);
        signal.addEventListener('abort', onAbort, { once: true });
        void before.then(() => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        });
      });
    } catch (error) {
      // Leaving the line: whoever comes next waits only for those before us.
      release();
      throw error;
    }
    return release;
  }
}
