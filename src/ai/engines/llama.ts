import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { basename } from 'node:path';
import { ConfigError, type Config } from '../../config.ts';
import type { GenerateInput, GenerationEnd, TextEngine } from '../engine.ts';
import { buildMessages } from '../prompt.ts';
import { ChunkQueue } from './chunk-queue.ts';
import { engineFailed } from './errors.ts';
import { loadLlamaBindings, type ChatWrapper, type Llama, type LlamaBindings, type LlamaChatSession, type LlamaContext, type LlamaContextSequence, type LlamaModel } from './llama-bindings.ts';
import { Turnstile } from './turnstile.ts';

/** Enough for a product's facts and a long description; more only costs memory (the KV cache). */
const MAX_CONTEXT = 4096;

export interface Logger {
  warn(message: string): void;
  error(message: string): void;
}

/**
 * node-llama-cpp's default thread count assumes the machine is the model's alone; leave a core to the
 * HTTP server and the database unless the operator says otherwise.
 */
export const defaultThreads = (): number => Math.max(1, availableParallelism() - 1);

interface Loaded {
  llama: Llama;
  model: LlamaModel;
  context: LlamaContext;
  sequence: LlamaContextSequence;
  chatWrapper: ChatWrapper;
}

/**
 * A local GGUF model run in-process by llama.cpp (node-llama-cpp). The model starts loading at once (a failed
 * load is retried by the next request); requests take turns on one context sequence, which is what a CPU
 * can serve well.
 */
export async function llamaEngine(ai: Config['ai'], log: Logger): Promise<TextEngine> {
  const modelPath = ai.modelPath;
  if (!modelPath) throw new ConfigError('AI_ENGINE=llama needs AI_MODEL_PATH, the path of a GGUF model file');
  if (!existsSync(modelPath)) throw new ConfigError(`AI_MODEL_PATH ${modelPath} does not exist`);
  const bindings: LlamaBindings = await loadLlamaBindings();
  const threads = ai.threads ?? defaultThreads();
  const turnstile = new Turnstile();
  let loading: Promise<Loaded> | undefined;

  const load = (): Promise<Loaded> => {
    loading ??= (async () => {
      const llama = await bindings.getLlama({
        gpu: 'auto',
        // Never compile llama.cpp (or download its sources) at run time: the prebuilt binary or nothing.
        build: 'never',
        maxThreads: threads,
        logLevel: 'warn',
        logger: (level, message) => (level === 'error' || level === 'fatal' ? log.error(message) : log.warn(message)),
      });
      const model = await llama.loadModel({ modelPath });
      const context = await model.createContext({ contextSize: Math.min(model.trainContextSize, MAX_CONTEXT), threads, sequences: 1 });
      return { llama, model, context, sequence: context.getSequence(), chatWrapper: bindings.resolveChatWrapper(model) };
    })();
    loading.catch(() => (loading = undefined));
    return loading;
  };

  // Warm up in the background: a real model takes seconds to load, and the first caller should not wait for it.
  load().catch((error: unknown) => log.error(`AI_MODEL_PATH ${modelPath} could not be loaded: ${String(error)}`));

  return {
    name: 'llama',
    model: basename(modelPath),
    async *generate(input: GenerateInput): AsyncGenerator<string, GenerationEnd, undefined> {
      const { system, user } = buildMessages(input);
      let loaded: Loaded;
      try {
        loaded = await load();
      } catch (error) {
        throw engineFailed('The local model could not be loaded.', error);
      }
      const release = await turnstile.enter(input.signal);
      // Our own stop, so that a consumer who stops reading ends the generation before the sequence is reused.
      const stop = new AbortController();
      const signal = AbortSignal.any([input.signal, stop.signal]);
      const { sequence, chatWrapper } = loaded;
      const queue = new ChunkQueue();
      let completionTokens = 0;
      let settled: Promise<unknown> = Promise.resolve();
      let session: LlamaChatSession | undefined;
      try {
        await sequence.clearHistory();
        session = new bindings.LlamaChatSession({ contextSequence: sequence, chatWrapper, systemPrompt: system, autoDisposeSequence: false });
        const inputBefore = sequence.tokenMeter.usedInputTokens;
        const result = session.promptWithMeta(user, {
          maxTokens: input.maxTokens,
          ...(input.temperature === undefined ? {} : { temperature: input.temperature }),
          signal,
          stopOnAbortSignal: true,
          onTextChunk: (text) => queue.push(text),
          onToken: (tokens) => (completionTokens += tokens.length),
        });
        settled = result.then(() => queue.end(), (error: unknown) => queue.fail(error));
        for await (const text of queue) yield text;
        const { stopReason } = await result;
        signal.throwIfAborted();
        return {
          finishReason: stopReason === 'maxTokens' ? 'length' : 'stop',
          usage: { promptTokens: sequence.tokenMeter.usedInputTokens - inputBefore, completionTokens },
        };
      } catch (error) {
        if (signal.aborted) throw input.signal.aborted ? input.signal.reason : error;
        throw engineFailed('The local model failed while generating.', error);
      } finally {
        stop.abort();
        await settled;
        session?.dispose({ disposeSequence: false });
        release();
      }
    },
    close: async () => {
      const pending = loading;
      loading = undefined;
      if (!pending) return;
      const loaded = await pending.catch(() => undefined);
      if (!loaded) return;
      await loaded.context.dispose();
      await loaded.model.dispose();
      await loaded.llama.dispose();
    },
  };
}
