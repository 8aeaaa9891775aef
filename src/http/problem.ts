import type { FastifyReply, FastifyRequest } from 'fastify';
import { PROBLEMS, problemSlug, type ProblemCode } from '../errors/codes.ts';
import type { FieldError } from '../errors/app-error.ts';

export const problemSchema = {
  $id: 'Problem',
  type: 'object',
  description: 'An RFC 9457 problem. `code` is stable; see /problems for the list.',
  required: ['type', 'title', 'status', 'code', 'requestId'],
  properties: {
    type: { type: 'string', format: 'uri' },
    title: { type: 'string' },
    status: { type: 'integer' },
    detail: { type: 'string' },
    code: { type: 'string', enum: Object.keys(PROBLEMS) },
    requestId: { type: 'string' },
    errors: {
      type: 'array',
      items: { type: 'object', required: ['name', 'reason'], properties: { name: { type: 'string' }, reason: { type: 'string' } } },
    },
  },
} as const;

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ProblemCode;
  requestId: string;
  errors?: FieldError[];
}

export function problemBody(publicUrl: string, requestId: string, code: ProblemCode, detail: string, errors?: FieldError[]): ProblemBody {
  const p = PROBLEMS[code];
  return {
    type: `${publicUrl}/problems/${problemSlug(code)}`,
    title: p.title,
    status: p.status,
    detail,
    code,
    requestId,
    ...(errors && errors.length ? { errors } : {}),
  };
}

/** Sends a problem. Serialized by hand: it must work even when the route's own serializer is the failure. */
export function sendProblem(request: FastifyRequest, reply: FastifyReply, publicUrl: string, code: ProblemCode, detail: string, errors?: FieldError[], headers: Record<string, string> = {}): FastifyReply {
  const body = problemBody(publicUrl, String(request.id), code, detail, errors);
  return reply
    .code(body.status)
    .header('x-request-id', body.requestId)
    .headers(headers)
    .header('content-type', 'application/problem+json; charset=utf-8')
    .serializer((payload: unknown) => JSON.stringify(payload))
    .send(body);
}
