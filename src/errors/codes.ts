/** The closed set of problem codes. Each is documented at /problems/{slug} and in the OpenAPI document. */
export const PROBLEMS = {
  malformed_request: { status: 400, title: 'Malformed request', description: 'The request is not valid HTTP, or its URL is not valid percent-encoded UTF-8. The connection is closed after this answer when the HTTP itself was malformed.' },
  invalid_parameter: { status: 400, title: 'Invalid query parameter', description: 'A query or path parameter is unknown, malformed or out of range. `errors` names each one.' },
  invalid_body: { status: 400, title: 'Invalid request body', description: 'The request body does not match the schema of the operation. `errors` names each field.' },
  cursor_mismatch: { status: 400, title: 'Cursor does not match the request', description: 'The cursor was issued for other filters or another sort. Start again without a cursor, or send the same filters.' },
  invalid_token: { status: 401, title: 'Missing or invalid access token', description: 'Send `Authorization: Bearer <token>` with a token from POST /oauth/token that has not expired and whose credential is enabled.' },
  insufficient_scope: { status: 403, title: 'Insufficient scope', description: 'The token lacks the scope this operation needs; the `WWW-Authenticate` header names it.' },
  forbidden: { status: 403, title: 'Forbidden', description: 'The operation is not allowed here (for example, a local edit of data this store follows from a main store).' },
  not_found: { status: 404, title: 'Not found', description: 'No such resource, or no such route.' },
  method_not_allowed: { status: 405, title: 'Method not allowed', description: 'The route exists but not with this method.' },
  not_acceptable: { status: 406, title: 'Not acceptable', description: 'The Accept header allows none of the formats this endpoint offers.' },
  request_timeout: { status: 408, title: 'Request timeout', description: 'The request (its headers, or its whole body) did not arrive in time; the connection is closed.' },
  conflict: { status: 409, title: 'Conflict', description: 'The change breaks a reference or a uniqueness rule; `errors` names the fields.' },
  cursor_expired: { status: 410, title: 'Cursor expired', description: 'Events older than the cursor have been pruned. Take a fresh snapshot and follow from the current head.' },
  payload_too_large: { status: 413, title: 'Payload too large', description: 'The request body (or the prompt) exceeds the size limit.' },
  uri_too_long: { status: 414, title: 'URI too long', description: 'A path parameter is longer than 100 characters.' },
  unsupported_media_type: { status: 415, title: 'Unsupported media type', description: 'The request body has a Content-Type this operation does not accept.' },
  engine_cannot_translate: { status: 422, title: 'The engine cannot translate this text', description: 'The built-in engine translates only the store vocabulary (parameter and filter names and values, colours, materials, categories), numbers, units and names; `errors` lists each word of the text it has no translation for. `AI_ENGINE=openai` or `AI_ENGINE=llama` translates any text.' },
  engine_cannot_follow_prompt: { status: 422, title: 'The engine cannot follow this prompt', description: 'The built-in engine does not follow free prompts: it reads only a task, a language, N bullet points, at most N words and shorter (GET /api/v2/ai/engine lists them), and refuses the rest rather than ignore it; `errors` says what it could not follow. `AI_ENGINE=openai` or `AI_ENGINE=llama` follows any instruction.' },
  range_not_satisfiable: { status: 416, title: 'Range not satisfiable', description: 'The `Range` header asks for bytes outside the file (or several ranges); `Content-Range: bytes */<size>` gives its size.' },
  rate_limited: { status: 429, title: 'Too many requests', description: 'The credential used up its rate limit (on the admin API: the source address sent too many wrong admin tokens); retry after `Retry-After` seconds.' },
  headers_too_large: { status: 431, title: 'Request header fields too large', description: 'The request line and headers exceed 16 KiB together; the connection is closed.' },
  internal_error: { status: 500, title: 'Internal server error', description: 'A bug on our side. The `requestId` finds it in the logs.' },
  engine_failed: { status: 502, title: 'Text generation engine failed', description: 'The configured text generation engine returned an error.' },
  service_unavailable: { status: 503, title: 'Service unavailable', description: 'The service is starting, stopping or cannot reach its database.' },
  engine_timeout: { status: 504, title: 'Text generation engine timed out', description: 'The configured text generation engine did not answer in time.' },
} as const;

export type ProblemCode = keyof typeof PROBLEMS;

export const problemSlug = (code: ProblemCode): string => code.replace(/_/g, '-');
