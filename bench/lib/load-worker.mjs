// Runs autocannon in a process of its own, so that the load generator's work is not counted in the orchestrator
// (it still shares the machine's cores with the server under test). Input: one JSON argument; output: one JSON line.
import autocannon from 'autocannon';

const job = JSON.parse(process.argv[2]);
const base = { url: job.url, method: job.method ?? 'GET', headers: job.headers ?? {}, body: job.body, connections: job.connections };

if (job.warmup > 0) await autocannon({ ...base, duration: job.warmup });
const r = await autocannon({ ...base, duration: job.duration });
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
})}\n`);
