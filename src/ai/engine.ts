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
  /** BCP 47 tag of the language to write in. */
  language: string;
  product: ProductFacts | undefined;
  maxTokens: number;
  temperature: number | undefined;
  /** Aborted when the client goes away or the deadline passes: the engine stops generating. */
  signal: AbortSignal;
}

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
