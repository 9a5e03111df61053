/** Words the CLI prints about counts and stages, one definition each (docs/architecture.md glossary). */

/** `1 rejected sample`, `3 rejected samples`: the noun in its singular, `plural` when it is not the noun + s. */
export const counted = (n: number, noun: string, plural = `${noun}s`) => `${n} ${n === 1 ? noun : plural}`;

/**
 * A stage as the user reads it: the `rejected` stage (it writes a DPO pair's rejected answer) is the
 * "rejected answer" stage, so "rejected" keeps one meaning on screen: a sample or pair left out.
 */
export const stageLabel = (stage: string) => (stage === 'rejected' ? 'rejected answer' : stage);

/**
 * A role's cost as the CLI prints it: `$0.0123`, or `unpriced (N requests)`, followed by how many of
 * its paid requests were counted with the engine's estimate because the endpoint's usage was unusable.
 */
export function roleCost(u: { costUsd: number; unpricedRequests: number; estimatedRequests?: number }): string {
  const cost = u.unpricedRequests ? `unpriced (${u.unpricedRequests} requests)` : `$${u.costUsd.toFixed(4)}`;
  return u.estimatedRequests ? `${cost}, ${u.estimatedRequests} with estimated usage (the endpoint's counts were unusable)` : cost;
}

/**
 * A command as the user types it from the checkout: `npx mmif ...` runs the checkout's bin without
 * `npm link` (a bare `mmif` is not on the PATH after `npm install`). For hints printed as commands to run.
 */
export const mmifCommand = (args: string) => `npx mmif ${args}`;

/**
 * What to do after the build's budget (llm.budget) stopped it, as the build ran: a `--local` build's
 * Temporal server went with its command, so the same command runs it again; a build on a server is
 * resumed there. Either way the committed shards are skipped and the samples' stage results reused.
 */
export function budgetNextStep(buildId: string, local: boolean): string {
  return local
    ? `raise llm.budget in the config, then run \`${mmifCommand('build --config FILE --local')}\` again`
    : `raise llm.budget in the config, then \`${mmifCommand(`resume ${buildId} --config FILE`)}\``;
}
