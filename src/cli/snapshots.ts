import { createWriteStream, existsSync, statSync } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { Transform } from 'node:stream';
import type { Command } from 'commander';
import { MainStoreClient, SyncError } from '../sync/client.ts';
import { fail, printResult } from './output.ts';
import { progress } from './progress.ts';

interface ServerOptions {
  url?: string;
  clientId?: string;
  clientSecret?: string;
  json?: boolean;
}

interface Job {
  id: number;
  status: string;
  collection: string;
  format: string;
  rows: number;
  seq: number | null;
  size: number | null;
  sha256: string | null;
  error: string | null;
  createdAt: string;
  expiresAt: string | null;
  downloadUrl?: string;
}

/** A client of the store's API with a credential of it (the follower's client: tokens renewed, requests retried). */
function clientOf(o: ServerOptions): MainStoreClient {
  const url = o.url ?? process.env.STORE_URL;
  const clientId = o.clientId ?? process.env.STORE_CLIENT_ID;
  const clientSecret = o.clientSecret ?? process.env.STORE_CLIENT_SECRET;
  if (!url) fail('snapshots needs --url URL (or STORE_URL): the store\'s base URL');
  if (!clientId || !clientSecret) fail('snapshots needs --client-id and --client-secret (or STORE_CLIENT_ID and STORE_CLIENT_SECRET): a credential of the store');
  return new MainStoreClient({ baseUrl: url, clientId, clientSecret, maxAttempts: 4 });
}

const human = (j: Job) =>
  `snapshot ${j.id}: ${j.status}, ${j.collection} as ${j.format}, ${j.rows} rows${j.seq !== null ? `, seq ${j.seq}` : ''}${j.size !== null ? `, ${j.size} bytes` : ''}${j.error ? `, error: ${j.error}` : ''}${j.expiresAt ? `, expires ${j.expiresAt}` : ''}`;

/** Runs a command against the store, turning the client's errors into one line on stderr. */
async function withClient<T>(o: ServerOptions, work: (client: MainStoreClient) => Promise<T>): Promise<T> {
  const client = clientOf(o);
  try {
    return await work(client);
  } catch (error) {
    if (error instanceof SyncError) fail(error.message);
    throw error;
  } finally {
    client.close();
  }
}

/** Waits until a job has finished, showing its rows on stderr. */
async function waitFor(client: MainStoreClient, id: number): Promise<Job> {
  for (;;) {
    const job = await client.get<Job>(`/api/v2/snapshots/${id}`);
    if (job.status !== 'queued' && job.status !== 'running') return job;
    if (process.stderr.isTTY) process.stderr.write(`\rsnapshot ${id}: ${job.status}, ${job.rows} rows`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/**
 * Downloads a job's file to `path`, resuming a partial file that is there (`Range` from its size, `If-Range`
 * with the file's sha256 so that another file is never appended), with progress on stderr.
 */
async function download(client: MainStoreClient, job: Job, path: string): Promise<number> {
  if (job.status !== 'completed' || job.size === null) fail(`snapshot ${job.id} is ${job.status}; only a completed snapshot has a file`);
  const have = existsSync(path) ? statSync(path).size : 0;
  if (have === job.size) return 0;
  const res = await client.snapshotFile(job.id, have, job.sha256 ? `"${job.sha256}"` : undefined);
  const from = res.status === 206 ? have : 0;
  const bar = progress(`snapshot ${job.id}`);
  let done = from;
  const count = new Transform({
    transform(piece: Buffer, _encoding, callback) {
      done += piece.length;
      bar.update(done, job.size!);
      callback(null, piece);
    },
  });
  try {
    await pipeline(res.body, count, createWriteStream(path, { flags: from > 0 ? 'a' : 'w' }));
  } finally {
    bar.stop();
  }
  return done - from;
}

/** `store-api snapshots create|list|get|download`: snapshots (consistent bulk exports) of a running store, over its API. */
export function registerSnapshots(program: Command): void {
  const cmd = program.command('snapshots').description('Consistent bulk exports of a running store, as jobs (its API, with a credential of it): create, list, get, download');
  const server = (c: Command) =>
    c.option('--url <url>', 'the store\'s base URL (STORE_URL)')
      .option('--client-id <id>', 'a credential of the store (STORE_CLIENT_ID)')
      .option('--client-secret <secret>', 'its secret (STORE_CLIENT_SECRET; the variable keeps it out of the process list)')
      .option('--json', 'machine-readable output');

  server(cmd.command('create').description('Start a snapshot of a collection; with --wait, wait for it (and with --output, download it)'))
    .requiredOption('--collection <name>', 'products, categories, brands, product-parameters, product-filters, orders')
    .option('--format <format>', 'ndjson, csv or xlsx', 'ndjson')
    .option('--filter <name=value...>', 'a filter of the listing (repeatable): --filter status=active')
    .option('--fields <list>', 'only these fields, comma-separated (id always)')
    .option('--wait', 'wait until it has finished')
    .option('--output <file>', 'with --wait: download the file here')
    .action(async (o: ServerOptions & { collection: string; format: string; filter?: string[]; fields?: string; wait?: boolean; output?: string }) => {
      const filters: Record<string, string> = {};
      for (const f of o.filter ?? []) {
        const at = f.indexOf('=');
        if (at < 1) fail(`--filter must be name=value, got "${f}"`);
        filters[f.slice(0, at)] = f.slice(at + 1);
      }
      await withClient(o, async (client) => {
        let job = await client.post<Job>('/api/v2/snapshots', { collection: o.collection, format: o.format, filters, ...(o.fields ? { fields: o.fields.split(',').map((s) => s.trim()) } : {}) });
        if (o.wait || o.output) job = await waitFor(client, job.id);
        if (o.output) await download(client, job, o.output);
        printResult(Boolean(o.json), job, () => human(job) + (o.output ? `\nsaved to ${o.output}` : ''));
      });
    });

  server(cmd.command('list').description('This credential\'s snapshots, newest first'))
    .action(async (o: ServerOptions) => {
      await withClient(o, async (client) => {
        const page = await client.get<{ data: Job[] }>('/api/v2/snapshots', { limit: 100 });
        printResult(Boolean(o.json), page.data, () => page.data.map(human).join('\n') || 'No snapshots.');
      });
    });

  server(cmd.command('get <id>').description('One snapshot: status, rows, seq, size, the signed download URL when completed'))
    .action(async (id: string, o: ServerOptions) => {
      await withClient(o, async (client) => {
        const job = await client.get<Job>(`/api/v2/snapshots/${Number(id)}`);
        printResult(Boolean(o.json), job, () => human(job) + (job.downloadUrl ? `\n${job.downloadUrl}` : ''));
      });
    });

  server(cmd.command('download <id>').description('Download a completed snapshot\'s file (resumes a partial file already there)'))
    .option('--output <file>', 'where to save it (default: the name the store gives it, in the current directory)')
    .action(async (id: string, o: ServerOptions & { output?: string }) => {
      await withClient(o, async (client) => {
        const job = await client.get<Job>(`/api/v2/snapshots/${Number(id)}`);
        const ext = job.format === 'xlsx' ? 'xlsx' : `${job.format}.gz`;
        const path = o.output ?? `${job.collection}-snapshot-${job.id}.${ext}`;
        const bytes = await download(client, job, path);
        printResult(Boolean(o.json), { ...job, path, bytes }, () => `${human(job)}\nsaved to ${path} (${bytes} bytes downloaded)`);
      });
    });
}
