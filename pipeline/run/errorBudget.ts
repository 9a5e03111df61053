/**
 * The error budget of a shard: samples rejected because a model call failed (the endpoint refused
 * the request, or every try gave an unusable reply) are the endpoint's fault, not the data's. A few
 * are tolerated; past the budget the shard fails with the endpoint, status and a masked excerpt in
 * the message, instead of committing a quietly empty result. Re-running the shard (`mmif resume`)
 * tries those samples again.
 */
import type { BuildConfig } from '../../config/buildConfig.js';
import type { ModelCallFault } from '../../domain/rejection.js';
import { describeFault } from '../../llm/endpointError.js';
import { PermanentError } from '../../domain/errors.js';

export type ErrorBudget = BuildConfig['llm']['errorBudget'];

export class ErrorBudgetExceeded extends PermanentError {
  override name = 'ErrorBudgetExceeded';
}

/**
 * A rejecting fault as the budget's lines quote it: the endpoint, model, status and masked excerpt,
 * then the tries the call was given (", 1 try" for a refusal; llm.replyTries for replies that stayed
 * unusable), so an endpoint that refuses at once reads apart from one whose replies failed every try.
 */
export function faultWithTries(fault: ModelCallFault): string {
  const tries = fault.tries === undefined ? '' : `, ${fault.tries} ${fault.tries === 1 ? 'try' : 'tries'}`;
  return `${describeFault(fault)}${tries}`;
}

/** Throws when more than `maxFraction` of a shard's samples were rejected by model-call faults. */
export function checkShardBudget(shard: number, planned: number, faults: readonly ModelCallFault[], budget: ErrorBudget): void {
  if (planned === 0 || faults.length / planned <= budget.maxFraction) return;
  throw new ErrorBudgetExceeded(
    `shard ${shard}: ${faults.length} of ${planned} samples rejected by model-call errors, over the error budget ` +
      `(llm.errorBudget.maxFraction ${budget.maxFraction}); first: ${faultWithTries(faults[0]!)}`,
  );
}

/**
 * Counts model-call rejections in a row within one slice of a shard: `maxConsecutive` of them with
 * no other outcome in between stops the slice at once (an endpoint that refuses everything).
 */
export class ConsecutiveFaults {
  private run = 0;
  /** Set once the budget is spent: the slice's remaining samples are not started. */
  exceeded: ErrorBudgetExceeded | undefined;
  constructor(
    private readonly budget: ErrorBudget,
    private readonly where: string,
  ) {}

  record(fault: ModelCallFault | undefined): void {
    if (!fault) {
      this.run = 0;
      return;
    }
    this.run += 1;
    if (this.run >= this.budget.maxConsecutive) {
      throw (this.exceeded ??= new ErrorBudgetExceeded(
        `${this.where}: ${this.run} samples in a row rejected by model-call errors (llm.errorBudget.maxConsecutive ${this.budget.maxConsecutive}): ${faultWithTries(fault)}`,
      ));
    }
  }
}
