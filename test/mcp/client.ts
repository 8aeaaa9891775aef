import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { TestApp } from '../helpers/app.ts';

/** Puts the test app on a real loopback port (the SDK's client speaks HTTP, not inject); its base URL. */
export async function listen(t: TestApp): Promise<string> {
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
}

/** The SDK's own client over Streamable HTTP, the bearer token in every request's headers. */
export async function connect(base: string, token: string): Promise<Client> {
  const client = new Client({ name: 'store-api-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  return client;
}

/** A successful call's structured content (the client has already checked it against the tool's output schema). */
export async function callOk(client: Client, name: string, args: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  assert.ok(!result.isError, `${name} failed: ${JSON.stringify(result.content)}`);
  assert.ok(result.structuredContent, `${name} has structured content`);
  // The text content carries the same JSON, for clients that read only text.
  const text = result.content.find((c) => c.type === 'text');
  assert.deepEqual(JSON.parse(text && text.type === 'text' ? text.text : 'null'), result.structuredContent);
  return result.structuredContent as Record<string, unknown>;
}

export interface ToolProblem {
  code: string;
  status: number;
  detail: string;
  errors?: Array<{ name: string; reason: string }>;
}

/** A call that must fail as a tool error (not a protocol error): the problem it carries. */
export async function callError(client: Client, name: string, args: Record<string, unknown> = {}): Promise<ToolProblem> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  assert.equal(result.isError, true, `${name} should fail: ${JSON.stringify(result.content).slice(0, 300)}`);
  assert.equal(result.structuredContent, undefined);
  const text = result.content.find((c) => c.type === 'text');
  assert.ok(text && text.type === 'text');
  return JSON.parse(text.text) as ToolProblem;
}

/** A JSON-RPC request posted by hand, as a client that does not use the SDK would. */
export function rpc(base: string, token: string | undefined, body: unknown, method = 'POST'): Promise<Response> {
  return fetch(`${base}/mcp`, {
    method,
    headers: { ...(method === 'POST' ? { 'content-type': 'application/json' } : {}), accept: 'application/json, text/event-stream', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: method === 'POST' ? JSON.stringify(body) : undefined,
  });
}

export const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};
