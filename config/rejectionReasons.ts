/**
 * How a rejection reason names its stage and its stable code: "answer: below-threshold: pass rate
 * ..." is the answer stage's "below-threshold". One reading for the shard manifests' counts, the
 * metrics' reason label and `inspect`. Pure.
 */
import { ALL_STAGE_NAMES } from './stages.js';

/** Pipeline stages and model-call stages: a judge or verifier call's failure names its own stage. */
const REASON_STAGES: ReadonlySet<string> = new Set([...ALL_STAGE_NAMES, 'compatibility', 'verifier', 'judge']);

/**
 * A reason without the stage it names first: "answer: below-threshold: pass rate ..." ->
 * "below-threshold: pass rate ...". `stage`: only that stage is taken off (a judge's failure at the
 * answer stage keeps its "judge:").
 */
export function reasonAfterStage(reason: string, stage?: string): string {
  const at = reason.indexOf(':');
  const first = reason.slice(0, at).trim();
  const rest = reason.slice(at + 1).trim();
  return at > 0 && (stage === undefined ? REASON_STAGES.has(first) : first === stage) && rest ? rest : reason.trim();
}

/** The stable code of a reason: "answer: below-threshold: pass rate ..." -> "below-threshold". */
export function reasonCode(reason: string): string {
  return reasonAfterStage(reason).split(':')[0]!.trim() || 'unknown';
}
