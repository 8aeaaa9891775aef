import type { LookupAddress, LookupOptions } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { signature } from './sign.ts';
import { hostOf, refuseAddress, resolveTarget } from './ssrf.ts';

export const DELIVERY_TIMEOUT_MS = 15_000;
const RESPONSE_KEPT = 1024;
const USER_AGENT = 'store-data-api-webhooks/1';

export interface Message {
  url: string;
  msgId: string;
  payload: string;
  /** The current secret first; during a rotation the previous one too. */
  secrets: string[];
}

export interface SendResult {
  ok: boolean;
  statusCode: number | null;
  error: string | null;
  /** The start of the receiver's answer, for the attempt log. */
  response: string | null;
  /** True when the attempt was cut short by `stop`, not by the receiver or the timeout. */
  abandoned: boolean;
}

/** Standard Webhooks headers; with two secrets the signature header carries both, space-separated. */
export function signedHeaders(m: Message, at: Date): Record<string, string> {
  const seconds = Math.floor(at.getTime() / 1000);
  return { 'webhook-id': m.msgId, 'webhook-timestamp': String(seconds), 'webhook-signature': m.secrets.map((s) => signature(s, m.msgId, seconds, m.payload)).join(' ') };
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * The connection's own DNS lookup, checked: the address connected to is the address checked, so a name
 * that resolves to a public address at subscribe time and a private one later (DNS rebinding) is refused.
 */
function guardedLookup(allowPrivate: boolean) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    resolveTarget(hostname, allowPrivate).then(
      (addresses) => {
        const wanted = options.family === 4 || options.family === 6 ? addresses.filter((a) => a.family === options.family) : addresses;
        const list = wanted.length ? wanted : addresses;
        if (options.all) callback(null, list);
        else callback(null, list[0].address, list[0].family);
      },
      (err: Error) => callback(Object.assign(err, { code: 'EREFUSED' }), ''),
    );
  };
}

export interface Sender {
  send(m: Message, stop: AbortSignal): Promise<SendResult>;
  close(): void;
}

/** Sends signed POSTs over keep-alive connections, at most `maxSockets` at once. */
export function createSender(options: { allowPrivate: boolean; maxSockets: number; timeoutMs?: number }): Sender {
  const agentOptions = { keepAlive: true, maxSockets: options.maxSockets, lookup: guardedLookup(options.allowPrivate) } as http.AgentOptions;
  const agents = { 'http:': new http.Agent(agentOptions), 'https:': new https.Agent(agentOptions) };
  const timeoutMs = options.timeoutMs ?? DELIVERY_TIMEOUT_MS;

  const send = async (m: Message, stop: AbortSignal): Promise<SendResult> => {
    const fail = (error: string, abandoned = false): SendResult => ({ ok: false, statusCode: null, error, response: null, abandoned });
    let url: URL;
    try {
      url = new URL(m.url);
    } catch {
      return fail('the URL is not valid');
    }
    // net.connect skips the lookup for a literal address, so a literal is checked here.
    const host = hostOf(url);
    const refused = isIP(host) ? refuseAddress(host, options.allowPrivate) : undefined;
    if (refused) return fail(refused.message);
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = AbortSignal.any([timeout, stop]);
    const client = url.protocol === 'https:' ? https : http;
    return new Promise<SendResult>((resolve) => {
      const body = Buffer.from(m.payload);
      const req = client.request(url, {
        method: 'POST',
        agent: agents[url.protocol as 'http:' | 'https:'],
        signal,
        lookup: guardedLookup(options.allowPrivate) as never,
        headers: { 'content-type': 'application/json', 'content-length': body.length, 'user-agent': USER_AGENT, ...signedHeaders(m, new Date()) },
      });
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        let kept = 0;
        res.on('data', (chunk: Buffer) => {
          if (kept < RESPONSE_KEPT) {
            chunks.push(chunk);
            kept += chunk.length;
          }
        });
        res.on('end', () => {
          const status = res.statusCode ?? 0;
          const response = Buffer.concat(chunks).toString('utf8').slice(0, RESPONSE_KEPT) || null;
          const ok = status >= 200 && status < 300;
          resolve({ ok, statusCode: status, error: ok ? null : `HTTP ${status}`, response, abandoned: false });
        });
        res.on('close', () => {
          if (!res.complete) resolve(fail(stop.aborted ? 'abandoned: the node stopped' : `the answer broke off or took over ${timeoutMs / 1000} s`, stop.aborted));
        });
        res.on('error', () => resolve(fail(stop.aborted ? 'abandoned: the node stopped' : `no complete answer within ${timeoutMs / 1000} s`, stop.aborted)));
      });
      req.on('error', (err: NodeJS.ErrnoException) => {
        if (stop.aborted) resolve(fail('abandoned: the node stopped', true));
        else if (timeout.aborted) resolve(fail(`no answer within ${timeoutMs / 1000} s`));
        else resolve(fail(err.code === 'EREFUSED' ? err.message : `${err.code ?? 'error'}: ${err.message}`));
      });
      req.end(body);
    });
  };

  return {
    send,
    close: () => {
      agents['http:'].destroy();
      agents['https:'].destroy();
    },
  };
}
