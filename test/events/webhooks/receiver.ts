import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface Received {
  id: string;
  timestamp: string;
  signature: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}

export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  /** Deliveries answered 2xx, by webhook-id. */
  accepted: Map<string, Received[]>;
  /** Decides each answer's status; `n` counts earlier requests with the same webhook-id. */
  respond: (r: Received, n: number) => number | 'hang';
  waitFor(predicate: () => boolean, timeoutMs?: number, what?: string): Promise<void>;
  /** Stops listening (the receiver "goes away"); `start` brings it back on the same port. */
  stop(): Promise<void>;
  start(): Promise<void>;
}

/** A real HTTP receiver on 127.0.0.1 that records every request. */
export async function startReceiver(port = 0): Promise<Receiver> {
  const sockets = new Set<Socket>();
  const hanging = new Set<http.ServerResponse>();
  const r: Receiver = {
    url: '',
    port,
    received: [],
    accepted: new Map(),
    respond: () => 200,
    waitFor: async (predicate, timeoutMs = 15_000, what = 'condition') => {
      const until = Date.now() + timeoutMs;
      while (!predicate()) {
        if (Date.now() > until) throw new Error(`timed out waiting for ${what}; received ${r.received.length}`);
        await new Promise((res) => setTimeout(res, 20));
      }
    },
    stop: async () => {
      // Connections go at once: a keep-alive client would otherwise hold an open server forever.
      const closed = new Promise<void>((res) => server.close(() => res()));
      for (const res of hanging) res.destroy();
      hanging.clear();
      server.closeAllConnections();
      for (const s of sockets) s.destroy();
      await closed;
    },
    start: () => new Promise<void>((res, rej) => {
      server.once('error', rej);
      server.listen(r.port, '127.0.0.1', () => {
        r.port = (server.address() as AddressInfo).port;
        r.url = `http://127.0.0.1:${r.port}/hooks`;
        res();
      });
    }),
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const one: Received = {
        id: String(req.headers['webhook-id']), timestamp: String(req.headers['webhook-timestamp']), signature: String(req.headers['webhook-signature']),
        headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now(),
      };
      const n = r.received.filter((x) => x.id === one.id).length;
      r.received.push(one);
      const status = r.respond(one, n);
      if (status === 'hang') {
        hanging.add(res);
        return;
      }
      if (status >= 200 && status < 300) r.accepted.set(one.id, [...(r.accepted.get(one.id) ?? []), one]);
      res.writeHead(status, { 'content-type': 'text/plain' }).end(status < 300 ? 'ok' : 'nope');
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await r.start();
  return r;
}

/** Verifies a delivery with the official Standard Webhooks library; returns the parsed body. */
export function verify(secret: string, m: Received): { type: string; timestamp: string; data: Record<string, unknown> } {
  return new Webhook(secret).verify(m.body, { 'webhook-id': m.id, 'webhook-timestamp': m.timestamp, 'webhook-signature': m.signature }) as { type: string; timestamp: string; data: Record<string, unknown> };
}
