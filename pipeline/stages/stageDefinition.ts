/**
 * One pipeline step, defined in one place: pipeline/stages/<step>/definition.ts exports its StageDefinition and
 * registry.ts lists the definitions in order per build mode. runStage.ts runs a step through its
 * definition (the results it builds on, then `run`), batchRequests.ts asks it for its Batch API
 * request, and the step table in docs/architecture.md is written from the registry
 * (test/unit/stageRegistry.test.ts keeps them equal, and checks the lists workflow code keeps).
 */
import type { ModelRole } from '../../config/buildConfig.js';
import type { SourceSample } from '../../domain/sample.js';
import type { StageName } from '../../domain/stages.js';
import type { CallRecord } from '../../llm/modelCaller.js';
import type { StageContext } from '../run/context.js';
import { loadSampleImage, type SampleImage } from '../run/sampleImage.js';
import type { StageRequest } from '../run/stageRequest.js';
import type { StageResults } from '../run/stageState.js';

/** The results of the steps a step builds on (`buildsOn`), by step name. */
export type PriorResults = Partial<StageResults>;

export interface StageDefinition<S extends StageName = StageName> {
  /** The step's name: also the name of its stored state (`_work/samples/<id>/<name>.json`) and of its slice activities' `stage`. */
  readonly name: S;
  /** What the step produces, for a reader of the registry (and the docs' step table). */
  readonly summary: string;
  /** The steps whose results it reads; a sample one of them rejected is not run here (blocked). */
  readonly buildsOn: readonly StageName[];
  /**
   * The model roles its calls use (`models.<role>` picks each one's endpoint). The first is its own:
   * the one whose endpoint's `taskQueue` runs the step's activities and whose `batch` sends its first
   * call through the Batch API (config/endpointRouting.ts keeps that list for workflow code).
   */
  readonly modelRoles: readonly ModelRole[];
  /** The prompt versions its requests render (prompts/; a version is part of every reply's cache key). */
  readonly prompts: readonly string[];
  /** Runs the step for one sample. Throws a SampleRejection to reject it; pushes every model call it makes to `calls`. */
  run(ctx: StageContext, sample: SourceSample, prior: PriorResults, calls: CallRecord[]): Promise<StageResults[S]>;
  /** Its first model call for a sample, exactly as `run` sends it: set for the steps the Batch API can send ahead. */
  firstRequest?(ctx: StageContext, sample: SourceSample, prior: PriorResults): Promise<StageRequest>;
}

/** The sample's normalized image, for a step that builds on the image step. */
export function priorImage(ctx: StageContext, prior: PriorResults): Promise<SampleImage> {
  return loadSampleImage(ctx, prior.image!);
}
