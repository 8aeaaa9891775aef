import createClient from 'openapi-fetch';
import { StoreApiError } from './errors.ts';
import type { paths } from './schema.ts';

export interface Credentials {
  clientId: string;
  clientSecret: string;
  /** Space-separated scopes to narrow the token to (default: all of the credential's). */
  scope?: string;
}

/** Renew this long before the token expires (a tenth of its life when that is shorter), so that no call carries a token about to lapse. */
const RENEW_BEFORE_MS = 60_000;

/**
 * Bearer tokens from `POST /oauth/token` (client credentials): fetched on first use, renewed before they
 * expire, and renewed at once when the API refuses one (`invalidate`). Concurrent callers share one request.
 */
export class TokenSource {
  private token: { value: string; renewAt: number } | undefined;
  private pending: Promise<string> | undefined;
  private readonly oauth;

  constructor(
    baseUrl: string,
    private readonly credentials: Credentials,
    fetchImpl: (request: Request) => Promise<Response>,
    private readonly now: () => number = Date.now,
  ) {
    this.oauth = createClient<paths, 'application/json'>({ baseUrl, fetch: fetchImpl });
  }

  /** A token valid for a while yet. */
  async get(): Promise<string> {
    if (this.token && this.now() < this.token.renewAt) return this.token.value;
    this.pending ??= this.fetchToken().finally(() => {
      this.pending = undefined;
    });
    return this.pending;
  }

  /** Forget `value` (the API refused it): the next `get()` asks for a new one. */
  invalidate(value: string): void {
    if (this.token?.value === value) this.token = undefined;
  }

  private async fetchToken(): Promise<string> {
    const { clientId, clientSecret, scope } = this.credentials;
    const { data, error, response } = await this.oauth.POST('/oauth/token', {
      body: { grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret, ...(scope ? { scope } : {}) },
    });
    if (!data) throw StoreApiError.from(response, error);
    const lifeMs = data.expires_in * 1000;
    this.token = { value: data.access_token, renewAt: this.now() + lifeMs - Math.min(RENEW_BEFORE_MS, lifeMs / 10) };
    return data.access_token;
  }
}
