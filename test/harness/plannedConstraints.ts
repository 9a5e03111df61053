/** Planned constraints as the constraint stage leaves them, for tests that verify answers against them. */
import type { PlannedConstraint } from '../../pipeline/run/stageState.js';

/** A rule-checked constraint: `func` (verification/functions.ts) with its params, chosen by the parser. */
export const rule = (type: string, value: string, func: string, params: unknown[]): PlannedConstraint => ({
  type,
  value,
  method: 'rule',
  verifiers: [{ func, params }],
  selection: 'parser',
});
