// Runs autocannon in a process of its own, so that the load generator's work is not counted in the orchestrator
// (it still shares the machine's cores with the server under test). Input: one JSON argument; output: one JSON line.
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';

// CPU seconds (user + system) the server process has used, from /proc (Linux; USER_HZ is 100 there).
const cpuSeconds = (pid) => {
  if (!pid) return NaN;
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
};

const job = JSON.parse(process.argv[2]);
const base = { url: job.url, method: job.method ?? 'GET', headers: job.headers ?? {}, body: job.body, connections: job.connections };

if (job.warmup > 0) await autocannon({ ...base, duration: job.warmup });
const cpuBefore = cpuSeconds(job.pid);
const r = await autocannon({ ...base, duration: job.duration });
const cpu = cpuSeconds(job.pid) - cpuBefore;
process.stdout.write(`${JSON.stringify({
  rps: r.requests.p50,
  rpsMean: r.requests.average,
  p50: r.latency.p50,
  p99: r.latency.p99,
  total: r.requests.total,
  non2xx: r.non2xx,
  errors: r.errors,
  timeouts: r.timeouts,
  bytesPerSec: r.throughput.average,
  // What one answer costs the server in CPU, whatever else ran on the machine meanwhile.
  cpuMicrosPerRequest: job.pid ? (cpu * 1e6) / r.requests.total : null,
})}\n`);
