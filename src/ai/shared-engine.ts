import type { Config } from '../config.ts';
import type { TextEngine } from './engine.ts';
import { createEngine } from './engines/index.ts';
import type { Logger } from './engines/llama.ts';

/**
 * The app's one text engine, made on first use and shared by POST /api/v2/ai/generate and the MCP tool
 * generate_text: a local GGUF model made twice would hold its memory (gigabytes) twice.
 */
export class SharedEngine {
  private engine: Promise<TextEngine> | undefined;

  constructor(
    private readonly config: Config,
    private readonly log: Logger,
  ) {}

  get(): Promise<TextEngine> {
    this.engine ??= createEngine(this.config, this.log);
    // An engine that could not be made is tried again on the next call, not remembered as failed forever.
    this.engine.catch(() => (this.engine = undefined));
    return this.engine;
  }

  /** Closes the engine if one was made; safe to call more than once (each user of it closes it on its way out). */
  async close(): Promise<void> {
    const engine = this.engine;
    this.engine = undefined;
    if (engine) await (await engine.catch(() => undefined))?.close();
  }
}
