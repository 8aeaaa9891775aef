import type { FastifyRequest } from 'fastify';
import type { DestinationStream, LoggerOptions } from 'pino';

export const REDACTED = '[redacted]';

/**
 * Query parameters whose values are secrets: OAuth client secrets and tokens a careless client puts in the
 * URL, signed-URL signatures, and the usual names of passwords and keys. Compared in lower case.
 */
const SECRET_PARAMS = new Set([
  'client_secret', 'access_token', 'refresh_token', 'id_token', 'token', 'sig', 'signature', 'secret', 'password', 'passwd', 'api_key', 'apikey',
]);

function paramName(raw: string): string {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' ')).toLowerCase();
  } catch {
    return raw.toLowerCase();
  }
}

/**
 * A URL as it may be logged: the values of secret query parameters and the password of an absolute URL's
 * userinfo are replaced by `[redacted]`; everything else is kept byte for byte, so a log line still shows
 * which request it was. Works on a request target (`/oauth/token?client_secret=…`) and on absolute URLs
 * (a webhook target, a followed store).
 */
export function redactUrl(url: string): string {
  let out = url.replace(/^([a-z][a-z0-9+.-]*:\/\/[^/?#@:]*:)[^/?#@]*@/i, `$1${REDACTED}@`);
  const q = out.indexOf('?');
  if (q < 0) return out;
  const hash = out.indexOf('#', q);
  const end = hash < 0 ? out.length : hash;
  const query = out.slice(q + 1, end)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const name = eq < 0 ? pair : pair.slice(0, eq);
      return SECRET_PARAMS.has(paramName(name)) ? `${name}=${REDACTED}` : pair;
    })
    .join('&');
  out = `${out.slice(0, q + 1)}${query}${out.slice(end)}`;
  return out;
}

/** Whatever a log call put under `url`, redacted when it is text. */
const urlSerializer = (value: unknown): unknown => (typeof value === 'string' ? redactUrl(value) : value);

/** Fastify's own request serializer, with the URL redacted. */
const requestSerializer = (req: FastifyRequest) => ({
  method: req.method,
  url: redactUrl(req.url),
  host: req.host,
  remoteAddress: req.ip,
  remotePort: req.socket?.remotePort,
});

/**
 * Logger options of the service. Two layers: serializers redact the query of any `url` and of a logged
 * request (pino's path redaction cannot reach inside a string), and `redact` censors fields that hold a
 * secret whole wherever a log call puts them (a credential header, a body's client_secret).
 */
export function loggerOptions(level: string, stream?: DestinationStream): LoggerOptions & { stream?: DestinationStream } {
  return {
    level,
    ...(stream ? { stream } : {}),
    serializers: { url: urlSerializer, req: requestSerializer },
    redact: {
      paths: [
        'authorization', 'headers.authorization', 'headers.cookie', 'req.headers.authorization', 'req.headers.cookie',
        'client_secret', 'access_token', 'body.client_secret', 'body.access_token', '*.client_secret', '*.access_token', '*.clientSecret',
      ],
      censor: REDACTED,
    },
  };
}
