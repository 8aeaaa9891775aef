import { ConfigError } from '../../config.ts';

/**
 * The part of node-llama-cpp this service uses, typed here because the package is optional: the default
 * install does not carry it (it brings native builds of llama.cpp), and it is imported only when
 * AI_ENGINE=llama.
 */
export interface LlamaTokenMeter {
  usedInputTokens: number;
  usedOutputTokens: number;
}

export interface LlamaContextSequence {
  clearHistory(): Promise<void>;
  readonly tokenMeter: LlamaTokenMeter;
}

export interface LlamaContext {
  getSequence(): LlamaContextSequence;
  dispose(): Promise<void>;
}

export interface LlamaModel {
  readonly trainContextSize: number;
  createContext(options: { contextSize?: number; threads?: number; sequences?: number }): Promise<LlamaContext>;
  tokenize(text: string): unknown[];
  detokenize(tokens: readonly unknown[]): string;
  dispose(): Promise<void>;
}

export interface Llama {
  loadModel(options: { modelPath: string }): Promise<LlamaModel>;
  dispose(): Promise<void>;
}

export interface ChatPromptOptions {
  maxTokens?: number;
  temperature?: number;
  signal?: AbortSignal;
  stopOnAbortSignal?: boolean;
  onTextChunk?: (text: string) => void;
  onToken?: (tokens: unknown[]) => void;
}

export interface LlamaChatSession {
  promptWithMeta(prompt: string, options: ChatPromptOptions): Promise<{ responseText: string; stopReason: string }>;
  setChatHistory(history: Array<{ type: 'system'; text: string } | { type: 'user'; text: string } | { type: 'model'; response: string[] }>): void;
  dispose(options?: { disposeSequence?: boolean }): void;
}

/** A chat template (node-llama-cpp's ChatWrapper); opaque to us. */
export type ChatWrapper = object;

export interface LlamaBindings {
  getLlama(options: {
    gpu?: 'auto' | false;
    build?: 'never' | 'auto';
    maxThreads?: number;
    logLevel?: string;
    logger?: (level: string, message: string) => void;
  }): Promise<Llama>;
  LlamaChatSession: new (options: { contextSequence: LlamaContextSequence; chatWrapper?: ChatWrapper; systemPrompt?: string; autoDisposeSequence?: boolean }) => LlamaChatSession;
  /** The model's chat template; resolving it takes hundreds of milliseconds, so it is done once per model. */
  resolveChatWrapper(model: LlamaModel): ChatWrapper;
}

export const LLAMA_INSTALL = 'npm install node-llama-cpp@3';

/** Imports node-llama-cpp, or explains how to add it. */
export async function loadLlamaBindings(): Promise<LlamaBindings> {
  // A variable specifier keeps TypeScript from requiring the optional package at build time.
  const specifier = 'node-llama-cpp';
  try {
    return (await import(specifier)) as LlamaBindings;
  } catch (error) {
    if ((error as { code?: string }).code === 'ERR_MODULE_NOT_FOUND') {
      throw new ConfigError(`AI_ENGINE=llama needs the node-llama-cpp package, which the default install leaves out. Add it with: ${LLAMA_INSTALL}`);
    }
    throw error;
  }
}
