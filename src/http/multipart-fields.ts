import type {} from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import { AppError } from '../errors/app-error.ts';

/**
 * A preValidation hook that reads a multipart/form-data body's fields into `request.body` (a field given
 * twice becomes an array), within the limits @fastify/multipart was registered with. It replaces that
 * plugin's `attachFieldsToBody`, which lets the parser's own errors through as they are: a body busboy
 * cannot parse ("Malformed part header", "Unexpected end of form") carries no status, so it reached the
 * error handler as a 500 and logged a stack trace per request. Here any failure that is not already a
 * client error (the limits' 413s, a premature close's 400) is the client's malformed body: a 400.
 */
export async function multipartFields(request: FastifyRequest): Promise<void> {
  if (!request.isMultipart()) return;
  // No prototype: field names come from the client (the parser refuses __proto__ and the like as well).
  const body: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  try {
    for await (const part of request.parts()) {
      if (part.type === 'file') {
        // Only reached when files are allowed; their content is not a field.
        await part.toBuffer();
        continue;
      }
      // The parser cuts a value or name at its limit without failing: a cut value is refused, not used.
      if (part.valueTruncated || part.fieldnameTruncated) throw new AppError('payload_too_large', `Field "${part.fieldname}" exceeds the size limit of a multipart field.`);
      const value: unknown = part.value;
      const before = body[part.fieldname];
      body[part.fieldname] = before === undefined ? value : [...(Array.isArray(before) ? before : [before]), value];
    }
  } catch (err) {
    if (err instanceof AppError) throw err;
    const status = (err as { statusCode?: unknown }).statusCode;
    if (typeof status === 'number' && status >= 400 && status < 500) throw err;
    throw new AppError('invalid_body', 'The multipart/form-data body is malformed.');
  }
  request.body = body;
}
