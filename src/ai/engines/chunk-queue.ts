/** Turns callbacks (a producer pushing text) into an async iterable a generator can `for await`. */
export class ChunkQueue implements AsyncIterable<string> {
  private items: string[] = [];
  private ended = false;
  private error: unknown;
  private failed = false;
  private wake: (() => void) | undefined;

  push(text: string): void {
    this.items.push(text);
    this.notify();
  }

  end(): void {
    this.ended = true;
    this.notify();
  }

  fail(error: unknown): void {
    this.failed = true;
    this.error = error;
    this.notify();
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<string, void, undefined> {
    for (;;) {
      if (this.items.length) {
        yield this.items.shift()!;
        continue;
      }
      if (this.failed) throw this.error;
      if (this.ended) return;
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }
}
