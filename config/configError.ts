/**
 * A config that does not parse. Its own module, without zod, so that workflow code can recognize it
 * without evaluating the config schemas (workflows/configInput.ts).
 */
export class ConfigError extends Error {
  override name = 'ConfigError';
}
