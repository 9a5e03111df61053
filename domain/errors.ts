/**
 * The engine's error taxonomy, after openai-node's (one base class, OpenAIError, with a subclass per
 * kind): every error the engine raises on purpose is an MmifError, and its kind says what a retry can
 * do about it.
 *
 * - PermanentError: no retry of the same work can succeed (a bad config, an unreadable source or
 *   output location, an endpoint refusing the key or the model, a spent budget). Any activity that
 *   throws one fails non-retryably with its message (worker/maskSecretsInterceptor.ts), so the build
 *   stops in seconds with that one line instead of retrying for minutes.
 *   - InputError: a permanent error the user fixes in the config, the data or the environment (a
 *     config that does not parse, an unreadable source, an unwritable output, a refused key); the CLI
 *     exits 2 for it as for a config it refuses itself (cli/failures.ts, docs/troubleshooting.md).
 * - TransientError: a retry may succeed (an endpoint that did not answer in time); the activity
 *   fails and Temporal retries it by the build's `retry` policy.
 * - RecordError: one record, file or reply is unusable (a rejected sample, a damaged tar, a side file
 *   that does not parse). Caught where it is raised and turned into a reject or a source problem; it
 *   only reaches an activity's caller through a bug, and is then retried like a transient error.
 *
 * The failure type Temporal records is the error's class name (worker/maskSecretsInterceptor.ts):
 * the workflow code that reacts to one (BudgetExhausted in workflows/buildDataset.ts) and the CLI's
 * exit code (cli/failures.ts) match on it. Whether an error is permanent, and an input error, is its
 * class, nothing else: test/unit/errors.test.ts checks every such class the source defines.
 */
export class MmifError extends Error {}

export class PermanentError extends MmifError {}

export class InputError extends PermanentError {}

export class TransientError extends MmifError {}

export class RecordError extends MmifError {}

/** Whether no retry of the same work can succeed: `err` is one the engine marked permanent. */
export function isPermanent(err: unknown): boolean {
  return err instanceof PermanentError;
}
