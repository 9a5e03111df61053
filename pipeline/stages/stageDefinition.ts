/**
 * A stage's run code beside its pure descriptor (config/stages.ts): pipeline/stages/<stage>/definition.ts
 * exports its StageCode, registry.ts joins each descriptor with its code. runStage.ts runs a stage
 * through its definition (the results it builds on, then `run`), batchRequests.ts asks a batchable
 * one for its first request.
 */
import type { StageKey, StageName, StageOf } from '../../config/stages.js';
import type { SourceSample } from '../../domain/sample.js';
import type { CallRecord } from '../../llm/callRecord.js';
import type { StageContext } from '../run/context.js';
import { loadSampleImage, type SampleImage } from '../run/sampleImage.js';
import type { StageRequest } from '../run/stageRequest.js';
import type { StageResults } from '../run/stageState.js';

/** The results of the stages a stage builds on (`buildsOn`), by stage name. */
export type PriorResults = Partial<StageResults>;

/** Runs the stage for one sample. Throws a SampleRejection to reject it; pushes every model call it makes to `calls`. */
type StageRun<S extends StageName> = (ctx: StageContext, sample: SourceSample, prior: PriorResults, calls: CallRecord[]) => Promise<StageResults[S]>;

/** Its first model call for a sample, exactly as `run` sends it: what the Batch API sends ahead of the stage, or an earlier stage beside its own calls (`firstRequestBeside`). */
type FirstRequest = (ctx: StageContext, sample: SourceSample, prior: PriorResults) => Promise<StageRequest>;

/** A stage's code: `run`, and `firstRequest` exactly when its descriptor says it is batchable. */
export type StageCode<K extends StageKey> = { run: StageRun<StageOf<K>['name']> } & (StageOf<K>['batchable'] extends true
  ? { firstRequest: FirstRequest }
  : { firstRequest?: never });

/** A stage's descriptor with its code. */
export type StageDefinition = StageOf<StageKey> & { run: StageRun<StageName>; firstRequest?: FirstRequest };

/** The sample's normalized image, for a stage that builds on the image stage. */
export function priorImage(ctx: StageContext, sample: SourceSample, prior: PriorResults): Promise<SampleImage> {
  return loadSampleImage(ctx, sample.sampleId, prior.image!);
}
