import type { FastifyPluginAsync } from 'fastify';
import type { AppContext } from '../context.ts';
import { errorResponses } from '../http/responses.ts';
import { ENGINE_NAMES, TASKS } from './engine.ts';
import { describeEngine } from './engines/index.ts';
import { SEO_DESCRIPTION_MAX, SEO_TITLE_MAX } from './prompt.ts';
import { DEFAULT_MAX_TOKENS, MAX_TOKENS } from './schemas.ts';
import '../http/types.ts';

const strings = { type: 'array', items: { type: 'string' } } as const;

export const engineSchema = {
  type: 'object',
  required: ['engine', 'model', 'tasks', 'languages', 'prompts', 'translation', 'streaming', 'limits'],
  additionalProperties: false,
  properties: {
    engine: { type: 'string', enum: ENGINE_NAMES, description: 'The engine `AI_ENGINE` names.' },
    model: { type: 'string', description: '`template-v1` for the built-in engine; the model name or GGUF file otherwise.' },
    tasks: {
      type: 'array',
      description: 'Each task and what it writes from: `product` (`productId`) and/or `text`.',
      items: {
        type: 'object',
        required: ['task', 'from'],
        additionalProperties: false,
        properties: { task: { type: 'string', enum: TASKS }, from: { type: 'array', items: { type: 'string', enum: ['product', 'text'] } } },
      },
    },
    languages: {
      type: 'object',
      required: ['any', 'tags'],
      additionalProperties: false,
      description: '`any: true`: whatever language the model writes; otherwise only the BCP 47 base tags in `tags` (others are `400`).',
      properties: { any: { type: 'boolean' }, tags: strings },
    },
    prompts: {
      type: 'object',
      required: ['free', 'instructions'],
      additionalProperties: false,
      description: '`free: true`: any instruction in `prompt`. Otherwise only `instructions` are followed and any other prompt is refused ' +
        '(`422 engine_cannot_follow_prompt`), never ignored.',
      properties: {
        free: { type: 'boolean' },
        instructions: {
          type: 'array',
          items: {
            type: 'object',
            required: ['name', 'description', 'examples'],
            additionalProperties: false,
            properties: { name: { type: 'string' }, description: { type: 'string' }, examples: strings },
          },
        },
      },
    },
    translation: {
      type: 'object',
      required: ['anyText', 'description'],
      additionalProperties: false,
      description: '`anyText: false`: `translate` refuses a text it cannot translate in full (`422 engine_cannot_translate`).',
      properties: { anyText: { type: 'boolean' }, description: { type: 'string' } },
    },
    streaming: { type: 'boolean', description: 'Whether `"stream": true` (or `Accept: text/event-stream`) answers with server-sent events.' },
    limits: {
      type: 'object',
      required: ['maxTokens', 'defaultMaxTokens', 'maxPromptChars', 'timeoutMs', 'seoTitleMaxChars', 'seoDescriptionMaxChars', 'rateLimit'],
      additionalProperties: false,
      properties: {
        maxTokens: { type: 'integer', description: 'The largest `maxTokens` a request may ask for.' },
        defaultMaxTokens: { type: 'integer' },
        maxPromptChars: { type: 'integer', description: '`prompt` and `text` together, in characters (`413` beyond).' },
        timeoutMs: { type: 'integer', description: 'A generation not finished by then ends with `504 engine_timeout`.' },
        seoTitleMaxChars: { type: 'integer' },
        seoDescriptionMaxChars: { type: 'integer' },
        rateLimit: {
          type: 'object',
          required: ['requestsPerSecond', 'burst'],
          additionalProperties: false,
          description: 'The `ai` policy, per credential, that `POST /api/v2/ai/generate` draws from.',
          properties: { requestsPerSecond: { type: 'number' }, burst: { type: 'number' } },
        },
      },
    },
  },
} as const;

/** GET /api/v2/ai/engine (API.md §7): what the configured engine can do, so a client asks only for that. */
export const engineRoutes: FastifyPluginAsync<{ ctx: AppContext }> = async (app, { ctx }) => {
  const { name, model, capabilities } = describeEngine(ctx.config.ai);
  // Settings do not change while the server runs: the answer is made once.
  const description = {
    engine: name,
    model,
    ...capabilities,
    limits: {
      maxTokens: MAX_TOKENS,
      defaultMaxTokens: DEFAULT_MAX_TOKENS,
      maxPromptChars: ctx.config.ai.maxPromptChars,
      timeoutMs: ctx.config.ai.timeoutMs,
      seoTitleMaxChars: SEO_TITLE_MAX,
      seoDescriptionMaxChars: SEO_DESCRIPTION_MAX,
      rateLimit: { requestsPerSecond: ctx.policies.ai.rps, burst: ctx.policies.ai.burst },
    },
  };

  app.get('/ai/engine', {
    config: { scope: 'ai:generate' },
    schema: {
      tags: ['Text generation'],
      summary: 'Describe the text generation engine',
      description:
        'What the engine the operator configured can do: its tasks and what each writes from, its languages, whether it follows free ' +
        'prompts (the built-in engine lists the few instructions it reads), whether it translates any text, streaming, and the limits of ' +
        '`POST /api/v2/ai/generate`. Needs scope `ai:generate`.',
      security: [{ oauth2: ['ai:generate'] }],
      response: { 200: engineSchema, ...errorResponses(401, 403, 429) },
    },
    handler: async () => description,
  });
};
