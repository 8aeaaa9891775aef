import { Readable } from 'node:stream';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.ts';
import { AppError, notFound } from '../errors/app-error.ts';
import { problemBody } from '../http/problem.ts';
import { errorResponses } from '../http/responses.ts';
import type { GenerateInput, GenerationEnd, TextEngine } from './engine.ts';
import { brandNamesIn } from './names.ts';
import { loadProductFacts } from './product-context.ts';
import { generateBodySchema, generationSchema, SSE_DESCRIPTION, type GenerateBody } from './schemas.ts';
import { SSE_HEADERS, sseEvent } from './sse.ts';
import '../http/types.ts';

const PRODUCTS_SCOPE = 'products:read';
/** What a generation that was stopped early "returns"; nobody reads it. */
const STOPPED: GenerationEnd = { finishReason: 'stop', usage: { promptTokens: 0, completionTokens: 0 } };

function invalid(name: string, reason: string): AppError {
  return new AppError('invalid_body', `Field "${name}" ${reason}.`, { errors: [{ name, reason }] });
}

/** The checks JSON Schema cannot say clearly: what each kind of request needs, and the prompt size. */
function check(body: GenerateBody, request: FastifyRequest, maxPromptChars: number): void {
  if (body.prompt === undefined && body.task === undefined) throw invalid('prompt', 'or "task" is required');
  if (body.task === 'translate' && body.text === undefined) throw invalid('text', 'is required for the translate task');
  const size = (body.prompt?.length ?? 0) + (body.text?.length ?? 0);
  if (size > maxPromptChars) {
    throw new AppError('payload_too_large', `The prompt and text have ${size} characters together; the limit is ${maxPromptChars}.`);
  }
  if (body.productId !== undefined && !request.grant?.scopes.has(PRODUCTS_SCOPE)) {
    throw new AppError('insufficient_scope', `Generating from a product needs the scope "${PRODUCTS_SCOPE}" as well.`, {
      headers: { 'www-authenticate': `Bearer realm="store-api", error="insufficient_scope", scope="${PRODUCTS_SCOPE}"` },
    });
  }
}

const wantsStream = (body: GenerateBody, request: FastifyRequest): boolean =>
  body.stream || /\btext\/event-stream\b/i.test(request.headers.accept ?? '');

/** Why a generation stopped, as the problem to answer: our deadline, the engine's own failure, or a bug. */
function asProblem(error: unknown, deadline: AbortSignal, gone: AbortSignal, request: FastifyRequest): AppError {
  if (error instanceof AppError && error.code !== 'engine_failed' && error.code !== 'engine_timeout') return error;
  if (gone.aborted) {
    // Nobody is left to read the answer; this only ends the handler.
    request.log.info('text generation stopped: the client left');
    return new AppError('engine_failed', 'The client closed the connection.');
  }
  if (deadline.aborted) {
    request.log.warn('text generation timed out');
    return new AppError('engine_timeout', 'The text generation engine did not finish in time.');
  }
  if (error instanceof AppError) {
    request.log.warn({ err: error.cause ?? error }, 'text generation failed');
    return error;
  }
  request.log.error({ err: error }, 'text generation failed');
  return new AppError('engine_failed', 'The text generation engine failed.');
}

/** POST /api/v2/ai/generate (API.md §7), served by the engine AI_ENGINE names. */
export const generateRoutes: FastifyPluginAsync<{ ctx: AppContext }> = async (app, { ctx }) => {
  // Made at start, so that a misconfigured engine stops the server with one clear line.
  const engine: TextEngine = await ctx.textEngine.get();
  app.addHook('onClose', async () => ctx.textEngine.close());
  const { timeoutMs, maxPromptChars } = ctx.config.ai;

  app.post<{ Body: GenerateBody }>('/ai/generate', {
    config: { scope: 'ai:generate', ratePolicy: 'ai' },
    schema: {
      tags: ['Text generation'],
      summary: 'Generate text',
      description:
        'Writes product descriptions, SEO titles and descriptions, summaries and translations, from a product\'s data or from ' +
        'your text. Needs scope `ai:generate` (and `products:read` with `productId`); rate-limited by its own, lower `ai` policy. ' +
        'What the configured engine can do (tasks, languages, prompts, limits): `GET /api/v2/ai/engine`. The built-in engine refuses ' +
        'what it cannot do well (`422`: a text it cannot translate in full, a prompt it cannot follow) rather than answer wrong text.',
      security: [{ oauth2: ['ai:generate'] }],
      body: generateBodySchema,
      response: {
        200: {
          description: 'The generated text (JSON), or server-sent events.',
          content: {
            'application/json': { schema: generationSchema },
            'text/event-stream': { schema: { type: 'string', description: SSE_DESCRIPTION } },
          },
        },
        ...errorResponses(400, 401, 403, 404, 413, 422, 429, 502, 504),
      },
    },
    handler: async (request, reply) => {
      const body = request.body;
      check(body, request, maxPromptChars);
      const product = body.productId === undefined ? undefined : await loadProductFacts(ctx.store.db, body.productId);
      if (body.productId !== undefined && !product) throw notFound(`Product ${body.productId}`);
      // Brand names in the caller's text stay as written (never translated).
      const names = body.text === undefined ? [] : await brandNamesIn(ctx.store.db, ctx.store.dialect, body.text);

      const deadline = AbortSignal.timeout(timeoutMs);
      const gone = new AbortController();
      reply.raw.on('close', () => {
        if (!reply.raw.writableFinished) gone.abort(new Error('the client closed the connection'));
      });
      const input: GenerateInput = {
        task: body.task,
        prompt: body.prompt,
        text: body.text,
        language: body.language,
        product,
        names,
        maxTokens: body.maxTokens,
        temperature: body.temperature,
        signal: AbortSignal.any([deadline, gone.signal]),
      };
      const run = engine.generate(input);
      const summary = (end: GenerationEnd) => ({ finishReason: end.finishReason, usage: end.usage, engine: engine.name, model: engine.model });

      if (!wantsStream(body, request)) {
        let text = '';
        try {
          for (let step = await run.next(); ; step = await run.next()) {
            if (step.done) return { text, ...summary(step.value) };
            text += step.value;
          }
        } catch (error) {
          throw asProblem(error, deadline, gone.signal, request);
        }
      }

      // The first piece decides the status: a failure before it is an ordinary problem answer.
      let first: IteratorResult<string, GenerationEnd>;
      try {
        first = await run.next();
      } catch (error) {
        throw asProblem(error, deadline, gone.signal, request);
      }
      async function* events(): AsyncGenerator<string> {
        try {
          let step = first;
          while (!step.done) {
            yield sseEvent('token', { text: step.value });
            step = await run.next();
          }
          yield sseEvent('done', summary(step.value));
        } catch (error) {
          if (gone.signal.aborted) return;
          const problem = asProblem(error, deadline, gone.signal, request);
          yield sseEvent('error', problemBody(ctx.config.publicUrl, String(request.id), problem.code, problem.message, problem.errors));
        } finally {
          // A client that left stops the engine (its generator's cleanup aborts the generation).
          await run.return(STOPPED);
        }
      }
      return reply.headers(SSE_HEADERS).send(Readable.from(events(), { objectMode: false }));
    },
  });
};
