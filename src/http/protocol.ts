import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { AppError } from '../errors/app-error.ts';
import { writeProblem } from './client-errors.ts';
import { problemBody } from './problem.ts';

/**
 * The corners of HTTP/1.1 that Node answers by itself, with an empty body, unless told otherwise; here each
 * is a problem like every other error:
 * - `CONNECT` (a proxy tunnel): Node drops the connection without a word when nothing listens; a 405 problem.
 * - An HTTP/1.1 request without `Host`: Node's own check (turned off in server-limits.ts) answers a bare
 *   400; the same refusal, as a 400 `malformed_request` problem (RFC 9112 §3.2 requires the 400).
 * - `Expect` other than `100-continue`: Node answers a bare 417. RFC 9110 §10.1.1 lets a server ignore an
 *   expectation it does not meet, so the request is served as if it had none.
 */
export function addProtocolGuards(app: FastifyInstance, publicUrl: string): void {
  app.server.on('connect', (request, socket) => {
    const requestId = randomUUID();
    app.log.info({ requestId, method: request.method }, 'client error');
    writeProblem(socket as Socket, problemBody(publicUrl, requestId, 'method_not_allowed', 'CONNECT is not supported: this is not a proxy.'), 'linger');
  });
  app.server.on('checkExpectation', (request, response) => app.server.emit('request', request, response));
  // A callback hook: it runs on every request, and an async one would cost a promise each time.
  app.addHook('onRequest', (request, _reply, done) => {
    if (request.raw.httpVersion === '1.1' && !request.headers.host) return done(new AppError('malformed_request', 'An HTTP/1.1 request must carry a Host header.'));
    done();
  });
}
