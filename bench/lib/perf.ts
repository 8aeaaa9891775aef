// `perf record` of a running server over a load, and what its samples say: where a server's CPU per answer goes,
// by binary (the kernel, Node's own code with V8's builtins, the JavaScript V8 compiled, libc, a native addon) and
// by symbol. Only native and kernel symbols are named: V8's compiled JavaScript is one "[JIT]" entry (without
// `--perf-basic-prof` perf cannot name it, and with it a map names code that V8 has since moved or collected).
// cpu-clock, not cycles: this VM has no hardware counters. Samples from a whole process, every thread.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';

/** Whether `perf` can be run here; the reason when not. */
export function perfMissing(): string | undefined {
  const probe = spawnSync('perf', ['--version'], { encoding: 'utf8' });
  return probe.error || probe.status !== 0 ? `perf is not available (${probe.error?.message ?? probe.stderr.trim()}); install linux-perf` : undefined;
}

/** Records `pid` into `file` until `stop()`; `stop()` resolves once perf has written the file. */
export function recordPerf(pid: number, file: string): { stop(): Promise<void> } {
  const child: ChildProcess = spawn('perf', ['record', '-e', 'cpu-clock', '-F', '999', '-p', String(pid), '-o', file], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<void>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code, signal) => (code === 0 || signal === 'SIGINT' ? resolve() : reject(new Error(`perf record ended ${code ?? signal}: ${stderr.trim()}`))));
  });
  return {
    stop: async () => {
      child.kill('SIGINT');
      await exited;
    },
  };
}

/** Share of the samples (0–1) by `dso` or by `dso symbol`, from `perf report`. */
export function perfShares(file: string, sort: 'dso' | 'dso,sym'): Map<string, number> {
  const report = spawnSync('perf', ['report', '-i', file, '--stdio', '--no-children', '-g', 'none', '--percent-limit', '0', '--sort', sort], { encoding: 'utf8', maxBuffer: 256 << 20 });
  if (report.status !== 0) throw new Error(`perf report: ${report.stderr.trim()}`);
  const shares = new Map<string, number>();
  for (const line of report.stdout.split('\n')) {
    const m = /^\s+([\d.]+)%\s+(.+?)\s*$/.exec(line);
    if (!m) continue;
    // "[JIT] tid 123" is one process's compiled JavaScript: one name for every server.
    const name = m[2].replace(/\[JIT\] tid \d+/, '[JIT]').replace(/\s+/g, ' ');
    shares.set(name, (shares.get(name) ?? 0) + Number(m[1]) / 100);
  }
  return shares;
}

/** A binary's short name for a report's column: the kernel, node, [JIT], libc, the SQLite addon, or "other". */
export function binaryOf(dso: string): 'kernel' | 'node' | 'JIT' | 'libc' | 'sqlite' | 'other' {
  if (dso.startsWith('[kernel')) return 'kernel';
  if (dso === 'node') return 'node';
  if (dso.startsWith('[JIT]') || dso.startsWith('perf-')) return 'JIT';
  if (dso.startsWith('libc.')) return 'libc';
  if (dso.startsWith('better_sqlite3')) return 'sqlite';
  return 'other';
}
