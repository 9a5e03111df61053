/**
 * Decides how each constraint will be verified: rule calls from the phrase parser, else from the
 * verifier model (Fig. 20) when the type is rule-checkable, else a judge as Table 5 says. A model
 * choice naming an unknown function, a function the type cannot use, or bad parameters counts as
 * "no rule"; the refusal is noted in the record.
 */
import { endpointFor } from '../../../config/endpointRouting.js';
import { constraintType } from '../../../domain/constraints/catalogue.js';
import type { VerifierCall } from '../../../domain/constraints/compatibility.js';
import type { Constraint } from '../../../domain/constraints/selection.js';
import type { CallRecord } from '../../../llm/callRecord.js';
import { renderVerifierSelectionPrompt, verifierSelectionReplySchema } from '../../../prompts/verifierSelectionPrompt.js';
import { FUNCTIONS, resolveFunction, runVerifierCall } from '../../../verification/functions.js';
import { parseVerifierCalls } from '../../../verification/selection.js';
import { callBranches } from '../../run/callBranches.js';
import type { StageContext } from '../../run/context.js';
import type { PlannedConstraint } from '../../run/stageState.js';

/** Every constraint's plan is its own question: the verifier model is asked about all of them at once (callBranches.ts). */
export function planVerification(ctx: StageContext, constraints: readonly Constraint[], calls: CallRecord[]): Promise<PlannedConstraint[]> {
  return callBranches(
    calls,
    constraints.map((c) => (branch: CallRecord[]) => planOne(ctx, c, branch)),
  );
}

async function planOne(ctx: StageContext, c: Constraint, calls: CallRecord[]): Promise<PlannedConstraint> {
  const type = constraintType(c.type)!;
  const judged: PlannedConstraint = {
    ...c,
    method: type.evaluation === 'compare_judge' ? 'compare_judge' : 'direct_judge',
    verifiers: [],
    selection: 'none',
  };
  // A type Table 5 checks by rule that ends up judged says why (its own examples, e.g. "Replace all
  // periods with semicolons.", have no function of Table 7 that checks them).
  const ruleType = type.evaluation === 'rule';
  if (type.verifiers.length === 0) return ruleType ? { ...judged, selectionNote: 'judged: Table 5 checks this type by rule, but no rule function checks it' } : judged;

  const parsed = parseVerifierCalls(c.type, c.value);
  if (parsed && parsed.every((call) => checkCall(call, type.verifiers) === undefined)) {
    return { ...c, method: 'rule', verifiers: parsed, selection: 'parser' };
  }
  if (!ctx.config.verification.llmVerifierSelection) {
    return { ...judged, selectionNote: 'judged: the phrase parser does not recognise this phrasing and verification.llmVerifierSelection is off' };
  }

  const candidates = FUNCTIONS.filter((f) => type.verifiers.includes(f.name));
  const reply = await ctx.models.json(
    {
      stage: 'verifier',
      endpoint: endpointFor(ctx.config, 'verifier'),
      prompt: renderVerifierSelectionPrompt(c.value, candidates),
      temperature: ctx.config.llm.judgeTemperature,
    },
    'verifier_selection',
    verifierSelectionReplySchema,
    calls,
  );
  if (reply.calls.length === 0) return { ...judged, selectionNote: 'judged: neither the phrase parser nor the verifier model found a rule function that checks this phrasing' };
  const problem = reply.calls.map((call) => checkCall(call, type.verifiers)).find((p) => p !== undefined);
  if (problem) return { ...judged, selectionNote: `model choice refused: ${problem}` };
  return { ...c, method: 'rule', verifiers: reply.calls.map((call) => ({ func: canonicalName(call.func), params: call.params })), selection: 'llm' };
}

function canonicalName(func: string): string {
  return resolveFunction(func)?.name ?? func;
}

/**
 * Why a call cannot verify this type, or undefined when it can. The registry validates the
 * function name and params on every run, so a run on an empty response is the validation.
 */
function checkCall(call: VerifierCall, allowed: readonly string[]): string | undefined {
  const outcome = runVerifierCall('', call);
  if ('error' in outcome) return outcome.error;
  const name = canonicalName(call.func);
  return allowed.includes(name) ? undefined : `${name} does not verify this kind of constraint`;
}
