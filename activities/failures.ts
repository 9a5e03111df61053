import { ApplicationFailure } from '@temporalio/activity';

/** Any error class: their constructors take different arguments. */
type ErrorClass = new (...args: any[]) => Error;

/**
 * Runs an activity's work; an error of one of the `permanent` classes (no retry can fix it) fails
 * the activity non-retryably with its message, so the workflow fails at once instead of retrying.
 */
export async function failPermanentlyOn<T>(permanent: readonly ErrorClass[], work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (permanent.some((type) => err instanceof type)) {
      throw ApplicationFailure.nonRetryable((err as Error).message, (err as Error).name);
    }
    throw err;
  }
}
