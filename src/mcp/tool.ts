import type { Scope } from '../auth/scopes.ts';
import type { TokenGrant } from '../auth/tokens.ts';
import type { SnapshotSettings } from '../config.ts';
import type { Store } from '../db/database.ts';
import type { BucketStore, Policy } from '../ratelimit/bucket.ts';
import type { Registry } from '../resources/registry.ts';
import type { JsonSchema } from '../resources/types.ts';
import type { TextEngine } from '../ai/engine.ts';

/** What a tool call may use: the store, the caller's grant, and the few services the tools need (never the whole app context). */
export interface ToolEnv {
  store: Store;
  /** Signs and checks listing cursors (the installation's key, as for /api/v2). */
  hashKey: string;
  resources: Registry;
  grant: TokenGrant;
  publicUrl: string;
  /** The HTTP request's id: problems of tool errors carry it, as the API's do. */
  requestId: string;
  /** Aborted when the client goes away. */
  signal: AbortSignal;
  /** The text engine, made on first use (the generate_text tool). */
  engine(): Promise<TextEngine>;
  /** Generation draws from the credential's `ai` bucket, as POST /api/v2/ai/generate does. */
  buckets: BucketStore;
  aiPolicy: Policy;
  ai: { timeoutMs: number; maxPromptChars: number };
  log: { error(details: object, message: string): void };
  snapshots: SnapshotSettings;
}

export type ToolArgs = Record<string, unknown>;
export type ToolOutput = Record<string, unknown>;

/**
 * One MCP tool. Its schemas are JSON Schema (2020-12 compatible), mostly derived from the resource declarations;
 * the server validates the arguments against `inputSchema` before `call`, and `call`'s answer is the result's
 * `structuredContent`, which must match `outputSchema` (the SDK's client checks it). A call that cannot be
 * answered throws an AppError: the client gets a tool error carrying the API's problem.
 */
export interface McpTool {
  name: string;
  title: string;
  /** Written for a model: what the tool is for, what its inputs mean, how to continue a page. */
  description: string;
  /** The scope a token needs to see the tool in tools/list and to call it; a list: any one of them (the tool checks further). */
  scope: Scope | readonly Scope[];
  inputSchema: JsonSchema & { type: 'object' };
  outputSchema: JsonSchema & { type: 'object' };
  /** True when the tool only reads (MCP's readOnlyHint). */
  readOnly: boolean;
  call(args: ToolArgs, env: ToolEnv): Promise<ToolOutput>;
}

/** The snake_case of a collection or event name (`product-parameters` → `product_parameters`). */
export const snake = (name: string): string => name.replace(/[-\s]+/g, '_').replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();

/** Whether a token with `scopes` may see and call `tool`. */
export const allowed = (tool: McpTool, scopes: ReadonlySet<string>): boolean =>
  typeof tool.scope === 'string' ? scopes.has(tool.scope) : tool.scope.some((s) => scopes.has(s));

/** The scope(s) a tool needs, in words for an error. */
export const scopeWords = (tool: McpTool): string =>
  typeof tool.scope === 'string' ? `the scope "${tool.scope}"` : `one of the scopes ${tool.scope.map((s) => `"${s}"`).join(', ')}`;
