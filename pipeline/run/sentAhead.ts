/**
 * A later stage's first call sent beside an earlier stage's calls (its descriptor's
 * `firstRequestBeside`, config/stages.ts): the DPO rejected answer does not read the chosen answer,
 * so it is made while the chosen answer is made and judged; the rejected stage, running next, finds
 * its reply in the cache and counts it as paid (`recovered`), once (ADR 0074). A sample the earlier
 * stage rejects never runs that stage: its calls sent ahead are recorded in the earlier stage's state.
 * A request lost in flight (sent ahead by a killed worker, sent again by the earlier stage run again:
 * llm/lostInFlight.ts) is seen only by the execution that sends it again, so that stage records the
 * loss whatever the outcome. A failed call sent ahead fails nothing: the stage asks again itself.
 */
import type { BuildConfig } from '../../config/buildConfig.js';
import { batchStages, stageTaskQueues } from '../../config/endpointRouting.js';
import type { StageName } from '../../config/stages.js';
import { SampleRejection } from '../../domain/rejection.js';
import type { SourceSample } from '../../domain/sample.js';
import type { CallRecord } from '../../llm/callRecord.js';
import type { PriorResults, StageDefinition } from '../stages/stageDefinition.js';
import { stageDefinitions } from '../stages/registry.js';
import type { StageContext } from './context.js';

/**
 * The stages whose first call goes out beside `stage`: those whose descriptor names it as
 * `firstRequestBeside`, unless the Batch API sends that call, or the stage runs on another task queue
 * than `stage` (its endpoint may be reachable only from that queue's workers).
 */
export function stagesSentBeside(config: BuildConfig, stage: StageName): StageDefinition[] {
  const batched = batchStages(config) as readonly StageName[];
  const queues = stageTaskQueues(config);
  return stageDefinitions(config.mode).filter(
    (d) => 'firstRequestBeside' in d && d.firstRequestBeside === stage && d.firstRequest && !batched.includes(d.name) && queues[d.name] === queues[stage],
  );
}

/** Whether a call sent ahead is left to the stage it was sent for (a reply it finds in the cache), or recorded by the stage that sent it (a loss). */
export function leftToLaterStage(call: CallRecord): boolean {
  return !call.lostInFlight;
}

/** Sends the first calls of the stages sent beside `stage` (stagesSentBeside); resolves with their calls. */
export async function sendAhead(ctx: StageContext, stage: StageName, sample: SourceSample, prior: PriorResults): Promise<CallRecord[]> {
  const calls: CallRecord[] = [];
  // Only on `stage`'s first run (runStage): a stage sent beside builds on `stage`, so it has no state yet.
  for (const definition of stagesSentBeside(ctx.config, stage)) {
    const { request, json } = await definition.firstRequest!(ctx, sample, prior);
    const models = ctx.models.forExecution(`${sample.sampleId}/${definition.name}`);
    try {
      if (json) await models.json(request, json.name, json.schema, calls);
      else await models.textAndReasoning(request, calls);
    } catch (err) {
      if (!(err instanceof SampleRejection)) throw err;
    }
  }
  return calls;
}
