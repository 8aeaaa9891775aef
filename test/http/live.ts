import net from 'node:net';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.ts';
import { createCredential } from '../../src/auth/credentials.service.ts';
import type { Scope } from '../../src/auth/scopes.ts';
import { loadConfig } from '../../src/config.ts';
import { createContext } from '../../src/context.ts';
import type { Dialect } from '../../src/db/database.ts';
import { ADMIN_TOKEN } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.ts';

/** These suites probe the HTTP layer from one address; rate limits are tested elsewhere. */
const UNTHROTTLED = {
  RATE_LIMIT_RPS: '100000', RATE_LIMIT_BURST: '100000', TOKEN_RATE_LIMIT_RPS: '100000', TOKEN_RATE_LIMIT_BURST: '100000',
  TOKEN_ADDRESS_RATE_LIMIT_RPS: '100000', TOKEN_ADDRESS_RATE_LIMIT_BURST: '100000',
};

export interface LogLine {
  level: number;
  msg: string;
  [key: string]: unknown;
}

/** The app as the server builds it, listening on 127.0.0.1, its log lines captured. */
export interface LiveServer {
  app: FastifyInstance;
  port: number;
  url: string;
  lines: LogLine[];
  /** Every captured line as its JSON text (to search for secrets). */
  logText(): string;
  credential(scopes: Scope[]): Promise<{ clientId: string; clientSecret: string }>;
  close(): Promise<void>;
}

export async function startLive(dialect: Dialect, env: Record<string, string> = {}): Promise<LiveServer> {
  const database: TestDatabase = await createTestDatabase(dialect);
  const config = loadConfig({ DATABASE_URL: database.url, ADMIN_TOKEN, HOST: '127.0.0.1', PORT: '0', PUBLIC_URL: 'http://store.test', ...UNTHROTTLED, ...env }, {});
  const ctx = await createContext(config, database.store);
  const lines: LogLine[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line) as LogLine);
      done();
    },
  });
  const app = await buildApp(ctx, { logger: { level: 'info', stream } });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const port = (app.server.address() as net.AddressInfo).port;
  return {
    app,
    port,
    url: `http://127.0.0.1:${port}`,
    lines,
    logText: () => lines.map((l) => JSON.stringify(l)).join('\n'),
    credential: async (scopes) => createCredential(database.store.db, ctx.hashKey, `live ${scopes.join(' ')}`, scopes),
    close: async () => {
      await app.close();
      await database.drop();
    },
  };
}

export interface Exchange {
  /** Everything the server sent. */
  text: string;
  /** Whether the server closed the connection before `waitMs` ran out. */
  closed: boolean;
}

/**
 * Opens a raw TCP connection, lets `talk` write to it (at its own pace), and collects what the server sends
 * until the server closes the connection or `waitMs` passes (then the client closes it). Bounded in time.
 */
export function exchange(port: number, talk: (socket: net.Socket) => void, waitMs = 5000): Promise<Exchange> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let closed = false;
    const giveUp = setTimeout(() => socket.destroy(), waitMs);
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('end', () => {
      closed = true;
    });
    socket.on('error', () => {
      closed = true;
    });
    socket.on('close', () => {
      clearTimeout(giveUp);
      resolve({ text: Buffer.concat(chunks).toString('utf8'), closed });
    });
    socket.on('connect', () => talk(socket));
  });
}

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** The first HTTP/1.1 response in `text` (a Content-Length body). */
export function parseResponse(text: string): RawResponse {
  const split = text.indexOf('\r\n\r\n');
  if (split < 0) throw new Error(`no HTTP response in ${JSON.stringify(text.slice(0, 200))}`);
  const [statusLine, ...headerLines] = text.slice(0, split).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of headerLines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const length = Number(headers['content-length'] ?? 0);
  const body = Buffer.from(text.slice(split + 4), 'utf8').subarray(0, length).toString('utf8');
  return { status: Number(statusLine.split(' ')[1]), headers, body };
}
