/**
 * The error answers of an operation for its OpenAPI document: problems are served as application/problem+json
 * (RFC 9457), so the document says so, once for every status. Route files spread it into `schema.response`.
 */
export const errorResponses = (...statuses: number[]) =>
  Object.fromEntries(statuses.map((s) => [s, { description: 'An RFC 9457 problem; `code` is stable (see /problems).', content: { 'application/problem+json': { schema: { $ref: 'Problem#' } } } }]));
