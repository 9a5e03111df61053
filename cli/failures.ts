/**
 * A failure as the user reads it: one line (no stack, no task token) naming the cause they can act
 * on, and the exit code that goes with it. For builds (cli/buildRun.ts), pre-flight checks and evals.
 */
import { ApplicationFailure } from '@temporalio/common';
import type { BuildReport } from '../output/contracts/buildReport.js';
import { EXIT } from './exitCodes.js';
import { INPUT_ERRORS } from './inputErrors.js';
import { causeChain } from '../domain/causeChain.js';

/**
 * Failure types the user fixes in the config, the data path or the environment (the InputError
 * classes of domain/errors.ts): the CLI exits 2 for them as for a config it refuses itself
 * (docs/troubleshooting.md). Types are the error classes' names, which the worker carries as the
 * ApplicationFailure type (worker/maskSecretsInterceptor.ts).
 */
const INPUT_FAILURES: ReadonlySet<string> = new Set(INPUT_ERRORS.map((c) => c.name));

export interface Failure {
  /** The ApplicationFailure type (the error class name), when there is one. */
  type?: string;
  message: string;
}

/** Text on one line: a failure message may list shards or quote a reply over several. */
export const oneLine = (text: string) => text.replace(/\s*\n\s*/g, ' ').trim();

/**
 * The cause a user can act on: the innermost ApplicationFailure of the chain (an activity's or a
 * child's error under Temporal's "Activity task failed" / "Child Workflow execution failed"
 * wrappers), else the innermost message.
 */
export function rootFailure(err: unknown): Failure {
  const chain = causeChain(err);
  const application = chain.filter((e) => e instanceof ApplicationFailure).at(-1);
  if (application) return { type: application.type ?? undefined, message: oneLine(application.message) };
  const innermost = chain.at(-1) ?? err;
  return { message: oneLine(innermost instanceof Error ? innermost.message : String(innermost)) };
}

export const exitCodeFor = (failure: Failure) => (failure.type && INPUT_FAILURES.has(failure.type) ? EXIT.usage : EXIT.failed);

/** The type a build fails with when shards failed (workflows/buildDataset.ts): their causes are the shards' own. */
export const SHARDS_FAILED = 'ShardsFailed';

/** The type a build fails with when its budget (llm.budget) ran out (workflows/buildDataset.ts). */
export const BUDGET_EXHAUSTED = 'BudgetExhausted';

/**
 * The build report a build's own failure carries (ShardsFailed, BudgetExhausted: the outermost
 * application failure's details, workflows/buildDataset.ts), with that failure's type; undefined for
 * another failure.
 */
export function failureReport(err: unknown): { type: string; report: BuildReport } | undefined {
  const outermost = causeChain(err).find((e) => e instanceof ApplicationFailure);
  const report = outermost?.details?.[0] as BuildReport | undefined;
  return outermost?.type && report?.failedShards ? { type: outermost.type, report } : undefined;
}

/** The shards a ShardsFailed failure lists (its details carry the build report); none for another failure. */
export function failedShardsOf(err: unknown): number[] {
  const failed = failureReport(err);
  return failed?.type === SHARDS_FAILED ? failed.report.failedShards.map((f) => f.shard) : [];
}
