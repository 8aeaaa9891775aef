import assert from 'node:assert/strict';
import type { TestApp } from './app.ts';

/** POST /api/v2/ai/generate as a token holder, and its text when the answer must be a 200 (tokens made in `before`, so read late). */
export function generateCalls(app: () => TestApp, token: () => string) {
  const post = (payload: Record<string, unknown>) =>
    app().app.inject({ method: 'POST', url: '/api/v2/ai/generate', payload, headers: { authorization: `Bearer ${token()}` } });
  const text = async (payload: Record<string, unknown>): Promise<string> => {
    const res = await post(payload);
    assert.equal(res.statusCode, 200, `${JSON.stringify(payload)}: ${res.body}`);
    return res.json().text as string;
  };
  return { post, text };
}
