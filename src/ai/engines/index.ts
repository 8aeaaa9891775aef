import { ConfigError, type Config } from '../../config.ts';
import { ENGINE_NAMES, type TextEngine } from '../engine.ts';
import { builtinEngine } from './builtin/index.ts';
import { llamaEngine, type Logger } from './llama.ts';
import { openaiEngine } from './openai.ts';

/** The engine AI_ENGINE names, checked at start so a misconfiguration stops the server with one clear line. */
export async function createEngine(config: Config, log: Logger): Promise<TextEngine> {
  switch (config.ai.engine) {
    case 'builtin': return builtinEngine();
    case 'openai': return openaiEngine(config.ai);
    case 'llama': return llamaEngine(config.ai, log);
    default: throw new ConfigError(`AI_ENGINE must be one of ${ENGINE_NAMES.join(', ')}, got "${config.ai.engine}"`);
  }
}
