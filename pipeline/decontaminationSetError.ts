/**
 * A decontamination set that cannot be read: no retry fixes it, so the build fails with this message;
 * the user fixes the set's `uri` or file (exit 2). Its own module, without the image hashing and
 * storage of pipeline/decontamination.ts, so that the CLI recognizes it (cli/inputErrors.ts) without
 * loading sharp (ADR 0058).
 */
import { InputError } from '../domain/errors.js';

export class DecontaminationSetError extends InputError {
  override name = 'DecontaminationSetError';
}
