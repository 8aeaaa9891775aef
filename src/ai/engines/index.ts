import { basename } from 'node:path';
import { ConfigError, type Config } from '../../config.ts';
import { ENGINE_NAMES, LLM_CAPABILITIES, type EngineCapabilities, type EngineName, type TextEngine } from '../engine.ts';
import { BUILTIN_CAPABILITIES, BUILTIN_MODEL, builtinEngine } from './builtin/index.ts';
import type { Logger } from './llama.ts';

const unknownEngine = (name: string): ConfigError => new ConfigError(`AI_ENGINE must be one of ${ENGINE_NAMES.join(', ')}, got "${name}"`);

/**
 * The engine AI_ENGINE names, checked at start so a misconfiguration stops the server with one clear line.
 * The LLM engines' modules are imported only when configured: the openai client alone is about 12 MB of
 * resident code, which a server on the built-in engine (the default) would carry for nothing.
 */
export async function createEngine(config: Config, log: Logger): Promise<TextEngine> {
  switch (config.ai.engine) {
    case 'builtin': return builtinEngine();
    case 'openai': return (await import('./openai.ts')).openaiEngine(config.ai);
    case 'llama': return (await import('./llama.ts')).llamaEngine(config.ai, log);
    default: throw unknownEngine(config.ai.engine);
  }
}

/** What the configured engine is and can do, from the settings alone (nothing is loaded), for GET /api/v2/ai/engine. */
export function describeEngine(ai: Config['ai']): { name: EngineName; model: string; capabilities: EngineCapabilities } {
  switch (ai.engine) {
    case 'builtin': return { name: 'builtin', model: BUILTIN_MODEL, capabilities: BUILTIN_CAPABILITIES };
    case 'openai': return { name: 'openai', model: ai.model ?? '', capabilities: LLM_CAPABILITIES };
    case 'llama': return { name: 'llama', model: ai.modelPath ? basename(ai.modelPath) : '', capabilities: LLM_CAPABILITIES };
    default: throw unknownEngine(ai.engine);
  }
}
