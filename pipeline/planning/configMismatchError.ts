/**
 * A build resumed or rerun under a config whose fingerprint differs from the one its plan was made
 * with (pipeline/planning/planBuild.ts). Its own module, without the planner and its image tools, so
 * that `mmif resume` and `mmif status` recognize it (cli/inputErrors.ts) without loading sharp
 * (ADR 0058).
 */
import { InputError } from '../../domain/errors.js';

export class ConfigMismatchError extends InputError {
  override name = 'ConfigMismatchError';
}
