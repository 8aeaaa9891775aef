import { spawn } from 'node:child_process';
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

/** Drives a URL with autocannon from a child process and returns its summary. */
export function runLoad(job: LoadJob): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [WORKER, JSON.stringify(job)], { stdio: ['ignore', 'pipe', 'inherit'] });
    child.once('exit', onAbort(() => child.kill('SIGKILL')));
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`load generator exited with ${code}`));
      resolve(JSON.parse(out.trim().split('\n').pop()!) as LoadResult);
    });
  });
}
