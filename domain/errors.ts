/**
 * The engine's error taxonomy, after openai-node's (one base class, a subclass per kind): every error
 * the engine raises on purpose is an MmifError, and its kind says what a retry can do about it
 * (each class below says what it means; docs/architecture.md, Errors, says what happens to it).
 * The failure type Temporal records is the error's class name (worker/maskSecretsInterceptor.ts):
 * the workflow code that reacts to one and the CLI's exit code (cli/failures.ts) match on it.
 * Whether an error is permanent, and an input error, is its class, nothing else
 * (test/unit/errors.test.ts checks every such class the source defines).
 */
export class MmifError extends Error {}

/**
 * No retry of the same work can succeed (a bad config, an unreadable source or output, an endpoint
 * refusing the key or model, a spent budget): the activity fails non-retryably with its message
 * (worker/maskSecretsInterceptor.ts), so the build stops in seconds with that one line.
 */
export class PermanentError extends MmifError {}

/**
 * A permanent error the user fixes in the config, the data or the environment: the CLI exits 2 for it
 * (cli/failures.ts).
 */
export class InputError extends PermanentError {}

/**
 * A retry may succeed (an endpoint that did not answer in time): Temporal retries the activity by the
 * build's `retry` policy.
 */
export class TransientError extends MmifError {}

/**
 * One record, file or reply is unusable (a rejected sample, a damaged tar, a side file that does not
 * parse): caught where raised and turned into a reject or a source problem; it reaches an activity's
 * caller only through a bug, and is then retried like a transient error.
 */
export class RecordError extends MmifError {}

/** Whether no retry of the same work can succeed: `err` is one the engine marked permanent. */
export function isPermanent(err: unknown): boolean {
  return err instanceof PermanentError;
}
