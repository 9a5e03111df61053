/**
 * The Batch API path: the first model call of a stage for every sample of a shard that still needs
 * it, built exactly as the stage builds it (its definition's `firstRequest`, pipeline/stages/), so
 * the replies filed under their cache keys make the stage itself run on cache hits.
 */
import type { BatchableStage } from '../../config/endpointRouting.js';
import type { SourceSample } from '../../domain/sample.js';
import type { StageContext } from './context.js';
import { loadPrior, stageDone } from './runStage.js';
import { stageDefinition } from '../stages/registry.js';
import type { StageRequest } from './stageRequest.js';

/** The stage's first request for a sample, or undefined when the sample is done or rejected earlier. */
export async function firstRequest(ctx: StageContext, stage: BatchableStage, sample: SourceSample): Promise<StageRequest | undefined> {
  if (await stageDone(ctx, stage, sample)) return undefined;
  const prior = await loadPrior(ctx, stage, sample);
  if (!prior) return undefined;
  const definition = stageDefinition(ctx.config.mode, stage);
  if (!definition.firstRequest) throw new Error(`stage '${stage}' sends no request through the Batch API`);
  return definition.firstRequest(ctx, sample, prior);
}
