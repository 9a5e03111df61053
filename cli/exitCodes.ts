/**
 * Exit codes of `mmif`, documented in the README, and what each means: the help texts' exit-code
 * lines are derived from here (exitCodesLine), never written by hand.
 */
export const EXIT = {
  ok: 0,
  /** The build (or a line of `verify`) failed. */
  failed: 1,
  /** Bad arguments or a bad config. */
  usage: 2,
  /** No such build or schedule. */
  notFound: 3,
} as const;

type ExitName = keyof typeof EXIT;

/** What each code means for `mmif` as a whole. */
export const EXIT_MEANING: Record<ExitName, string> = {
  ok: 'ok',
  failed: 'failed',
  usage: 'usage or config error',
  notFound: 'no such build or schedule',
};

/** `exit codes: 0 ..., 1 ...` for the codes a command returns, each with what it means for that command. */
export function exitCodesLine(meanings: Partial<Record<ExitName, string>>): string {
  const codes = (Object.keys(meanings) as ExitName[]).sort((a, b) => EXIT[a] - EXIT[b]);
  return `exit codes: ${codes.map((name) => `${EXIT[name]} ${meanings[name]}`).join('; ')}`;
}

/** An error the CLI reports as one line with its exit code, without a stack trace. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}
