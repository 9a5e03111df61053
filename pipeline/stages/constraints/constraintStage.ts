/**
 * Stage 3: integrate constraints (Fig. 15) from a seeded subset of the catalogue that suits the
 * instruction, clean the list, decide how each constraint will be verified, then remove conflicts:
 * the declared ones deterministically, the rest by the model's compatibility pass, and the
 * declared ones once more on the result. Fewer than the minimum left rejects the sample.
 */
import { endpointFor } from '../../../config/endpointRouting.js';
import { CONSTRAINT_TYPES, type ConstraintType } from '../../../domain/constraints/catalogue.js';
import { classifyInstruction, removeConflicts } from '../../../domain/constraints/compatibility.js';
import { finalizeConstraints, offeredConstraintTypes } from '../../../domain/constraints/selection.js';
import { SampleRejection } from '../../../domain/rejection.js';
import type { SourceSample } from '../../../domain/sample.js';
import type { CallRecord } from '../../../llm/callRecord.js';
import type { JsonReply } from '../../../llm/modelRequest.js';
import { compatibilityReplySchema, renderCompatibilityPrompt } from '../../../prompts/compatibilityPrompt.js';
import { constraintReplySchema, renderConstraintPrompt, type ConstraintReply } from '../../../prompts/constraintPrompt.js';
import { sampleRng, type StageContext } from '../../run/context.js';
import { codeCheckableOffer } from '../../../verification/selection.js';
import { planVerification } from './planVerification.js';
import type { SampleImage } from '../../run/sampleImage.js';
import type { StageRequest } from '../../run/stageRequest.js';
import type { ConstraintsResult, PlannedConstraint } from '../../run/stageState.js';

export async function runConstraintStage(ctx: StageContext, sample: SourceSample, instruction: string, image: SampleImage, calls: CallRecord[]): Promise<ConstraintsResult> {
  const { constraints: limits } = ctx.config;
  const kind = classifyInstruction(instruction);
  const offeredKeys = offeredTypes(ctx, sample, instruction).map((c) => c.key);
  const { request, json } = constraintRequest(ctx, sample, instruction, image);
  const reply = await ctx.models.json(request, json.name, json.schema, calls);
  const first = finalizeConstraints(sampleRng(ctx, sample.sampleId, 'trim'), reply.constraints, offeredKeys, limits);
  if (!first.ok) throw new SampleRejection(`constraints: ${first.reason}`);

  const removed: ConstraintsResult['removed'] = [];
  const byRules = (list: PlannedConstraint[]) => {
    const { kept, removed: out } = removeConflicts(list, kind);
    removed.push(...out.map(({ constraint, reason }) => ({ type: constraint.type, value: constraint.value, reason, by: 'rules' as const })));
    return kept;
  };
  const planned = byRules(await planVerification(ctx, first.constraints, calls));
  const afterModel = await removeIncompatible(ctx, instruction, planned, removed, calls);
  const constraints = byRules(afterModel);
  if (constraints.length < limits.min) {
    throw new SampleRejection(`constraints: too-few-constraints: ${constraints.length} left after removing conflicts, at least ${limits.min} required`);
  }
  return { instructionKind: kind, offeredTypes: offeredKeys, proposed: reply.constraints, constraints, removed, trimmed: first.trimmed };
}

function offeredTypes(ctx: StageContext, sample: SourceSample, instruction: string): ConstraintType[] {
  const fromSource = ctx.config.sources[sample.image.sourceIndex]?.constraintTypes;
  const rng = sampleRng(ctx, sample.sampleId, 'offered-types');
  const kind = classifyInstruction(instruction);
  if (ctx.config.mode !== 'multiturn') return offeredConstraintTypes(rng, ctx.config.constraints.typesOffered, kind, fromSource);
  return offeredConstraintTypes(rng, ctx.config.constraints.typesOffered, kind, chatTypes(fromSource)).map((t) => codeCheckableOffer(t)!);
}

/**
 * A multiturn build's types: a chat's PIF is defined on verdicts computed by code, so only types with
 * an example the phrase parser maps to their own verifiers, shown with that example
 * (verification/selection.ts codeCheckableOffer), within the source's subset.
 */
function chatTypes(fromSource: readonly string[] | undefined): string[] {
  return CONSTRAINT_TYPES.filter((t) => codeCheckableOffer(t) && (!fromSource || fromSource.includes(t.key))).map((t) => t.key);
}

/** The stage's first model call (Fig. 15), as the stage (or the Batch API, ahead of it) sends it. */
export function constraintRequest(ctx: StageContext, sample: SourceSample, instruction: string, image: SampleImage): StageRequest & { json: JsonReply<ConstraintReply> } {
  const offered = offeredTypes(ctx, sample, instruction);
  const prompt = renderConstraintPrompt(instruction, offered);
  return {
    request: { stage: 'constraints', endpoint: endpointFor(ctx.config, 'constraints'), prompt, image },
    json: {
      name: 'constraints',
      schema: constraintReplySchema(
        offered.map((c) => c.key),
        ctx.config.constraints,
      ),
    },
  };
}

async function removeIncompatible(
  ctx: StageContext,
  instruction: string,
  constraints: PlannedConstraint[],
  removed: ConstraintsResult['removed'],
  calls: CallRecord[],
): Promise<PlannedConstraint[]> {
  const reply = await ctx.models.json(
    {
      stage: 'compatibility',
      endpoint: endpointFor(ctx.config, 'compatibility'),
      prompt: renderCompatibilityPrompt(instruction, constraints),
    },
    'compatibility',
    compatibilityReplySchema,
    calls,
  );
  // Only explicit drops remove a constraint: an index the model forgot to mention is kept.
  const reasons = new Map(reply.dropped.map((d) => [d.index, d.reason]));
  return constraints.filter((c, i) => {
    const reason = reasons.get(i + 1);
    if (reason !== undefined) removed.push({ type: c.type, value: c.value, reason, by: 'model' });
    return reason === undefined;
  });
}
