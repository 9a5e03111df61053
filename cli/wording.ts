/** Words the CLI prints about counts and pipeline steps, one definition each (docs/architecture.md glossary). */

/** `1 rejected sample`, `3 rejected samples`: the noun in its singular, `plural` when it is not the noun + s. */
export const counted = (n: number, noun: string, plural = `${noun}s`) => `${n} ${n === 1 ? noun : plural}`;

/**
 * A pipeline step as the user reads it: the `rejected` step (it writes a DPO pair's rejected answer)
 * is the "rejected answer" step, so "rejected" keeps one meaning on screen: a sample or pair left out.
 */
export const stepLabel = (stage: string) => (stage === 'rejected' ? 'rejected answer' : stage);
