import assert from 'node:assert/strict';
import { WorkflowFailedError } from '@temporalio/client';

/** The innermost cause of a failed build: the one line `mmif build --wait` and `mmif status` print. */
export function failureLine(err: unknown): string {
  assert.ok(err instanceof WorkflowFailedError);
  let cause = err.cause as { message?: string; cause?: unknown } | undefined;
  while (cause?.cause) cause = cause.cause as typeof cause;
  return String(cause?.message);
}
