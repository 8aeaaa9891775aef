import { AppError, notFound } from '../errors/app-error.ts';
import { TASKS } from '../ai/engine.ts';
import { brandNamesIn } from '../ai/names.ts';
import { loadProductFacts } from '../ai/product-context.ts';
import { generateBodySchema, generationSchema } from '../ai/schemas.ts';
import type { JsonSchema } from '../resources/types.ts';
import type { McpTool, ToolArgs, ToolEnv } from './tool.ts';

const PRODUCTS_SCOPE = 'products:read';

function invalid(name: string, reason: string): AppError {
  return new AppError('invalid_parameter', `Argument "${name}" ${reason}.`, { errors: [{ name, reason }] });
}

/** The checks of POST /api/v2/ai/generate that a schema cannot say (a request needs a prompt or a task; sizes; the product's scope). */
function check(args: ToolArgs, env: ToolEnv): void {
  if (args.prompt === undefined && args.task === undefined) throw invalid('prompt', 'or "task" is required');
  if (args.task === 'translate' && args.text === undefined) throw invalid('text', 'is required for the translate task');
  const size = String(args.prompt ?? '').length + String(args.text ?? '').length;
  if (size > env.ai.maxPromptChars) throw new AppError('payload_too_large', `The prompt and text have ${size} characters together; the limit is ${env.ai.maxPromptChars}.`);
  if (args.productId !== undefined && !env.grant.scopes.has(PRODUCTS_SCOPE)) {
    throw new AppError('insufficient_scope', `Generating from a product needs the scope "${PRODUCTS_SCOPE}" as well.`);
  }
}

/** Runs the configured engine to the end (no streaming: a tool answers once); its refusals and failures are AppErrors, so tool errors. */
async function generate(args: ToolArgs, env: ToolEnv) {
  check(args, env);
  // The `ai` policy of the credential, as POST /api/v2/ai/generate: generation is dearer than a read.
  const take = await env.buckets.take(`${env.aiPolicy.name}:${env.grant.credentialId}`, env.aiPolicy);
  if (!take.allowed) throw new AppError('rate_limited', `The text generation rate limit is used up; retry in ${take.retryAfterSeconds} s.`);
  const productId = args.productId as number | undefined;
  const product = productId === undefined ? undefined : await loadProductFacts(env.store.db, productId);
  if (productId !== undefined && !product) throw notFound(`Product ${productId}`);
  const text = args.text as string | undefined;
  const names = text === undefined ? [] : await brandNamesIn(env.store.db, env.store.dialect, text);
  const engine = await env.engine();
  const deadline = AbortSignal.timeout(env.ai.timeoutMs);
  const run = engine.generate({
    task: args.task as (typeof TASKS)[number] | undefined,
    prompt: args.prompt as string | undefined,
    text,
    language: args.language as string | undefined,
    product,
    names,
    maxTokens: args.maxTokens as number,
    temperature: args.temperature as number | undefined,
    signal: AbortSignal.any([deadline, env.signal]),
  });
  let out = '';
  try {
    for (let step = await run.next(); ; step = await run.next()) {
      if (step.done) return { text: out, finishReason: step.value.finishReason, usage: step.value.usage, engine: engine.name, model: engine.model };
      out += step.value;
    }
  } catch (error) {
    if (error instanceof AppError && error.code !== 'engine_failed') throw error;
    if (deadline.aborted) throw new AppError('engine_timeout', 'The text generation engine did not finish in time.');
    if (error instanceof AppError) throw error;
    throw new AppError('engine_failed', 'The text generation engine failed.');
  }
}

const { stream: _stream, ...properties } = generateBodySchema.properties;

/** generate_text: POST /api/v2/ai/generate as a tool. */
export const generateTool: McpTool = {
  name: 'generate_text',
  title: 'Generate text',
  description:
    'Writes a product description, SEO title or description, or summary from a product\'s data (`task` with `productId`), translates `text` ' +
    '(`task: "translate"`, `language`), or follows a `prompt`. `prompt` or `task` is required. The configured engine may refuse what it cannot do well ' +
    '(the built-in one translates only store vocabulary and follows only a task, a language, "N bullet points", "at most N words" and "shorter"): ' +
    'a refusal is a tool error whose problem says what it could not do; do not retry it unchanged. Needs scope `ai:generate` ' +
    '(and `products:read` with `productId`); it draws from the credential\'s lower text-generation rate limit.',
  scope: 'ai:generate',
  inputSchema: { type: 'object', additionalProperties: false, properties: { ...properties, task: { ...properties.task, enum: [...TASKS] } } as JsonSchema },
  outputSchema: generationSchema as unknown as JsonSchema & { type: 'object' },
  readOnly: true,
  call: generate,
};
