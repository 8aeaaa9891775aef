import type { ProductFacts } from './product-context.ts';

/** The tasks of API.md §7; each builds its prompt from the product data and/or the caller's text. */
export const TASKS = ['product-description', 'seo-title', 'seo-description', 'summary', 'translate'] as const;
export type Task = (typeof TASKS)[number];

export const ENGINE_NAMES = ['builtin', 'openai', 'llama'] as const;
export type EngineName = (typeof ENGINE_NAMES)[number];

/** What a caller asked for, with the product already loaded. Every engine gets the same input. */
export interface GenerateInput {
  task: Task | undefined;
  /** The caller's own instruction (alone, or on top of a task). */
  prompt: string | undefined;
  /** The text to summarise or translate. */
  text: string | undefined;
  /**
   * BCP 47 tag of the language to write in; undefined when the caller did not say (then English, unless the
   * prompt names a language, or for the built-in engine the language of the given text).
   */
  language: string | undefined;
  product: ProductFacts | undefined;
  /** Names of products and brands found in `text`: they are kept as written, never translated. */
  names?: string[];
  maxTokens: number;
  temperature: number | undefined;
  /** Aborted when the client goes away or the deadline passes: the engine stops generating. */
  signal: AbortSignal;
}

/** What text a task writes from: a product's data (`productId`) and/or the caller's `text`. */
export type Source = 'product' | 'text';

/** An instruction the engine reads in a `prompt`, for GET /api/v2/ai/engine. */
export interface PromptInstruction {
  name: string;
  description: string;
  examples: string[];
}

/** What an engine can do, as GET /api/v2/ai/engine tells a client (the route adds the model and the limits). */
export interface EngineCapabilities {
  tasks: Array<{ task: Task; from: Source[] }>;
  /** `any`: whatever language the model writes; otherwise only `tags` (the others are refused). */
  languages: { any: boolean; tags: string[] };
  /** `free`: any instruction; otherwise only `instructions`, and any other prompt is refused. */
  prompts: { free: boolean; instructions: PromptInstruction[] };
  /** `anyText`: translates free prose; otherwise what `description` says, and the rest is refused. */
  translation: { anyText: boolean; description: string };
  streaming: boolean;
}

/** The capabilities of an LLM engine: it follows any prompt and writes any language its model knows. */
export const LLM_CAPABILITIES: EngineCapabilities = {
  tasks: TASKS.map((task) => ({ task, from: task === 'translate' ? ['text'] : ['product', 'text'] })),
  languages: { any: true, tags: [] },
  prompts: { free: true, instructions: [] },
  translation: { anyText: true, description: 'Translates any text; product names, article numbers, numbers and units are asked to stay as they are.' },
  streaming: true,
};

export type FinishReason = 'stop' | 'length';

export interface Usage {
  promptTokens: number;
  completionTokens: number;
}

export interface GenerationEnd {
  finishReason: FinishReason;
  usage: Usage;
}

/**
 * A text generation engine. `generate` yields the text piece by piece as it is produced and returns how the
 * generation ended. It throws AppError `engine_failed` or `engine_timeout` for the engine's own failures,
 * and any error at all once `signal` is aborted (the route decides what an abort means).
 */
export interface TextEngine {
  readonly name: EngineName;
  readonly model: string;
  generate(input: GenerateInput): AsyncGenerator<string, GenerationEnd, undefined>;
  close(): Promise<void>;
}
