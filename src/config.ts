import 'dotenv/config';

/** Every setting of the service, validated once. Flags override environment variables. */
export interface Config {
  databaseUrl: string;
  /** PostgreSQL: how long a query waits for a connection (new, or free in the pool) before it fails with 503; 0 waits for ever. */
  databaseConnectTimeoutMs: number;
  /** How long a write waits its turn (other writers, a row lock, another process's import on SQLite) before a 503. */
  databaseWriteWaitMs: number;
  host: string;
  port: number;
  publicUrl: string;
  adminToken: string | undefined;
  rateLimit: { rps: number; burst: number };
  aiRateLimit: { rps: number; burst: number };
  /** POST /oauth/token: tokens issued per credential, and requests per source address (IPv6 by /64). */
  tokenRateLimit: { rps: number; burst: number };
  tokenAddressRateLimit: { rps: number; burst: number };
  /** Live tokens one credential may hold; a new one deletes the oldest beyond it. */
  maxLiveTokensPerCredential: number;
  /** Wrong admin tokens a source address may present before it gets 429 (per node). */
  adminFailureLimit: { rps: number; burst: number };
  ai: { engine: string; baseUrl: string | undefined; model: string | undefined; apiKey: string | undefined; modelPath: string | undefined; timeoutMs: number; threads: number | undefined; maxRetries: number; maxPromptChars: number };
  webhooks: { allowPrivate: boolean; retrySchedule: number[]; concurrency: number; pollMs: number };
  /** Days the event log (changes feed, webhook deliveries) is kept; older feed cursors get 410. */
  eventRetentionDays: number;
  logLevel: string;
  /** How far past the live heap V8 lets the old generation grow before it collects (HEAP_GROWTH_PERCENT); 0: V8's own choice. */
  heapGrowthPercent: number;
  bodyLimit: number;
  /** What a client may make the HTTP server hold (docs/operations.md, "Timeouts and limits"). */
  http: HttpLimits;
  /** Whole CSV/XLSX exports (docs/listing-and-formats.md, "Export limits"). */
  exports: ExportLimits;
  /**
   * The administrator's console at /admin (docs/console.md): a session ends after sessionIdleMs without use and
   * sessionMaxMs after sign-in; with trustForwardedProto, `X-Forwarded-Proto: https` from a TLS proxy marks its cookie Secure.
   */
  console: { sessionIdleMs: number; sessionMaxMs: number; trustForwardedProto: boolean };
  tokenTtlSeconds: number;
  /** Snapshots, bulk exports as background jobs (docs/snapshots.md). */
  snapshots: SnapshotSettings;
  /** Following a main store (store-api sync); local edits of followed collections are refused unless allowLocalEdits. */
  sync: {
    from: string | undefined; clientId: string | undefined; clientSecret: string | undefined; allowLocalEdits: boolean;
    /** A first sync may replace a catalogue this store already holds (otherwise refused). */
    force: boolean;
    /** The largest answer of the main store the follower reads; beyond it the answer is cut off and refused. */
    maxBodyBytes: number;
    /** How long a first copy waits for a snapshot the main store has not started before it pages through the listings. */
    snapshotQueueWaitMs: number;
  };
}

export interface HttpLimits {
  /** Headers must have arrived this long after a request's first byte. */
  headersTimeoutMs: number;
  /** The whole request, body included, must have arrived this long after its first byte (the response may take longer). */
  requestTimeoutMs: number;
  /** A kept-alive connection with no request in progress is closed after this. */
  keepAliveTimeoutMs: number;
  /** A connection on which nothing moves either way (a client that stopped reading) is closed after this. */
  idleTimeoutMs: number;
}

export interface ExportLimits {
  /** Whole exports running at once on this node (on PostgreSQL also at most half the pool); 503 beyond. */
  perNode: number;
  /** Whole exports one credential may run at once on this node; 429 beyond. */
  perCredential: number;
  /** An export whose client takes no bytes for this long is cut off, and everything it holds released. */
  idleTimeoutMs: number;
}

export interface SnapshotSettings {
  /** Jobs one node runs at once (SNAPSHOTS_PER_NODE); more wait queued. */
  perNode: number;
  /** Queued and running jobs one credential may have (SNAPSHOTS_PER_CREDENTIAL); 429 beyond. */
  perCredential: number;
  /** Days a finished file is kept (SNAPSHOT_TTL_DAYS). */
  ttlDays: number;
  /** Seconds a signed download URL is valid (SNAPSHOT_URL_TTL_SECONDS). */
  urlTtlSeconds: number;
  /** Seconds a node's claim on a job holds without renewal (SNAPSHOT_LEASE_SECONDS); a job of a dead node is run again after it. */
  leaseSeconds: number;
  /** How often an idle node looks for queued jobs (SNAPSHOT_POLL_MS). */
  pollMs: number;
  /** Rows per second one job may write at most (SNAPSHOT_MAX_ROWS_PER_SECOND); 0, the default, is no limit. */
  maxRowsPerSecond: number;
}

export class ConfigError extends Error {}

export type ConfigInput = Partial<Record<string, string | undefined>>;

function int(name: string, raw: string | undefined, fallback: number, min = 0): number {
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min) throw new ConfigError(`${name} must be a number >= ${min}, got "${raw}"`);
  return n;
}

function bool(name: string, raw: string | undefined, fallback: boolean): boolean {
  if (raw === undefined || raw === '') return fallback;
  if (/^(1|true|yes|on)$/i.test(raw)) return true;
  if (/^(0|false|no|off)$/i.test(raw)) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

/** Shorter admin tokens are refused at start: the admin token guards every write, so it must be unguessable. */
export const MIN_ADMIN_TOKEN_LENGTH = 32;

function adminToken(raw: string | undefined): string | undefined {
  if (!raw) return undefined;
  if (raw.length < MIN_ADMIN_TOKEN_LENGTH || /\s/.test(raw)) {
    throw new ConfigError(`ADMIN_TOKEN must be at least ${MIN_ADMIN_TOKEN_LENGTH} characters without spaces (got ${raw.length}); unset it to have one generated, or use: openssl rand -base64 32`);
  }
  return raw;
}

/**
 * The idle timeout must outlast the longest quiet answer: a long-poll (`wait` up to 30 s) and a text
 * generation (AI_TIMEOUT_MS) send nothing until they answer.
 */
const LONGEST_QUIET_ANSWER_MS = 35_000;

function httpLimits(get: (name: string) => string | undefined, aiTimeoutMs: number): HttpLimits {
  const limits = {
    headersTimeoutMs: int('HEADERS_TIMEOUT_MS', get('HEADERS_TIMEOUT_MS'), 15_000, 100),
    requestTimeoutMs: int('REQUEST_TIMEOUT_MS', get('REQUEST_TIMEOUT_MS'), 60_000, 100),
    keepAliveTimeoutMs: int('KEEP_ALIVE_TIMEOUT_MS', get('KEEP_ALIVE_TIMEOUT_MS'), 10_000, 100),
    idleTimeoutMs: int('IDLE_TIMEOUT_MS', get('IDLE_TIMEOUT_MS'), 120_000, LONGEST_QUIET_ANSWER_MS),
  };
  if (limits.headersTimeoutMs > limits.requestTimeoutMs) throw new ConfigError('HEADERS_TIMEOUT_MS must not exceed REQUEST_TIMEOUT_MS (the headers are part of the request)');
  if (limits.idleTimeoutMs <= aiTimeoutMs) throw new ConfigError(`IDLE_TIMEOUT_MS must exceed AI_TIMEOUT_MS (${aiTimeoutMs}): a generation sends nothing until it answers`);
  return limits;
}

export const DEFAULT_RETRY_SCHEDULE = '5,300,1800,7200,18000,36000,50400,72000,86400';

/** Builds the configuration from `env` (defaults to process.env) with `overrides` (from CLI flags) on top. */
export function loadConfig(overrides: ConfigInput = {}, env: ConfigInput = process.env): Config {
  const get = (name: string): string | undefined => overrides[name] ?? env[name];
  const host = get('HOST') || '127.0.0.1';
  const port = int('PORT', get('PORT'), 3000);
  const databaseUrl = get('DATABASE_URL') || 'sqlite:./data/store.db';
  if (!/^(sqlite:|postgres(ql)?:\/\/)/.test(databaseUrl)) {
    throw new ConfigError(`DATABASE_URL must start with sqlite: or postgres://, got "${databaseUrl}"`);
  }
  const publicUrl = (get('PUBLIC_URL') || `http://${host.includes(':') ? `[${host}]` : host}:${port}`).replace(/\/+$/, '');
  const schedule = (get('WEBHOOK_RETRY_SCHEDULE') || DEFAULT_RETRY_SCHEDULE).split(',').map((s) => s.trim());
  if (schedule.some((s) => !/^\d+(\.\d+)?$/.test(s))) {
    throw new ConfigError('WEBHOOK_RETRY_SCHEDULE must be a comma list of seconds');
  }
  const threads = get('AI_THREADS');
  const aiTimeoutMs = int('AI_TIMEOUT_MS', get('AI_TIMEOUT_MS'), 60_000, 1);
  return {
    databaseUrl,
    databaseConnectTimeoutMs: int('DATABASE_CONNECT_TIMEOUT_MS', get('DATABASE_CONNECT_TIMEOUT_MS'), 5000, 0),
    databaseWriteWaitMs: int('DATABASE_WRITE_WAIT_MS', get('DATABASE_WRITE_WAIT_MS'), 30_000, 1),
    host,
    port,
    publicUrl,
    adminToken: adminToken(get('ADMIN_TOKEN')),
    rateLimit: { rps: int('RATE_LIMIT_RPS', get('RATE_LIMIT_RPS'), 20, 0.001), burst: int('RATE_LIMIT_BURST', get('RATE_LIMIT_BURST'), 100, 1) },
    aiRateLimit: { rps: int('AI_RATE_LIMIT_RPS', get('AI_RATE_LIMIT_RPS'), 1, 0.001), burst: int('AI_RATE_LIMIT_BURST', get('AI_RATE_LIMIT_BURST'), 10, 1) },
    tokenRateLimit: { rps: int('TOKEN_RATE_LIMIT_RPS', get('TOKEN_RATE_LIMIT_RPS'), 1, 0.001), burst: int('TOKEN_RATE_LIMIT_BURST', get('TOKEN_RATE_LIMIT_BURST'), 20, 1) },
    tokenAddressRateLimit: { rps: int('TOKEN_ADDRESS_RATE_LIMIT_RPS', get('TOKEN_ADDRESS_RATE_LIMIT_RPS'), 5, 0.001), burst: int('TOKEN_ADDRESS_RATE_LIMIT_BURST', get('TOKEN_ADDRESS_RATE_LIMIT_BURST'), 50, 1) },
    maxLiveTokensPerCredential: int('MAX_LIVE_TOKENS_PER_CREDENTIAL', get('MAX_LIVE_TOKENS_PER_CREDENTIAL'), 100, 1),
    adminFailureLimit: { rps: int('ADMIN_FAILURE_RATE_LIMIT_RPS', get('ADMIN_FAILURE_RATE_LIMIT_RPS'), 0.2, 0.001), burst: int('ADMIN_FAILURE_RATE_LIMIT_BURST', get('ADMIN_FAILURE_RATE_LIMIT_BURST'), 20, 1) },
    ai: {
      engine: get('AI_ENGINE') || 'builtin',
      baseUrl: get('AI_BASE_URL') || undefined,
      model: get('AI_MODEL') || undefined,
      apiKey: get('AI_API_KEY') || undefined,
      modelPath: get('AI_MODEL_PATH') || undefined,
      timeoutMs: aiTimeoutMs,
      threads: threads ? int('AI_THREADS', threads, 1, 1) : undefined,
      maxRetries: int('AI_MAX_RETRIES', get('AI_MAX_RETRIES'), 2, 0),
      maxPromptChars: int('AI_MAX_PROMPT_CHARS', get('AI_MAX_PROMPT_CHARS'), 20_000, 1),
    },
    webhooks: {
      allowPrivate: bool('WEBHOOK_ALLOW_PRIVATE', get('WEBHOOK_ALLOW_PRIVATE'), false),
      retrySchedule: schedule.map(Number),
      concurrency: int('WEBHOOK_CONCURRENCY', get('WEBHOOK_CONCURRENCY'), 16, 1),
      pollMs: int('WEBHOOK_POLL_MS', get('WEBHOOK_POLL_MS'), 1000, 10),
    },
    eventRetentionDays: int('EVENT_RETENTION_DAYS', get('EVENT_RETENTION_DAYS'), 30, 1),
    logLevel: get('LOG_LEVEL') || 'info',
    heapGrowthPercent: int('HEAP_GROWTH_PERCENT', get('HEAP_GROWTH_PERCENT'), 50, 0),
    bodyLimit: int('BODY_LIMIT', get('BODY_LIMIT'), 1_048_576, 1024),
    http: httpLimits(get, aiTimeoutMs),
    exports: {
      perNode: int('EXPORTS_PER_NODE', get('EXPORTS_PER_NODE'), 16, 1),
      perCredential: int('EXPORTS_PER_CREDENTIAL', get('EXPORTS_PER_CREDENTIAL'), 4, 1),
      idleTimeoutMs: int('EXPORT_IDLE_TIMEOUT_MS', get('EXPORT_IDLE_TIMEOUT_MS'), 60_000, 100),
    },
    console: {
      sessionIdleMs: int('CONSOLE_SESSION_IDLE_MINUTES', get('CONSOLE_SESSION_IDLE_MINUTES'), 30, 1) * 60_000,
      sessionMaxMs: int('CONSOLE_SESSION_MAX_HOURS', get('CONSOLE_SESSION_MAX_HOURS'), 12, 0.1) * 3_600_000,
      trustForwardedProto: bool('CONSOLE_TRUST_FORWARDED_PROTO', get('CONSOLE_TRUST_FORWARDED_PROTO'), false),
    },
    tokenTtlSeconds: int('TOKEN_TTL_SECONDS', get('TOKEN_TTL_SECONDS'), 7200, 1),
    snapshots: {
      perNode: int('SNAPSHOTS_PER_NODE', get('SNAPSHOTS_PER_NODE'), 2, 0),
      perCredential: int('SNAPSHOTS_PER_CREDENTIAL', get('SNAPSHOTS_PER_CREDENTIAL'), 4, 1),
      ttlDays: int('SNAPSHOT_TTL_DAYS', get('SNAPSHOT_TTL_DAYS'), 7, 0.0001),
      urlTtlSeconds: int('SNAPSHOT_URL_TTL_SECONDS', get('SNAPSHOT_URL_TTL_SECONDS'), 3600, 1),
      leaseSeconds: int('SNAPSHOT_LEASE_SECONDS', get('SNAPSHOT_LEASE_SECONDS'), 30, 1),
      pollMs: int('SNAPSHOT_POLL_MS', get('SNAPSHOT_POLL_MS'), 1000, 10),
      maxRowsPerSecond: int('SNAPSHOT_MAX_ROWS_PER_SECOND', get('SNAPSHOT_MAX_ROWS_PER_SECOND'), 0, 0),
    },
    sync: {
      from: get('SYNC_FROM') || undefined,
      clientId: get('SYNC_CLIENT_ID') || undefined,
      clientSecret: get('SYNC_CLIENT_SECRET') || undefined,
      allowLocalEdits: bool('SYNC_ALLOW_LOCAL_EDITS', get('SYNC_ALLOW_LOCAL_EDITS'), false),
      force: bool('SYNC_FORCE', get('SYNC_FORCE'), false),
      maxBodyBytes: int('SYNC_MAX_BODY_BYTES', get('SYNC_MAX_BODY_BYTES'), 64 * 1024 * 1024, 1024),
      snapshotQueueWaitMs: int('SYNC_SNAPSHOT_QUEUE_WAIT_MS', get('SYNC_SNAPSHOT_QUEUE_WAIT_MS'), 5 * 60_000, 0),
    },
  };
}
