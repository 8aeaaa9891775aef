import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { after } from 'node:test';
import { createCredential, hashingKey } from '../../src/auth/credentials.service.ts';
import type { Scope } from '../../src/auth/scopes.ts';
import type { TestDatabase } from '../helpers/databases.ts';
import { untilFinished, type JobView } from './helpers.ts';

/** Limits out of the way (the tests poll), quiet logs. */
const ENV = { LOG_LEVEL: 'warn', RATE_LIMIT_RPS: '100000', RATE_LIMIT_BURST: '100000', TOKEN_RATE_LIMIT_RPS: '100000', TOKEN_RATE_LIMIT_BURST: '100000', SNAPSHOT_POLL_MS: '50' };

/** `store-api serve` as its own process, as an operator runs it: a node that can be killed for real. */
export interface Node {
  child: ChildProcess;
  url: string;
  /** `kill -9`: no clean stop, no chance to give its jobs back. */
  kill(): Promise<void>;
  /** SIGTERM, and its exit awaited (a no-op once it has exited). */
  stop(): Promise<void>;
}

/** A suite's database and nodes: every node still alive is killed and the database dropped after the suite. */
export function suiteNodes(): { db?: TestDatabase; nodes: Node[] } {
  const held: { db?: TestDatabase; nodes: Node[] } = { nodes: [] };
  after(async () => {
    for (const node of held.nodes) await node.kill();
    await held.db?.drop();
  });
  return held;
}

export async function serveNode(database: TestDatabase, env: Record<string, string> = {}): Promise<Node> {
  const child = spawn(process.execPath, ['bin/store-api.js', 'serve', '--host', '127.0.0.1', '--port', '0'], { env: { ...process.env, ...ENV, ...env, DATABASE_URL: database.url }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const exited = once(child, 'exit');
  const started = new Promise<string>((resolve, reject) => {
    // Minutes, not seconds: on a loaded machine a start (tsx compiling the app) has taken over a minute.
    const timer = setTimeout(() => reject(new Error(`serve did not start: ${output}`)), 180_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const m = /listening on (http:\/\/\S+)/.exec(output);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    void exited.then(([code]) => reject(new Error(`serve exited with ${String(code)}: ${output}`)));
  });
  // A node that did not start in time is not left running for nobody to stop.
  const url = await started.catch((err: unknown) => {
    child.kill('SIGKILL');
    throw err;
  });
  const signal = async (name: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(name);
    await exited;
  };
  return { child, url, kill: () => signal('SIGKILL'), stop: () => signal('SIGTERM') };
}

/** A credential in the database and a token for it from `node`'s /oauth/token. */
export async function tokenOn(database: TestDatabase, node: Node, scopes: Scope[]): Promise<string> {
  const issued = await createCredential(database.store.db, await hashingKey(database.store.db), 'snapshot node test', scopes);
  const res = await fetch(`${node.url}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ grant_type: 'client_credentials', client_id: issued.clientId, client_secret: issued.clientSecret }) });
  if (res.status !== 200) throw new Error(`token: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { access_token: string }).access_token;
}

async function call(node: Node, token: string, path: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`${node.url}${path}`, { ...init, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...init.headers } });
}

export async function createJobOn(node: Node, token: string, body: Record<string, unknown>): Promise<JobView> {
  const res = await call(node, token, '/api/v2/snapshots', { method: 'POST', body: JSON.stringify(body) });
  if (res.status !== 202) throw new Error(`POST /api/v2/snapshots: ${res.status} ${await res.text()}`);
  return (await res.json()) as JobView;
}

export async function jobOn(node: Node, token: string, id: number): Promise<JobView> {
  const res = await call(node, token, `/api/v2/snapshots/${id}`);
  if (res.status !== 200) throw new Error(`GET /api/v2/snapshots/${id}: ${res.status} ${await res.text()}`);
  return (await res.json()) as JobView;
}

/** Waits until the job, as `node` shows it, has finished (completed or failed). */
export const finishedOn = (node: Node, token: string, id: number): Promise<JobView> => untilFinished(id, () => jobOn(node, token, id), 120_000, 100);

/** The file's bytes from `node`: with the bearer token, or (token undefined) by a URL alone, as curl or a browser fetches it. */
export async function fileOn(node: Node, token: string | undefined, path: string): Promise<Buffer> {
  const res = await fetch(`${node.url}${path}`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return Buffer.from(await res.arrayBuffer());
}

/** Every item of a collection through `node`'s JSON listing, page by page. */
export async function listOn(node: Node, token: string, collection: string): Promise<Array<Record<string, unknown>>> {
  const items: Array<Record<string, unknown>> = [];
  let cursor: string | null = null;
  do {
    const res = await call(node, token, `/api/v2/${collection}?limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    if (res.status !== 200) throw new Error(`${collection}: ${res.status} ${await res.text()}`);
    const body = (await res.json()) as { data: Array<Record<string, unknown>>; pagination: { nextCursor: string | null } };
    items.push(...body.data);
    cursor = body.pagination.nextCursor;
  } while (cursor);
  return items;
}
