import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { onAbort } from './cleanup.ts';

export interface LoadJob {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  connections: number;
  /** Seconds measured. */
  duration: number;
  /** Seconds of load before measuring (JIT, caches, connection pools), discarded. */
  warmup: number;
  /** The server's process, whose CPU time per request is measured. */
  pid?: number;
  /** PostgreSQL: the database the server reads, whose backends' CPU time per request is measured too. */
  dbUrl?: string;
}

export interface LoadResult {
  /** Median of the per-second request counts. */
  rps: number;
  rpsMean: number;
  /** Latency percentiles, milliseconds. */
  p50: number;
  p99: number;
  total: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  bytesPerSec: number;
  /** Server CPU time (user + system) per answer, µs: robust to other load on the machine, unlike req/s. */
  cpuMicrosPerRequest: number;
  /** PostgreSQL backends' CPU time per answer, µs (NaN/null when no dbUrl was given). */
  dbCpuMicrosPerRequest: number | null;
}

const WORKER = fileURLToPath(new URL('./load-worker.mjs', import.meta.url));

/** Load generators waiting for a job: one process serves load after load (its start and autocannon's import are paid once). */
const idle: ChildProcess[] = [];
let jobs = 0;

function startWorker(): ChildProcess {
  const child = spawn(process.execPath, [WORKER, '--serve'], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  child.once('exit', onAbort(() => child.kill('SIGKILL')));
  child.once('exit', () => {
    const at = idle.indexOf(child);
    if (at >= 0) idle.splice(at, 1);
  });
  return child;
}

/** Whether the worker holds this process open: only while it runs a job (an idle one must not keep a finished run alive). */
function hold(child: ChildProcess, held: boolean): void {
  if (held) {
    child.ref();
    child.channel?.ref();
  } else {
    child.unref();
    child.channel?.unref();
  }
}

/** Drives a URL with autocannon in a child process of its own and returns its summary. */
export function runLoad(job: LoadJob): Promise<LoadResult> {
  const child = idle.pop() ?? startWorker();
  hold(child, true);
  const id = ++jobs;
  return new Promise<LoadResult>((resolve, reject) => {
    const done = () => {
      child.off('message', onMessage);
      child.off('exit', onExit);
      child.off('error', reject);
    };
    const onMessage = (m: { id: number; result?: LoadResult; error?: string }) => {
      if (m.id !== id) return;
      done();
      hold(child, false);
      idle.push(child);
      if (m.error) reject(new Error(`load generator failed: ${m.error}`));
      else resolve(m.result!);
    };
    const onExit = (code: number | null) => {
      done();
      reject(new Error(`load generator exited with ${code}`));
    };
    child.on('message', onMessage);
    child.on('exit', onExit);
    child.on('error', reject);
    child.send({ id, job });
  });
}
