import { Ajv, type ValidateFunction } from 'ajv';
// The low-level Server (marked deprecated "for advanced use cases"): our tool schemas are JSON Schema derived from the
// resource declarations, which it takes as they are; McpServer.registerTool wants zod shapes, which would mean
// translating every schema into zod and back again for tools/list.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { addFormats } from '../ajv-formats.ts';
import { AppError } from '../errors/app-error.ts';
import { problemBody } from '../http/problem.ts';
import type { Registry } from '../resources/registry.ts';
import { allowed, scopeWords, type McpTool, type ToolArgs, type ToolEnv } from './tool.ts';
import { allTools } from './tools.ts';


export const SERVER_INFO = { name: 'store-data-api', version: '2.0.0' };

const INSTRUCTIONS =
  'Read access to one online store\'s data: products, categories, brands, product parameter and filter values, orders, ' +
  'the changes feed, and text generation. The tools you see are those your token\'s scopes allow. Listings answer a page at a time: ' +
  'follow `pagination.nextCursor` with the same tool (and the same `limit`) until `pagination.hasMore` is false; for thousands of items, ' +
  'create_snapshot writes a file instead. Errors are tool errors carrying an RFC 9457 ' +
  'problem (`code`, `detail`, `errors`); fix the arguments they name rather than retrying unchanged.';

interface Compiled {
  tool: McpTool;
  /** Checks the arguments, filling in defaults and reading "12" as 12 where a number is meant (as query strings are). */
  input: ValidateFunction;
  /** Checks an answer against the output schema, turning driver values (numeric text) into the declared types. */
  output: ValidateFunction;
}

/** An Ajv error as the API names a bad parameter: the argument (its top-level name) and what is wrong, allowed values listed. */
function reasonOf(e: { instancePath: string; message?: string; params: Record<string, unknown> }): { name: string; reason: string } {
  if (e.params.additionalProperty !== undefined) return { name: String(e.params.additionalProperty), reason: 'is not an argument of this tool' };
  if (e.params.missingProperty !== undefined) return { name: String(e.params.missingProperty), reason: 'is required' };
  const [name = 'arguments', ...inner] = e.instancePath.split('/').slice(1);
  const allowed = Array.isArray(e.params.allowedValues) ? `: ${e.params.allowedValues.map(String).join(', ')}` : '';
  return { name, reason: `${inner.length ? `(at ${inner.join('.')}) ` : ''}${e.message ?? 'is invalid'}${allowed}` };
}

/**
 * The store's tools, compiled once per app; `server(env)` makes the MCP server of one HTTP request, which lists
 * and runs only the tools the caller's token has the scope for.
 */
export class ToolCatalogue {
  private readonly tools = new Map<string, Compiled>();
  /** tools/list answers by scope set (at most one per subset of the catalogue's scopes). */
  private readonly lists = new Map<string, Tool[]>();
  // A Server makes an Ajv instance of its own unless given one (for elicitation, which these tools do not use):
  // building it (with its formats) cost more than a tool call, so every request's server shares this one.
  private readonly validator = new AjvJsonSchemaValidator();

  constructor(resources: Registry) {
    const inputs = new Ajv({ strict: false, allErrors: true, useDefaults: true, coerceTypes: true });
    const outputs = new Ajv({ strict: false, allErrors: true, coerceTypes: true });
    addFormats(inputs);
    addFormats(outputs);
    for (const tool of allTools(resources)) {
      this.tools.set(tool.name, { tool, input: inputs.compile(tool.inputSchema), output: outputs.compile(tool.outputSchema) });
    }
  }

  get names(): string[] {
    return [...this.tools.keys()];
  }

  /** The tools a set of scopes may see, as tools/list describes them. */
  visible(scopes: ReadonlySet<string>): Tool[] {
    const key = [...scopes].sort().join(' ');
    let list = this.lists.get(key);
    if (!list) this.lists.set(key, (list = this.describe(scopes)));
    return list;
  }

  private describe(scopes: ReadonlySet<string>): Tool[] {
    return [...this.tools.values()]
      .filter(({ tool }) => allowed(tool, scopes))
      .map(({ tool }) => ({
        name: tool.name,
        title: tool.title,
        description: tool.description,
        inputSchema: tool.inputSchema,
        outputSchema: tool.outputSchema,
        annotations: { title: tool.title, readOnlyHint: tool.readOnly, openWorldHint: false },
      }));
  }

  async call(name: string, rawArgs: unknown, env: ToolEnv): Promise<CallToolResult> {
    try {
      const compiled = this.tools.get(name);
      if (!compiled) throw new AppError('not_found', `There is no tool named "${name}"; tools/list shows those this token may use.`);
      const { tool, input, output } = compiled;
      if (!allowed(tool, env.grant.scopes)) {
        throw new AppError('insufficient_scope', `The tool ${name} needs ${scopeWords(tool)}, which this token does not hold; ask the store's administrator for a credential with it.`);
      }
      const args = structuredClone((rawArgs ?? {}) as ToolArgs);
      if (!input(args)) {
        const errors = (input.errors ?? []).map(reasonOf);
        throw new AppError('invalid_parameter', `Invalid arguments for ${name}: ${errors.map((e) => `${e.name} ${e.reason}`).join('; ')}.`, { errors });
      }
      // Through JSON first (dates become text, as on the wire), then checked against what tools/list promised.
      const answer = JSON.parse(JSON.stringify(await tool.call(args, env))) as Record<string, unknown>;
      if (!output(answer)) {
        env.log.error({ tool: name, errors: output.errors }, 'an MCP tool answer does not match its output schema');
        throw new AppError('internal_error', 'The tool produced an answer that does not match its output schema.');
      }
      return { content: [{ type: 'text', text: JSON.stringify(answer) }], structuredContent: answer };
    } catch (error) {
      return this.toolError(error, env, name);
    }
  }

  /** A tool error carrying the API's problem: what a REST client would have been told, for the model to read. */
  private toolError(error: unknown, env: ToolEnv, name: string): CallToolResult {
    let problem: AppError;
    if (error instanceof AppError) problem = error;
    else {
      env.log.error({ err: error, tool: name }, 'an MCP tool failed');
      problem = new AppError('internal_error', 'The tool failed unexpectedly; the error is logged with this request id.');
    }
    const body = problemBody(env.publicUrl, env.requestId, problem.code, problem.message, problem.errors);
    return { isError: true, content: [{ type: 'text', text: JSON.stringify(body) }] };
  }

  /** A new MCP server for one request (stateless: nothing of it outlives the request). */
  server(env: ToolEnv): Server {
    const server = new Server(SERVER_INFO, { capabilities: { tools: { listChanged: false } }, instructions: INSTRUCTIONS, jsonSchemaValidator: this.validator });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: this.visible(env.grant.scopes) }));
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) =>
      this.call(request.params.name, request.params.arguments, { ...env, signal: AbortSignal.any([env.signal, extra.signal]) }),
    );
    return server;
  }
}
