import { backoffDelay, DEFAULT_BACKOFF, sleep, type Backoff } from './backoff.ts';
import { BodyTooLarge, HttpTransport, type HttpAnswer, type HttpStream } from './http.ts';

/** What the follower logs through: pino (the server's logger, or the CLI's) fits it. */
export interface SyncLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export type SyncErrorKind = 'transient' | 'permanent' | 'cursor_expired' | 'stopped';

/** A failure talking to the main store, classified by what the follower should do about it. */
export class SyncError extends Error {
  constructor(
    message: string,
    readonly kind: SyncErrorKind,
    readonly status?: number,
    /** From Retry-After on 429/503: how long the main store asked us to wait. */
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

export interface ChangeEvent {
  seq: number;
  type: string;
  resource: string;
  resourceId: number;
  occurredAt: string;
  data: Record<string, unknown>;
}

export interface ChangesPage {
  data: ChangeEvent[];
  pagination: { limit: number; nextCursor: string | null; hasMore: boolean };
}

export interface ListingPage {
  data: Array<Record<string, unknown>>;
  pagination: { limit: number; nextCursor: string | null; hasMore: boolean };
}

export interface ClientOptions {
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  /** Stops waits and requests in flight (the follower is shutting down). */
  signal?: AbortSignal;
  /** Tries of one request on transient failures (429 excepted); Infinity for a follower that must not give up. */
  maxAttempts?: number;
  backoff?: Backoff;
  timeoutMs?: number;
  /** Told of every retry, for logs and the state's last error. */
  onRetry?: (error: SyncError, attempt: number, delayMs: number) => void;
  /** The largest answer read (SYNC_MAX_BODY_BYTES); a larger one is cut off and refused. */
  maxBodyBytes?: number;
}

interface Token {
  value: string;
  renewAt: number;
  scopes: Set<string>;
}

const DEFAULT_TIMEOUT_MS = 30_000;
const HTTP_REASONS: Record<number, string> = { 400: 'bad request', 401: 'unauthorized', 403: 'forbidden', 404: 'not found', 410: 'gone', 429: 'too many requests' };

function retryAfterMs(header: string | null): number | undefined {
  if (!header) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

function problemText(res: HttpAnswer): string {
  try {
    const body = JSON.parse(res.text) as { detail?: string; error?: string; error_description?: string; code?: string };
    return body.detail ?? body.error_description ?? body.error ?? body.code ?? res.text.slice(0, 200);
  } catch {
    return res.text.slice(0, 200) || HTTP_REASONS[res.status] || `HTTP ${res.status}`;
  }
}

/** How the follower should treat an HTTP failure of the main store. */
function classify(status: number, detail: string, retryAfter: number | undefined, what: string): SyncError {
  const message = `${what}: HTTP ${status} ${detail}`.trim();
  if (status === 410) return new SyncError(message, 'cursor_expired', status);
  if (status === 429 || status === 408 || status >= 500) return new SyncError(message, 'transient', status, retryAfter);
  // 401 after a fresh token can be a main store whose database is restarting: retried, with back-off.
  if (status === 401) return new SyncError(message, 'transient', status);
  return new SyncError(message, 'permanent', status);
}

/**
 * The main store's public API as the follower uses it: client-credentials tokens renewed before they
 * expire and on 401, and every request retried on network errors, timeouts, 429 (after Retry-After) and
 * 5xx with exponential back-off and full jitter.
 */
export class MainStoreClient {
  readonly baseUrl: string;
  private token: Token | undefined;
  private tokenPromise: Promise<Token> | undefined;
  private readonly http: HttpTransport;

  constructor(private readonly options: ClientOptions) {
    this.http = new HttpTransport(options.maxBodyBytes);
    let url: URL;
    try {
      url = new URL(options.baseUrl);
    } catch {
      throw new SyncError(`--from must be the main store's base URL (http://host:port), got "${options.baseUrl}"`, 'permanent');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new SyncError(`--from must be an http(s) URL, got "${options.baseUrl}"`, 'permanent');
    this.baseUrl = url.toString().replace(/\/+$/, '');
    // Stopping tears down the connections, so no request of ours lingers on the main store.
    options.signal?.addEventListener('abort', () => this.close(), { once: true });
  }

  /** Closes the connections to the main store. */
  close(): void {
    this.http.close();
  }

  private get stopSignal(): AbortSignal | undefined {
    return this.options.signal;
  }

  private signalFor(timeoutMs: number): AbortSignal {
    const timeout = AbortSignal.timeout(timeoutMs);
    return this.stopSignal ? AbortSignal.any([this.stopSignal, timeout]) : timeout;
  }

  /** Scopes of the current token (after the first request). */
  async scopes(): Promise<Set<string>> {
    return (await this.currentToken()).scopes;
  }

  private async currentToken(): Promise<Token> {
    if (this.token && Date.now() < this.token.renewAt) return this.token;
    this.tokenPromise ??= this.fetchToken().finally(() => {
      this.tokenPromise = undefined;
    });
    this.token = await this.tokenPromise;
    return this.token;
  }

  private async fetchToken(): Promise<Token> {
    const started = Date.now();
    let res: HttpAnswer;
    try {
      res = await this.http.request(new URL(`${this.baseUrl}/oauth/token`), {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ grant_type: 'client_credentials', client_id: this.options.clientId, client_secret: this.options.clientSecret }),
        signal: this.signalFor(this.options.timeoutMs ?? DEFAULT_TIMEOUT_MS),
      });
    } catch (error) {
      throw this.networkError(error, 'token request');
    }
    if (res.status !== 200) {
      const detail = problemText(res);
      if (res.status === 400 || res.status === 401) throw new SyncError(`the main store refused the credential: ${detail}`, 'permanent', res.status);
      throw classify(res.status, detail, retryAfterMs(res.header('retry-after') ?? null), 'token request');
    }
    let body: { access_token?: string; expires_in?: number; scope?: string };
    try {
      body = JSON.parse(res.text) as typeof body;
    } catch {
      throw new SyncError('token request: the answer is not JSON', 'transient', res.status);
    }
    if (typeof body.access_token !== 'string') throw new SyncError('token request: the answer has no access_token', 'transient', res.status);
    const ttlMs = (Number(body.expires_in) || 3600) * 1000;
    // Renewed well before expiry, so that no request of a long-running follower meets an expired token.
    return { value: body.access_token, renewAt: started + ttlMs - Math.min(60_000, ttlMs / 4), scopes: new Set((body.scope ?? '').split(' ').filter(Boolean)) };
  }

  private networkError(error: unknown, what: string): SyncError {
    if (this.stopSignal?.aborted) return new SyncError('stopped', 'stopped');
    if (error instanceof SyncError) return error;
    // Asking again brings the same answer: only the operator (a larger SYNC_MAX_BODY_BYTES) can change it.
    if (error instanceof BodyTooLarge) return new SyncError(`${what}: ${error.message}`, 'permanent');
    const e = error as { name?: string; code?: string; message?: string };
    if (e.name === 'TimeoutError') return new SyncError(`${what}: timed out`, 'transient');
    const cause = e.code ?? e.message ?? String(error);
    return new SyncError(`${what}: ${cause}`, 'transient');
  }

  /** GET a JSON document of the main store's API, retried as described on the class. */
  get<T>(path: string, query: Record<string, string | number | undefined> = {}, timeoutMs = this.options.timeoutMs ?? DEFAULT_TIMEOUT_MS): Promise<T> {
    return this.call<T>('GET', path, query, undefined, timeoutMs);
  }

  /** POST a JSON body; the answer (200, 201 or 202) as JSON. Retried like a GET: what the follower posts (a snapshot request) may be repeated. */
  post<T>(path: string, body: unknown): Promise<T> {
    return this.call<T>('POST', path, {}, JSON.stringify(body), this.options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  }

  /** DELETE a resource of the main store (an abandoned snapshot job); the answer is not read. Retried like a GET. */
  async delete(path: string): Promise<void> {
    await this.call<unknown>('DELETE', path, {}, undefined, this.options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  }

  private async call<T>(method: 'GET' | 'POST' | 'DELETE', path: string, query: Record<string, string | number | undefined>, body: string | undefined, timeoutMs: number): Promise<T> {
    const url = new URL(`${this.baseUrl}${path}`);
    for (const [k, v] of Object.entries(query)) if (v !== undefined) url.searchParams.set(k, String(v));
    const maxAttempts = this.options.maxAttempts ?? 6;
    let attempt = 0;
    let renewed = false;
    for (;;) {
      if (this.stopSignal?.aborted) throw new SyncError('stopped', 'stopped');
      let failure: SyncError;
      try {
        const token = await this.currentToken();
        const headers: Record<string, string> = { authorization: `Bearer ${token.value}`, accept: 'application/json', ...(body === undefined ? {} : { 'content-type': 'application/json' }) };
        const res = await this.http.request(url, { method, headers, body, signal: this.signalFor(timeoutMs) });
        if (res.status >= 200 && res.status < 300) {
          if (method === 'DELETE') return undefined as T;
          try {
            return JSON.parse(res.text) as T;
          } catch {
            throw new SyncError(`${method} ${url.pathname}: the answer is not JSON`, 'transient', res.status);
          }
        }
        if (res.status === 401 && !renewed) {
          // Expired or revoked early (a restart of a main store with other keys, a rotated secret): renew once at once.
          this.token = undefined;
          renewed = true;
          continue;
        }
        failure = classify(res.status, problemText(res), retryAfterMs(res.header('retry-after') ?? null), `${method} ${url.pathname}`);
      } catch (error) {
        failure = this.networkError(error, `${method} ${url.pathname}`);
      }
      if (failure.kind !== 'transient') throw failure;
      // A 429 is the main store pacing us, not a failure: it does not use up the tries.
      if (failure.status !== 429) attempt++;
      if (attempt >= maxAttempts) throw failure;
      const delay = failure.retryAfterMs !== undefined ? failure.retryAfterMs + Math.random() * 250 : backoffDelay(Math.max(attempt, 1), this.options.backoff ?? DEFAULT_BACKOFF);
      this.options.onRetry?.(failure, attempt, Math.round(delay));
      await sleep(delay, this.stopSignal);
    }
  }

  /**
   * The file of a snapshot from byte `from` (a resumed download asks `Range`, guarded by `If-Range` with the
   * file's ETag so that a different file is never spliced in): one try, the caller retries. 200 or 206 with
   * the body unread; anything else is a SyncError classified like the other answers.
   */
  async snapshotFile(id: number, from: number, etag: string | undefined, idleMs = this.options.timeoutMs ?? DEFAULT_TIMEOUT_MS): Promise<HttpStream> {
    const url = new URL(`${this.baseUrl}/api/v2/snapshots/${id}/file`);
    const what = `GET ${url.pathname}`;
    try {
      const token = await this.currentToken();
      const headers: Record<string, string> = { authorization: `Bearer ${token.value}`, ...(from > 0 ? { range: `bytes=${from}-`, ...(etag ? { 'if-range': etag } : {}) } : {}) };
      const res = await this.http.stream(url, { method: 'GET', headers, signal: this.stopSignal ?? new AbortController().signal, idleMs });
      if (res.status === 200 || res.status === 206) return res;
      const chunks: Buffer[] = [];
      for await (const chunk of res.body) if (chunks.push(chunk as Buffer) > 64) break;
      res.body.destroy();
      if (res.status === 401) this.token = undefined;
      throw classify(res.status, problemText({ status: res.status, header: res.header, text: Buffer.concat(chunks).toString('utf8') }), retryAfterMs(res.header('retry-after') ?? null), what);
    } catch (error) {
      throw this.networkError(error, what);
    }
  }

  async head(): Promise<number> {
    const body = await this.get<{ seq: number }>('/api/v2/changes/head');
    return Number(body.seq);
  }

  /** The events after `after`; with `waitSeconds` the main store holds an empty answer until one arrives. */
  changes(after: number, limit: number, waitSeconds: number): Promise<ChangesPage> {
    return this.get<ChangesPage>('/api/v2/changes', { after, limit, wait: waitSeconds > 0 ? waitSeconds : undefined }, (waitSeconds + 15) * 1000);
  }

  list(collection: string, cursor: string | undefined, limit: number): Promise<ListingPage> {
    return this.get<ListingPage>(`/api/v2/${collection}`, { limit, cursor });
  }
}
