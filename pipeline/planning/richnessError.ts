/**
 * A richness pre-selection that cannot run as configured (pipeline/planning/richness.ts). Its own
 * module, without the image measures and model calls of richness.ts, so that the CLI recognizes it
 * (cli/inputErrors.ts) without loading sharp (ADR 0058).
 */
import { InputError } from '../../domain/errors.js';

export class RichnessError extends InputError {
  override name = 'RichnessError';
}
