import OpenAI from 'openai';
import { ConfigError, type Config } from '../../config.ts';
import type { FinishReason, GenerateInput, GenerationEnd, TextEngine, Usage } from '../engine.ts';
import { buildMessages } from '../prompt.ts';
import { engineFailed, engineTimedOut } from './errors.ts';

function failure(error: unknown, signal: AbortSignal): unknown {
  // Once our own signal fired, the route knows why (deadline or a client that left); pass the abort on.
  if (signal.aborted) return signal.reason;
  if (error instanceof OpenAI.APIConnectionTimeoutError) return engineTimedOut('The text generation engine did not answer in time.', error);
  if (error instanceof OpenAI.APIError && error.status) return engineFailed(`The text generation engine answered HTTP ${error.status}.`, error);
  if (error instanceof OpenAI.APIConnectionError) return engineFailed('The text generation engine could not be reached.', error);
  return engineFailed('The text generation engine failed.', error);
}

/** Rough token count for servers that report no usage: about four characters a token in European languages. */
const estimate = (text: string): number => Math.ceil(text.length / 4);

/**
 * Any OpenAI-compatible chat completions server (OpenAI, Ollama, vLLM, llama.cpp's server) through the
 * official client. The answer is always streamed from the server, so a client that leaves stops it at once.
 */
export function openaiEngine(ai: Config['ai']): TextEngine {
  if (!ai.model) throw new ConfigError('AI_ENGINE=openai needs AI_MODEL (a model the server knows, e.g. gpt-4o-mini or llama3.2)');
  if (!ai.baseUrl && !ai.apiKey) {
    throw new ConfigError('AI_ENGINE=openai needs AI_BASE_URL (an OpenAI-compatible server such as http://127.0.0.1:11434/v1) or AI_API_KEY (for OpenAI itself)');
  }
  const model = ai.model;
  const client = new OpenAI({
    baseURL: ai.baseUrl,
    // Local servers take any key; the client insists on one.
    apiKey: ai.apiKey ?? 'none',
    timeout: ai.timeoutMs,
    maxRetries: ai.maxRetries,
  });

  return {
    name: 'openai',
    model,
    async *generate(input: GenerateInput): AsyncGenerator<string, GenerationEnd, undefined> {
      const { system, user } = buildMessages(input);
      let finishReason: FinishReason = 'stop';
      let usage: Usage | undefined;
      let text = '';
      try {
        const stream = await client.chat.completions.create(
          {
            model,
            messages: [{ role: 'system', content: system }, { role: 'user', content: user }],
            max_tokens: input.maxTokens,
            ...(input.temperature === undefined ? {} : { temperature: input.temperature }),
            stream: true,
            stream_options: { include_usage: true },
          },
          { signal: input.signal },
        );
        for await (const chunk of stream) {
          const choice = chunk.choices[0];
          const piece = choice?.delta?.content;
          if (piece) {
            text += piece;
            yield piece;
          }
          if (choice?.finish_reason) finishReason = choice.finish_reason === 'length' ? 'length' : 'stop';
          if (chunk.usage) usage = { promptTokens: chunk.usage.prompt_tokens, completionTokens: chunk.usage.completion_tokens };
        }
        // The client's stream ends quietly when its signal fires; an unfinished answer must not look complete.
        input.signal.throwIfAborted();
      } catch (error) {
        throw failure(error, input.signal);
      }
      return { finishReason, usage: usage ?? { promptTokens: estimate(system + user), completionTokens: estimate(text) } };
    },
    close: async () => {},
  };
}
