/**
 * The output location cannot be written: no retry fixes it (storage/outputProbe.ts decides which
 * failures say so). Its own module, without the S3 client the probe uses, so that the CLI recognizes
 * it (cli/inputErrors.ts) without loading @aws-sdk/client-s3 (ADR 0058).
 */
import { InputError } from '../domain/errors.js';

export class OutputLocationError extends InputError {
  constructor(message: string) {
    super(message);
    this.name = 'OutputLocationError';
  }
}
