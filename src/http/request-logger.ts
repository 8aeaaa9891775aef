import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions, LevelWithSilentOrString } from 'pino';

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';

/** Whether `logger` writes lines of `level`: pino's methods of a disabled level are its one shared no-op, `silent`. */
export const writesLevel = (logger: FastifyBaseLogger, level: Level): boolean => logger[level] !== logger.silent;

/**
 * A request's logger that becomes pino's child (with the request id bound) only when it first writes a line.
 * Fastify makes a child logger per request, and pino's `child()` copies the bindings, the serializers and the
 * redaction into a new object each time: under the read benchmark that was the largest single cost of the
 * per-request setup, on requests that, at the default level, never log (one line per request is written only
 * at `info`, by app.ts, and otherwise only problems are). A line at a disabled level costs a level check.
 */
class LazyRequestLogger implements FastifyBaseLogger {
  readonly #parent: FastifyBaseLogger;
  readonly #bindings: Bindings;
  #child: FastifyBaseLogger | undefined;

  constructor(parent: FastifyBaseLogger, bindings: Bindings) {
    this.#parent = parent;
    this.#bindings = bindings;
  }

  #real(): FastifyBaseLogger {
    return (this.#child ??= this.#parent.child(this.#bindings));
  }

  #log(level: Level, args: unknown[]): void {
    // The parent's level is the child's (nothing sets a level per request).
    if (!this.#child && !writesLevel(this.#parent, level)) return;
    const child = this.#real();
    (child[level] as (...a: unknown[]) => void).apply(child, args);
  }

  get level(): LevelWithSilentOrString {
    return this.#child ? this.#child.level : this.#parent.level;
  }

  set level(level: LevelWithSilentOrString) {
    this.#real().level = level;
  }

  // Methods on the prototype, not arrow-function fields: no closures made per request.
  fatal(...args: unknown[]): void {
    this.#log('fatal', args);
  }

  error(...args: unknown[]): void {
    this.#log('error', args);
  }

  warn(...args: unknown[]): void {
    this.#log('warn', args);
  }

  info(...args: unknown[]): void {
    this.#log('info', args);
  }

  debug(...args: unknown[]): void {
    this.#log('debug', args);
  }

  trace(...args: unknown[]): void {
    this.#log('trace', args);
  }

  silent(): void {}

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#real().child(bindings, options);
  }
}

/**
 * Fastify's `childLoggerFactory`: the lazy logger above, unless the route asks for its own level or serializers
 * (none of ours does), which only pino's child can apply.
 */
export function requestLogger(logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  if (options.level !== undefined || options.serializers !== undefined) return logger.child(bindings, options);
  return new LazyRequestLogger(logger, bindings);
}
