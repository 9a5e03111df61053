/**
 * Stage 3: integrate constraints (Fig. 15) from a seeded subset of the catalogue, clean the list,
 * then let the compatibility pass remove conflicts. Fewer than the minimum left rejects the sample.
 */
import { endpointFor } from '../config/buildConfig.js';
import { finalizeConstraints, offeredConstraintTypes, type Constraint } from '../domain/constraints/selection.js';
import { SampleRejection } from '../domain/rejection.js';
import type { SourceSample } from '../domain/sample.js';
import type { CallRecord } from '../llm/modelCaller.js';
import { compatibilityReplySchema, renderCompatibilityPrompt } from '../prompts/compatibilityPrompt.js';
import { constraintReplySchema, renderConstraintPrompt } from '../prompts/constraintPrompt.js';
import { sampleRng, type StageContext } from './context.js';
import type { SampleImage } from './sampleImage.js';
import type { ConstraintsResult } from './stageState.js';

export async function runConstraintStage(
  ctx: StageContext,
  sample: SourceSample,
  instruction: string,
  image: SampleImage,
  calls: CallRecord[],
): Promise<ConstraintsResult> {
  const { constraints: limits } = ctx.config;
  const offered = offeredConstraintTypes(sampleRng(ctx, sample.sampleId, 'offered-types'), limits.typesOffered);
  const reply = await ctx.models.json(
    {
      stage: 'constraints',
      endpoint: endpointFor(ctx.config, 'constraints'),
      prompt: renderConstraintPrompt(instruction, offered),
      image,
    },
    'constraints',
    constraintReplySchema,
    calls,
  );
  const offeredKeys = offered.map((c) => c.key);
  const first = finalizeConstraints(sampleRng(ctx, sample.sampleId, 'trim'), reply.constraints, offeredKeys, limits);
  if (!first.ok) throw new SampleRejection(`constraints: ${first.reason}`);

  const { kept, incompatible } = await removeIncompatible(ctx, instruction, first.constraints, calls);
  if (kept.length < limits.min) {
    throw new SampleRejection(
      `constraints: too-few-constraints: ${kept.length} left after the compatibility pass, at least ${limits.min} required`,
    );
  }
  return { offeredTypes: offeredKeys, proposed: reply.constraints, constraints: kept, incompatible, trimmed: first.trimmed };
}

async function removeIncompatible(
  ctx: StageContext,
  instruction: string,
  constraints: Constraint[],
  calls: CallRecord[],
): Promise<{ kept: Constraint[]; incompatible: ConstraintsResult['incompatible'] }> {
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
  const kept: Constraint[] = [];
  const incompatible: ConstraintsResult['incompatible'] = [];
  constraints.forEach((c, i) => {
    const reason = reasons.get(i + 1);
    if (reason === undefined) kept.push(c);
    else incompatible.push({ ...c, reason });
  });
  return { kept, incompatible };
}
