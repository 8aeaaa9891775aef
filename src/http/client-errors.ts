import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';
import type { ProblemCode } from '../errors/codes.ts';
import { problemBody, type ProblemBody } from './problem.ts';

/** How long a closed-by-us connection may linger so the client reads the answer before we reset it. */
const LINGER_MS = 2000;

/** Node's parser and timeout errors, and the problem each is. Anything else the parser refuses is malformed HTTP. */
function problemFor(code: string | undefined): { code: ProblemCode; detail: string } {
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return { code: 'request_timeout', detail: 'The request did not arrive in time.' };
  if (code === 'HPE_HEADER_OVERFLOW') return { code: 'headers_too_large', detail: 'The request line and headers exceed 16 KiB.' };
  return { code: 'malformed_request', detail: 'The request is not valid HTTP/1.1.' };
}

/** What Node exposes on a server socket: the response in progress, if a request got that far. */
type ServerSocket = Socket & { _httpMessage?: { headersSent?: boolean } | null };

/**
 * Answers what Node's HTTP parser refuses before Fastify sees a request (malformed HTTP, headers over the
 * limit) and requests that did not arrive in time: an RFC 9457 problem with a fresh requestId (the
 * headers, and any x-request-id among them, were never read), `Connection: close`, and the connection
 * closed (see writeProblem). Logged at info: a client's mistake or a slow network, not a fault here.
 */
export function clientErrorHandler(publicUrl: string): (this: { log: FastifyBaseLogger }, err: Error & { code?: string }, socket: Socket) => void {
  const answered = new WeakSet<Socket>();
  // Fastify calls it bound to the instance: `this.log` is the app's logger.
  return function (err, raw) {
    const socket = raw as ServerSocket;
    // A connection reset by the client has nothing left to answer (Node's own rule).
    if (err.code === 'ECONNRESET' || socket.destroyed || answered.has(socket)) {
      socket.destroy();
      return;
    }
    answered.add(socket);
    const requestId = randomUUID();
    const { code, detail } = problemFor(err.code);
    this.log.info({ requestId, err: { code: err.code, message: err.message }, remoteAddress: socket.remoteAddress }, 'client error');
    const inProgress = socket._httpMessage;
    // A response already under way cannot be followed by another on the same connection.
    if (!socket.writable || inProgress?.headersSent) {
      socket.destroy();
      return;
    }
    // A request whose headers were read (a body that did not arrive in time) still has a handler waiting for
    // its body: close at once once the answer is out, so that handler never gets to write after it.
    writeProblem(socket, problemBody(publicUrl, requestId, code, detail), inProgress ? 'at-once' : 'linger');
  };
}

/**
 * Writes a problem straight onto a socket, with `Connection: close`, and closes it: at once once written, or
 * after the client has had up to LINGER_MS to read it (a reset would make the client's kernel drop the answer
 * with whatever the client still sends, such as the rest of an oversized header block).
 */
export function writeProblem(socket: Socket, problem: ProblemBody, close: 'at-once' | 'linger'): void {
  const body = JSON.stringify(problem);
  const head = [
    `HTTP/1.1 ${problem.status} ${STATUS_CODES[problem.status]}`,
    'Content-Type: application/problem+json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    `x-request-id: ${problem.requestId}`,
    'Connection: close',
  ].join('\r\n');
  const linger = setTimeout(() => socket.destroy(), LINGER_MS);
  linger.unref();
  socket.once('close', () => clearTimeout(linger));
  if (close === 'at-once') socket.end(`${head}\r\n\r\n${body}`, () => socket.destroy());
  else socket.end(`${head}\r\n\r\n${body}`);
}
