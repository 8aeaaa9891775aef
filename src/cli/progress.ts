import { SingleBar } from 'cli-progress';

/** A progress bar on stderr when it is a terminal; one line every few seconds otherwise (logs, CI). */
export function progress(label: string): { update(done: number, total: number): void; stop(): void } {
  if (process.stderr.isTTY) {
    const bar = new SingleBar({ format: `${label} [{bar}] {percentage}% {value}/{total} ({eta}s left)`, stream: process.stderr, hideCursor: true });
    let started = false;
    return {
      update(done, total) {
        if (!started) {
          bar.start(total, 0);
          started = true;
        }
        bar.update(done);
      },
      stop: () => bar.stop(),
    };
  }
  let last = 0;
  return {
    update(done, total) {
      if (Date.now() - last > 2000 || done === total) {
        last = Date.now();
        process.stderr.write(`${label}: ${done}/${total} (${Math.round((done / total) * 100)}%)\n`);
      }
    },
    stop: () => {},
  };
}
