/**
 * The Batch API path: the first model call of a stage for every sample of a shard that still needs
 * it, built exactly as the stage builds it, so the replies filed under their cache keys make the
 * stage itself run on cache hits.
 */
import type { BATCHABLE_STAGES } from '../config/endpointRouting.js';
import type { SourceSample } from '../domain/sample.js';
import { answerRequest } from './answerRequest.js';
import { rejectedRequest } from './answerStages.js';
import { constraintRequest } from './constraintStage.js';
import type { StageContext } from './context.js';
import { instructionRequest } from './instructionStage.js';
import { loadPrior, stageDone, taskOf } from './runStage.js';
import { loadSampleImage } from './sampleImage.js';
import type { StageRequest } from './stageRequest.js';

export type BatchableStage = (typeof BATCHABLE_STAGES)[number];

/** The stage's first request for a sample, or undefined when the sample is done or rejected earlier. */
export async function firstRequest(ctx: StageContext, stage: BatchableStage, sample: SourceSample): Promise<StageRequest | undefined> {
  if (await stageDone(ctx, stage, sample)) return undefined;
  const prior = await loadPrior(ctx, stage, sample);
  if (!prior) return undefined;
  const image = await loadSampleImage(ctx, prior.image!);
  switch (stage) {
    case 'instruction':
      return instructionRequest(ctx, sample, image);
    case 'constraints':
      return constraintRequest(ctx, sample, prior.instruction!.instruction, image);
    case 'answer':
      return answerRequest(ctx, 'answer', taskOf(sample, prior), prior.constraints!.constraints, image, 0);
    case 'rejected':
      return rejectedRequest(ctx, sample, taskOf(sample, prior), prior.constraints!.constraints, image);
  }
}
