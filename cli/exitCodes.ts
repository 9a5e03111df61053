/** Exit codes of `mmif`, documented in the README. */
export const EXIT = {
  ok: 0,
  /** The build (or a line of `verify`) failed. */
  failed: 1,
  /** Bad arguments or a bad config. */
  usage: 2,
  /** No such build or schedule. */
  notFound: 3,
} as const;

/** An error the CLI reports as one line with its exit code, without a stack trace. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}
