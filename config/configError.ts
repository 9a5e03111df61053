/**
 * A config that does not parse. Its own module, without zod, so that workflow code can recognize it
 * without evaluating the config schemas (workflows/configInput.ts).
 */
import { InputError } from '../domain/errors.js';
export class ConfigError extends InputError {
  override name = 'ConfigError';
}
