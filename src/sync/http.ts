import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';

export interface HttpAnswer {
  status: number;
  header(name: string): string | undefined;
  text: string;
}

/** The main store answered more than the follower reads (SYNC_MAX_BODY_BYTES); the connection was cut. */
export class BodyTooLarge extends Error {
  constructor(readonly limit: number) {
    super(`the answer is larger than ${limit} bytes (SYNC_MAX_BODY_BYTES)`);
  }
}

/** What the follower reads of one answer at most, by default: a page of 1000 items is a few MB. */
export const DEFAULT_MAX_BODY_BYTES = 64 * 1024 * 1024;

/** An answer whose body is still to be read (a snapshot's file): the caller reads or destroys it. */
export interface HttpStream {
  status: number;
  header(name: string): string | undefined;
  body: IncomingMessage;
}

export interface HttpRequest {
  method: 'GET' | 'POST' | 'DELETE';
  headers: Record<string, string>;
  body?: string;
  signal: AbortSignal;
  /** stream(): the connection is torn down when nothing arrives for this long (a main store gone mid-download). */
  idleMs?: number;
}

/** A response header by name, several values joined as HTTP joins them. */
function headerOf(res: http.IncomingMessage): (name: string) => string | undefined {
  return (name) => {
    const v = res.headers[name.toLowerCase()];
    return Array.isArray(v) ? v.join(', ') : v;
  };
}

/**
 * HTTP/1.1 with keep-alive connections of the follower's own, which `close()` tears down. Node 20's fetch
 * keeps the socket of an aborted request open, so a stopped follower would leave its long-poll hanging on
 * the main store (and hold up that store's shutdown) until the wait ran out; here an abort destroys it.
 */
export class HttpTransport {
  private readonly agents = { http: new http.Agent({ keepAlive: true, maxSockets: 4 }), https: new https.Agent({ keepAlive: true, maxSockets: 4 }) };

  /** `maxBodyBytes` bounds what one answer may make the follower hold: beyond it the connection is destroyed. */
  constructor(private readonly maxBodyBytes = DEFAULT_MAX_BODY_BYTES) {}

  /** The request, torn down when the signal aborts; `done` stops listening to the signal. */
  private open(url: URL, r: HttpRequest): { req: http.ClientRequest; done: () => void } {
    const secure = url.protocol === 'https:';
    const send = secure ? https.request : http.request;
    const req = send(url, { method: r.method, headers: r.headers, agent: secure ? this.agents.https : this.agents.http });
    const abort = () => req.destroy(r.signal.reason as Error);
    r.signal.addEventListener('abort', abort, { once: true });
    return { req, done: () => r.signal.removeEventListener('abort', abort) };
  }

  request(url: URL, r: HttpRequest): Promise<HttpAnswer> {
    return new Promise((resolve, reject) => {
      if (r.signal.aborted) return reject(r.signal.reason as Error);
      const { req, done } = this.open(url, r);
      req.on('error', (error) => {
        done();
        reject(error);
      });
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        const tooLarge = () => {
          done();
          // Destroyed, not drained: the rest is never read, and the socket is not handed back to the pool.
          req.destroy();
          reject(new BodyTooLarge(this.maxBodyBytes));
        };
        if (Number(res.headers['content-length']) > this.maxBodyBytes) return tooLarge();
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > this.maxBodyBytes) tooLarge();
          else chunks.push(chunk);
        });
        res.on('error', (error) => {
          done();
          reject(error);
        });
        res.on('end', () => {
          done();
          resolve({ status: res.statusCode ?? 0, header: headerOf(res), text: Buffer.concat(chunks).toString('utf8') });
        });
      });
      req.end(r.body);
    });
  }

  /**
   * The answer with its body unread, for a body too large to hold (a snapshot's file). The signal still
   * tears the connection down while the body is being read.
   */
  stream(url: URL, r: HttpRequest): Promise<HttpStream> {
    return new Promise((resolve, reject) => {
      if (r.signal.aborted) return reject(r.signal.reason as Error);
      const { req, done } = this.open(url, r);
      req.on('error', (error) => {
        done();
        reject(error);
      });
      req.on('close', done);
      if (r.idleMs) req.setTimeout(r.idleMs, () => req.destroy(Object.assign(new Error(`nothing arrived for ${r.idleMs} ms`), { name: 'TimeoutError' })));
      req.on('response', (res) => resolve({ status: res.statusCode ?? 0, header: headerOf(res), body: res }));
      req.end(r.body);
    });
  }

  /** Closes every connection, idle or in use. */
  close(): void {
    this.agents.http.destroy();
    this.agents.https.destroy();
  }
}
