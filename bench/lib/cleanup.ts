/** Undo steps of a benchmark run (stop servers, drop databases), run in reverse order if the run is interrupted. */
const steps = new Set<() => unknown>();

export function onAbort(step: () => unknown): () => void {
  steps.add(step);
  return () => steps.delete(step);
}

let aborting = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    if (aborting) return;
    aborting = true;
    process.stderr.write(`\n${signal}: cleaning up\n`);
    void (async () => {
      for (const step of [...steps].reverse()) await Promise.resolve().then(step).catch(() => {});
      process.exit(130);
    })();
  });
}
