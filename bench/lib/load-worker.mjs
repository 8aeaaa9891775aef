// Runs autocannon in a process of its own, so that the load generator's work is not counted in the orchestrator
// (it still shares the machine's cores with the server under test). Input: one JSON argument; output: one JSON line.
// Started with `--serve` and an IPC channel it stays up and runs one job per message ({ id, job } in,
// { id, result } or { id, error } out): a process and autocannon's import per load cost ~1 s of CPU, which a
// run of 60 loads on a busy 2-core machine felt as a minute of wall time.
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';

// CPU seconds (user + system) the server process has used, from /proc (Linux; USER_HZ is 100 there).
const cpuSeconds = (pid) => {
  if (!pid) return NaN;
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
};

// CPU seconds of the PostgreSQL backends serving the benchmark's database (job.dbUrl): where a server that lets
// PostgreSQL build its JSON spends the CPU it no longer spends itself. The database is the run's own, so its
// backends are those of the servers under test (the idle ones add nothing).
async function databaseCpu(dbUrl) {
  if (!dbUrl) return { pids: [], seconds: () => NaN };
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: dbUrl });
  await client.connect();
  const { rows } = await client.query('select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()');
  await client.end();
  const pids = rows.map((r) => r.pid);
  // Per backend; one that exits meanwhile (the pool closing an idle connection) keeps its last reading, so it
  // adds what it used until then and never makes the sum go down.
  const last = new Map();
  const seconds = () => pids.reduce((sum, pid) => {
    try {
      last.set(pid, cpuSeconds(pid));
    } catch {
      // Gone: its last reading stands.
    }
    return sum + (last.get(pid) ?? 0);
  }, 0);
  return { pids, seconds };
}

/** One load: the warm-up, then the measured seconds with the server's (and database's) CPU time around them. */
async function run(job) {
  const base = { url: job.url, method: job.method ?? 'GET', headers: job.headers ?? {}, body: job.body, connections: job.connections };

  if (job.warmup > 0) await autocannon({ ...base, duration: job.warmup });
  const db = await databaseCpu(job.dbUrl);
  const cpuBefore = cpuSeconds(job.pid);
  const dbBefore = db.seconds();
  const r = await autocannon({ ...base, duration: job.duration });
  const cpu = cpuSeconds(job.pid) - cpuBefore;
  const dbCpu = db.seconds() - dbBefore;
  return {
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
    // The database's CPU per answer (PostgreSQL backends of the run's database; null without job.dbUrl).
    dbCpuMicrosPerRequest: job.dbUrl ? (dbCpu * 1e6) / r.requests.total : null,
  };
}

if (process.argv[2] === '--serve') {
  // The orchestrator gone (finished or killed): nothing more will come.
  process.on('disconnect', () => process.exit(0));
  process.on('message', ({ id, job }) => {
    run(job).then(
      (result) => process.send({ id, result }),
      (error) => process.send({ id, error: String(error?.stack ?? error) }),
    );
  });
} else {
  process.stdout.write(`${JSON.stringify(await run(JSON.parse(process.argv[2])))}\n`);
}
