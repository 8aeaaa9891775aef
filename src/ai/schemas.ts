import { PROBLEMS } from '../errors/codes.ts';
import { ID_BOUNDS } from '../modules/common-fields.ts';
import { ENGINE_NAMES, TASKS, type Task } from './engine.ts';
import { SEO_DESCRIPTION_MAX, SEO_TITLE_MAX } from './prompt.ts';

export const MAX_TOKENS = 4096;
export const DEFAULT_MAX_TOKENS = 300;

export interface GenerateBody {
  prompt?: string;
  task?: Task;
  productId?: number;
  text?: string;
  language?: string;
  maxTokens: number;
  temperature?: number;
  stream: boolean;
}

export const generateBodySchema = {
  type: 'object',
  additionalProperties: false,
  description: '`prompt` or `task` is required. With `productId` the engine is given the product, its brand, category path, parameters and filter values (the token then also needs `products:read`).',
  properties: {
    prompt: {
      type: 'string',
      minLength: 1,
      description: 'An instruction of your own; alone, or on top of a task. The built-in engine follows only a task, a language, ' +
        '"N bullet points", "at most N words" and "shorter" (see GET /api/v2/ai/engine) and refuses any other prompt with `422 engine_cannot_follow_prompt`.',
    },
    task: {
      type: 'string',
      enum: TASKS,
      description: `\`seo-title\` is at most ${SEO_TITLE_MAX} characters and \`seo-description\` at most ${SEO_DESCRIPTION_MAX} with the built-in engine (LLM engines are asked for the same). \`translate\` needs \`text\`; the built-in engine translates only text made of the store vocabulary, numbers and names, and refuses any other with \`422 engine_cannot_translate\`.`,
    },
    productId: { type: 'integer', ...ID_BOUNDS, description: 'The product to write about.' },
    text: { type: 'string', minLength: 1, description: 'The text to translate or summarise.' },
    language: {
      type: 'string',
      pattern: '^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$',
      description: 'BCP 47 tag of the language to write in. Without it: the language a `prompt` names, else English ' +
        '(the built-in engine answers a summary of `text` in the text\'s own language). The built-in engine writes en, cs, sk and de.',
    },
    maxTokens: { type: 'integer', minimum: 1, maximum: MAX_TOKENS, default: DEFAULT_MAX_TOKENS, description: 'Upper bound of the answer; reaching it ends with `finishReason: "length"`.' },
    temperature: { type: 'number', minimum: 0, maximum: 2, description: 'Sampling temperature. The built-in engine words the same request the same way unless it is above 0.' },
    stream: { type: 'boolean', default: false, description: 'Answer with server-sent events (also chosen by `Accept: text/event-stream`).' },
  },
  examples: [{ task: 'product-description', productId: 42, language: 'en', maxTokens: 300 }],
} as const;

const usageSchema = {
  type: 'object',
  required: ['promptTokens', 'completionTokens'],
  properties: { promptTokens: { type: 'integer' }, completionTokens: { type: 'integer' } },
} as const;

export const generationSchema = {
  type: 'object',
  required: ['text', 'engine', 'model', 'finishReason', 'usage'],
  properties: {
    text: { type: 'string' },
    engine: { type: 'string', enum: ENGINE_NAMES },
    model: { type: 'string', description: '`template-v1` for the built-in engine; the model name or GGUF file otherwise.' },
    finishReason: { type: 'string', enum: ['stop', 'length'], description: '`length` when `maxTokens` cut the answer.' },
    usage: usageSchema,
  },
} as const;

export const SSE_DESCRIPTION =
  'Server-sent events (with `"stream": true` or `Accept: text/event-stream`). Each piece of text is\n\n' +
  '    event: token\n    data: {"text":"…"}\n\n' +
  'and the stream ends with\n\n' +
  '    event: done\n    data: {"finishReason":"stop","usage":{"promptTokens":120,"completionTokens":85},"engine":"builtin","model":"template-v1"}\n\n' +
  'or, when the engine fails or times out after the first piece, with `event: error` whose data is a problem ' +
  `(\`${(['engine_failed', 'engine_timeout'] as const).filter((c) => c in PROBLEMS).join('`, `')}\`). Failures before the first piece ` +
  '(among them the built-in engine\'s refusals, `engine_cannot_translate` and `engine_cannot_follow_prompt`) are ordinary problem answers with their status.';
