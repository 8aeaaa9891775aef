/** One server-sent event (data is JSON, so it is always a single `data:` line). */
export function sseEvent(event: 'token' | 'done' | 'error', data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

export const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
  // Reverse proxies (nginx) would otherwise buffer the stream.
  'x-accel-buffering': 'no',
} as const;
